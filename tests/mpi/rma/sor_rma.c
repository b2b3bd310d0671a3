/* critpath — tests/mpi/rma/sor_rma.c: a red-black SOR Poisson solver whose halo exchange uses
 * MPI RMA ([Hermanns2009] §5.1's SOR, small): a 2-D process grid, each rank an N x N block with
 * ghost cells, halos written with MPI_Put into the neighbours' windows, a residual Allreduce
 * every iteration. Usage: sor_rma fence|pscw
 *
 * Known answers (check_sor_rma.py): each iteration every rank works until a common absolute
 * deadline (k * T); rank 5 works E longer. Then
 *   fence  the fence closing the halo epoch waits for rank 5: Wait at Fence E per iteration
 *          on each of the other P-1 ranks, of it Early Fence E on rank 5's grid neighbours
 *          (their fence waits for rank 5's late Puts)
 *   pscw   the neighbours of rank 5 start their access epoch towards it before it posts:
 *          Late Post E per iteration on each of rank 5's grid neighbours
 * The solution does not depend on the variant: rank 0 prints the same residual for both.
 * 16 ranks on 2 cores wake late from their deadlines now and then, so every rank also prints
 * when it was ready in each iteration (after its sleep) and, fence, when it entered the
 * closing fence: "sor-arrive RANK ITER READY_NS FENCE_NS" (CLOCK_MONOTONIC; FENCE_NS 0 for
 * pscw), from which the check computes the waits this run's arrivals make.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 32 /* interior points per dimension per rank */
#define ITERS 12
#define T_MS 60 /* iteration period */
#define E_MS 20 /* rank 5's extra work per iteration */
#define SLOW 5

static struct timespec t0;
static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
static void sleep_until_ms(long ms) {
  struct timespec d = t0;
  d.tv_sec += ms / 1000;
  d.tv_nsec += (ms % 1000) * 1000000L;
  while (d.tv_nsec >= 1000000000L) {
    d.tv_nsec -= 1000000000L;
    d.tv_sec += 1;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) != 0) {
  }
}

#define IDX(i, j) ((i) * (N + 2) + (j))

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int pscw = argc > 1 && !strcmp(argv[1], "pscw");
  int rank, size, dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Dims_create(size, 2, dims);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  MPI_Comm_rank(grid, &rank);
  MPI_Cart_coords(grid, rank, 2, coords);
  int nb[4]; /* up, down, left, right */
  MPI_Cart_shift(grid, 0, 1, &nb[0], &nb[1]);
  MPI_Cart_shift(grid, 1, 1, &nb[2], &nb[3]);

  double* u;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)((N + 2) * (N + 2) * sizeof(double)), sizeof(double), MPI_INFO_NULL, grid, &u,
                   &win);
  memset(u, 0, (N + 2) * (N + 2) * sizeof(double));
  double f = 1.0, h2 = 1.0 / ((N * dims[0] + 1.0) * (N * dims[0] + 1.0)), omega = 1.5;
  MPI_Datatype column;
  MPI_Type_vector(N, 1, N + 2, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  MPI_Group world_group, neighbours;
  int members[4], m = 0;
  for (int k = 0; k < 4; ++k)
    if (nb[k] != MPI_PROC_NULL) members[m++] = nb[k];
  MPI_Comm_group(grid, &world_group);
  MPI_Group_incl(world_group, m, members, &neighbours);

  /* A common start. */
  long long start_ns = 0;
  if (rank == 0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    start_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec + 50000000LL;
  }
  MPI_Bcast(&start_ns, 1, MPI_LONG_LONG, 0, grid);
  t0.tv_sec = (time_t)(start_ns / 1000000000LL);
  t0.tv_nsec = (long)(start_ns % 1000000000LL);
  if (!pscw) MPI_Win_fence(0, win);

  double residual = 0;
  long long ready[ITERS], fence[ITERS];
  for (int it = 0; it < ITERS; ++it) {
    for (int color = 0; color < 2; ++color) /* red, then black */
      for (int i = 1; i <= N; ++i)
        for (int j = 1; j <= N; ++j)
          if (((i + j + coords[0] * N + coords[1] * N) & 1) == color)
            u[IDX(i, j)] += omega * 0.25 *
                            (u[IDX(i - 1, j)] + u[IDX(i + 1, j)] + u[IDX(i, j - 1)] + u[IDX(i, j + 1)] +
                             h2 * f - 4 * u[IDX(i, j)]);
    sleep_until_ms((it + 1) * T_MS + (rank == SLOW ? E_MS : 0));
    ready[it] = now_ns();
    fence[it] = 0;
    if (pscw) {
      MPI_Win_post(neighbours, 0, win);
      MPI_Win_start(neighbours, 0, win);
    }
    /* Halos: my first/last row and column into the neighbours' ghost cells. */
    if (nb[0] != MPI_PROC_NULL)
      MPI_Put(&u[IDX(1, 1)], N, MPI_DOUBLE, nb[0], IDX(N + 1, 1), N, MPI_DOUBLE, win);
    if (nb[1] != MPI_PROC_NULL) MPI_Put(&u[IDX(N, 1)], N, MPI_DOUBLE, nb[1], IDX(0, 1), N, MPI_DOUBLE, win);
    if (nb[2] != MPI_PROC_NULL) MPI_Put(&u[IDX(1, 1)], 1, column, nb[2], IDX(1, N + 1), 1, column, win);
    if (nb[3] != MPI_PROC_NULL) MPI_Put(&u[IDX(1, N)], 1, column, nb[3], IDX(1, 0), 1, column, win);
    if (pscw) {
      MPI_Win_complete(win);
      MPI_Win_wait(win);
    } else {
      fence[it] = now_ns();
      MPI_Win_fence(0, win);
    }
    double local = 0;
    for (int i = 1; i <= N; ++i)
      for (int j = 1; j <= N; ++j) {
        const double r = u[IDX(i - 1, j)] + u[IDX(i + 1, j)] + u[IDX(i, j - 1)] + u[IDX(i, j + 1)] + h2 * f -
                         4 * u[IDX(i, j)];
        local += r * r;
      }
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, grid);
  }
  for (int it = 0; it < ITERS; ++it) printf("sor-arrive %d %d %lld %lld\n", rank, it, ready[it], fence[it]);
  fflush(stdout);
  if (rank == 0)
    printf("sor_rma: %d x %d ranks, %d iterations, residual %.10e\n", dims[0], dims[1], ITERS,
           sqrt(residual));
  MPI_Group_free(&neighbours);
  MPI_Group_free(&world_group);
  MPI_Type_free(&column);
  MPI_Win_free(&win);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
