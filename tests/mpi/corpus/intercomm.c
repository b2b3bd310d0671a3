/* critpath — tests/mpi/corpus/intercomm.c (corpus: np=4): intercommunicators — create one
 * between the even and odd ranks, p2p across it (blocking and nonblocking), rooted and
 * all-to-all collectives over it (MPI_ROOT / MPI_PROC_NULL), merge it, dup it, and free all. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  const int color = r % 2;
  MPI_Comm half, inter, merged, inter2;
  MPI_Comm_split(MPI_COMM_WORLD, color, r, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 33, &inter);
  int lrank, rsize, is_inter;
  MPI_Comm_rank(inter, &lrank);
  MPI_Comm_remote_size(inter, &rsize);
  MPI_Comm_test_inter(inter, &is_inter);
  say("inter: local rank %d remote size %d is_inter %d", lrank, rsize, is_inter);

  /* p2p across: local rank i talks to remote rank i */
  int v = 100 + r, got = -1;
  MPI_Status st;
  MPI_Sendrecv(&v, 1, MPI_INT, lrank, 1, &got, 1, MPI_INT, lrank, 1, inter, &st);
  say("sendrecv across: got %d from remote %d", got, st.MPI_SOURCE);
  MPI_Request q[2];
  MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 2, inter, &q[0]);
  MPI_Isend(&v, 1, MPI_INT, (lrank + 1) % rsize, 2, inter, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  say("isend/irecv across: got %d", got);

  /* bcast from group 0's rank 0 to group 1 */
  int b = color == 0 ? 77 : -1;
  int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(&b, 1, MPI_INT, root, inter);
  say("inter bcast: %d", b);
  int s = -1;
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, inter);
  say("inter allreduce (remote group's sum): %d", s);
  MPI_Barrier(inter);

  MPI_Intercomm_merge(inter, color, &merged);
  int mrank, msize;
  MPI_Comm_rank(merged, &mrank);
  MPI_Comm_size(merged, &msize);
  int ms = 0;
  MPI_Allreduce(&mrank, &ms, 1, MPI_INT, MPI_SUM, merged);
  say("merged: rank %d of %d, rank sum %d", mrank, msize, ms);

  MPI_Comm_dup(inter, &inter2);
  MPI_Sendrecv(&v, 1, MPI_INT, lrank, 3, &got, 1, MPI_INT, lrank, 3, inter2, MPI_STATUS_IGNORE);
  say("dup of inter: got %d", got);
  MPI_Comm_free(&inter2);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
