/* critpath — tests/mpi/corpus/any_source_probe.c (corpus: np=4): MPI_ANY_SOURCE/MPI_ANY_TAG
 * with Probe and Iprobe: rank 0 learns each message's source, tag and size from the probe,
 * allocates, and receives exactly that message. Output is sorted by source to stay
 * deterministic. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  if (r == 0) {
    int lens[8] = {0}, tags[8] = {0}, sums[8] = {0};
    for (int k = 0; k < 2 * (n - 1); ++k) {
      MPI_Status st;
      if (k % 2) {
        int flag = 0;
        while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      } else {
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      }
      int count;
      MPI_Get_count(&st, MPI_INT, &count);
      int* buf = malloc(sizeof(int) * (size_t)(count + 1));
      MPI_Recv(buf, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const int slot = 2 * (st.MPI_SOURCE - 1) + (st.MPI_TAG >= 20);
      lens[slot] = count;
      tags[slot] = st.MPI_TAG;
      for (int i = 0; i < count; ++i) sums[slot] += buf[i];
      free(buf);
    }
    for (int s = 0; s < 2 * (n - 1); ++s)
      say("from %d: tag %d, %d ints, sum %d", 1 + s / 2, tags[s], lens[s], sums[s]);
  } else {
    int a[16];
    for (int i = 0; i < 16; ++i) a[i] = r * i;
    MPI_Send(a, r * 3, MPI_INT, 0, 10 + r, MPI_COMM_WORLD);
    MPI_Send(a, 16 - r, MPI_INT, 0, 20 + r, MPI_COMM_WORLD);
  }
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
