/* critpath — tests/mpi/corpus/rma_lock.c (corpus: np=3): passive-target RMA: exclusive and
 * shared locks, lock_all with flush/flush_local/flush_all, Fetch_and_op counters,
 * Compare_and_swap, Get_accumulate, and request-based Rput/Rget/Raccumulate. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  int* mem;
  MPI_Win win;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win);
  for (int i = 0; i < 4; ++i) mem[i] = 0;
  MPI_Win_unlock(r, win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* every rank increments rank 0's counter */
  int one = 1, old = -1;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 0, MPI_SUM, win);
  MPI_Win_unlock(0, win);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_lock_all(0, win);
  int cmp = 0, mine = r + 1, prev = -1;
  MPI_Compare_and_swap(&mine, &cmp, &prev, MPI_INT, 1 % n, 1, win);
  MPI_Win_flush(1 % n, win);
  int add = 2, before = -1;
  MPI_Get_accumulate(&add, 1, MPI_INT, &before, 1, MPI_INT, 2 % n, 2, 1, MPI_INT, MPI_SUM, win);
  MPI_Win_flush_local(2 % n, win);
  MPI_Request q[3];
  int three = 3, fetched = -1;
  MPI_Rput(&three, 1, MPI_INT, r, 3, 1, MPI_INT, win, &q[0]);
  MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  MPI_Win_flush(r, win);
  MPI_Rget(&fetched, 1, MPI_INT, r, 3, 1, MPI_INT, win, &q[1]);
  MPI_Raccumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win, &q[2]);
  MPI_Waitall(2, &q[1], MPI_STATUSES_IGNORE);
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_lock(MPI_LOCK_SHARED, r, 0, win);
  int counter = mem[0], cas = mem[1], acc = mem[2];
  MPI_Win_unlock(r, win);
  const int winner = cas; /* which rank won the CAS is a race: print only whether one did */
  say("fetched old counter in range %d; rget %d", old >= 0 && old < n, fetched);
  if (r == 0) say("counter %d", counter);
  if (r == 1 % n) say("cas set by someone %d", winner >= 1 && winner <= n);
  if (r == 2 % n) say("get_accumulate total %d", acc);
  (void)prev; (void)before;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
