/* critpath — tests/mpi/corpus/comm_dup_10k.c (corpus: np=2): 10,000 MPI_Comm_dup/MPI_Comm_free
 * pairs (handles are reused by MPI), with some traffic on every 1000th duplicate, and a batch
 * of 100 communicators alive at once freed in reverse order. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  int total = 0;
  for (int i = 0; i < 10000; ++i) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    if (i % 1000 == 999) {
      int v = i + r, s = 0;
      MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, c);
      total += s;
    }
    MPI_Comm_free(&c);
  }
  MPI_Comm many[100];
  for (int i = 0; i < 100; ++i) MPI_Comm_dup(i ? many[i - 1] : MPI_COMM_WORLD, &many[i]);
  int v = 1, s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, many[99]);
  for (int i = 99; i >= 0; --i) MPI_Comm_free(&many[i]);
  say("10000 dups: total=%d; chain of 100: sum=%d", total, s);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
