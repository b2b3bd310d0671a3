/* critpath — tests/mpi/waits/cart_grid.c: a 2-D grid code on a Cartesian communicator with
 * row and column sub-communicators, for the re-analysis of a kept trace on fewer processes
 * than the run had (critpath-analyze hosts several traced ranks per process; check_reanalysis.py
 * compares every report with the in-situ one).
 *
 * Per iteration: "compute" until an absolute deadline (the last rank 20 ms late, so every
 * pattern below has waiting time to find), a halo exchange in both grid directions
 * (MPI_Sendrecv along dimension 0, MPI_Irecv/MPI_Isend/MPI_Waitall along dimension 1), a
 * broadcast along each row, a reduction down each column, an allreduce over the grid and,
 * every third iteration, a barrier over MPI_COMM_WORLD.
 */
#include "waits_util.h"

#define ITERATIONS 10
#define STEP_MS 40

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart, row, col;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
  const int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
  MPI_Cart_sub(cart, keep_row, &row);
  MPI_Cart_sub(cart, keep_col, &col);
  align();
  double u[4] = {rank, rank, rank, rank}, halo[4] = {0, 0, 0, 0}, acc = 0;
  for (int it = 0; it < ITERATIONS; ++it) {
    CRITPATH_REGION_BEGIN("compute");
    sleep_from_start_ms((long)it * STEP_MS + (rank == size - 1 ? 30 : 10));
    CRITPATH_REGION_END("compute");
    int src, dst;
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    MPI_Sendrecv(&u[0], 1, MPI_DOUBLE, dst, 7, &halo[0], 1, MPI_DOUBLE, src, 7, cart, MPI_STATUS_IGNORE);
    MPI_Cart_shift(cart, 1, 1, &src, &dst);
    MPI_Request req[4];
    MPI_Status st[4];
    MPI_Irecv(&halo[1], 1, MPI_DOUBLE, src, 8, cart, &req[0]);
    MPI_Irecv(&halo[2], 1, MPI_DOUBLE, dst, 9, cart, &req[1]);
    MPI_Isend(&u[1], 1, MPI_DOUBLE, dst, 8, cart, &req[2]);
    MPI_Isend(&u[2], 1, MPI_DOUBLE, src, 9, cart, &req[3]);
    MPI_Waitall(4, req, st);
    MPI_Bcast(&u[3], 1, MPI_DOUBLE, 0, row);
    double col_sum = 0;
    MPI_Reduce(&halo[0], &col_sum, 1, MPI_DOUBLE, MPI_SUM, 0, col);
    double local = halo[0] + halo[1] + halo[2] + col_sum, global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, cart);
    acc += global;
    if (it % 3 == 0) MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_free(&row);
  MPI_Comm_free(&col);
  MPI_Comm_free(&cart);
  if (rank == 0) printf("cart_grid: %d ranks (%d x %d), checksum %.1f\n", size, dims[0], dims[1], acc);
  MPI_Finalize();
  return 0;
}
