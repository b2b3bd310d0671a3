/* critpath — tests/mpi/corpus/cart_sub.c (corpus: np=4): Cartesian sub-grids: a 2x2 grid with
 * reordering allowed, Cart_sub into rows and columns row and
 * column reductions, Cart_coords/Cart_rank/Cart_shift, and Dims_create. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int n = corpus_size();
  int dims[2] = {0, 0}, periods[2] = {0, 1};
  MPI_Dims_create(n, 2, dims);
  MPI_Comm grid, row, col;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
  int gr, coords[2];
  MPI_Comm_rank(grid, &gr);
  MPI_Cart_coords(grid, gr, 2, coords);
  int back;
  MPI_Cart_rank(grid, coords, &back);
  int keep_row[2] = {0, 1}, keep_col[2] = {1, 0};
  MPI_Cart_sub(grid, keep_row, &row);
  MPI_Cart_sub(grid, keep_col, &col);
  int rs, cs, v = coords[0] * 10 + coords[1];
  MPI_Allreduce(&v, &rs, 1, MPI_INT, MPI_SUM, row);
  MPI_Allreduce(&v, &cs, 1, MPI_INT, MPI_SUM, col);
  int src, dst, got = -1;
  MPI_Cart_shift(row, 0, 1, &src, &dst);
  MPI_Sendrecv(&v, 1, MPI_INT, dst, 0, &got, 1, MPI_INT, src, 0, row, MPI_STATUS_IGNORE);
  /* output in grid order, not in world order (reordering may permute) */
  char line[128];
  snprintf(line, sizeof line, "dims %dx%d coords (%d,%d) rank back ok %d row sum %d col sum %d "
           "shifted %d", dims[0], dims[1], coords[0], coords[1], back == gr, rs, cs, got);
  say("%s", line);
  say_flush(grid);
  MPI_Comm_free(&row);
  MPI_Comm_free(&col);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
