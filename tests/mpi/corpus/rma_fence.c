/* critpath — tests/mpi/corpus/rma_fence.c (corpus: np=3): active-target RMA with fences:
 * Put, Get and Accumulate in the same epochs, fence assertions, Win_allocate and
 * Win_create_dynamic + attach, and an empty epoch. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  const int right = (r + 1) % n;
  int* base;
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  for (int i = 0; i < 8; ++i) base[i] = 0;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  int v[2] = {r + 1, 10 * (r + 1)};
  MPI_Put(v, 2, MPI_INT, right, 0, 2, MPI_INT, win);
  MPI_Accumulate(v, 2, MPI_INT, right, 4, 2, MPI_INT, MPI_SUM, win);
  MPI_Accumulate(v, 2, MPI_INT, (r + 2) % n, 4, 2, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);
  int got[2] = {0, 0};
  MPI_Get(got, 2, MPI_INT, right, 0, 2, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win); /* empty epoch */
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  say("put %d %d acc %d %d got %d %d", base[0], base[1], base[4], base[5], got[0], got[1]);
  MPI_Win_free(&win);

  MPI_Win dyn;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
  int mem[4] = {0, 0, 0, 0};
  MPI_Win_attach(dyn, mem, sizeof mem);
  MPI_Aint addr, raddr;
  MPI_Get_address(mem, &addr);
  MPI_Sendrecv(&addr, 1, MPI_AINT, (r + n - 1) % n, 0, &raddr, 1, MPI_AINT, right, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Win_fence(0, dyn);
  int w = 7 * (r + 1);
  MPI_Put(&w, 1, MPI_INT, right, raddr, 1, MPI_INT, dyn);
  MPI_Win_fence(0, dyn);
  say("dynamic window: %d", mem[0]);
  MPI_Win_detach(dyn, mem);
  MPI_Win_free(&dyn);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
