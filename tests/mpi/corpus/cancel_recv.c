/* critpath — tests/mpi/corpus/cancel_recv.c (corpus: np=2): cancelled receives — a plain
 * Irecv cancelled and waited, one cancelled and completed by Test, a cancelled persistent
 * receive that is restarted afterwards, and a cancelled receive inside a Waitany beside a matched one. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  const int peer = 1 - r;
  int buf = -1, cancelled = 0, flag = 0;
  MPI_Request q;
  MPI_Status st;

  MPI_Irecv(&buf, 1, MPI_INT, peer, 100, MPI_COMM_WORLD, &q);
  MPI_Cancel(&q);
  MPI_Wait(&q, &st);
  MPI_Test_cancelled(&st, &cancelled);
  say("irecv cancelled+wait: cancelled=%d null=%d", cancelled, q == MPI_REQUEST_NULL);

  MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
  MPI_Cancel(&q);
  do MPI_Test(&q, &flag, &st); while (!flag);
  MPI_Test_cancelled(&st, &cancelled);
  say("any-source irecv cancelled+test: cancelled=%d", cancelled);
  /* the wildcard receive must be gone on both ranks before any later message is sent */
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Request pr;
  MPI_Recv_init(&buf, 1, MPI_INT, peer, 101, MPI_COMM_WORLD, &pr);
  MPI_Start(&pr);
  MPI_Cancel(&pr);
  MPI_Wait(&pr, &st);
  MPI_Test_cancelled(&st, &cancelled);
  say("persistent cancelled: cancelled=%d", cancelled);
  MPI_Barrier(MPI_COMM_WORLD); /* the peer's tag-101 message must not meet the first activation */
  /* the same persistent request, restarted, now receives a real message */
  MPI_Start(&pr);
  int v = 40 + r;
  MPI_Send(&v, 1, MPI_INT, peer, 101, MPI_COMM_WORLD);
  MPI_Wait(&pr, &st);
  MPI_Test_cancelled(&st, &cancelled);
  say("persistent restarted: buf=%d cancelled=%d", buf, cancelled);
  MPI_Request_free(&pr);

  /* a cancelled receive inside Waitany, next to one that is matched: both complete, in an
   * order MPI does not fix, so the results are printed by index */
  MPI_Request two[2];
  MPI_Irecv(&buf, 1, MPI_INT, peer, 102, MPI_COMM_WORLD, &two[0]);
  MPI_Irecv(&v, 1, MPI_INT, peer, 103, MPI_COMM_WORLD, &two[1]);
  MPI_Cancel(&two[0]);
  int w = 7 * (r + 1);
  MPI_Send(&w, 1, MPI_INT, peer, 103, MPI_COMM_WORLD);
  int seen[2] = {-1, -1};
  for (int k = 0; k < 2; ++k) {
    int idx = -1;
    MPI_Waitany(2, two, &idx, &st);
    MPI_Test_cancelled(&st, &seen[idx]);
  }
  say("waitany: [0] cancelled=%d [1] cancelled=%d v=%d", seen[0], seen[1], v);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
