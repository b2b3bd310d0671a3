/* critpath — tests/mpi/waits/coll_flow.c
 *
 * A collective instance synchronizes only the ranks its data flows between: a rank that
 * receives nothing from a late rank may leave before that rank arrives, which on one host (one
 * shared clock) is no clock-condition violation (check_coll_flow.py). Same method as waits.c:
 * each scenario runs inside region "s_<name>" after an alignment; the last rank (the late one)
 * sleeps to absolute deadlines 20 ms apart before each round, the others call at once. Every
 * scenario runs kRounds rounds.
 *
 *   inter      an intercommunicator between the even and the odd ranks, and its duplicate:
 *              Alltoallw and Ialltoallw whose late-rank entries are zero (the late rank sends
 *              nothing), Allgather, Allgatherv, Alltoallv and Iallgather, Ialltoallv from
 *              which the late rank contributes nothing
 *   rs_zero    MPI_Reduce_scatter with every count zero
 *   neighbor   a non-periodic 1-D Cartesian topology and a directed ring graph (each rank's one
 *              source is its predecessor): Neighbor_allgather(v), Neighbor_alltoall; the late
 *              last rank sends only to ranks that do not exist or to rank 0 (the graph), whose
 *              neighbour data the others never wait for
 *   a2av_zero  MPI_Alltoallv in which the late rank sends and receives nothing
 *   control    the late rank before an MPI_Allreduce of one double: a violation-free wait of
 *              20 ms on the others, and a clock-condition violation under an injected skew
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "critpath.h"

#include "waits_util.h"

enum { kRounds = 3, kStepMs = 20 };

static int late;

static void late_round(int k) {
  if (late) sleep_from_start_ms((long)kStepMs * (k + 1));
}

/* The late rank sends nothing (zero counts towards every remote rank); the others send one
 * int to every remote rank that is not late. */
static void inter_round(MPI_Comm ic, int k) {
  int rsize, lrank;
  MPI_Comm_remote_size(ic, &rsize);
  MPI_Comm_rank(ic, &lrank);
  const int late_is_remote = (size - 1) % 2 != rank % 2;
  const int late_remote = late_is_remote ? (size - 1) / 2 : -1; /* its rank in the remote group */
  int *sc = calloc((size_t)rsize, sizeof(int)), *rc = calloc((size_t)rsize, sizeof(int));
  int *sd = calloc((size_t)rsize, sizeof(int)), *rd = calloc((size_t)rsize, sizeof(int));
  MPI_Datatype* types = malloc(sizeof(MPI_Datatype) * (size_t)rsize);
  int sb[64] = {0}, rb[64] = {0};
  for (int i = 0; i < rsize; ++i) {
    sc[i] = late || i == late_remote ? 0 : 1;
    rc[i] = late || i == late_remote ? 0 : 1;
    sd[i] = rd[i] = i * (int)sizeof(int);
    types[i] = MPI_INT;
  }
  int rdv[64];
  for (int i = 0; i < rsize; ++i) rdv[i] = i;
  MPI_Request r;
  late_round(k);
  MPI_Alltoallw(sb, sc, sd, types, rb, rc, rd, types, ic);
  MPI_Ialltoallw(sb, sc, sd, types, rb, rc, rd, types, ic, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  /* Allgather(v): the late rank's group sends nothing (every count zero there); the other
   * group sends one int each, which the late rank's group receives. */
  const int mine_late_group = (size - 1) % 2 == rank % 2;
  const int gc = mine_late_group ? 0 : 1;
  for (int i = 0; i < rsize; ++i) rc[i] = mine_late_group ? 1 : 0;
  MPI_Allgather(sb, gc, MPI_INT, rb, mine_late_group ? 1 : 0, MPI_INT, ic);
  MPI_Allgatherv(sb, gc, MPI_INT, rb, rc, rdv, MPI_INT, ic);
  MPI_Iallgather(sb, gc, MPI_INT, rb, mine_late_group ? 1 : 0, MPI_INT, ic, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < rsize; ++i) {
    sc[i] = late || i == late_remote ? 0 : 1;
    rc[i] = late || i == late_remote ? 0 : 1;
  }
  MPI_Alltoallv(sb, sc, rdv, MPI_INT, rb, rc, rdv, MPI_INT, ic);
  MPI_Ialltoallv(sb, sc, rdv, MPI_INT, rb, rc, rdv, MPI_INT, ic, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  free(sc);
  free(rc);
  free(sd);
  free(rd);
  free(types);
}

static void inter(void) {
  MPI_Comm half, ic, dup;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &ic);
  MPI_Comm_dup(ic, &dup);
  MPI_Barrier(MPI_COMM_WORLD);
  align();
  for (int k = 0; k < kRounds; ++k) inter_round(k % 2 ? dup : ic, k);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&ic);
  MPI_Comm_free(&half);
}

static void rs_zero(void) {
  int* zeros = calloc((size_t)size, sizeof(int));
  double buf[16] = {0};
  for (int k = 0; k < kRounds; ++k) {
    late_round(k);
    MPI_Reduce_scatter(buf, buf + 8, zeros, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  free(zeros);
}

/* The late last rank's data reaches only rank size-2 (Cartesian, non-periodic) or rank 0
 * (the graph), which then waits for it; the ranks between never receive from it. */
static void neighbor(void) {
  MPI_Comm cart, ring;
  const int dims[1] = {size}, periods[1] = {0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  const int src = (rank + size - 1) % size, dst = (rank + 1) % size;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &ring);
  MPI_Barrier(MPI_COMM_WORLD);
  align();
  int sb[4] = {rank, rank, rank, rank}, rb[4], counts[2] = {1, 1}, displs[2] = {0, 1};
  for (int k = 0; k < kRounds; ++k) {
    late_round(k);
    MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, cart);
    MPI_Neighbor_allgatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, cart);
    MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cart);
    MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, ring);
    MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ring);
  }
  MPI_Comm_free(&ring);
  MPI_Comm_free(&cart);
}

/* The late rank sends and receives nothing; the others exchange one int each pair. */
static void a2av_zero(void) {
  int *c = calloc((size_t)size, sizeof(int)), *d = calloc((size_t)size, sizeof(int));
  int* sb = calloc((size_t)size, sizeof(int));
  int* rb = calloc((size_t)size, sizeof(int));
  for (int i = 0; i < size; ++i) {
    c[i] = late || i == size - 1 ? 0 : 1;
    d[i] = i;
  }
  for (int k = 0; k < kRounds; ++k) {
    late_round(k);
    MPI_Alltoallv(sb, c, d, MPI_INT, rb, c, d, MPI_INT, MPI_COMM_WORLD);
  }
  free(c);
  free(d);
  free(sb);
  free(rb);
}

static void control(void) {
  double v = 1, s = 0;
  late_round(0);
  MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void run(const char* n) {
  if (!strcmp(n, "inter")) inter();
  else if (!strcmp(n, "rs_zero")) rs_zero();
  else if (!strcmp(n, "neighbor")) neighbor();
  else if (!strcmp(n, "a2av_zero")) a2av_zero();
  else control();
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  late = rank == size - 1;
  static const char* const names[] = {"inter", "rs_zero", "neighbor", "a2av_zero", "control"};
  /* "inter" and "neighbor" make their communicators first, then align themselves. */
  run_scenarios(names, 5, argc > 1 ? argv[1] : NULL, NULL, run);
  print_lateness(names, 5, argc > 1 ? argv[1] : NULL);
  MPI_Finalize();
  return 0;
}
