/* critpath — tests/mpi/matching/p2p_match.c: point-to-point matching on communicators whose
 * ranks are not MPI_COMM_WORLD's order: intercommunicators (peers are ranks of the remote
 * group), communicators made from one by split, create and dup, communicators of
 * MPI_Comm_idup, and a truncated receive. One scenario per run, named by argv[1]:
 *
 *   inter    (4 ranks) evens and odds joined by an intercommunicator; local rank i talks to
 *            remote rank (n-1-i) (so a peer read in the local group names the wrong rank).
 *            In each of 5 rounds the odd rank posts its receive at once and its even partner
 *            sends at start + (k+1) * 40 ms: blocking MPI_Recv, MPI_Irecv + MPI_Wait,
 *            MPI_Probe (MPI_ANY_SOURCE) + MPI_Recv, MPI_Recv (MPI_ANY_TAG), MPI_Irecv +
 *            MPI_Wait. Known answer: Late Sender 200 ms on each odd rank, none on the evens.
 *   derived  (8 ranks) the same intercommunicator of 4 + 4 ranks, then MPI_Comm_split of it
 *            (two intercommunicators of 2 + 2), MPI_Comm_create of it from local ranks
 *            {3, 2, 1} (rank 0 of each side outside) and MPI_Comm_dup of it; one round of 40 ms
 *            late sends (even to odd) on each. Known answer: Late Sender 120 ms on each odd
 *            rank but world rank 1 (80 ms: it is outside the created one), none on the evens.
 *   idup     (6 ranks) MPI_Comm_idup of MPI_COMM_WORLD, of a split communicator and of the
 *            intercommunicator of `inter` (3 + 3 ranks), with
 *            messages posted on MPI_COMM_WORLD while both are pending, the duplications
 *            completed by one MPI_Waitall with those messages, a third one (of the first)
 *            completed by an MPI_Test loop; then on each duplicate in turn every even rank r
 *            sends to r + 1 40 ms late, and one round of `inter` on the intercommunicator's
 *            duplicate. The split has 3 communicators of 2 ranks in reverse world order
 *            ({3, 0}, {4, 1}, {5, 2}). Known answer, Late Sender per world rank: 40, 160, 40,
 *            120, 0, 120 ms.
 *   truncate (2 ranks) under MPI_ERRORS_RETURN rank 0 sends 8 ints twice, rank 1 receives 4
 *            (MPI_Recv, then MPI_Irecv + MPI_Wait): both fail with MPI_ERR_TRUNCATE class;
 *            then an ordinary message.
 * Prints "p2p_match: ok" on rank 0 when every received value was the one expected.
 */
#include <stdlib.h>

#include "waits_util.h"

#define STEP_MS 40

static int failures;

static void expect(int got, int want, const char* what) {
  if (got != want) {
    fprintf(stderr, "p2p_match: rank %d %s: got %d, expected %d\n", rank, what, got, want);
    ++failures;
  }
}

/* The intercommunicator between the even (color 0) and odd (color 1) world ranks. */
static MPI_Comm make_inter(MPI_Comm* half) {
  MPI_Comm inter;
  const int color = rank % 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, half);
  MPI_Intercomm_create(*half, 0, MPI_COMM_WORLD, color ? 0 : 1, 33, &inter);
  return inter;
}

/* The remote rank local rank i talks to: the mirror image. */
static int partner(MPI_Comm inter) {
  int lrank, rsize;
  MPI_Comm_rank(inter, &lrank);
  MPI_Comm_remote_size(inter, &rsize);
  return rsize - 1 - lrank;
}

/* Round k on `inter`: the even side sends at start + at_ms, the odd side receives in the
 * k-th way (k % 5). The message carries 1000 * k + the sender's world rank. */
static void round_on(MPI_Comm inter, int k, long at_ms) {
  const int peer = partner(inter);
  int v = 1000 * k + rank, got = -1;
  if (rank % 2 == 0) {
    sleep_from_start_ms(at_ms);
    if (k % 2) {
      MPI_Request q;
      MPI_Isend(&v, 1, MPI_INT, peer, k, inter, &q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(&v, 1, MPI_INT, peer, k, inter);
    }
    return;
  }
  MPI_Status st;
  MPI_Request q;
  switch (k % 5) {
    case 0: MPI_Recv(&got, 1, MPI_INT, peer, k, inter, &st); break;
    case 1:
      MPI_Irecv(&got, 1, MPI_INT, peer, k, inter, &q);
      MPI_Wait(&q, &st);
      break;
    case 2:
      MPI_Probe(MPI_ANY_SOURCE, k, inter, &st);
      expect(st.MPI_SOURCE, peer, "probe source");
      MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, inter, &st);
      break;
    case 3: MPI_Recv(&got, 1, MPI_INT, peer, MPI_ANY_TAG, inter, &st); break;
    default:
      MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, k, inter, &q);
      MPI_Wait(&q, &st);
      break;
  }
  expect(st.MPI_SOURCE, peer, "status source");
  expect(st.MPI_TAG, k, "status tag");
  expect(got / 1000, k, "payload round");
}

