/* critpath — tests/mpi/corpus/reduce_scatter.c (corpus: np=3): Reduce_scatter with uneven
 * counts (one rank receives nothing), Reduce_scatter_block, both in place and not, and the
 * nonblocking forms. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  int counts[8], total = 0;
  for (int i = 0; i < n; ++i) { counts[i] = i == 1 ? 0 : i + 1; total += counts[i]; }
  int send[32], recv[32];
  for (int i = 0; i < total; ++i) send[i] = i * (r + 1);
  MPI_Reduce_scatter(send, recv, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  long h = 0;
  for (int i = 0; i < counts[r]; ++i) h = h * 31 + recv[i];
  say("reduce_scatter: %d items, hash %ld", counts[r], h);
  for (int i = 0; i < 2 * n; ++i) send[i] = i + r;
  MPI_Reduce_scatter_block(send, recv, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  say("reduce_scatter_block: %d %d", recv[0], recv[1]);
  MPI_Reduce_scatter_block(MPI_IN_PLACE, send, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  say("in place block: %d %d", send[0], send[1]);
  MPI_Request q[2];
  int s2[32], r2[32];
  for (int i = 0; i < total; ++i) s2[i] = 1;
  for (int i = 0; i < 2 * n; ++i) send[i] = r;
  MPI_Ireduce_scatter(s2, r2, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]);
  MPI_Ireduce_scatter_block(send, recv, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  say("nonblocking: %d %d", counts[r] ? r2[0] : -1, recv[1]);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
