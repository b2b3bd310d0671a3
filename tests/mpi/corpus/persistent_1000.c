/* critpath — tests/mpi/corpus/persistent_1000.c (corpus: np=2): persistent send and receive
 * requests reused 1000 times (Start, Startall, Wait, Waitall, Test), then freed. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), peer = 1 - r;
  int out[4], in[4];
  MPI_Request q[2];
  MPI_Send_init(out, 4, MPI_INT, peer, 7, MPI_COMM_WORLD, &q[0]);
  MPI_Recv_init(in, 4, MPI_INT, peer, 7, MPI_COMM_WORLD, &q[1]);
  long sum = 0;
  for (int i = 0; i < 1000; ++i) {
    for (int k = 0; k < 4; ++k) out[k] = i + k + r;
    if (i % 3 == 0) {
      MPI_Startall(2, q);
      MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    } else if (i % 3 == 1) {
      MPI_Start(&q[1]);
      MPI_Start(&q[0]);
      MPI_Wait(&q[0], MPI_STATUS_IGNORE);
      MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    } else {
      MPI_Startall(2, q);
      int flag = 0;
      while (!flag) MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
    }
    for (int k = 0; k < 4; ++k) sum += in[k];
  }
  /* waiting on an inactive persistent request returns at once with an empty status */
  MPI_Status st;
  MPI_Wait(&q[1], &st);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_Request_free(&q[0]);
  MPI_Request_free(&q[1]);
  say("1000 rounds: sum=%ld inactive-wait count=%d", sum, count);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
