/* critpath — tests/mpi/corpus/zero_bytes.c (corpus: np=3): zero-byte messages everywhere:
 * blocking, nonblocking, synchronous and persistent p2p with count 0 (and a NULL buffer), and
 * zero-count collectives. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  MPI_Status st;
  int count = -1;

  MPI_Sendrecv(NULL, 0, MPI_INT, right, 1, NULL, 0, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  say("sendrecv 0: source=%d count=%d", st.MPI_SOURCE, count);

  MPI_Request q[2];
  MPI_Irecv(NULL, 0, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[0]);
  MPI_Issend(NULL, 0, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[1]);
  MPI_Status sts[2];
  MPI_Waitall(2, q, sts);
  MPI_Get_count(&sts[0], MPI_DOUBLE, &count);
  say("issend/irecv 0: tag=%d count=%d", sts[0].MPI_TAG, count);

  /* a zero-byte message received into a larger buffer */
  int big[8];
  if (r == 0) MPI_Send(big, 0, MPI_INT, 1, 3, MPI_COMM_WORLD);
  if (r == 1) {
    MPI_Recv(big, 8, MPI_INT, 0, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    say("recv 0 into 8: count=%d", count);
  }

  MPI_Request ps, pr;
  MPI_Send_init(NULL, 0, MPI_BYTE, right, 4, MPI_COMM_WORLD, &ps);
  MPI_Recv_init(NULL, 0, MPI_BYTE, left, 4, MPI_COMM_WORLD, &pr);
  for (int i = 0; i < 10; ++i) {
    MPI_Start(&pr);
    MPI_Start(&ps);
    MPI_Wait(&pr, MPI_STATUS_IGNORE);
    MPI_Wait(&ps, MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&ps);
  MPI_Request_free(&pr);
  say("persistent 0 x10 done");

  int x = 5;
  MPI_Bcast(&x, 0, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD);
  MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Request cq;
  MPI_Iallreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &cq);
  MPI_Wait(&cq, MPI_STATUS_IGNORE);
  say("zero-count collectives done, x=%d", x);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
