/* critpath — tests/mpi/corpus/neighbor_cart.c (corpus: np=4): neighbourhood collectives on a
 * 2x2 periodic and a 1x4 non-periodic Cartesian topology (missing neighbours are
 * MPI_PROC_NULL): Neighbor_allgather(v), Neighbor_alltoall(v,w) and Ineighbor_*. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  MPI_Comm torus, line;
  int dims[2] = {2, 2}, periods[2] = {1, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &torus);
  int d1[1] = {4}, p1[1] = {0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &line);

  int me = 10 * r, nb[4];
  MPI_Neighbor_allgather(&me, 1, MPI_INT, nb, 1, MPI_INT, torus);
  say("torus allgather: %d %d %d %d", nb[0], nb[1], nb[2], nb[3]);
  int out[4], in[4];
  for (int i = 0; i < 4; ++i) out[i] = 100 * r + i;
  MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, torus);
  say("torus alltoall: %d %d %d %d", in[0], in[1], in[2], in[3]);

  int two[2] = {-1, -1};
  MPI_Neighbor_allgather(&me, 1, MPI_INT, two, 1, MPI_INT, line);
  say("line allgather: %d %d", two[0], two[1]);
  int cnt[2] = {1, 1}, dsp[2] = {0, 1};
  int lo[2] = {r, -r}, li[2] = {-7, -7};
  MPI_Neighbor_alltoallv(lo, cnt, dsp, MPI_INT, li, cnt, dsp, MPI_INT, line);
  say("line alltoallv: %d %d", li[0], li[1]);
  MPI_Aint bd[2] = {0, sizeof(int)};
  MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
  li[0] = li[1] = -7;
  MPI_Neighbor_alltoallw(lo, cnt, bd, ty, li, cnt, bd, ty, line);
  say("line alltoallw: %d %d", li[0], li[1]);
  int gv[4] = {0};
  MPI_Neighbor_allgatherv(&me, 1, MPI_INT, gv, cnt, dsp, MPI_INT, line);
  say("line allgatherv: %d %d", gv[0], gv[1]);

  MPI_Request q[2];
  int in2[4];
  MPI_Ineighbor_allgather(&me, 1, MPI_INT, nb, 1, MPI_INT, torus, &q[0]);
  MPI_Ineighbor_alltoall(out, 1, MPI_INT, in2, 1, MPI_INT, torus, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  say("inonblocking: %d %d", nb[0] + nb[3], in2[1] + in2[2]);
  MPI_Comm_free(&torus);
  MPI_Comm_free(&line);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
