/* critpath — tests/mpi/wrappers/wrap_coll.c: blocking collectives and communicator
 * constructors under the tracer (3 ranks). check_coll.py computes each rank's expected
 * COLL_END bytes from the same counts (docs/mpi-coverage.md, "Collective bytes"). */
#include <mpi.h>
#include <stdio.h>

#define N 3

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != N) MPI_Abort(MPI_COMM_WORLD, 2);
  const MPI_Comm W = MPI_COMM_WORLD;
  int s[64] = {0}, v[64] = {0};
  double ds[64] = {0}, dv[64] = {0};
  int counts[N] = {1, 2, 3}, displs[N] = {0, 1, 3};
  int sc[N], sd[N], rc[N], rd[N];
  for (int i = 0, so = 0, ro = 0; i < N; ++i) {
    sc[i] = r + i + 1; /* rank r sends r+i+1 ints to rank i */
    rc[i] = i + r + 1; /* ... so it receives i+r+1 from rank i */
    sd[i] = so;
    rd[i] = ro;
    so += sc[i];
    ro += rc[i];
  }

  MPI_Barrier(W);
  MPI_Bcast(s, 10, MPI_INT, 1, W);
  MPI_Gather(s, 2, MPI_INT, v, 2, MPI_INT, 1, W);
  MPI_Gatherv(s, r + 1, MPI_INT, v, counts, displs, MPI_INT, 1, W);
  MPI_Scatter(ds, 2, MPI_DOUBLE, dv, 2, MPI_DOUBLE, 1, W);
  MPI_Scatterv(s, counts, displs, MPI_INT, v, r + 1, MPI_INT, 1, W);
  MPI_Allgather(s, 1, MPI_INT, v, 1, MPI_INT, W);
  MPI_Allgatherv(s, r + 1, MPI_INT, v, counts, displs, MPI_INT, W);
  MPI_Alltoall(s, 2, MPI_INT, v, 2, MPI_INT, W);
  MPI_Alltoallv(s, sc, sd, MPI_INT, v, rc, rd, MPI_INT, W);
  {
    /* everything sent to rank 0 is a double, everything else an int */
    int ones[N] = {1, 1, 1}, wsd[N] = {0, 8, 16}, wrd[N] = {0, 8, 16};
    MPI_Datatype st[N] = {MPI_DOUBLE, MPI_INT, MPI_INT}, rt[N];
    for (int i = 0; i < N; ++i) rt[i] = r == 0 ? MPI_DOUBLE : MPI_INT;
    MPI_Alltoallw(ds, ones, wsd, st, dv, ones, wrd, rt, W);
  }
  MPI_Reduce(s, v, 4, MPI_INT, MPI_SUM, 1, W);
  MPI_Allreduce(ds, dv, 3, MPI_DOUBLE, MPI_SUM, W);
  MPI_Allreduce(MPI_IN_PLACE, dv, 3, MPI_DOUBLE, MPI_SUM, W);
  MPI_Reduce_scatter(s, v, counts, MPI_INT, MPI_SUM, W);
  MPI_Reduce_scatter_block(s, v, 2, MPI_INT, MPI_SUM, W);
  MPI_Scan(s, v, 2, MPI_INT, MPI_SUM, W);
  MPI_Exscan(s, v, 2, MPI_INT, MPI_SUM, W);
  MPI_Reduce_local(s, v, 2, MPI_INT, MPI_SUM);
  /* MPI_IN_PLACE at the root / everywhere */
  MPI_Gather(r == 1 ? MPI_IN_PLACE : s, 2, MPI_INT, v, 2, MPI_INT, 1, W);
  MPI_Scatter(s, 2, MPI_INT, r == 1 ? MPI_IN_PLACE : v, 2, MPI_INT, 1, W);
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, 1, MPI_INT, W);
  MPI_Reduce(r == 1 ? MPI_IN_PLACE : s, v, 4, MPI_INT, MPI_SUM, 1, W);

  /* communicators: ids agree among members and differ between communicators */
  MPI_Comm half, dup, created, some;
  MPI_Comm_split(W, r % 2, r, &half); /* {0, 2} and {1} */
  MPI_Bcast(s, 5, MPI_INT, 0, half);
  MPI_Allreduce(s, v, 1, MPI_INT, MPI_SUM, half);
  MPI_Comm_dup(W, &dup);
  MPI_Barrier(dup);
  MPI_Allgather(s, 1, MPI_INT, v, 1, MPI_INT, dup);
  MPI_Group wg, g01;
  MPI_Comm_group(W, &wg);
  int first_two[2] = {0, 1};
  MPI_Group_incl(wg, 2, first_two, &g01);
  MPI_Comm_create(W, g01, &created); /* MPI_COMM_NULL on rank 2 */
  if (created != MPI_COMM_NULL) MPI_Barrier(created);
  MPI_Comm_split(W, r == 1 ? MPI_UNDEFINED : 0, 0, &some); /* MPI_COMM_NULL on rank 1 */
  if (some != MPI_COMM_NULL) {
    MPI_Barrier(some);
    MPI_Comm_free(&some);
  }
  if (created != MPI_COMM_NULL) MPI_Comm_free(&created);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  MPI_Group_free(&g01);
  MPI_Group_free(&wg);
  MPI_Finalize();
  if (r == 0) printf("wrap_coll: done\n");
  return 0;
}
