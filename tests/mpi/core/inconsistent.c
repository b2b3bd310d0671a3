/* critpath — tests/mpi/core/inconsistent.c: a trace the analysis cannot use whole.
 *
 * Rank 1 pauses the recording (MPI_Pcontrol(0)) around its send to rank 0 and its part in the
 * second of three barriers, so its trace lacks them. Known answers (3 ranks): one message
 * cannot be matched (rank 0's receive), and on MPI_COMM_WORLD the members recorded different
 * numbers of collectives: ranks 0 and 2 each have one beyond what rank 1 recorded. The report
 * says both in `analysis incomplete:` notes naming those ranks; the application's result and
 * exit status are unchanged and MPI_Finalize returns normally (check_inconsistent.py). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, v = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (rank == 0) fprintf(stderr, "inconsistent: needs 3 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    MPI_Pcontrol(0);
    v = 42;
    MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) MPI_Pcontrol(1);
  MPI_Barrier(MPI_COMM_WORLD);
  int sum = 0;
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("inconsistent: sum %d\n", sum);
  MPI_Finalize();
  return 0;
}
