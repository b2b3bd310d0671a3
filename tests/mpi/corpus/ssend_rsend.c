/* critpath — tests/mpi/corpus/ssend_rsend.c (corpus: np=2): synchronous and ready sends:
 * Ssend/Issend against late receives, Rsend/Irsend against receives known to be posted
 * (a zero-byte handshake after Irecv), and a ready send of a large message. */
#include "corpus.h"

enum { kBig = 1 << 16 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  int v = 0;
  static int big[kBig];
  if (r == 0) {
    v = 11;
    MPI_Ssend(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Request q;
    v = 12;
    MPI_Issend(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &q);
    int flag = 0;
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Recv(NULL, 0, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* receiver is ready */
    v = 13;
    MPI_Rsend(&v, 1, MPI_INT, 1, 4, MPI_COMM_WORLD);
    for (int i = 0; i < kBig; ++i) big[i] = i;
    MPI_Irsend(big, kBig, MPI_INT, 1, 5, MPI_COMM_WORLD, &q);
    while (!flag) MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    say("sender done");
  } else {
    MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    say("ssend got %d", v);
    MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    say("issend got %d", v);
    MPI_Request q[2];
    MPI_Irecv(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(big, kBig, MPI_INT, 0, 5, MPI_COMM_WORLD, &q[1]);
    MPI_Send(NULL, 0, MPI_INT, 0, 3, MPI_COMM_WORLD);
    MPI_Status st[2];
    MPI_Waitall(2, q, st);
    int count;
    MPI_Get_count(&st[1], MPI_INT, &count);
    say("rsend got %d; irsend got %d ints, last %d", v, count, big[kBig - 1]);
  }
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
