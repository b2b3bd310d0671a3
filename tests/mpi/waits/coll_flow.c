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
 *              nothing), Allgather, Allgatherv, Alltoallv and Iallgather, Iallgatherv,
 *              Ialltoallv from which the late rank contributes nothing
 *   rs_zero    MPI_Reduce_scatter with every count zero
 *   neighbor   a non-periodic 1-D Cartesian topology, a directed ring graph (each rank's one
 *              source is its predecessor) and an MPI_Graph_create chain: Neighbor_allgather(v),
 *              Neighbor_alltoall(v,w) and their I* forms; the late last rank sends only to
 *              ranks that do not exist, to rank size-2 (the chain) or to rank 0 (the ring),
 *              whose neighbour data the others never wait for
 *   a2av_zero  MPI_Alltoallv in which the late rank sends and receives nothing
 *   a2aw_pairs every rank sends one int to its successor only (MPI_Alltoallw, MPI_Alltoallv,
 *              MPI_Ialltoallw on MPI_COMM_WORLD): every member sends and receives data, yet
 *              only rank 0 receives the late rank's, and the ranks between leave before it
 *              arrives (the trace says which ranks' blocks were empty; an OTF2 archive cannot,
 *              so it runs only when named)
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
  MPI_Iallgatherv(sb, gc, MPI_INT, rb, rc, rdv, MPI_INT, ic, &r);
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

/* One round of every neighbourhood collective on `topo`, whose every rank has at most 2
 * sources and 2 destinations. */
static void neighbor_round(MPI_Comm topo) {
  int sb[4] = {rank, rank, rank, rank}, rb[4], counts[2] = {1, 1}, displs[2] = {0, 1};
  MPI_Aint bdispls[2] = {0, (MPI_Aint)sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Request r[5];
  MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, topo);
  MPI_Neighbor_allgatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, topo);
  MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, topo);
  MPI_Neighbor_alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, topo);
  MPI_Neighbor_alltoallw(sb, counts, bdispls, types, rb, counts, bdispls, types, topo);
  MPI_Ineighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, topo, &r[0]);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  MPI_Ineighbor_allgatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, topo, &r[1]);
  MPI_Wait(&r[1], MPI_STATUS_IGNORE);
  MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, topo, &r[2]);
  MPI_Wait(&r[2], MPI_STATUS_IGNORE);
  MPI_Ineighbor_alltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, topo, &r[3]);
  MPI_Wait(&r[3], MPI_STATUS_IGNORE);
  MPI_Ineighbor_alltoallw(sb, counts, bdispls, types, rb, counts, bdispls, types, topo, &r[4]);
  MPI_Wait(&r[4], MPI_STATUS_IGNORE);
}

/* The late last rank's data reaches only rank size-2 (Cartesian, non-periodic; the chain) or
 * rank 0 (the ring), which then waits for it; the ranks between never receive from it. */
static void neighbor(void) {
  MPI_Comm cart, ring, chain;
  const int dims[1] = {size}, periods[1] = {0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  const int src = (rank + size - 1) % size, dst = (rank + 1) % size;
  /* Open MPI's MPI_UNWEIGHTED is a zero-length array, which GCC 12 takes for a 4-byte read. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overread"
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &ring);
#pragma GCC diagnostic pop
  /* A chain 0 - 1 - ... - size-1 (undirected: each rank's neighbours are its sources and
   * destinations alike); every neighbourhood call sends to and receives from each one. */
  int index[64], edges[128], e = 0;
  for (int i = 0; i < size && i < 64; ++i) {
    if (i > 0) edges[e++] = i - 1;
    if (i + 1 < size) edges[e++] = i + 1;
    index[i] = e;
  }
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &chain);
  MPI_Barrier(MPI_COMM_WORLD);
  align();
  for (int k = 0; k < kRounds; ++k) {
    late_round(k);
    neighbor_round(cart);
    neighbor_round(ring);
    neighbor_round(chain);
  }
  MPI_Comm_free(&chain);
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

/* Rank i sends one int to rank i+1 (mod size) only: every member sends and receives, but of
 * the late last rank's data only rank 0's block is not empty. */
static void a2aw_pairs(void) {
  int *sc = calloc((size_t)size, sizeof(int)), *rc = calloc((size_t)size, sizeof(int));
  int *d = calloc((size_t)size, sizeof(int)), *sb = calloc((size_t)size, sizeof(int));
  int* rb = calloc((size_t)size, sizeof(int));
  MPI_Datatype* types = malloc(sizeof(MPI_Datatype) * (size_t)size);
  for (int i = 0; i < size; ++i) {
    sc[i] = i == (rank + 1) % size;
    rc[i] = i == (rank + size - 1) % size;
    d[i] = i * (int)sizeof(int);
    types[i] = MPI_INT;
  }
  MPI_Request r;
  for (int k = 0; k < kRounds; ++k) {
    late_round(k);
    MPI_Alltoallw(sb, sc, d, types, rb, rc, d, types, MPI_COMM_WORLD);
    MPI_Ialltoallw(sb, sc, d, types, rb, rc, d, types, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < size; ++i) d[i] = i;
    MPI_Alltoallv(sb, sc, d, MPI_INT, rb, rc, d, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i) d[i] = i * (int)sizeof(int);
  }
  free(sc);
  free(rc);
  free(d);
  free(sb);
  free(rb);
  free(types);
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
  else if (!strcmp(n, "a2aw_pairs")) a2aw_pairs();
  else control();
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  late = rank == size - 1;
  static const char* const names[] = {"inter", "rs_zero", "neighbor", "a2av_zero", "a2aw_pairs", "control"};
  /* "inter" and "neighbor" make their communicators first, then align themselves; without an
   * argument every scenario but a2aw_pairs runs. */
  const char* only = argc > 1 ? argv[1] : NULL;
  static const char* const all[] = {"inter", "rs_zero", "neighbor", "a2av_zero", "control"};
  run_scenarios(only ? names : all, only ? 6 : 5, only, NULL, run);
  print_lateness(only ? names : all, only ? 6 : 5, only);
  MPI_Finalize();
  return 0;
}
