/* critpath — tests/mpi/hooks/hooks_callsite.c: one MPI_Send function called from two source
 * lines. With CRITPATH_CALLSITE_DEPTH=1 the two lines form two call paths,
 * main/hooks_callsite.c:<A>/MPI_Send and main/hooks_callsite.c:<B>/MPI_Send (the lines are
 * found by the markers below); each is visited 3 times per sending rank. Built without
 * instrumentation (preloaded library), with -g for line tables. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank, size, buf[4] = {0};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = rank ^ 1;
  for (int i = 0; i < 3 && peer < size; ++i) {
    if (rank % 2 == 0) {
      MPI_Send(buf, 4, MPI_INT, peer, 1, MPI_COMM_WORLD); /* CALLSITE_A */
      MPI_Send(buf, 2, MPI_INT, peer, 2, MPI_COMM_WORLD); /* CALLSITE_B */
    } else {
      MPI_Recv(buf, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(buf, 2, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Finalize();
  return 0;
}
