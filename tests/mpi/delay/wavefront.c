/* critpath — tests/mpi/delay/wavefront.c: a Sweep3D-like wavefront on a 4 x 4 process grid,
 * for the delay analysis ([Böhme2010] §V-A, Fig. 5), checked by check_wavefront.py. 16 ranks.
 *
 * Grid: MPI_Cart_create(dims {4, 4}, no periods, reorder 0), so rank r has the Cartesian
 * coordinates (r / 4, r % 4). Coordinate 0 is the row y (north = y - 1, south = y + 1) and
 * coordinate 1 the column x (west = x - 1, east = x + 1): x = r % 4, y = r / 4. The vertical
 * borders are the left column x = 0 (ranks 0, 4, 8, 12) and the right column x = 3 (ranks 3,
 * 7, 11, 15).
 *
 * The sweep: OCTANTS sweeps, one from each corner in turn (top-left, top-right, bottom-left,
 * bottom-right), each of PLANES k-planes. Per plane, as Sweep3D does, with blocking calls:
 *   MPI_Recv from the upstream west/east neighbour (if there is one), then from the upstream
 *   north/south neighbour (if there is one); region "compute" (sleep COMPUTE_MS, BORDER_MS on
 *   the vertical borders x = 0 and x = 3); MPI_Send downstream east/west, then south/north.
 * Messages are 8 doubles (eager: the sends never wait). Sleeps are relative (clock_nanosleep);
 * the wavefront has no absolute schedule to keep.
 *
 * Why the vertical borders: a rank waits for its west/east neighbour first, so delays spread
 * along rows. The first column of a sweep has no west/east neighbour; its delays travel down
 * the column first and from there into every row. Its extra compute time (BORDER_MS) is what
 * the pipeline runs at, and the waiting it causes reaches most of the grid: the long-term delay
 * costs concentrate on the left and right columns ([Böhme2010], Fig. 5(c)).
 *
 * With the argument "balanced" every rank computes (BORDER_MS + COMPUTE_MS) / 2 = 3 ms per plane
 * (tests/mpi/whatif: the run that balancing the border work is predicted to give). With an
 * argument "xN" every compute time is N times longer: the what-if tests use x5, so that the
 * per-hop latency of 16 ranks on 2 cores (about 40 ms along the path in all, varying from run to
 * run by several ms under Open MPI) stays small against the work the prediction is about.
 *
 * There is no barrier at the end: the pipeline drains unevenly, and a barrier would add waits
 * (and their delay costs) that have nothing to do with the sweep. MPI_Finalize follows the
 * last plane directly.
 */
#include <stdlib.h>

#include "../waits/waits_util.h"

#define NX 4
#define NY 4
#define OCTANTS 4
#define PLANES 6
#define COMPUTE_MS 2
#define BORDER_MS 4
#define WORDS 8

static void sleep_ms(long ms) {
  struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) != 0) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != NX * NY) {
    if (rank == 0) fprintf(stderr, "wavefront: needs exactly %d ranks, got %d\n", NX * NY, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm cart;
  const int dims[2] = {NY, NX}, periods[2] = {0, 0};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int coords[2];
  MPI_Cart_coords(cart, rank, 2, coords);
  const int x = coords[1]; /* coords[0] is the row y */
  int north, south, west, east;
  MPI_Cart_shift(cart, 0, 1, &north, &south);
  MPI_Cart_shift(cart, 1, 1, &west, &east);
  /* "balanced": the same total compute time spread evenly (the what-if tests' comparison). */
  int balanced = 0;
  long scale = 1;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "balanced") == 0) balanced = 1;
    if (argv[a][0] == 'x' && atol(argv[a] + 1) > 0) scale = atol(argv[a] + 1);
  }
  const long compute_ms = scale * (balanced                  ? (BORDER_MS + COMPUTE_MS) / 2
                                   : (x == 0 || x == NX - 1) ? BORDER_MS
                                                             : COMPUTE_MS);

  (void)run_scenarios; /* waits_util.h's; unused here */
  align();
  double in_x[WORDS], in_y[WORDS], out[WORDS];
  for (int i = 0; i < WORDS; ++i) in_x[i] = in_y[i] = out[i] = rank;
  double checksum = 0;
  /* Octant o sweeps from corner: 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right. */
  for (int o = 0; o < OCTANTS; ++o) {
    const int from_west = (o % 4) % 2 == 0, from_north = (o % 4) < 2;
    const int up_x = from_west ? west : east, down_x = from_west ? east : west;
    const int up_y = from_north ? north : south, down_y = from_north ? south : north;
    for (int k = 0; k < PLANES; ++k) {
      if (up_x != MPI_PROC_NULL) MPI_Recv(in_x, WORDS, MPI_DOUBLE, up_x, o, cart, MPI_STATUS_IGNORE);
      if (up_y != MPI_PROC_NULL) MPI_Recv(in_y, WORDS, MPI_DOUBLE, up_y, o, cart, MPI_STATUS_IGNORE);
      CRITPATH_REGION_BEGIN("compute");
      sleep_ms(compute_ms);
      for (int i = 0; i < WORDS; ++i) out[i] = 0.5 * (in_x[i] + in_y[i]) + 1.0;
      CRITPATH_REGION_END("compute");
      if (down_x != MPI_PROC_NULL) MPI_Send(out, WORDS, MPI_DOUBLE, down_x, o, cart);
      if (down_y != MPI_PROC_NULL) MPI_Send(out, WORDS, MPI_DOUBLE, down_y, o, cart);
    }
    checksum += out[0];
  }
  MPI_Comm_free(&cart);
  if (rank == 0)
    printf("wavefront: %d x %d grid, %d octants x %d planes, checksum %.1f\n", NX, NY, OCTANTS, PLANES,
           checksum);
  MPI_Finalize();
  return 0;
}
