/* critpath — tests/mpi/corpus/cancel_send.c (corpus: np=2): a cancelled send. Whether a send
 * can be cancelled is implementation-defined, so the printed output only states that the
 * outcome was consistent: when the cancel succeeded the receiver gets nothing, otherwise it
 * receives the message. The raw outcome goes to stderr (not compared). */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  int cancelled = 0, data = 1234;
  if (r == 0) {
    MPI_Request q;
    MPI_Status st;
    MPI_Issend(&data, 1, MPI_INT, 1, 55, MPI_COMM_WORLD, &q);
    MPI_Cancel(&q);
    MPI_Wait(&q, &st);
    MPI_Test_cancelled(&st, &cancelled);
    fprintf(stderr, "cancel_send: send cancelled=%d (implementation-defined)\n", cancelled);
  }
  MPI_Bcast(&cancelled, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (r == 1) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(0, 55, MPI_COMM_WORLD, &flag, &st);
    if (!cancelled) {
      int got = 0;
      MPI_Recv(&got, 1, MPI_INT, 0, 55, MPI_COMM_WORLD, &st);
      ok = got == 1234;
    } else {
      ok = !flag;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  say("cancelled send: outcome consistent=%d", ok);
  /* the channel is clean afterwards */
  int v = r, got = -1;
  MPI_Sendrecv(&v, 1, MPI_INT, 1 - r, 56, &got, 1, MPI_INT, 1 - r, 56, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  say("after: got=%d", got);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
