/* critpath — tests/mpi/wrappers/wrap_intercoll.c: every collective with a byte rule on an
 * intercommunicator with unequal groups (5 ranks: group A = world ranks 0-1, group B = 2-4),
 * blocking and nonblocking (each post waited for at once). Rooted collectives run once with
 * the root in A and once with it in B (MPI_ROOT at the root, MPI_PROC_NULL at the rest of its
 * group). check_intercoll.py computes every rank's expected bytes from the same counts.
 *
 * Whatever the standard lets a rank leave undefined is made unreadable or invalid here, so
 * that a tracer touching it fails the run: count and type arrays end at a PROT_NONE page
 * (an intercommunicator's arrays have remote-group entries: reading local-group many runs into
 * it), arrays and buffers that are not significant at a rank point into that page, and
 * datatypes that are not significant are a bogus handle (PMPI_Type_size on it aborts) where
 * the library itself leaves them alone: on the non-root side of rooted collectives (not
 * MPI_Bcast and MPI_Reduce, whose one datatype both libraries check everywhere), and in the
 * zero-count blocks of MPICH's blocking MPI_Alltoallw (Open MPI checks every block's datatype,
 * MPICH's MPI_Ialltoallw schedules them). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "wrap_intercoll: %s failed\n", #c); MPI_Abort(MPI_COMM_WORLD, 2); } } while (0)

/* A datatype handle no library hands out; never significant where it is passed. */
#define BOGUS_TYPE ((MPI_Datatype)(intptr_t)0x0bad0bad)

/* Guarded slots: each a readable page (filled with 0x11 bytes, so a count read past an
 * array is huge) followed by a PROT_NONE page. */
enum { kSlots = 4 };
static char* g_slot[kSlots];
static size_t g_pagesize;
static void* g_forbidden; /* for buffers and arrays that are not significant */

