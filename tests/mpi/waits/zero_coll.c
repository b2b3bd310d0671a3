/* critpath — tests/mpi/waits/zero_coll.c
 *
 * Collectives that move no data do not synchronize: with every count zero MPI lets each rank
 * leave at once, so on one host a rank that arrives late finds the others already gone. Such
 * an instance must neither count as a clock-condition violation nor book a wait state
 * (check_zero_coll.py). Same method as waits.c: each scenario runs inside region "s_<name>"
 * after an alignment barrier; the last rank sleeps L = 200 ms (from one start time broadcast
 * by rank 0), the others enter at once:
 *
 *   zero      the last rank late, then kRepeat x each zero-count collective (20 ms apart on
 *             the late rank): Reduce_scatter (zero recvcounts), Reduce_scatter_block,
 *             Allreduce, Allgather, Alltoall, Alltoallv, Bcast, Scatter, Ireduce_scatter +
 *             Wait, Iallreduce + Wait; no wait, no violation
 *   control   the last rank late before an MPI_Allreduce of one double: wait_nxn = L on the
 *             others (the same program can book a wait)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "critpath.h"

#include "waits_util.h"

enum { kRepeat = 3 };

static void zero_round(int* zeros, double* buf) {
  MPI_Request r;
  MPI_Reduce_scatter(buf, buf + 8, zeros, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(buf, buf + 8, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(buf, buf + 8, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allgather(buf, 0, MPI_DOUBLE, buf + 8, 0, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Alltoall(buf, 0, MPI_DOUBLE, buf + 8, 0, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Alltoallv(buf, zeros, zeros, MPI_DOUBLE, buf + 8, zeros, zeros, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Bcast(buf, 0, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatter(buf, 0, MPI_DOUBLE, buf + 8, 0, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Ireduce_scatter(buf, buf + 8, zeros, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Iallreduce(buf, buf + 8, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static void run(const char* n) {
  int* zeros = calloc((size_t)size, sizeof(int));
  double buf[16] = {0};
  const int late = rank == size - 1;
  if (!strcmp(n, "zero")) {
    for (int k = 0; k < kRepeat; ++k) {
      if (late) sleep_from_start_ms(L_MS + 20L * k);
      zero_round(zeros, buf);
    }
  } else {
    if (late) sleep_from_start_ms(L_MS);
    MPI_Allreduce(buf, buf + 8, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  free(zeros);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const char* const names[] = {"zero", "control"};
  run_scenarios(names, 2, argc > 1 ? argv[1] : NULL, NULL, run);
  MPI_Finalize();
  return 0;
}
