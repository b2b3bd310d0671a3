/* critpath — tests/mpi/core/regions.c
 *
 * Known-answer program for the call-path profile and the region API. Durations come from
 * sleeping to absolute deadlines (clock_nanosleep TIMER_ABSTIME), so they hold on a loaded
 * machine. Every rank, 3 iterations of:
 *   "outer" 120 ms = "inner" 40 ms (sleep) + 80 ms (sleep, outer's own)
 *   then (more than one rank) MPI_Send/MPI_Recv ring, MPI_Isend/Irecv/Waitall, MPI_Barrier, MPI_Bcast, MPI_Allreduce
 * Expected per rank: outer inclusive 0.36 s, outer exclusive 0.24 s, inner inclusive 0.12 s,
 * visits outer 3, inner 3. With argv[1] = n, n more enter/exit pairs of "tick" (volume). Uses the C++-free C API and both macro and handle forms.
 * A sleep ends when the rank runs again, which on a loaded machine can be milliseconds past its
 * deadline (CI once saw every rank's inner region 6.3 ms long over three sleeps): each rank also
 * times both regions itself (around the enter and exit calls) and writes the sums to
 * $CRITPATH_OUTPUT_DIR.spans.<rank> as "inner <s> outer <s>", which check_regions.py holds
 * the report to.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "critpath.h"

#ifdef CRITPATH_TEST_PRELOAD
/* Built without -lcritpath: weak references bind to the preloaded libcritpath.so. */
#pragma weak critpath_region_define
#pragma weak critpath_enter
#pragma weak critpath_exit
#endif

static struct timespec deadline;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The sums of the regions' own timings, for check_regions.py (see above). */
static void write_spans(int rank, double inner, double outer) {
  const char* dir = getenv("CRITPATH_OUTPUT_DIR");
  if (dir == NULL) return;
  char path[4096];
  snprintf(path, sizeof path, "%s.spans.%d", dir, rank);
  FILE* f = fopen(path, "w");
  if (f == NULL) return;
  fprintf(f, "inner %.9f outer %.9f\n", inner, outer);
  fclose(f);
}

static void sleep_ms(long ms) {
  deadline.tv_nsec += ms * 1000000L;
  while (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_nsec -= 1000000000L;
    deadline.tv_sec += 1;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) != 0) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const unsigned outer = critpath_region_define("outer");
  double buf[16] = {0}, in[16] = {0};
  double inner_s = 0, outer_s = 0;
  for (int it = 0; it < 3; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    const double t0 = now_s();
    critpath_enter(outer);
    const double t1 = now_s();
    CRITPATH_REGION_BEGIN("inner");
    sleep_ms(40);
    CRITPATH_REGION_END("inner");
    inner_s += now_s() - t1;
    sleep_ms(80);
    critpath_exit(outer);
    outer_s += now_s() - t0;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (size == 1) {
      /* A blocking send to oneself may legally wait for its receive: no ring. */
    } else if (rank % 2 == 0) {
      MPI_Send(buf, 16, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
      MPI_Recv(in, 16, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in, 16, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 16, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
    }
    MPI_Request req[2];
    MPI_Irecv(in, 8, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(buf, 8, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Status st[2];
    MPI_Waitall(2, req, st);
    MPI_Bcast(buf, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Allreduce(buf, in, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  /* Optional volume: argv[1] enter/exit pairs of "tick" (the spill test needs megabytes). */
  const long ticks = argc > 1 ? atol(argv[1]) : 0;
  for (long i = 0; i < ticks; ++i) {
    CRITPATH_REGION_BEGIN("tick");
    CRITPATH_REGION_END("tick");
  }
  write_spans(rank, inner_s, outer_s);
  if (rank == 0) printf("regions: done on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
