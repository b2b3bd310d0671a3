/* critpath — tests/mpi/critpath/mpmd.c, built twice: critpath_test_mpmd_a (-DCP_PART_A) and
 * critpath_test_mpmd_b, run as one MPMD job: mpiexec -n 6 mpmd_a : -n 2 mpmd_b.
 *
 * [Böhme2012] Fig. 2: partition A executes activity "A", partition B activity "B"; N iterations,
 * each ending in an MPI_Allreduce over all ranks. B is longer and is what the critical path
 * runs through (on B's first rank); B's second rank does less of it:
 *
 *   A ranks:        A for TA = 200 ms
 *   B, first rank:  B for TB = 500 ms
 *   B, second rank: B for TB2 = 400 ms
 *
 * Known answers (check_critpath.py mpmd): the A ranks' waiting, N·(TB − TA) each, is
 * inter-partition imbalance cost of B (B never runs in A's partition); the second B rank's,
 * N·(TB − TB2), is intra-partition cost of B; so inter dominates. Σ performance impact =
 * ranks × wall time. run.partitions names both executables.
 */
#include <stdio.h>

#include "cp_util.h"

#define N_ITER 2
#define TA_MS 200.0
#define TB_MS 500.0
#define TB2_MS 400.0

int main(int argc, char** argv) {
  int rank, size, *app = NULL, flag = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &app, &flag);
  /* Rank within the partition (this executable's ranks). */
  MPI_Comm part;
  MPI_Comm_split(MPI_COMM_WORLD, flag ? *app : 0, rank, &part);
  int prank;
  MPI_Comm_rank(part, &prank);
  MPI_Comm_free(&part);
  cp_align();
  for (int i = 0; i < N_ITER; ++i) {
#ifdef CP_PART_A
    cp_work("A", TA_MS);
#else
    cp_work("B", prank == 0 ? TB_MS : TB2_MS);
#endif
    double x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0) printf("mpmd: done on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
