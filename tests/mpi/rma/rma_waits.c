/* critpath — tests/mpi/rma/rma_waits.c: known-answer RMA wait states ([Hermanns2009] Figs. 1-3,
 * Scalasca 2.6's RMA patterns), checked by check_rma_waits.py. D = 100 ms; every scenario
 * starts at an aligned deadline and sleeps to absolute deadlines, so the waits hold on a
 * loaded machine. Run with P >= 3 ranks; usage: rma_waits [scenario]
 *
 *   create      a window by each constructor (Win_create, Win_allocate, Win_allocate_shared,
 *               Win_create_dynamic); rank P-1 arrives D late at each: Wait at Window Create D
 *               on every other rank, per constructor; then the same for Win_free
 *   fence_late  rank P-1 enters MPI_Win_fence D late: Wait at Fence D on every other rank
 *   early_fence rank 1 puts to rank 0 D late, then fences: Wait at Fence D on ranks != 1,
 *               of it Early Fence D on rank 0 (the target)
 *   late_post   PSCW, target 1 posts D late; origin 0 starts and completes (no operation):
 *               Late Post D on rank 0, at Win_start or Win_complete (where MPI blocks)
 *   early_transfer  as late_post with a Put in the epoch: Late Post + Early Transfer = D
 *   early_wait  target 1 posts and waits at 0; origin 0 starts at 0, puts at D, completes at
 *               1.5 D: Early Wait 1.5 D on rank 1, of it Late Complete 0.5 D
 *   lock        origin 0 locks rank 2 exclusively at 0 (put + flush), unlocks at 1.2 D; origin 1
 *               locks it exclusively at 0.2 D: Lock Contention D on rank 1
 *   progress    origin 0 locks rank 1 (shared) at 0, puts, unlocks; rank 1 computes until D
 *               outside MPI: Wait for Progress = the time rank 0's epoch blocked (MPI-dependent)
 *   paused      recording paused on rank 0 (MPI_Pcontrol(0)) around one fence on a window of
 *               its own and around its Win_post to rank 1 on the main window: the analysis
 *               finishes, notes "RMA analysis skipped: inconsistent RMA epochs on window W"
 *               and the unmatched PSCW epoch, and books no wait for either
 *   bytes       origin 0 -> target 1 under MPI_Win_lock_all: Put 10 int, Get 20 int,
 *               Accumulate 5 int, Get_accumulate 3 int, Fetch_and_op 1 int, Compare_and_swap
 *               1 int, Rput 7 double (Wait), Rget 4 double (Test loop)
 */
#include <stdlib.h>

#include "../waits/waits_util.h"

static MPI_Win win; /* the scenarios' window: 64 doubles per rank */
static double* base;

static MPI_Group group_of(int r) {
  MPI_Group world, g;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &r, &g);
  MPI_Group_free(&world);
  return g;
}

/* PSCW: expose the window to `origin` and wait (target), or access `target` (origin) with
 * `body` between Win_start and Win_complete. */
static void expose_to(int origin) {
  MPI_Group g = group_of(origin);
  MPI_Win_post(g, 0, win);
  MPI_Win_wait(win);
  MPI_Group_free(&g);
}
static void access_epoch(int target, void (*inside)(void)) {
  MPI_Group g = group_of(target);
  MPI_Win_start(g, 0, win);
  if (inside) inside();
  MPI_Win_complete(win);
  MPI_Group_free(&g);
}
static const double one[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static void put_now(void) { MPI_Put(one, 4, MPI_DOUBLE, 1, 0, 4, MPI_DOUBLE, win); }
static void put_late(void) {
  sleep_from_start_ms(D_MS);
  put_now();
  sleep_from_start_ms(D_MS + D_MS / 2);
}

static void creations(void) {
  MPI_Win w[4];
  void* mem[4];
  MPI_Comm shm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
  static double buf[16];
  int late = rank == size - 1;
  /* `margin` ms after each call before the next one's deadlines: on a loaded 2-core
   * machine a window creation (or the communicator split before the first) can take tens of
   * ms; the early ranks must enter the next call at its start, not when that one ends. */
  const long margin = 60;
  long at = margin;
  sleep_from_start_ms(at);
  for (int k = 0; k < 4; ++k) {
    at += D_MS;
    if (late) sleep_from_start_ms(at);
    if (k == 0) MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &w[k]);
    if (k == 1) MPI_Win_allocate(128, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem[k], &w[k]);
    if (k == 2) MPI_Win_allocate_shared(128, sizeof(double), MPI_INFO_NULL, shm, &mem[k], &w[k]);
    if (k == 3) MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w[k]);
    sleep_from_start_ms(at + margin); /* everybody done before the next one */
    at += margin;
  }
  for (int k = 0; k < 4; ++k) {
    at += D_MS;
    if (late) sleep_from_start_ms(at);
    MPI_Win_free(&w[k]);
    sleep_from_start_ms(at + margin);
    at += margin;
  }
  MPI_Comm_free(&shm);
}

