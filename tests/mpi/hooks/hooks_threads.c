/* critpath — tests/mpi/hooks/hooks_threads.c: four threads per rank call the same tiny
 * instrumented function 1,000,000 times each while the automatic filter drops it and its hook
 * calls are patched out of the running code (CRITPATH_PATCH_HOOKS; built by critpath-cc).
 * Whatever thread patches a call site, every thread must go on computing the same results:
 * the program prints its checksum (known: check_hooks.py), and the trace stays balanced.
 * Each thread also calls `nap` (instrumented, 3 visits of 10 ms) around its loop. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define THREADS 4
#define CALLS 1000000L

__attribute__((noinline)) long tiny(long x) { return (x * 3 + 1) & 1023; }

__attribute__((noinline)) void nap(void) {
  struct timespec d = {0, 10 * 1000000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) != 0) {
  }
}

__attribute__((noinline)) void* worker(void* arg) {
  long* sum = (long*)arg;
  nap();
  for (long i = 0; i < CALLS; ++i) *sum += tiny(i);
  nap();
  nap();
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  pthread_t t[THREADS];
  long sums[THREADS] = {0};
  for (int i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, worker, &sums[i]);
  long local = 0;
  for (int i = 0; i < THREADS; ++i) {
    pthread_join(t[i], NULL);
    local += sums[i];
  }
  long total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("hooks_threads: checksum %ld\n", total);
  MPI_Finalize();
  return 0;
}
