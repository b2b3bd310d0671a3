/* critpath — tests/mpi/corpus/mprobe.c (corpus: np=3): matched probes with wildcards —
 * Mprobe+Mrecv and Improbe+Imrecv (completed by Wait and by Test), including a zero-byte
 * message; the receiver sorts results by source for deterministic output. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  if (r == 0) {
    int res[8][3];
    for (int k = 0; k < 2 * (n - 1); ++k) {
      MPI_Message m;
      MPI_Status st;
      int count, buf[32];
      if (k % 2 == 0) {
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        MPI_Mrecv(buf, count, MPI_INT, &m, &st);
      } else {
        int flag = 0;
        while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        MPI_Request q;
        MPI_Imrecv(buf, count, MPI_INT, &m, &q);
        if (k % 4 == 1) {
          MPI_Wait(&q, &st);
        } else {
          int done = 0;
          while (!done) MPI_Test(&q, &done, &st);
        }
      }
      int sum = 0;
      for (int i = 0; i < count; ++i) sum += buf[i];
      const int slot = 2 * (st.MPI_SOURCE - 1) + (st.MPI_TAG % 2);
      res[slot][0] = st.MPI_TAG;
      res[slot][1] = count;
      res[slot][2] = sum;
    }
    for (int s = 0; s < 2 * (n - 1); ++s)
      say("from %d: tag %d count %d sum %d", 1 + s / 2, res[s][0], res[s][1], res[s][2]);
  } else {
    int a[32];
    for (int i = 0; i < 32; ++i) a[i] = i + r;
    MPI_Send(a, 0, MPI_INT, 0, 2 * r, MPI_COMM_WORLD);
    MPI_Send(a, 5 * r, MPI_INT, 0, 2 * r + 1, MPI_COMM_WORLD);
  }
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
