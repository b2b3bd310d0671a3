/* critpath — benchmarks/bench_chain.c: a trace generator for the critical-path walk.
 *
 * A token travels around the ring argv[1] million times (default 1): rank r receives it from
 * r − 1, then sends it to r + 1 (rank 0 sends first), so each rank sends and receives about
 * argv[1] million point-to-point messages and every receive waits for its sender (Late
 * Sender). The critical path hops from rank to rank at every message: ranks × argv[1] million
 * hops, the worst case for a walk that moves one message per hop. benchmarks/run_analysis.sh
 * reads the report (analysis time, % of the run, the walk's share).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double millions = argc > 1 ? atof(argv[1]) : 1.0;
  const long laps = (long)(millions * 1e6);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long token = 0;
  if (size > 1) {
    for (long i = 0; i < laps; ++i) {
      if (rank == 0) {
        MPI_Send(&token, 1, MPI_LONG, right, 0, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_LONG, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ++token;
      } else {
        MPI_Recv(&token, 1, MPI_LONG, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&token, 1, MPI_LONG, right, 0, MPI_COMM_WORLD);
      }
    }
  }
  if (rank == 0) printf("bench_chain: %ld laps of %d ranks, token=%ld\n", laps, size, token);
  MPI_Finalize();
  return 0;
}
