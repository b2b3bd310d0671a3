/* critpath — tests/mpi/waits/icoll_waits.c
 *
 * Known-answer program for the wait states of the nonblocking rooted and prefix collectives:
 * each is posted and completed at once with MPI_Wait, where its wait is booked (the spec's
 * `sync` of the I* call is its blocking twin's; docs/metrics.md, Wait states). Same method as
 * waits.c: every scenario runs inside region "s_<name>" after an alignment barrier, arrivals
 * are staggered by sleeping to absolute deadlines (clock_nanosleep TIMER_ABSTIME) from one
 * start time broadcast by rank 0. D = 100 ms, L = 200 ms, P ranks, root R of the scenario:
 *
 *   ibcast     R = 0      the root sleeps L, then Ibcast+Wait; the others at once
 *   iscatter   R = 1      same, MPI_Iscatter                 late_broadcast(r != R) = L
 *   iscatterv  R = P-1    same, MPI_Iscatterv                (at MPI_Wait)
 *   ireduce    R = 0      rank r sleeps D*((r-R) mod P): the root first, then Ireduce+Wait
 *   igather    R = 1      same, MPI_Igather                  early_reduce(R) = D*(P-1)
 *   igatherv   R = P-1    same, MPI_Igatherv                 (at MPI_Wait)
 *   iscan                 rank r sleeps D*(P-1-r), Iscan+Wait     early_scan(r) = D*r
 *   iexscan               same, MPI_Iexscan                       early_scan(r) = D*r
 * With argv[1] only that scenario runs; default all.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "critpath.h"

#include "waits_util.h"

/* The root of a scenario (check_icoll_waits.py has the same table). */
static int root_of(const char* n) {
  if (!strcmp(n, "iscatter") || !strcmp(n, "igather")) return 1 % size;
  if (!strcmp(n, "iscatterv") || !strcmp(n, "igatherv")) return size - 1;
  return 0;
}

static void run(const char* n) {
  const int root = root_of(n);
  int* sb = calloc((size_t)size * 2, sizeof(int));
  int* rb = calloc((size_t)size * 2, sizeof(int));
  int* cnt = malloc(sizeof(int) * (size_t)size);
  int* dis = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < size; ++i) {
    cnt[i] = 2;
    dis[i] = 2 * i;
  }
  double x = rank, y = 0;
  MPI_Request r = MPI_REQUEST_NULL;
  if (!strcmp(n, "iscan") || !strcmp(n, "iexscan")) {
    sleep_from_start_ms((long)D_MS * (size - 1 - rank));
    if (!strcmp(n, "iscan")) MPI_Iscan(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    else MPI_Iexscan(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
  } else if (!strcmp(n, "ibcast") || !strncmp(n, "iscatter", 8)) { /* late root */
    if (rank == root) sleep_from_start_ms(L_MS);
    if (!strcmp(n, "ibcast")) MPI_Ibcast(sb, 2, MPI_INT, root, MPI_COMM_WORLD, &r);
    else if (!strcmp(n, "iscatter")) MPI_Iscatter(sb, 2, MPI_INT, rb, 2, MPI_INT, root, MPI_COMM_WORLD, &r);
    else MPI_Iscatterv(sb, cnt, dis, MPI_INT, rb, 2, MPI_INT, root, MPI_COMM_WORLD, &r);
  } else { /* ireduce, igather(v): the root first, the last sender D*(P-1) later */
    sleep_from_start_ms((long)D_MS * ((rank - root + size) % size));
    if (!strcmp(n, "ireduce")) MPI_Ireduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD, &r);
    else if (!strcmp(n, "igather")) MPI_Igather(sb, 2, MPI_INT, rb, 2, MPI_INT, root, MPI_COMM_WORLD, &r);
    else MPI_Igatherv(sb, 2, MPI_INT, rb, cnt, dis, MPI_INT, root, MPI_COMM_WORLD, &r);
  }
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  free(sb);
  free(rb);
  free(cnt);
  free(dis);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const char* names[] = {"ibcast",  "iscatter", "iscatterv", "ireduce",
                                "igather", "igatherv", "iscan",     "iexscan"};
  run_scenarios(names, sizeof names / sizeof names[0], argc > 1 ? argv[1] : NULL, NULL, run);
  if (rank == 0) printf("icoll_waits: done on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
