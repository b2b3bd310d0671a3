/* critpath — tests/mpi/critpath/imbalance.c
 *
 * [Böhme2012] §IV-A, the synthetic load-imbalance benchmark: a loop of N iterations, each a
 * work() phase (region "work") followed by MPI_Barrier. Four scenarios, each in its own
 * region "s_<name>" so its work lands on main/s_<name>/work. Same total work in all of them
 * (P·N·W); the imbalanced ones take 25 % longer (N·(W + E), E = W/4):
 *
 *   balanced  every rank W per iteration
 *   static    rank 0 W + E every iteration; the others W − E/(P−1)
 *   dynamic   rank i mod P gets W + E in iteration i, the others W − E/(P−1): every rank's
 *             total is N·W (needs N a multiple of P)
 *   mixed     rank 0 overloaded (W + E) in the first half, rank 1 in the second half; the
 *             overloaded rank of the other half does W, the rest W − E/(P−2)
 *
 * Known answers (check_critpath.py imbalance): critical-path imbalance of work = N·E in the
 * three imbalanced scenarios, 0 when balanced; profile imbalance (max − avg of the ranks' work)
 * N·E (static), 0 (dynamic), N·E/2 (mixed), 0 (balanced).
 * Work is a relative sleep (its duration exact whatever the barrier's exit skew); P >= 3.
 * Oversubscribed, a sleep overshoots by the rank's wake-up latency, and the critical path goes
 * through the latest arrival at each barrier: "balanced" is then not quite balanced. Each rank
 * prints, per iteration, its work's measured duration and its arrival at the barrier
 * ("cp-work RANK SCENARIO ITER DUR_NS ARRIVE_NS", CLOCK_MONOTONIC) so the check can take the
 * run's own overshoots into its expected values.
 * usage: imbalance [scenario ...]   (default: all four)
 */
#include <stdio.h>
#include <string.h>

#include "cp_util.h"

#define N_ITER 8
#define W_MS 200.0
#define E_MS 50.0

static int rank, size;

static double duration(const char* s, int i) {
  if (!strcmp(s, "static")) return rank == 0 ? W_MS + E_MS : W_MS - E_MS / (size - 1);
  if (!strcmp(s, "dynamic")) return rank == i % size ? W_MS + E_MS : W_MS - E_MS / (size - 1);
  if (!strcmp(s, "mixed")) {
    const int over = i < N_ITER / 2 ? 0 : 1;
    if (rank == over) return W_MS + E_MS;
    if (rank == 1 - over) return W_MS;
    return W_MS - E_MS / (size - 2);
  }
  return W_MS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const char* all[] = {"balanced", "static", "dynamic", "mixed"};
  const int n = argc > 1 ? argc - 1 : 4;
  for (int k = 0; k < n; ++k) {
    const char* s = argc > 1 ? argv[k + 1] : all[k];
    char region[64];
    snprintf(region, sizeof region, "s_%s", s);
    const unsigned h = critpath_region_define(region);
    cp_align();
    critpath_enter(h);
    long long dur[N_ITER], arrive[N_ITER];
    for (int i = 0; i < N_ITER; ++i) {
      const long long t0 = cp_now_ns();
      cp_work("work", duration(s, i));
      arrive[i] = cp_now_ns();
      dur[i] = arrive[i] - t0;
      MPI_Barrier(MPI_COMM_WORLD);
    }
    critpath_exit(h);
    for (int i = 0; i < N_ITER; ++i) printf("cp-work %d %s %d %lld %lld\n", rank, s, i, dur[i], arrive[i]);
    fflush(stdout);
  }
  if (rank == 0) printf("imbalance: done on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
