/* critpath — tests/mpi/corpus/split_type_shared.c (corpus: np=3): MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED (one node here), a shared-memory window on it (Win_allocate_shared,
 * Win_shared_query, direct loads/stores synchronised by Win_sync and a barrier), and a split
 * with MPI_UNDEFINED giving MPI_COMM_NULL. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int ns, nr;
  MPI_Comm_size(node, &ns);
  MPI_Comm_rank(node, &nr);
  say("node comm: size matches world %d rank matches %d", ns == n, nr == r);

  int* mine;
  MPI_Win win;
  MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < 4; ++i) mine[i] = 10 * nr + i;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  int* theirs;
  MPI_Aint sz;
  int du;
  MPI_Win_shared_query(win, (nr + 1) % ns, &sz, &du, &theirs);
  say("neighbour's shared segment: %d %d size %ld disp %d", theirs[0], theirs[3], (long)sz, du);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);

  MPI_Comm none;
  MPI_Comm_split_type(MPI_COMM_WORLD, r == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                      MPI_INFO_NULL, &none);
  say("undefined split is null: %d", none == MPI_COMM_NULL);
  if (none != MPI_COMM_NULL) MPI_Comm_free(&none);
  MPI_Comm odd;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2 ? 1 : MPI_UNDEFINED, 0, &odd);
  say("odd split null: %d", odd == MPI_COMM_NULL);
  if (odd != MPI_COMM_NULL) MPI_Comm_free(&odd);
  MPI_Comm_free(&node);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
