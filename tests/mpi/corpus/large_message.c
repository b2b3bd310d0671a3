/* critpath — tests/mpi/corpus/large_message.c (corpus: np=2): messages past the eager limit
 * (4 MiB, rendezvous protocol) in blocking, nonblocking and Sendrecv form, a large Bcast and
 * Allreduce, and a receive buffer larger than the message. */
#include "corpus.h"

enum { kN = 1 << 20 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), peer = 1 - r;
  int* a = malloc(sizeof(int) * kN * 2);
  int* b = malloc(sizeof(int) * kN * 2);
  for (int i = 0; i < kN; ++i) a[i] = i ^ r;
  MPI_Status st;
  int count;
  if (r == 0) MPI_Send(a, kN, MPI_INT, 1, 0, MPI_COMM_WORLD);
  else {
    MPI_Recv(b, 2 * kN, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    say("blocking: count %d last %d", count, b[kN - 1]);
  }
  MPI_Request q[2];
  MPI_Irecv(b, kN, MPI_INT, peer, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(a, kN, MPI_INT, peer, 1, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  say("nonblocking: %d %d", b[1], b[kN - 1]);
  MPI_Sendrecv(a, kN, MPI_INT, peer, 2, b, kN, MPI_INT, peer, 2, MPI_COMM_WORLD, &st);
  say("sendrecv: %d", b[12345]);
  MPI_Bcast(a, kN, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, kN, MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
  say("bcast %d allreduce %d", a[7], b[7]);
  free(a);
  free(b);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
