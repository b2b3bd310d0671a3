/* critpath — benchmarks/bench_wavefront.c: a Sweep3D-like pipelined wavefront on a 2-D process
 * grid (MPI_Dims_create), for the delay analysis's cost (benchmarks/run_delay.sh).
 *
 *   bench_wavefront [planes per sweep = 50] [compute us = 200]
 *
 * Eight sweeps, two from each corner; per plane: blocking receives from the upstream
 * west/east and north/south neighbours, "compute" (a sleep; ranks of the first and last
 * column 50 % longer: [Böhme2010] §V-A's load on the vertical borders), blocking sends downstream.
 * Every message waits somewhere: a message-heavy case for the backward cost propagation.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void compute_us(long us) {
  struct timespec d = {us / 1000000, (us % 1000000) * 1000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) != 0) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int planes = argc > 1 ? atoi(argv[1]) : 50;
  const long work = argc > 2 ? atol(argv[2]) : 200;
  int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
  MPI_Dims_create(size, 2, dims);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  MPI_Cart_coords(grid, rank, 2, coords);
  const int y = coords[0], x = coords[1];
  const long my_work = (x == 0 || x == dims[1] - 1) ? work * 3 / 2 : work;
  double buf[16] = {0}, sum = 0;
  for (int sweep = 0; sweep < 8; ++sweep) {
    const int dx = (sweep & 1) ? -1 : 1, dy = (sweep & 2) ? -1 : 1; /* direction of travel */
    int west, east, north, south; /* upstream and downstream along each direction */
    MPI_Cart_shift(grid, 1, dx, &west, &east);
    MPI_Cart_shift(grid, 0, dy, &north, &south);
    for (int k = 0; k < planes; ++k) {
      if (west != MPI_PROC_NULL) MPI_Recv(buf, 16, MPI_DOUBLE, west, 1, grid, MPI_STATUS_IGNORE);
      if (north != MPI_PROC_NULL) MPI_Recv(buf, 16, MPI_DOUBLE, north, 2, grid, MPI_STATUS_IGNORE);
      compute_us(my_work);
      sum += buf[0] + y;
      buf[0] = sum;
      if (east != MPI_PROC_NULL) MPI_Send(buf, 16, MPI_DOUBLE, east, 1, grid);
      if (south != MPI_PROC_NULL) MPI_Send(buf, 16, MPI_DOUBLE, south, 2, grid);
    }
  }
  MPI_Comm_free(&grid);
  if (rank == 0) printf("bench_wavefront: %d x %d grid, 8 sweeps of %d planes\n", dims[0], dims[1], planes);
  MPI_Finalize();
  return 0;
}
