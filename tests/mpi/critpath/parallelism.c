/* critpath — tests/mpi/critpath/parallelism.c
 *
 *   ring  a token goes once around the ranks: rank r receives it from r − 1 (rank 0 starts),
 *         works T (region "turn"), passes it on (the last rank back to rank 0); the others wait
 *         meanwhile. Then a barrier.
 *         Average parallelism ≈ 1: (P·A + P·T) / (A + P·T) with A = 20 ms, cp_align's sleep
 *         to the common start, in which all ranks "work" (1.037 on 4 ranks).
 *   ep    embarrassingly parallel: every rank works T_EP (region "compute"), no
 *         communication. Average parallelism ≈ P.
 * Known answers: check_critpath.py parallelism ring|ep.
 */
#include <stdio.h>
#include <string.h>

#include "cp_util.h"

#define T_MS 400.0
#define T_EP_MS 2000.0

int main(int argc, char** argv) {
  int rank, size, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int ring = argc > 1 && !strcmp(argv[1], "ring");
  cp_align();
  if (ring) {
    if (rank > 0) MPI_Recv(&v, 1, MPI_INT, rank - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    cp_work("turn", T_MS);
    MPI_Send(&v, 1, MPI_INT, (rank + 1) % size, 3, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(&v, 1, MPI_INT, size - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    cp_work("compute", T_EP_MS);
  }
  if (rank == 0) printf("parallelism: %s done on %d ranks\n", ring ? "ring" : "ep", size);
  MPI_Finalize();
  return 0;
}
