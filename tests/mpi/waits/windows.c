/* critpath — tests/mpi/waits/windows.c
 *
 * Known-answer program for the analysis window by window (analyzer/engine/window.h): an
 * iterative code whose MPI_COMM_WORLD collectives are not all clean cuts. Every iteration i
 * (N = 8, a period of 200 ms from the agreed start; D = 20 ms, L = 40 ms) runs four steps:
 *
 *   cross   rank 0 MPI_Send (4 bytes, eager) -> 1; MPI_Barrier; rank 1 MPI_Recv after it:
 *           a message crosses the barrier, which is no cut
 *   pend    rank 1 MPI_Irecv from 0; MPI_Allreduce; rank 0 MPI_Send; rank 1 MPI_Wait:
 *           a request is pending across the allreduce, which is no cut
 *   ls      at the iteration's start s = i % P sleeps L, then MPI_Send -> (s + 1) % P, which
 *           is in MPI_Recv from the start             late_sender(r) = 2 L (N / P receives)
 *   nxn     rank r sleeps to start + 2 L + D r, MPI_Allreduce: a clean cut
 *                                                     wait_nxn(r) = N D (P - 1 - r)
 * The answers hold window by window only if the first two collectives are not cut at: a cut
 * there would leave the crossing message and the pending receive unmatched.
 *
 * With argv[1] = F > 0, F fast iterations follow in region "fast" (a ring exchange with
 * MPI_Sendrecv and an MPI_Allreduce each, no sleeps): a trace long enough for a small
 * CRITPATH_ANALYSIS_MEMORY to make the analysis go window by window on its own. With
 * argv[2] = U > 0, U visits of user region "user" follow: events that cost the analysis
 * little (the estimate after the scan tells them from MPI calls).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waits_util.h"

#define N_ITER 8
#define PERIOD_MS 200
#define DW_MS 20
#define LW_MS 40

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "windows: needs at least 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  align();
  /* argv[3] = "split": the iterations' collectives on a communicator of every rank in reverse
   * order (as a library's own duplicate of MPI_COMM_WORLD): candidates too. */
  MPI_Comm comm = MPI_COMM_WORLD;
  if (argc > 3 && strcmp(argv[3], "split") == 0) MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &comm);
  long checksum = 0;
  for (int i = 0; i < N_ITER; ++i) {
    const long base = 100 + (long)i * PERIOD_MS; /* the iteration's start, ms after t0 */
    sleep_from_start_ms(base);
    int v = i, w = -1, x = rank, y = 0;

    CRITPATH_REGION_BEGIN("cross");
    if (rank == 0) MPI_Send(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Barrier(comm);
    if (rank == 1) MPI_Recv(&w, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CRITPATH_REGION_END("cross");
    checksum += w;

    CRITPATH_REGION_BEGIN("pend");
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 1) MPI_Irecv(&w, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &req);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
    if (rank == 0) MPI_Send(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    if (rank == 1) MPI_Wait(&req, MPI_STATUS_IGNORE);
    CRITPATH_REGION_END("pend");
    checksum += w + y;

    CRITPATH_REGION_BEGIN("ls");
    const int s = i % size, t = (i + 1) % size;
    if (rank == s) {
      sleep_from_start_ms(base + LW_MS);
      MPI_Send(&v, 1, MPI_INT, t, 3, MPI_COMM_WORLD);
    } else if (rank == t) {
      MPI_Recv(&w, 1, MPI_INT, s, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    CRITPATH_REGION_END("ls");
    checksum += w;

    CRITPATH_REGION_BEGIN("nxn");
    sleep_from_start_ms(base + 2 * LW_MS + (long)DW_MS * rank);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
    CRITPATH_REGION_END("nxn");
    checksum += y;
  }
  const int fast = argc > 1 ? atoi(argv[1]) : 0;
  CRITPATH_REGION_BEGIN("fast");
  for (int i = 0; i < fast; ++i) {
    int v = i + rank, w = 0, y = 0;
    MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 4, &w, 1, MPI_INT, (rank + size - 1) % size, 4,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&w, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    checksum += y % 7;
  }
  CRITPATH_REGION_END("fast");
  const int user = argc > 2 ? atoi(argv[2]) : 0;
  for (int i = 0; i < user; ++i) {
    CRITPATH_REGION_BEGIN("user");
    checksum += i & 1;
    CRITPATH_REGION_END("user");
  }
  if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  printf("windows-checksum %d %ld\n", rank, checksum);
  printf("windows-lateness %d %lld\n", rank, waits_late_ns);
  MPI_Finalize();
  return 0;
}
