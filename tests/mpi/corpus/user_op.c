/* critpath — tests/mpi/corpus/user_op.c (corpus: np=4): user-defined reduction operations: a
 * commutative op on a struct type (Allreduce, Reduce, Reduce_scatter_block), a
 * non-commutative 2x2 matrix product (Reduce, Scan, Iallreduce: order matters), and
 * MPI_Op_commutative. */
#include <stddef.h>

#include "corpus.h"

typedef struct {
  int lo, hi;
  double sum;
} Stat;

static void stat_op(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  Stat* a = in;
  Stat* b = inout;
  for (int i = 0; i < *len; ++i) {
    if (a[i].lo < b[i].lo) b[i].lo = a[i].lo;
    if (a[i].hi > b[i].hi) b[i].hi = a[i].hi;
    b[i].sum += a[i].sum;
  }
}

/* inout = in x inout (row-major 2x2 int matrices) */
static void matmul(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  int* a = in;
  int* b = inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  MPI_Datatype st;
  int bl[2] = {2, 1};
  MPI_Aint dd[2] = {offsetof(Stat, lo), offsetof(Stat, sum)};
  MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, bl, dd, ty, &st);
  MPI_Type_commit(&st);
  MPI_Op sop, mop;
  MPI_Op_create(stat_op, 1, &sop);
  MPI_Op_create(matmul, 0, &mop);
  int c1, c2;
  MPI_Op_commutative(sop, &c1);
  MPI_Op_commutative(mop, &c2);
  say("commutative: stat %d matmul %d", c1, c2);

  Stat mine = {r * 3 - 2, r * r, r + 0.5}, all;
  MPI_Allreduce(&mine, &all, 1, st, sop, MPI_COMM_WORLD);
  say("allreduce stat: lo %d hi %d sum %.1f", all.lo, all.hi, all.sum);
  Stat blocks[8], one;
  for (int i = 0; i < n; ++i) { blocks[i].lo = i - r; blocks[i].hi = i + r; blocks[i].sum = 1; }
  MPI_Reduce_scatter_block(blocks, &one, 1, st, sop, MPI_COMM_WORLD);
  say("reduce_scatter_block stat: lo %d hi %d sum %.0f", one.lo, one.hi, one.sum);

  /* matrices [[1, r+1], [0, 1]]: the product encodes the order of the operands */
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT, &mat);
  MPI_Type_commit(&mat);
  int m[4] = {1, r + 1, r, 1}, p[4] = {0};
  MPI_Reduce(m, p, 1, mat, mop, 0, MPI_COMM_WORLD);
  if (r == 0) say("reduce matmul: %d %d %d %d", p[0], p[1], p[2], p[3]);
  MPI_Scan(m, p, 1, mat, mop, MPI_COMM_WORLD);
  say("scan matmul: %d %d %d %d", p[0], p[1], p[2], p[3]);
  MPI_Request q;
  MPI_Iallreduce(m, p, 1, mat, mop, MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  say("iallreduce matmul: %d %d %d %d", p[0], p[1], p[2], p[3]);
  MPI_Op_free(&sop);
  MPI_Op_free(&mop);
  MPI_Type_free(&st);
  MPI_Type_free(&mat);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
