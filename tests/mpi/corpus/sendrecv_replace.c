/* critpath — tests/mpi/corpus/sendrecv_replace.c (corpus: np=4): a ring shift with
 * Sendrecv_replace (n steps bring the data home), with a derived type and with wildcards on
 * the receive side, plus Sendrecv with MPI_STATUS_IGNORE. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  int a[6];
  for (int i = 0; i < 6; ++i) a[i] = 10 * r + i;
  MPI_Status st;
  int trail = 0;
  for (int step = 0; step < n; ++step) {
    MPI_Sendrecv_replace(a, 6, MPI_INT, right, step, left, step, MPI_COMM_WORLD, &st);
    trail = trail * 10 + a[0] / 10;
  }
  say("ring home: a0=%d trail=%d last source=%d", a[0], trail, st.MPI_SOURCE);
  MPI_Datatype odd;
  MPI_Type_vector(3, 1, 2, MPI_INT, &odd);
  MPI_Type_commit(&odd);
  MPI_Sendrecv_replace(a, 1, odd, right, 9, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
  int count;
  MPI_Get_count(&st, odd, &count);
  say("replace with vector: %d %d %d %d src=%d tag=%d count=%d", a[0], a[1], a[2], a[4],
      st.MPI_SOURCE, st.MPI_TAG, count);
  MPI_Type_free(&odd);
  MPI_Sendrecv_replace(a, 2, MPI_INT, right, 10 + r, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  say("replace any tag: %d %d tag=%d", a[0], a[1], st.MPI_TAG);
  MPI_Barrier(MPI_COMM_WORLD);
  int x = r, y = -1;
  MPI_Sendrecv(&x, 1, MPI_INT, left, 3, &y, 1, MPI_INT, right, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  say("sendrecv: %d", y);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
