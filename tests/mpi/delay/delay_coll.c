/* critpath — tests/mpi/delay/delay_coll.c: known answers for the delay costs of collective
 * wait states and of a late receiver, checked by check_delay_coll.py. Four ranks (at least
 * two for "ssend").
 *
 * Every scenario runs inside region "s_<name>" after align() (run_scenarios() from
 * ../waits/waits_util.h): the ranks start together and sleep to absolute deadlines from that
 * start, so the answers hold on a loaded machine. The extra time of the delaying rank is spent
 * in region "work" (call path main/s_<name>/work). D = 100 ms.
 *
 *   allreduce  ranks 0..P-2 work until start+50 ms, rank P-1 until start+150 ms, then
 *              MPI_Allreduce: ranks 0..P-2 wait D each (wait_nxn).
 *                rank P-1, main/s_allreduce/work: delay_nxn_short_term = (P-1)·D (0.3 s on 4),
 *                  delay_cost_short_term the same, long-term 0
 *                ranks 0..P-2, main/s_allreduce/MPI_Allreduce: wait_direct = D, wait_indirect
 *                  = 0, wait_terminal = D, wait_propagating = 0
 *   bcast      root 0 works until start+150 ms, the others until start+50 ms, then MPI_Bcast
 *              from 0: ranks 1..P-1 wait D each (late_broadcast).
 *                rank 0, main/s_bcast/work: delay_late_broadcast_short_term = (P-1)·D
 *                ranks 1..P-1, main/s_bcast/MPI_Bcast: wait_direct = wait_terminal = D
 *   barrier    rank 1 works until start+150 ms, the others until start+50 ms, then MPI_Barrier:
 *              every other rank waits D (wait_barrier).
 *                rank 1, main/s_barrier/work: delay_barrier_short_term = (P-1)·D
 *                the others, main/s_barrier/MPI_Barrier: wait_direct = wait_terminal = D
 *   ssend      rank 0 works until start+50 ms, then MPI_Ssend to rank 1; rank 1 works until
 *              start+150 ms, then MPI_Recv: rank 0 waits D in MPI_Ssend (late_receiver).
 *              Ranks 2.. take no part. (Rank 0 works too, rather than sending right at the
 *              start, so that a rank that leaves align() late still reaches its send on time:
 *              on a loaded machine the late-receiver wait came out 8 ms short otherwise.)
 *                rank 1, main/s_ssend/work: delay_late_receiver_short_term = D
 *                rank 0, main/s_ssend/MPI_Ssend: wait_direct = wait_terminal = D
 *
 * Every scenario ends with all ranks sleeping until start+END_MS (in s_<name> itself, outside
 * "work"), later than any rank finishes the scenario's communication. So the next scenario's
 * alignment barrier (or the final barrier) finds all ranks arriving together: it adds no wait
 * state, and no delay of one scenario is charged for waits in another; nothing of a scenario's
 * waiting propagates further (wait_propagating = 0). Without it, in "ssend" ranks 2 and 3
 * would wait ~D at the next barrier for rank 1, and rank 1's "work" would be charged for that.
 *
 * With argv[1] only that scenario runs; default all four.
 */
#include "../waits/waits_util.h"

#define SHORT_MS 50  /* the others' work ends at start + SHORT_MS ... */
#define EXTRA_MS 100 /* ... the delaying rank's EXTRA_MS (= D) later */
#define END_MS 200   /* every scenario's common end deadline */

static void work_until(long ms) {
  CRITPATH_REGION_BEGIN("work");
  sleep_from_start_ms(ms);
  CRITPATH_REGION_END("work");
}

static void allreduce(void) {
  double x = rank, y = 0;
  work_until(rank == size - 1 ? SHORT_MS + EXTRA_MS : SHORT_MS);
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void bcast(void) {
  double v = rank == 0 ? 1.0 : 0.0;
  work_until(rank == 0 ? SHORT_MS + EXTRA_MS : SHORT_MS);
  MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static void barrier(void) {
  work_until(rank == 1 ? SHORT_MS + EXTRA_MS : SHORT_MS);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void ssend(void) {
  int v = 7;
  if (rank == 0) {
    work_until(SHORT_MS);
    MPI_Ssend(&v, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
  } else if (rank == 1) {
    work_until(SHORT_MS + EXTRA_MS);
    MPI_Recv(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

static void scenario(const char* n) {
  if (!strcmp(n, "allreduce")) allreduce();
  else if (!strcmp(n, "bcast")) bcast();
  else if (!strcmp(n, "ssend")) ssend();
  else if (!strcmp(n, "barrier")) barrier();
  sleep_from_start_ms(END_MS);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const char* names[] = {"allreduce", "bcast", "ssend", "barrier"};
  const size_t n = sizeof names / sizeof names[0];
  const char* only = argc > 1 ? argv[1] : NULL;
  int known = only == NULL;
  for (size_t i = 0; i < n; ++i) known |= only && !strcmp(only, names[i]);
  if (!known || size < 2) {
    if (rank == 0)
      fprintf(stderr, "delay_coll: unknown scenario '%s' or fewer than 2 ranks (%d)\n", only ? only : "(all)",
              size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  run_scenarios(names, n, only, NULL, scenario);
  if (rank == 0) printf("delay_coll: done on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
