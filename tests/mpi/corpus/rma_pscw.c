/* critpath — tests/mpi/corpus/rma_pscw.c (corpus: np=3): generalized active target (post /
 * start / complete / wait): rank 0 exposes its window to ranks 1 and 2, which put into it;
 * then rank 1 exposes to rank 0 only, which gets from it; Win_test polls for the end of an
 * exposure epoch. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  int mem[4] = {0, 0, 0, 0};
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Group world, g0, g12, g1;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int zero = 0, one = 1, pair[2] = {1, 2};
  MPI_Group_incl(world, 1, &zero, &g0);
  MPI_Group_incl(world, 2, pair, &g12);
  MPI_Group_incl(world, 1, &one, &g1);

  if (r == 0) {
    MPI_Win_post(g12, 0, win);
    MPI_Win_wait(win);
    say("exposed: %d %d %d", mem[0], mem[1], mem[2]);
  } else if (r == 1 || r == 2) {
    MPI_Win_start(g0, 0, win);
    int v = 100 * r;
    MPI_Put(&v, 1, MPI_INT, 0, r, 1, MPI_INT, win);
    MPI_Win_complete(win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 1) {
    mem[3] = 4242;
    MPI_Win_post(g0, MPI_MODE_NOPUT, win);
    int flag = 0;
    while (!flag) MPI_Win_test(win, &flag);
    say("test ended exposure");
  } else if (r == 0) {
    int got = 0;
    MPI_Win_start(g1, 0, win);
    MPI_Get(&got, 1, MPI_INT, 1, 3, 1, MPI_INT, win);
    MPI_Win_complete(win);
    say("got %d", got);
  }
  MPI_Group_free(&g0);
  MPI_Group_free(&g1);
  MPI_Group_free(&g12);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