static void scenario_inter(void) {
  MPI_Comm half;
  MPI_Comm inter = make_inter(&half);
  align();
  for (int k = 0; k < 5; ++k) round_on(inter, k, (long)(k + 1) * STEP_MS);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

static void scenario_derived(void) {
  MPI_Comm half;
  MPI_Comm inter = make_inter(&half);
  int lrank;
  MPI_Comm_rank(inter, &lrank);
  MPI_Comm split, created, dup;
  MPI_Comm_split(inter, lrank % 2, lrank, &split);
  MPI_Group local, sub;
  MPI_Comm_group(inter, &local);
  const int members[3] = {3, 2, 1};
  MPI_Group_incl(local, 3, members, &sub);
  MPI_Comm_create(inter, sub, &created);
  MPI_Comm_dup(inter, &dup);
  align();
  round_on(split, 0, STEP_MS);
  if (created != MPI_COMM_NULL) round_on(created, 1, 2 * STEP_MS);
  else sleep_from_start_ms(2 * STEP_MS);
  round_on(dup, 2, 3 * STEP_MS);
  MPI_Group_free(&sub);
  MPI_Group_free(&local);
  if (created != MPI_COMM_NULL) MPI_Comm_free(&created);
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

/* A pair step on `comm`: each even rank r sends to r + 1 at start + at_ms, which has
 * posted its receive at once. */
static void pair_on(MPI_Comm comm, long at_ms, int tag) {
  int r;
  MPI_Comm_rank(comm, &r);
  int v = 100 * tag + r, got = -1;
  if (r % 2 == 0) {
    sleep_from_start_ms(at_ms);
    MPI_Send(&v, 1, MPI_INT, r + 1, tag, comm);
  } else {
    MPI_Recv(&got, 1, MPI_INT, r - 1, tag, comm, MPI_STATUS_IGNORE);
    expect(got, 100 * tag + r - 1, "pair payload");
  }
}

static void scenario_idup(void) {
  MPI_Comm half, dup_world, dup_half, dup_third, parity, inter, dup_inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &half);
  inter = make_inter(&parity);
  MPI_Request q[7];
  int out[2] = {rank, rank}, in[2] = {-1, -1};
  MPI_Comm_idup(MPI_COMM_WORLD, &dup_world, &q[0]);
  MPI_Irecv(&in[0], 1, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &q[1]);
  MPI_Isend(&out[0], 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &q[2]);
  MPI_Comm_idup(half, &dup_half, &q[3]);
  MPI_Irecv(&in[1], 1, MPI_INT, (rank + 1) % size, 8, MPI_COMM_WORLD, &q[4]);
  MPI_Isend(&out[1], 1, MPI_INT, (rank + size - 1) % size, 8, MPI_COMM_WORLD, &q[5]);
  MPI_Comm_idup(inter, &dup_inter, &q[6]);
  MPI_Waitall(7, q, MPI_STATUSES_IGNORE);
  expect(in[0], (rank + size - 1) % size, "world message during idup");
  expect(in[1], (rank + 1) % size, "world message during idup");
  MPI_Request t;
  int flag = 0;
  MPI_Comm_idup(dup_world, &dup_third, &t);
  while (!flag) MPI_Test(&t, &flag, MPI_STATUS_IGNORE);
  align();
  pair_on(dup_world, STEP_MS, 1);
  pair_on(dup_half, 2 * STEP_MS, 2);
  pair_on(dup_third, 3 * STEP_MS, 3);
  round_on(dup_inter, 0, 4 * STEP_MS);
  MPI_Comm_free(&dup_inter);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&parity);
  MPI_Comm_free(&dup_third);
  MPI_Comm_free(&dup_half);
  MPI_Comm_free(&dup_world);
  MPI_Comm_free(&half);
}

static void scenario_truncate(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  if (rank == 0) {
    MPI_Send(buf, 8, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Send(buf, 8, MPI_INT, 1, 2, MPI_COMM_WORLD);
    MPI_Send(buf, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int small[4], cls = 0;
    MPI_Status st;
    int rc = MPI_Recv(small, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
    MPI_Error_class(rc, &cls);
    expect(cls, MPI_ERR_TRUNCATE, "MPI_Recv error class");
    MPI_Request q;
    MPI_Irecv(small, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, &q);
    rc = MPI_Wait(&q, &st);
    MPI_Error_class(rc, &cls);
    expect(cls, MPI_ERR_TRUNCATE, "MPI_Wait error class");
    MPI_Recv(small, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &st);
    expect(small[0], 0, "payload after truncation");
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* s = argc > 1 ? argv[1] : "inter";
  const int need = !strcmp(s, "derived") ? 8 : !strcmp(s, "idup") ? 6 : !strcmp(s, "truncate") ? 2 : 4;
  if (size != need) {
    if (rank == 0) fprintf(stderr, "p2p_match %s: needs %d ranks\n", s, need);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (!strcmp(s, "inter")) scenario_inter();
  else if (!strcmp(s, "derived")) scenario_derived();
  else if (!strcmp(s, "idup")) scenario_idup();
  else if (!strcmp(s, "truncate")) scenario_truncate();
  printf("waits-lateness %d %s %lld\n", rank, s, waits_late_ns);
  MPI_Barrier(MPI_COMM_WORLD);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(all ? "p2p_match: %d failures\n" : "p2p_match: ok\n", all);
  MPI_Finalize();
  return all != 0;
}
