/* critpath — tests/mpi/whatif/balance.c: the what-if simulator's known answers (issue 12,
 * [Böhme2010] §VI's lorentz() experiment), checked by check_whatif.py. 2 ranks (one per core on
 * the test machine: with ranks sharing cores, an Allreduce the ranks reach together costs a
 * few ms of scheduling that the balanced run has and the unbalanced one does not).
 *
 * NITER iterations of: region "solve" (BASE_MS on every rank, plus EXTRA_MS on rank 0), on
 * rank 1 only region "side" (SIDE_MS), then MPI_Allreduce. With argument "balanced" the extra
 * time is spread evenly instead (EXTRA_MS / size on every rank): the same total solve time, the
 * run the hypothesis "balance:solve" predicts. Rank 0 is the bottleneck of the unbalanced run,
 * so "side" (rank 1, 25 ms < 60 ms per iteration) has slack: zeroing it saves nothing.
 *
 *   unbalanced   per iteration max(20 + 40, 20 + 5) = 60 ms
 *   balanced     per iteration max(20 + 20, 20 + 20 + 5) = 45 ms  (the prediction for
 *                balance:solve: both ranks' solve at the mean 40 ms, rank 1's side on top)
 *
 * Computation sleeps to absolute deadlines (clock_nanosleep TIMER_ABSTIME) from the region's
 * start, so it holds on a loaded machine up to the scheduler's wake-up latency.
 */
#include <stdlib.h>

#include "../waits/waits_util.h"

#define NITER 10
#define BASE_MS 20
#define EXTRA_MS 40
#define SIDE_MS 5

int main(int argc, char** argv) {
  const int balanced = argc > 1 && strcmp(argv[1], "balanced") == 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  (void)run_scenarios; /* waits_util.h's; unused here */
  align();
  double x = rank + 1, sum = 0, total = 0;
  for (int i = 0; i < NITER; ++i) {
    long us = BASE_MS * 1000L;
    if (balanced) us += EXTRA_MS * 1000L / size;
    else if (rank == 0) us += EXTRA_MS * 1000L;
    CRITPATH_REGION_BEGIN("solve");
    work_us(us);
    CRITPATH_REGION_END("solve");
    if (rank == 1) {
      CRITPATH_REGION_BEGIN("side");
      work_us(SIDE_MS * 1000L);
      CRITPATH_REGION_END("side");
    }
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    total += sum;
  }
  if (rank == 0)
    printf("balance: %s, %d iterations, total %.0f\n", balanced ? "balanced" : "unbalanced", NITER, total);
  MPI_Finalize();
  return 0;
}
