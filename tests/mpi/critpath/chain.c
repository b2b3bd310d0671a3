/* critpath — tests/mpi/critpath/chain.c
 *
 * A point-to-point chain: rank 0 works L (region "hop") and sends to rank 1; rank r > 0
 * receives from r − 1 (waiting: late sender), works L, sends to r + 1; a final barrier waits
 * for the last rank. All inside region "s_chain". The critical path hops 0 → 1 → 2 → ... :
 * on every rank one segment whose dominant call path is main/s_chain/hop, in rank order,
 * back to back, each covering L (rank 0's also covers the time since the alignment barrier).
 * Known answers: check_critpath.py chain.
 */
#include <stdio.h>

#include "cp_util.h"

#define L_MS 150.0

int main(int argc, char** argv) {
  int rank, size, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const unsigned h = critpath_region_define("s_chain");
  cp_align();
  critpath_enter(h);
  if (rank > 0) MPI_Recv(&v, 1, MPI_INT, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  cp_work("hop", L_MS);
  if (rank + 1 < size) MPI_Send(&v, 1, MPI_INT, rank + 1, 5, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  critpath_exit(h);
  if (rank == 0) printf("chain: done on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
