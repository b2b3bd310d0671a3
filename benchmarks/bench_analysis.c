/* critpath — benchmarks/bench_analysis.c: a trace generator for the analysis benchmark.
 *
 * Each rank records about argv[1] million events: enter/exit pairs of user regions, a ring
 * exchange (Isend/Irecv/Waitall) every 64 iterations and an MPI_Allreduce every 1024. The
 * figures come from the report it produces (benchmarks/run_analysis.sh reads report.json):
 * analysis throughput per rank, analysis time as % of the run, replay bytes per message.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "critpath.h"

#pragma weak critpath_region_define
#pragma weak critpath_enter
#pragma weak critpath_exit

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double millions = argc > 1 ? atof(argv[1]) : 10.0;
  const long iterations = (long)(millions * 1e6 / 4.0); /* ~4 events per iteration */
  const unsigned step = critpath_region_define("step"), kernel = critpath_region_define("kernel");
  double x = rank, y = 0;
  int in = 0, out = rank;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (long i = 0; i < iterations; ++i) {
    critpath_enter(step);
    critpath_enter(kernel);
    x = x * 1.0000001 + 1e-9;
    critpath_exit(kernel);
    if ((i & 63) == 0 && size > 1) {
      MPI_Request r[2];
      MPI_Status st[2];
      MPI_Irecv(&in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &r[0]);
      MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &r[1]);
      MPI_Waitall(2, r, st);
    }
    if ((i & 1023) == 0) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    critpath_exit(step);
  }
  if (rank == 0) printf("bench_analysis: %ld iterations per rank, x=%g\n", iterations, y);
  MPI_Finalize();
  return 0;
}
