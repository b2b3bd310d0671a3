/* critpath — tests/mpi/wrappers/wrap_icoll.c: nonblocking collectives (completed by Wait,
 * Test loops and Waitall), MPI_IN_PLACE, and the neighbourhood collectives on a Cartesian
 * ring and a distributed graph (3 ranks). check_icoll.py checks every rank's events. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "wrap_icoll: %s failed\n", #c); MPI_Abort(MPI_COMM_WORLD, 2); } } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(n == 3);
  MPI_Request q, qs[6];
  int a[32], b[32], flag = 0;
  double d[3] = {r, r, r};
  for (int i = 0; i < 32; ++i) a[i] = r * 100 + i;

  MPI_Ibarrier(MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Ibcast(a, 10, MPI_INT, 1, MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  CHECK(a[0] == 100);
  MPI_Iallreduce(MPI_IN_PLACE, d, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
  while (!flag) MPI_Test(&q, &flag, MPI_STATUS_IGNORE); /* only the completing test is recorded */
  CHECK(d[0] == 3.0);

  int counts[3] = {1, 2, 3}, displs[3] = {0, 1, 3};
  MPI_Igather(a, 2, MPI_INT, b, 2, MPI_INT, 1, MPI_COMM_WORLD, &qs[0]);
  int c[32];
  MPI_Iallgatherv(a, r + 1, MPI_INT, c, counts, displs, MPI_INT, MPI_COMM_WORLD, &qs[1]);
  int e[6], f[6];
  for (int i = 0; i < 6; ++i) e[i] = i;
  MPI_Ialltoall(e, 2, MPI_INT, f, 2, MPI_INT, MPI_COMM_WORLD, &qs[2]);
  int s1[4] = {1, 2, 3, 4}, s2[4];
  MPI_Ireduce(s1, s2, 4, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD, &qs[3]);
  int x1 = r + 1, x2 = 0, x3 = 0;
  MPI_Iscan(&x1, &x2, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &qs[4]);
  MPI_Iexscan(&x1, &x3, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &qs[5]);
  MPI_Waitall(6, qs, MPI_STATUSES_IGNORE);
  CHECK(x2 == (r + 1) * (r + 2) / 2);
  int g[6] = {1, 1, 1, 1, 1, 1}, h[2];
  MPI_Ireduce_scatter_block(g, h, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  CHECK(h[0] == 3);
  int sc[6] = {0, 1, 2, 3, 4, 5}, rc[3];
  MPI_Iscatterv(sc, counts, displs, MPI_INT, r == 1 ? MPI_IN_PLACE : rc, r + 1, MPI_INT, 1,
                MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);

  /* neighbourhood collectives: a periodic ring (2 neighbours) */
  MPI_Comm ring, dist;
  int dims[1] = {3}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  int nb[2];
  MPI_Neighbor_allgather(&r, 1, MPI_INT, nb, 1, MPI_INT, ring);
  CHECK(nb[0] == (r + 2) % 3 && nb[1] == (r + 1) % 3);
  int ns[4] = {r, r, r, r}, nr[4];
  MPI_Neighbor_alltoall(ns, 2, MPI_INT, nr, 2, MPI_INT, ring);
  int nc[2] = {1, 2}, nd[2] = {0, 1};
  MPI_Ineighbor_allgatherv(&r, 1, MPI_INT, nb, nc, nd, MPI_INT, ring, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  /* a directed ring as a distributed graph: 1 source, 1 destination */
  int src = (r + 2) % 3, dst = (r + 1) % 3;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &dist);
  double dv[3] = {1, 2, 3}, dr[3];
  int sct[1] = {3}, sdi[1] = {0}, rct[1] = {3}, rdi[1] = {0};
  MPI_Neighbor_alltoallv(dv, sct, sdi, MPI_DOUBLE, dr, rct, rdi, MPI_DOUBLE, dist);
  MPI_Ineighbor_alltoall(dv, 1, MPI_DOUBLE, dr, 1, MPI_DOUBLE, dist, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Comm_free(&dist);
  MPI_Comm_free(&ring);
  MPI_Finalize();
  if (r == 0) printf("wrap_icoll: done\n");
  return 0;
}