static void make_slots(void) {
  g_pagesize = (size_t)sysconf(_SC_PAGESIZE);
  for (int k = 0; k < kSlots; ++k) {
    char* p = mmap(NULL, 2 * g_pagesize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    memset(p, 0x11, g_pagesize);
    CHECK(mprotect(p + g_pagesize, g_pagesize, PROT_NONE) == 0);
    g_slot[k] = p;
  }
  g_forbidden = g_slot[0] + g_pagesize;
}

/* A copy of n elements of `size` bytes in slot k, ending where its PROT_NONE page begins. */
static void* at_end(int k, const void* values, int n, size_t size) {
  char* p = g_slot[k] + g_pagesize - (size_t)n * size;
  memcpy(p, values, (size_t)n * size);
  return p;
}
static int* ints_at_end(int k, const int* values, int n) {
  return at_end(k, values, n, sizeof(int));
}

/* Blocking when nb == 0, else the nonblocking twin waited for at once. */
#define COLL(Name, name, ...)                                 \
  do {                                                        \
    if (nb) {                                                 \
      MPI_Request q_;                                         \
      MPI_I##name(__VA_ARGS__, &q_);                          \
      MPI_Wait(&q_, MPI_STATUS_IGNORE);                       \
    } else {                                                  \
      MPI_##Name(__VA_ARGS__);                                \
    }                                                         \
  } while (0)

static void run(MPI_Comm ic, int in_a, int lr, int nl, int nr, int nb) {
  void* const nobuf = g_forbidden;
  int sbuf[64], rbuf[64];
  double dbuf[64];
  for (int i = 0; i < 64; ++i) sbuf[i] = i;

  COLL(Barrier, barrier, ic);

  /* Rooted, root in A (local rank 0) then in B (local rank 1). */
  for (int root_in_a = 1; root_in_a >= 0; --root_in_a) {
    const int root_group = root_in_a ? in_a : !in_a;
    const int root_lr = root_in_a ? 0 : 1;
    const int root = root_group ? (lr == root_lr ? MPI_ROOT : MPI_PROC_NULL) : root_lr;
    const int is_root = root == MPI_ROOT, bystander = root == MPI_PROC_NULL;
    const int member = !is_root && !bystander;  /* in the other group */

    /* Bcast: 7 ints */
    COLL(Bcast, bcast, bystander ? nobuf : sbuf, 7, MPI_INT, root, ic); /* both check the type */
    /* Gather: 2 ints from each remote member */
    COLL(Gather, gather, member ? sbuf : nobuf, 2, member ? MPI_INT : BOGUS_TYPE,
         is_root ? rbuf : nobuf, 2, is_root ? MPI_INT : BOGUS_TYPE, root, ic);
    /* Gatherv: member i sends i + 1 ints */
    {
      int rc[3] = {1, 2, 3}, rd[3] = {0, 1, 3};
      int* rcs = is_root ? ints_at_end(0, rc, nr) : nobuf;
      COLL(Gatherv, gatherv, member ? sbuf : nobuf, lr + 1, member ? MPI_INT : BOGUS_TYPE,
           is_root ? rbuf : nobuf, rcs, is_root ? rd : nobuf, is_root ? MPI_INT : BOGUS_TYPE,
           root, ic);
    }
    /* Scatter: 3 ints to each remote member */
    COLL(Scatter, scatter, is_root ? sbuf : nobuf, 3, is_root ? MPI_INT : BOGUS_TYPE,
         member ? rbuf : nobuf, 3, member ? MPI_INT : BOGUS_TYPE, root, ic);
    /* Scatterv: member i of a group of n receives n - i ints */
    {
      const int sc[3] = {nr, nr - 1, nr - 2}, sd[3] = {0, 3, 5};
      int* scs = is_root ? ints_at_end(0, sc, nr) : nobuf;
      COLL(Scatterv, scatterv, is_root ? sbuf : nobuf, scs, is_root ? sd : nobuf,
           is_root ? MPI_INT : BOGUS_TYPE, member ? rbuf : nobuf, nl - lr,
           member ? MPI_INT : BOGUS_TYPE, root, ic);
    }
    /* Reduce: 4 ints (root in A), 5 ints (root in B) */
    const int rcount = root_in_a ? 4 : 5;
    COLL(Reduce, reduce, member ? sbuf : nobuf, is_root ? rbuf : nobuf, rcount, MPI_INT, MPI_SUM,
         root, ic);
  }

  /* Allgather: A sends 1 int, B 2 ints; each receives the other group's blocks. */
  COLL(Allgather, allgather, sbuf, in_a ? 1 : 2, MPI_INT, rbuf, in_a ? 2 : 1, MPI_INT, ic);
  /* Allgatherv: rank i of either group sends i + 1 ints. */
  {
    int rc[3] = {1, 2, 3}, rd[3] = {0, 1, 3};
    COLL(Allgatherv, allgatherv, sbuf, lr + 1, MPI_INT, rbuf, ints_at_end(0, rc, nr), rd, MPI_INT, ic);
  }
  /* Alltoall: A sends 2 ints per remote rank, B sends 3. */
  COLL(Alltoall, alltoall, sbuf, in_a ? 2 : 3, MPI_INT, rbuf, in_a ? 3 : 2, MPI_INT, ic);
  /* Alltoallv: A rank i sends i + j + 1 ints to B rank j; B rank j sends 2i + j + 1 to A i. */
  {
    static int scv[3], rcv[3], sd[3], rd[3];
    for (int k = 0, so = 0, ro = 0; k < nr; ++k) {
      scv[k] = in_a ? lr + k + 1 : 2 * k + lr + 1;
      rcv[k] = in_a ? 2 * lr + k + 1 : k + lr + 1;
      sd[k] = so, rd[k] = ro;
      so += scv[k], ro += rcv[k];
    }
    COLL(Alltoallv, alltoallv, sbuf, ints_at_end(0, scv, nr), sd, MPI_INT, rbuf,
         ints_at_end(1, rcv, nr), rd, MPI_INT, ic);
  }
  /* Alltoallw: A sends B rank j one element, a double to j = 0 and an int otherwise; B sends
   * one int to A rank 0 and nothing to A rank 1. */
  {
    MPI_Datatype st[3], rt[3];
    int sc[3], rc[3], sd[3] = {0, 8, 16}, rd[3] = {0, 8, 16};
#if defined(MPICH)
    const MPI_Datatype unused = nb ? MPI_INT : BOGUS_TYPE;
#else
    const MPI_Datatype unused = MPI_INT;
#endif
    for (int k = 0; k < nr; ++k) {
      if (in_a) {
        sc[k] = 1, st[k] = k == 0 ? MPI_DOUBLE : MPI_INT;
        rc[k] = lr == 0 ? 1 : 0, rt[k] = lr == 0 ? MPI_INT : unused;
      } else {
        sc[k] = k == 0 ? 1 : 0, st[k] = k == 0 ? MPI_INT : unused;
        rc[k] = 1, rt[k] = lr == 0 ? MPI_DOUBLE : MPI_INT;
      }
    }
    COLL(Alltoallw, alltoallw, dbuf, ints_at_end(0, sc, nr), sd,
         at_end(1, st, nr, sizeof(MPI_Datatype)), dbuf + 8, ints_at_end(2, rc, nr), rd,
         at_end(3, rt, nr, sizeof(MPI_Datatype)), ic);
  }
  /* Allreduce: 3 ints. */
  COLL(Allreduce, allreduce, sbuf, rbuf, 3, MPI_INT, MPI_SUM, ic);
  /* Reduce_scatter: recvcounts have local-group entries, equal sums: A {2, 4}, B {1, 2, 3}. */
  {
    int ca[2] = {2, 4}, cb[3] = {1, 2, 3};
    COLL(Reduce_scatter, reduce_scatter, sbuf, rbuf, in_a ? ints_at_end(0, ca, 2) : ints_at_end(0, cb, 3),
         MPI_INT, MPI_SUM, ic);
  }
  /* Reduce_scatter_block: A 3 ints per rank, B 2 (6 in all on both sides). */
  COLL(Reduce_scatter_block, reduce_scatter_block, sbuf, rbuf, in_a ? 3 : 2, MPI_INT, MPI_SUM, ic);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int wr, wn;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wn);
  CHECK(wn == 5);
  make_slots();

  const int in_a = wr < 2;
  MPI_Comm local, ic;
  MPI_Comm_split(MPI_COMM_WORLD, in_a ? 0 : 1, wr, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? 2 : 0, 17, &ic);
  int lr, nl, nr;
  MPI_Comm_rank(ic, &lr);
  MPI_Comm_size(ic, &nl);
  MPI_Comm_remote_size(ic, &nr);
  CHECK(nl == (in_a ? 2 : 3) && nr == 5 - nl);

  run(ic, in_a, lr, nl, nr, 0);
  run(ic, in_a, lr, nl, nr, 1);

  MPI_Comm_free(&ic);
  MPI_Comm_free(&local);
  MPI_Finalize();
  if (wr == 0) printf("wrap_intercoll: done\n");
  return 0;
}