static void body(const char* name) {
  if (!strcmp(name, "create")) {
    creations();
  } else if (!strcmp(name, "fence_late")) {
    if (rank == size - 1) sleep_from_start_ms(D_MS);
    MPI_Win_fence(0, win);
  } else if (!strcmp(name, "early_fence")) {
    MPI_Win_fence(0, win);
    if (rank == 1) {
      sleep_from_start_ms(D_MS);
      MPI_Put(one, 4, MPI_DOUBLE, 0, 0, 4, MPI_DOUBLE, win);
    }
    MPI_Win_fence(0, win);
  } else if (!strcmp(name, "late_post") || !strcmp(name, "early_transfer")) {
    if (rank == 1) {
      sleep_from_start_ms(D_MS);
      expose_to(0);
    } else if (rank == 0) {
      access_epoch(1, strcmp(name, "early_transfer") ? NULL : put_now);
    }
    sleep_from_start_ms(D_MS + 30);
  } else if (!strcmp(name, "early_wait")) {
    if (rank == 1) expose_to(0);
    else if (rank == 0) access_epoch(1, put_late);
    sleep_from_start_ms(2 * D_MS);
  } else if (!strcmp(name, "lock")) {
    if (rank == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win);
      MPI_Put(one, 4, MPI_DOUBLE, 2, 0, 4, MPI_DOUBLE, win);
      MPI_Win_flush(2, win);
      sleep_from_start_ms(D_MS + D_MS / 5);
      MPI_Win_unlock(2, win);
    } else if (rank == 1) {
      sleep_from_start_ms(D_MS / 5);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win);
      MPI_Put(one, 4, MPI_DOUBLE, 2, 8, 4, MPI_DOUBLE, win);
      MPI_Win_unlock(2, win);
    }
    /* The target (and everybody else) waits inside MPI: it progresses the locks. */
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(name, "progress")) {
    if (rank == 0) {
      MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
      MPI_Put(one, 4, MPI_DOUBLE, 1, 0, 4, MPI_DOUBLE, win);
      MPI_Win_unlock(1, win);
    } else if (rank == 1) {
      sleep_from_start_ms(D_MS); /* computing: no MPI call */
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(name, "paused")) {
    MPI_Win w;
    double* mem;
    MPI_Win_allocate(64, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
    if (rank == 0) MPI_Pcontrol(0);
    MPI_Win_fence(0, w);
    if (rank == 0) MPI_Pcontrol(1);
    if (rank == size - 1) sleep_from_start_ms(D_MS);
    MPI_Win_fence(0, w);
    MPI_Win_free(&w);
    if (rank == 0) {
      MPI_Pcontrol(0);
      expose_to(1);
      MPI_Pcontrol(1);
    } else if (rank == 1) {
      access_epoch(0, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(name, "bytes")) {
    if (rank == 0) {
      int ibuf[32] = {0}, res[32];
      double dbuf[8] = {0};
      MPI_Request rq;
      int flag = 0;
      MPI_Win_lock_all(0, win);
      MPI_Put(ibuf, 10, MPI_INT, 1, 0, 10, MPI_INT, win);
      MPI_Get(res, 20, MPI_INT, 1, 0, 20, MPI_INT, win);
      MPI_Accumulate(ibuf, 5, MPI_INT, 1, 0, 5, MPI_INT, MPI_SUM, win);
      MPI_Get_accumulate(ibuf, 3, MPI_INT, res, 3, MPI_INT, 1, 0, 3, MPI_INT, MPI_SUM, win);
      MPI_Fetch_and_op(ibuf, res, MPI_INT, 1, 0, MPI_SUM, win);
      MPI_Compare_and_swap(ibuf, ibuf + 1, res, MPI_INT, 1, 0, win);
      MPI_Rput(dbuf, 7, MPI_DOUBLE, 1, 0, 7, MPI_DOUBLE, win, &rq);
      MPI_Wait(&rq, MPI_STATUS_IGNORE);
      MPI_Rget(dbuf, 4, MPI_DOUBLE, 1, 0, 4, MPI_DOUBLE, win, &rq);
      while (!flag) MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
      MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3) {
    if (rank == 0) fprintf(stderr, "rma_waits: needs at least 3 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Win_allocate(64 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  static const char* const names[] = {"create",         "fence_late", "early_fence", "late_post",
                                      "early_transfer", "early_wait", "lock",        "progress",
                                      "paused",         "bytes"};
  run_scenarios(names, sizeof names / sizeof names[0], argc > 1 ? argv[1] : NULL, NULL, body);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
