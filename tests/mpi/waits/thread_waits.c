/* critpath — tests/mpi/waits/thread_waits.c: wait states of threads other than the main one
 * (MPI_THREAD_MULTIPLE; every thread that calls MPI is a location of its own).
 *
 * 2 ranks, 2 worker threads each; worker t has a communicator of its own (duplicated by the
 * main thread). On rank 0 worker t posts MPI_Recv at the common start; on rank 1 worker t
 * sends at start + (t + 1) * 100 ms. Known answers: Late Sender 100 ms and 200 ms on rank 0
 * at main/MPI_Recv (300 ms in all), none on rank 1; every message matched. Prints
 * "SKIP: the MPI library provides thread level N" and exits 0 without MULTIPLE.
 * A worker started late (2 ranks' threads on 2 cores, a loaded machine) posts its receive late
 * and shortens its wait: each worker prints when it called MPI ("thread-call RANK T NS",
 * CLOCK_MONOTONIC), and the check expects the waits those calls make.
 */
#include <pthread.h>
#include <stdlib.h>

#include "waits_util.h"

#define WORKERS 2

static MPI_Comm comms[WORKERS];
static long long called_ns[WORKERS];

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  int v = t;
  if (rank == 0) {
    called_ns[t] = now_ns();
    MPI_Recv(&v, 1, MPI_INT, 1, t, comms[t], MPI_STATUS_IGNORE);
  } else {
    sleep_from_start_ms((long)(t + 1) * D_MS);
    called_ns[t] = now_ns();
    MPI_Send(&v, 1, MPI_INT, 0, t, comms[t]);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE || size != 2) {
    if (rank == 0) {
      if (provided < MPI_THREAD_MULTIPLE)
        printf("SKIP: the MPI library provides thread level %d\n", provided);
      else printf("thread_waits: needs exactly 2 ranks\n");
    }
    MPI_Finalize();
    return size != 2 ? 1 : 0;
  }
  for (int t = 0; t < WORKERS; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
  align();
  pthread_t th[WORKERS];
  for (int t = 0; t < WORKERS; ++t) pthread_create(&th[t], NULL, worker, (void*)(long)t);
  for (int t = 0; t < WORKERS; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < WORKERS; ++t) printf("thread-call %d %d %lld\n", rank, t, called_ns[t]);
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int t = 0; t < WORKERS; ++t) MPI_Comm_free(&comms[t]);
  if (rank == 0) printf("thread_waits: ok\n");
  MPI_Finalize();
  return 0;
}
