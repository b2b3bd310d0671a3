/* critpath — tests/mpi/corpus/in_place.c (corpus: np=3): MPI_IN_PLACE in every collective
 * that allows it: Allreduce, Reduce (root), Gather/Gatherv (root), Scatter/Scatterv (root),
 * Allgather/Allgatherv, Alltoall/Alltoallv/Alltoallw, Reduce_scatter(_block), Scan, Exscan,
 * and the nonblocking forms of Allreduce, Allgather and Alltoall. */
#include "corpus.h"

enum { kMax = 4 };

static long digest(const int* a, int n) {
  long h = 0;
  for (int i = 0; i < n; ++i) h = h * 31 + a[i];
  return h;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  MPI_Comm w = MPI_COMM_WORLD;
  int a[kMax * 8], counts[kMax], displs[kMax];
  MPI_Datatype types[kMax];
  for (int i = 0; i < n; ++i) { counts[i] = 1; displs[i] = i; types[i] = MPI_INT; }
  int wcounts[kMax], wdispls[kMax];
  for (int i = 0; i < n; ++i) { wcounts[i] = 1; wdispls[i] = i * (int)sizeof(int); }
#define FILL(k) for (int i = 0; i < 8 * kMax; ++i) a[i] = (k) * 100 + r * 10 + i

  FILL(1); MPI_Allreduce(MPI_IN_PLACE, a, 4, MPI_INT, MPI_SUM, w); say("allreduce %ld", digest(a, 4));
  FILL(2);
  if (r == 0) MPI_Reduce(MPI_IN_PLACE, a, 4, MPI_INT, MPI_MAX, 0, w);
  else MPI_Reduce(a, NULL, 4, MPI_INT, MPI_MAX, 0, w);
  say("reduce %ld", r == 0 ? digest(a, 4) : 0);
  FILL(3);
  if (r == 0) MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, a, 1, MPI_INT, 0, w);
  else MPI_Gather(a, 1, MPI_INT, NULL, 0, MPI_INT, 0, w);
  say("gather %ld", r == 0 ? digest(a, n) : 0);
  FILL(4);
  if (r == 0) MPI_Gatherv(MPI_IN_PLACE, 1, MPI_INT, a, counts, displs, MPI_INT, 0, w);
  else MPI_Gatherv(a, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, w);
  say("gatherv %ld", r == 0 ? digest(a, n) : 0);
  FILL(5);
  if (r == 0) MPI_Scatter(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, w);
  else MPI_Scatter(NULL, 1, MPI_INT, a, 1, MPI_INT, 0, w);
  say("scatter %d", a[0]);
  FILL(6);
  if (r == 0) MPI_Scatterv(a, counts, displs, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, w);
  else MPI_Scatterv(NULL, NULL, NULL, MPI_INT, a, 1, MPI_INT, 0, w);
  say("scatterv %d", a[0]);
  FILL(7); MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INT, w); say("allgather %ld", digest(a, n));
  FILL(8); MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, counts, displs, MPI_INT, w); say("allgatherv %ld", digest(a, n));
  FILL(9); MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INT, w); say("alltoall %ld", digest(a, n));
  FILL(10); MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, a, counts, displs, MPI_INT, w); say("alltoallv %ld", digest(a, n));
  FILL(11); MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, a, wcounts, wdispls, types, w); say("alltoallw %ld", digest(a, n));
  FILL(12); MPI_Reduce_scatter(MPI_IN_PLACE, a, counts, MPI_INT, MPI_SUM, w); say("reduce_scatter %d", a[0]);
  FILL(13); MPI_Reduce_scatter_block(MPI_IN_PLACE, a, 1, MPI_INT, MPI_SUM, w); say("reduce_scatter_block %d", a[0]);
  FILL(14); MPI_Scan(MPI_IN_PLACE, a, 2, MPI_INT, MPI_SUM, w); say("scan %ld", digest(a, 2));
  FILL(15); MPI_Exscan(MPI_IN_PLACE, a, 2, MPI_INT, MPI_SUM, w); say("exscan %ld", r == 0 ? 0 : digest(a, 2));
  MPI_Request q;
  FILL(16); MPI_Iallreduce(MPI_IN_PLACE, a, 4, MPI_INT, MPI_SUM, w, &q); MPI_Wait(&q, MPI_STATUS_IGNORE); say("iallreduce %ld", digest(a, 4));
  FILL(17); MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INT, w, &q); MPI_Wait(&q, MPI_STATUS_IGNORE); say("iallgather %ld", digest(a, n));
  FILL(18); MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_INT, w, &q); MPI_Wait(&q, MPI_STATUS_IGNORE); say("ialltoall %ld", digest(a, n));
  FILL(19);
  if (r == 0) MPI_Ireduce(MPI_IN_PLACE, a, 2, MPI_INT, MPI_MIN, 0, w, &q);
  else MPI_Ireduce(a, NULL, 2, MPI_INT, MPI_MIN, 0, w, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  say("ireduce %ld", r == 0 ? digest(a, 2) : 0);
  say_flush(w);
  MPI_Finalize();
  return 0;
}
