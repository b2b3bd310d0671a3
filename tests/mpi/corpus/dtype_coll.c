/* critpath — tests/mpi/corpus/dtype_coll.c (corpus: np=3): derived datatypes in collectives:
 * a contiguous pair type in Allgather, a vector (column) type resized for Gather/Scatter of
 * matrix columns, a struct type in Bcast and Allgather, an indexed type in Alltoall. */
#include <stddef.h>

#include "corpus.h"

struct Rec {
  int a;
  double b;
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();

  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int v[2] = {r, 2 * r}, s[8];
  MPI_Allgather(v, 1, pair, s, 2, MPI_INT, MPI_COMM_WORLD);
  say("contiguous allgather: %d %d %d %d", s[0], s[1], s[2 * n - 2], s[2 * n - 1]);

  /* n x n matrix on rank 0: column j goes to rank j */
  MPI_Datatype col, colr;
  MPI_Type_vector(n, 1, n, MPI_INT, &col);
  MPI_Type_create_resized(col, 0, sizeof(int), &colr);
  MPI_Type_commit(&colr);
  int m[16], mine[4];
  for (int i = 0; i < n * n; ++i) m[i] = i;
  MPI_Scatter(m, 1, colr, mine, n, MPI_INT, 0, MPI_COMM_WORLD);
  say("column scatter: %d %d %d", mine[0], mine[1], mine[n - 1]);
  for (int i = 0; i < n; ++i) mine[i] *= -1;
  int back[16] = {0};
  MPI_Gather(mine, n, MPI_INT, back, 1, colr, 0, MPI_COMM_WORLD);
  if (r == 0) say("column gather: %d %d %d", back[0], back[1], back[n * n - 1]);

  MPI_Datatype rec;
  int bl[2] = {1, 1};
  MPI_Aint dd[2] = {offsetof(struct Rec, a), offsetof(struct Rec, b)};
  MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, dd, ty, &rec);
  MPI_Type_commit(&rec);
  struct Rec one = {r == 0 ? 42 : 0, r == 0 ? 2.5 : 0.0}, all[4];
  MPI_Bcast(&one, 1, rec, 0, MPI_COMM_WORLD);
  say("struct bcast: %d %.1f", one.a, one.b);
  one.a = r;
  one.b = r / 2.0;
  MPI_Allgather(&one, 1, rec, all, 1, rec, MPI_COMM_WORLD);
  say("struct allgather: %d %.1f %d %.1f", all[0].a, all[0].b, all[n - 1].a, all[n - 1].b);

  MPI_Datatype every2;
  MPI_Type_create_indexed_block(2, 1, (int[]){0, 2}, MPI_INT, &every2);
  MPI_Datatype every2r;
  MPI_Type_create_resized(every2, 0, 4 * sizeof(int), &every2r);
  MPI_Type_commit(&every2r);
  int src[16], dst[8];
  for (int i = 0; i < 4 * n; ++i) src[i] = 100 * r + i;
  MPI_Alltoall(src, 1, every2r, dst, 2, MPI_INT, MPI_COMM_WORLD);
  say("indexed alltoall: %d %d %d %d", dst[0], dst[1], dst[2 * n - 2], dst[2 * n - 1]);

  MPI_Type_free(&pair);
  MPI_Type_free(&col);
  MPI_Type_free(&colr);
  MPI_Type_free(&rec);
  MPI_Type_free(&every2);
  MPI_Type_free(&every2r);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
