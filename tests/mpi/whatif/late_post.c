/* critpath — tests/mpi/whatif/late_post.c: the what-if simulator through one-sided epochs
 * (PSCW), checked by check_whatif.py. 2 ranks.
 *
 * NITER iterations: the target (rank 1) does region "prep" (PREP_MS) and then exposes its
 * window (MPI_Win_post .. MPI_Win_wait); the origin (rank 0) does region "calc" (CALC_MS),
 * then MPI_Win_start, MPI_Put, MPI_Win_complete: it waits for the late post (Late Post,
 * PREP_MS - CALC_MS = 40 ms per iteration), so the run takes NITER x PREP_MS. With argument "noprep"
 * the target skips prep: the run the hypothesis "zero:prep" predicts, NITER x CALC_MS (the
 * target then waits in MPI_Win_wait for the origin's epoch).
 *
 * Computation sleeps to absolute deadlines from the region's start.
 */
#include <stdlib.h>

#include "../waits/waits_util.h"

#define NITER 8
#define PREP_MS 60
#define CALC_MS 20

int main(int argc, char** argv) {
  const int noprep = argc > 1 && strcmp(argv[1], "noprep") == 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  (void)run_scenarios; /* waits_util.h's; unused here */
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "late_post: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  double buf[8] = {0};
  MPI_Win win;
  MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int other = 1 - rank;
  MPI_Group_incl(world, 1, &other, &peer);
  align();
  double v[8];
  for (int i = 0; i < NITER; ++i) {
    if (rank == 1) {
      if (!noprep) {
        CRITPATH_REGION_BEGIN("prep");
        work_us(PREP_MS * 1000L);
        CRITPATH_REGION_END("prep");
      }
      MPI_Win_post(peer, 0, win);
      MPI_Win_wait(win);
    } else {
      CRITPATH_REGION_BEGIN("calc");
      work_us(CALC_MS * 1000L);
      for (int k = 0; k < 8; ++k) v[k] = i + k;
      CRITPATH_REGION_END("calc");
      MPI_Win_start(peer, 0, win);
      MPI_Put(v, 8, MPI_DOUBLE, 1, 0, 8, MPI_DOUBLE, win);
      MPI_Win_complete(win);
    }
  }
  if (rank == 1) printf("late_post: %s, last value %.0f\n", noprep ? "noprep" : "prep", buf[7]);
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
