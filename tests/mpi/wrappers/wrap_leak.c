/* critpath — tests/mpi/wrappers/wrap_leak.c: sends that complete inside MPI_Isend and are
 * never waited for (2 ranks). Both MPICH and Open MPI hand back one shared, already complete
 * request handle for such sends, so the tracer sees the same handle again and again.
 *
 * usage: wrap_leak THREADS   (1: MPI_Init, one thread; more: MPI_THREAD_MULTIPLE)
 * Each sending thread t of rank 0 (tags carry t):
 *   1. kRounds x (kBatch small MPI_Isend + MPI_Waitall)        tag 100 + t
 *   2. kLeak / THREADS small MPI_Isend, each handle overwritten tag 200 + t
 *   3. one MPI_Isend + MPI_Wait, one MPI_Issend + MPI_Wait     tag 300 + t, 400 + t
 * Rank 1 receives everything (one receiving thread per sending thread). check_leak.py
 * asserts that no "outstanding MPI requests" note appears and that every completion event
 * carries the id of a post of its own thread (the last Wait: exactly the preceding post's).
 * Prints "SKIP: ..." and exits 0 when MPI_THREAD_MULTIPLE is asked for and not provided. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kLeak = 5000, kRounds = 4, kBatch = 64, kMaxThreads = 8 };

static int rank, nthreads;

static void* worker(void* arg) {
  const int t = (int)(long)arg, leak = kLeak / nthreads;
  int v = t, in = 0;
  if (rank == 0) {
    MPI_Request q[kBatch], r;
    for (int k = 0; k < kRounds; ++k) {
      for (int i = 0; i < kBatch; ++i) MPI_Isend(&v, 1, MPI_INT, 1, 100 + t, MPI_COMM_WORLD, &q[i]);
      MPI_Waitall(kBatch, q, MPI_STATUSES_IGNORE);
    }
    for (int i = 0; i < leak; ++i) MPI_Isend(&v, 1, MPI_INT, 1, 200 + t, MPI_COMM_WORLD, &r);
    MPI_Isend(&v, 1, MPI_INT, 1, 300 + t, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Issend(&v, 1, MPI_INT, 1, 400 + t, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    for (int i = 0; i < kRounds * kBatch; ++i)
      MPI_Recv(&in, 1, MPI_INT, 0, 100 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < leak; ++i) MPI_Recv(&in, 1, MPI_INT, 0, 200 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&in, 1, MPI_INT, 0, 300 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&in, 1, MPI_INT, 0, 400 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return NULL;
}

int main(int argc, char** argv) {
  nthreads = argc > 1 ? atoi(argv[1]) : 1;
  if (nthreads < 1 || nthreads > kMaxThreads) return 2;
  int provided = MPI_THREAD_SINGLE;
  if (nthreads == 1) MPI_Init(&argc, &argv);
  else MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (nthreads > 1 && provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) printf("SKIP: the MPI library provides thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
    MPI_Finalize();
    return 0;
  }
  if (nthreads == 1) {
    worker(NULL);
  } else {
    pthread_t th[kMaxThreads];
    for (int t = 0; t < nthreads; ++t) pthread_create(&th[t], NULL, worker, (void*)(long)t);
    for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("wrap_leak: ok\n");
  MPI_Finalize();
  return 0;
}
