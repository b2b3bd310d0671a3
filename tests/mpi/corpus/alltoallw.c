/* critpath — tests/mpi/corpus/alltoallw.c (corpus: np=3): Alltoallw with a different datatype
 * per peer (MPI_INT, MPI_DOUBLE, a vector), byte displacements, a zero count to one peer, and
 * Ialltoallw. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  /* peer p gets 1 int from everybody into the slot for the sender; rank 0 also sends
   * doubles where the peer is rank 2 and nothing to rank 1 */
  int sc[8], rc[8], sd[8], rd[8];
  MPI_Datatype st[8], rt[8];
  int sbuf[8], rbuf[8];
  for (int i = 0; i < n; ++i) {
    sbuf[i] = 100 * r + i;
    rbuf[i] = -1;
    sc[i] = rc[i] = 1;
    sd[i] = rd[i] = i * (int)sizeof(int);
    st[i] = rt[i] = MPI_INT;
  }
  if (r == 0) sc[1] = 0;
  if (r == 1) rc[0] = 0;
  MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD);
  say("ints: %d %d %d", rbuf[0], rbuf[1], rbuf[n - 1]);

  double ds[8], dr[8];
  MPI_Datatype pairvec;
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &pairvec);
  MPI_Type_commit(&pairvec);
  double src4[32];
  for (int i = 0; i < 32; ++i) src4[i] = r + i / 100.0;
  for (int i = 0; i < n; ++i) {
    ds[i] = dr[i] = 0;
    /* send one strided pair (elements 4i and 4i+2) to i, receive 2 doubles */
    sc[i] = 1; st[i] = pairvec; sd[i] = 4 * i * (int)sizeof(double);
    rc[i] = 2; rt[i] = MPI_DOUBLE; rd[i] = 2 * i * (int)sizeof(double);
  }
  (void)ds;
  double got[16];
  MPI_Request q;
  MPI_Ialltoallw(src4, sc, sd, st, got, rc, rd, rt, MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  say("vectors: %.2f %.2f %.2f %.2f", got[0], got[1], got[2 * n - 2], got[2 * n - 1]);
  (void)dr;
  MPI_Type_free(&pairvec);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
