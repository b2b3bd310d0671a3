/* critpath — tests/mpi/waits/waits.c
 *
 * Known-answer program for the wait-state patterns. Every scenario runs inside its own
 * region "s_<name>" after an alignment barrier inside region "setup", so its waits land on
 * call paths main/s_<name>/MPI_* and can be checked per rank (check_waits.py). Arrivals are
 * staggered by sleeping to absolute deadlines (clock_nanosleep TIMER_ABSTIME) from one start
 * time that rank 0 broadcasts (the tests run on one host, where CLOCK_MONOTONIC is shared, so
 * barrier-exit skew and scheduling noise do not shift the reference). D = 100 ms, L = 200 ms:
 *
 *   ls_blocking    rank 0 sleeps L, MPI_Send -> 1; rank 1 MPI_Recv    late_sender(1) = L
 *   ls_nonblocking rank 0 sleeps L, Isend+Wait; rank 1 Irecv+Waitall  late_sender(1) = L
 *   ls_anysource   as ls_blocking, rank 1 receives MPI_ANY_SOURCE/TAG late_sender(1) = L
 *   wrong_order    rank 0: sleep L/2, send tag 1, sleep L/2, send tag 2; rank 1 receives
 *                  tag 2 first, then tag 1            late_sender(1) = L, wrong order = L
 *   late_receiver  rank 0 MPI_Ssend -> 1 at once; rank 1 sleeps L, Recv late_receiver(0) = L
 *   barrier        rank r sleeps D*r, MPI_Barrier         wait_barrier(r) = D*(P-1-r)
 *   allreduce      same, MPI_Allreduce                    wait_nxn(r) = D*(P-1-r)
 *   alltoallv      same, MPI_Alltoallv                    wait_nxn(r) = D*(P-1-r)
 *   bcast          root 0 sleeps L, MPI_Bcast             late_broadcast(r>0) = L
 *   reduce         rank r sleeps D*r, MPI_Reduce to 0     early_reduce(0) = D*(P-1)
 *   scan           rank r sleeps D*(P-1-r), MPI_Scan      early_scan(r) = D*r
 *   iallreduce     rank r sleeps D*r, MPI_Iallreduce + MPI_Wait   wait_nxn(r) = D*(P-1-r)
 *   split          split by parity; in a half of size Q, position q sleeps D*q, barrier on
 *                  the half                                wait_barrier(r) = D*(Q-1-q)
 * With argv[1] only that scenario runs; default all.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "critpath.h"

#include "waits_util.h"

static void ls(int variant) {
  int v = 42;
  if (rank == 0) {
    sleep_from_start_ms(L_MS);
    if (variant == 1) {
      MPI_Request r;
      MPI_Isend(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    }
  } else if (rank == 1) {
    if (variant == 1) {
      MPI_Request r[1];
      MPI_Status st[1];
      MPI_Irecv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[0]);
      MPI_Waitall(1, r, st);
    } else if (variant == 2) {
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
}

static void wrong_order(void) {
  int a = 1, b = 2;
  if (rank == 0) {
    sleep_from_start_ms(L_MS / 2);
    MPI_Send(&a, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    sleep_from_start_ms(L_MS);
    MPI_Send(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&b, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&a, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

static void late_receiver(void) {
  int v = 3;
  if (rank == 0) {
    MPI_Ssend(&v, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
  } else if (rank == 1) {
    sleep_from_start_ms(L_MS);
    MPI_Recv(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

static void staggered(const char* what) {
  double x = rank, y = 0;
  if (!strcmp(what, "scan")) {
    sleep_from_start_ms((long)D_MS * (size - 1 - rank));
    MPI_Scan(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return;
  }
  sleep_from_start_ms((long)D_MS * rank);
  if (!strcmp(what, "barrier")) {
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(what, "allreduce")) {
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(what, "reduce")) {
    MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (!strcmp(what, "iallreduce")) {
    MPI_Request r;
    MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (!strcmp(what, "alltoallv")) {
    int* sb = calloc((size_t)size, sizeof(int));
    int* rb = calloc((size_t)size, sizeof(int));
    int* cnt = malloc(sizeof(int) * (size_t)size);
    int* dis = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; ++i) {
      cnt[i] = 1;
      dis[i] = i;
    }
    MPI_Alltoallv(sb, cnt, dis, MPI_INT, rb, cnt, dis, MPI_INT, MPI_COMM_WORLD);
    free(sb);
    free(rb);
    free(cnt);
    free(dis);
  }
}

static void bcast(void) {
  double v = 1;
  if (rank == 0) sleep_from_start_ms(L_MS);
  MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static void split(void) {
  MPI_Comm half;
  CRITPATH_REGION_BEGIN("make_split");
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  CRITPATH_REGION_END("make_split");
  align();
  int q;
  MPI_Comm_rank(half, &q);
  sleep_from_start_ms((long)D_MS * q);
  MPI_Barrier(half);
  MPI_Comm_free(&half);
}

static void scenario(const char* n) {
  if (!strcmp(n, "ls_blocking")) ls(0);
  else if (!strcmp(n, "ls_nonblocking")) ls(1);
  else if (!strcmp(n, "ls_anysource")) ls(2);
  else if (!strcmp(n, "wrong_order")) wrong_order();
  else if (!strcmp(n, "late_receiver")) late_receiver();
  else if (!strcmp(n, "bcast")) bcast();
  else if (!strcmp(n, "split")) split();
  else staggered(n);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const char* names[] = {
      "ls_blocking", "ls_nonblocking", "ls_anysource", "wrong_order", "late_receiver", "barrier", "allreduce",
      "alltoallv",   "bcast",          "reduce",       "scan",        "iallreduce",    "split"};
  /* split aligns each half itself */
  run_scenarios(names, sizeof names / sizeof names[0], argc > 1 ? argv[1] : NULL, "split", scenario);
  print_lateness(names, sizeof names / sizeof names[0], argc > 1 ? argv[1] : NULL);
  if (rank == 0) printf("waits: done on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
