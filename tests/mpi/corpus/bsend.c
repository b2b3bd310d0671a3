/* critpath — tests/mpi/corpus/bsend.c (corpus: np=2): buffered sends — attach a buffer, Bsend
 * and Ibsend several messages before the receiver posts anything, detach (which waits for the
 * buffered data to leave), attach a second buffer and repeat. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  int size;
  MPI_Pack_size(100, MPI_INT, MPI_COMM_WORLD, &size);
  const int bytes = 4 * (size + MPI_BSEND_OVERHEAD);
  for (int round = 0; round < 2; ++round) {
    char* buf = malloc((size_t)bytes);
    MPI_Buffer_attach(buf, bytes);
    int data[100];
    if (r == 0) {
      for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < 100; ++i) data[i] = round * 1000 + k * 100 + i;
        if (k == 1) {
          MPI_Request q;
          MPI_Ibsend(data, 100, MPI_INT, 1, k, MPI_COMM_WORLD, &q);
          MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
          MPI_Bsend(data, 100, MPI_INT, 1, k, MPI_COMM_WORLD);
        }
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 1) {
      for (int k = 2; k >= 0; --k) {
        MPI_Recv(data, 100, MPI_INT, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        say("round %d message %d: %d..%d", round, k, data[0], data[99]);
      }
    }
    void* back;
    int back_size;
    MPI_Buffer_detach(&back, &back_size);
    say("round %d detached same buffer=%d size ok=%d", round, back == (void*)buf,
        back_size == bytes);
    free(buf);
  }
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
