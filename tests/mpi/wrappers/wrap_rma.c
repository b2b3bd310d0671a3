/* critpath — tests/mpi/wrappers/wrap_rma.c: one-sided communication (2 ranks): window
 * constructors, fence, passive target with lock/flush, request-based operations, PSCW and
 * the atomics. check_rma.py checks windows, targets, bytes and synchronisation events. */
#include <mpi.h>
#include <stdio.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "wrap_rma: %s failed\n", #c); MPI_Abort(MPI_COMM_WORLD, 2); } } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(n == 2);
  int buf[10] = {0}, src[4] = {1, 2, 3, 4}, got[4], one = 1, res = 0, cmp = 0;
  MPI_Win w1, w2, w3;

  MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w1);
  MPI_Win_fence(0, w1);
  if (r == 0) {
    MPI_Put(src, 3, MPI_INT, 1, 0, 3, MPI_INT, w1);
    MPI_Get(got, 2, MPI_INT, 1, 5, 2, MPI_INT, w1);
    MPI_Accumulate(&one, 1, MPI_INT, 1, 8, 1, MPI_INT, MPI_SUM, w1);
    MPI_Put(src, 3, MPI_INT, MPI_PROC_NULL, 0, 3, MPI_INT, w1);
  }
  MPI_Win_fence(0, w1);
  if (r == 1) CHECK(buf[0] == 1 && buf[2] == 3 && buf[8] == 1);
  if (r == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w1);
    MPI_Get_accumulate(&one, 1, MPI_INT, &res, 1, MPI_INT, 1, 9, 1, MPI_INT, MPI_SUM, w1);
    MPI_Fetch_and_op(&one, &res, MPI_INT, 1, 9, MPI_SUM, w1);
    MPI_Compare_and_swap(&one, &cmp, &res, MPI_INT, 1, 7, w1);
    MPI_Win_flush(1, w1);
    MPI_Win_unlock(1, w1);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  double* base = NULL;
  double dd[2] = {1.5, 2.5}, de[2];
  MPI_Win_allocate(8 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w2);
  MPI_Win_lock_all(0, w2);
  MPI_Request q[2];
  MPI_Rput(dd, 2, MPI_DOUBLE, 1 - r, 0, 2, MPI_DOUBLE, w2, &q[0]);
  MPI_Rget(de, 1, MPI_DOUBLE, 1 - r, 4, 1, MPI_DOUBLE, w2, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  MPI_Win_flush_all(w2);
  MPI_Win_unlock_all(w2);
  MPI_Win_free(&w2);

  /* post/start/complete/wait: rank 0 accesses rank 1 */
  MPI_Group world, peer;
  int other = 1 - r;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &other, &peer);
  if (r == 0) {
    MPI_Win_start(peer, 0, w1);
    MPI_Put(src, 4, MPI_INT, 1, 0, 4, MPI_INT, w1);
    MPI_Win_complete(w1);
  } else {
    MPI_Win_post(peer, 0, w1);
    MPI_Win_wait(w1);
    CHECK(buf[3] == 4);
  }
  MPI_Group_free(&peer);
  MPI_Group_free(&world);

  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w3);
  MPI_Win_free(&w3);
  MPI_Win_free(&w1);
  MPI_Finalize();
  if (r == 0) printf("wrap_rma: done\n");
  return 0;
}
