/* critpath — tests/mpi/wrappers/wrap_comm.c: communicator constructors, groups, topologies
 * and intercommunicators (4 ranks). check_comm.py checks that every communicator gets one id
 * on all its members (intercommunicators: on both groups) and every event carries it. */
#include <mpi.h>
#include <stdio.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "wrap_comm: %s failed\n", #c); MPI_Abort(MPI_COMM_WORLD, 2); } } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, n, v = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(n == 4);
  MPI_Comm dupi, idup, shared, cg = MPI_COMM_NULL, half, inter, merged, cart, row, graph, dist;
  MPI_Request q;

  MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dupi);
  MPI_Barrier(dupi);
  MPI_Comm_idup(MPI_COMM_WORLD, &idup, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Barrier(idup);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  MPI_Barrier(shared);

  MPI_Group world, g01;
  int first[2] = {0, 1};
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 2, first, &g01);
  if (r < 2) {
    MPI_Comm_create_group(MPI_COMM_WORLD, g01, 7, &cg);
    MPI_Barrier(cg);
  }
  MPI_Group_free(&g01);
  MPI_Group_free(&world);

  /* intercommunicator between the even and the odd ranks */
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, r % 2 == 0 ? 1 : 0, 9, &inter);
  int rr;
  MPI_Comm_rank(inter, &rr);
  if (r == 0) MPI_Send(&r, 1, MPI_INT, 0, 3, inter);        /* to world rank 1 */
  if (r == 1) MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, MPI_STATUS_IGNORE);
  MPI_Intercomm_merge(inter, r % 2, &merged);
  int sum = 0;
  MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, merged);
  CHECK(sum == 6);

  int dims[2] = {2, 2}, periods[2] = {1, 0}, remain[2] = {0, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Cart_sub(cart, remain, &row);
  MPI_Barrier(row);
  int index[4] = {2, 4, 6, 8}, edges[8] = {1, 3, 0, 2, 1, 3, 0, 2};
  MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph);
  int src = r, deg = 1, dst = (r + 1) % 4;
  MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                        &dist);
  MPI_Barrier(dist);

  MPI_Comm_free(&dist);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  if (cg != MPI_COMM_NULL) MPI_Comm_free(&cg);
  MPI_Comm_free(&shared);
  MPI_Comm_free(&idup);
  MPI_Comm_free(&dupi);
  MPI_Finalize();
  if (r == 0) printf("wrap_comm: done\n");
  return 0;
}
