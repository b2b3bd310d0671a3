/* critpath — tests/mpi/wrappers/wrap_threads.c: MPI_THREAD_MULTIPLE (2 ranks). Each of
 * kThreads threads exchanges messages with the same thread on the other rank over its own
 * communicator (a dup of MPI_COMM_WORLD made by the main thread): kRounds x (Isend + Irecv +
 * Waitall, then Sendrecv), thread t sending (t + 1) x 8 bytes with tag 10 + t. Meanwhile the
 * main thread runs kColls Allreduces on MPI_COMM_WORLD. check_threads.py finds each thread's
 * location in the dump by its communicator and checks its exact event sequence and counts.
 * Prints "SKIP: ..." and exits 0 when the library does not provide MPI_THREAD_MULTIPLE. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

enum { kThreads = 3, kRounds = 40, kColls = 25 };

static MPI_Comm comms[kThreads];
static int rank;

static void* worker(void* arg) {
  const int t = (int)(long)arg, peer = 1 - rank;
  double out[kThreads + 1], in[kThreads + 1], in2[kThreads + 1];
  for (int i = 0; i <= kThreads; ++i) out[i] = rank * 100 + t;
  for (int k = 0; k < kRounds; ++k) {
    MPI_Request q[2];
    MPI_Irecv(in, t + 1, MPI_DOUBLE, peer, 10 + t, comms[t], &q[0]);
    MPI_Isend(out, t + 1, MPI_DOUBLE, peer, 10 + t, comms[t], &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(out, t + 1, MPI_DOUBLE, peer, 20 + t, in2, t + 1, MPI_DOUBLE, peer, 20 + t,
                 comms[t], MPI_STATUS_IGNORE);
    if (in[0] != peer * 100 + t || in2[t] != peer * 100 + t) {
      fprintf(stderr, "wrap_threads: thread %d got wrong data\n", t);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) printf("SKIP: the MPI library provides thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
    MPI_Finalize();
    return 0;
  }
  for (int t = 0; t < kThreads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  pthread_t th[kThreads];
  for (int t = 0; t < kThreads; ++t) pthread_create(&th[t], NULL, worker, (void*)(long)t);
  int sum = 0;
  for (int k = 0; k < kColls; ++k) {
    int v = rank + k;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  for (int t = 0; t < kThreads; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < kThreads; ++t) MPI_Comm_free(&comms[t]);
  if (rank == 0) printf("wrap_threads: ok, last sum %d\n", sum);
  MPI_Finalize();
  return 0;
}
