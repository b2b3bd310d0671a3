/* critpath — tests/mpi/corpus/cancel_send.c (corpus: np=2): a cancelled send. Whether a send
 * can be cancelled is implementation-defined, so the printed output only states that the
 * outcome was consistent: when the cancel succeeded the receiver gets nothing, otherwise it
 * receives the message. The raw outcome goes to stderr (not compared). */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  int cancelled = 0, data = 1234, ok = 1;
  if (r == 0) {
    /* Issend: cannot complete before the receiver matches it, so the cancel has a chance */
    MPI_Request q;
    MPI_Status st;
    MPI_Issend(&data, 1, MPI_INT, 1, 55, MPI_COMM_WORLD, &q);
    MPI_Cancel(&q);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&q, &st); /* if the cancel failed, this needs rank 1's receive (posted by now) */
    MPI_Test_cancelled(&st, &cancelled);
    fprintf(stderr, "cancel_send: send cancelled=%d (implementation-defined)\n", cancelled);
    MPI_Send(&cancelled, 1, MPI_INT, 1, 56, MPI_COMM_WORLD);
  } else {
    int got = -1, rc_cancelled = 0;
    MPI_Request q;
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Irecv(&got, 1, MPI_INT, 0, 55, MPI_COMM_WORLD, &q);
    MPI_Recv(&cancelled, 1, MPI_INT, 0, 56, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (cancelled) { /* nothing will arrive: cancel our receive too */
      MPI_Cancel(&q);
      MPI_Wait(&q, &st);
      MPI_Test_cancelled(&st, &rc_cancelled);
      ok = rc_cancelled == 1 && got == -1;
    } else {
      MPI_Wait(&q, &st);
      ok = got == 1234;
    }
  }
  say("cancelled send: outcome consistent=%d", ok);
  /* the channel is clean afterwards */
  int v = r, got = -1;
  MPI_Sendrecv(&v, 1, MPI_INT, 1 - r, 57, &got, 1, MPI_INT, 1 - r, 57, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  say("after: got=%d", got);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
