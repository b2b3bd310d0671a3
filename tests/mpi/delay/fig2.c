/* critpath — tests/mpi/delay/fig2.c: the delay-analysis example of Fig. 2 in Böhme et al.
 * ([Böhme2010] §IV-A), three ranks A = 0, B = 1, C = 2, checked by check_fig2.py.
 *
 * Times are absolute deadlines from one start time all ranks agree on (align(), from
 * ../waits/waits_util.h), so the answers hold on a loaded machine; D = 100 ms:
 *
 *   A (0):  foo until start+150 ms ------------------------> MPI_Send to B
 *   B (1):  foo until start+50 ms, MPI_Recv from A (waits D) -> MPI_Send to C
 *   C (2):  foo until start+50 ms, MPI_Recv from B (waits D)
 *
 * A's foo runs D longer than B's: B's wait is a direct wait state, caused by A at main/foo.
 * C's wait is caused by B's waiting: an indirect wait state whose root cause is again A's
 * extra time in foo. Known answers (seconds, ±5 % or ±2 ms):
 *   A, main/foo:        delay_cost_short_term = D, delay_cost_long_term = D
 *                       (both in the late-sender family: delay_late_sender_short/long_term)
 *   B, main/MPI_Recv:   late_sender = D; wait_direct = D, wait_indirect = 0;
 *                       wait_propagating = D (it caused C's wait), wait_terminal = 0
 *   C, main/MPI_Recv:   late_sender = D; wait_direct = 0, wait_indirect = D;
 *                       wait_propagating = 0, wait_terminal = D
 * (C's direct part is B's communication time between its receive and its send: microseconds.)
 *
 * The tail: every rank sleeps in region "tail" until start+250 ms, then one MPI_Barrier (in
 * region "setup", as align() does). All ranks are done by ~start+150 ms, so they reach the
 * barrier together and it adds no wait state of its own (a barrier right after the messages
 * would: A leaves MPI_Send at once, C only after its wait); the barrier keeps MPI_Finalize's
 * skew out of the picture too.
 */
#include "../waits/waits_util.h"

#define FOO_MS 50    /* everyone's foo ends at start + FOO_MS ... */
#define EXTRA_MS 100 /* ... except A's, which ends EXTRA_MS (= D) later */
#define TAIL_MS 250  /* common end deadline */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (rank == 0) fprintf(stderr, "fig2: needs exactly 3 ranks, got %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  (void)run_scenarios; /* waits_util.h's; unused here */
  align();
  int v = 42;
  CRITPATH_REGION_BEGIN("foo");
  sleep_from_start_ms(rank == 0 ? FOO_MS + EXTRA_MS : FOO_MS);
  CRITPATH_REGION_END("foo");
  if (rank == 0) {
    MPI_Send(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  CRITPATH_REGION_BEGIN("tail");
  sleep_from_start_ms(TAIL_MS);
  CRITPATH_REGION_END("tail");
  CRITPATH_REGION_BEGIN("setup");
  MPI_Barrier(MPI_COMM_WORLD);
  CRITPATH_REGION_END("setup");
  /* The program's own timing, for check_fig2.py: late wake-ups (waits-lateness, as
   * waits_util.h's print_lateness) and how long before the start this rank left align(). */
  printf("waits-lateness %d fig2 %lld\n", rank, waits_late_ns);
  printf("fig2-align-slack %d %lld\n", rank, waits_align_slack_ns);
  if (rank == 0) printf("fig2: done on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
