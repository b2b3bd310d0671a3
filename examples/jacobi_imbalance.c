/* critpath — examples/jacobi_imbalance.c: the bundled example, a small MPI program with a
 * deliberate load imbalance for critpath to find.
 *
 * Where it sits: a user program. It links only MPI; the tracer is preloaded by critpath-run
 * (./demo.sh runs it on 4 ranks), and the report written at MPI_Finalize shows the wait time
 * the imbalance causes in MPI_Allreduce and MPI_Waitall on the lightly loaded ranks.
 *
 * The program: a 1-D Jacobi relaxation of u'' = 0 on [0, 1] with u(0) = 1, u(1) = 0, the
 * points split into one contiguous block per rank. Every iteration
 *   "halo"      exchanges the block's edge values with both neighbours (MPI_Irecv/MPI_Isend/
 *               MPI_Waitall; MPI_PROC_NULL at the domain ends),
 *   "compute"   performs one Jacobi sweep over the block,
 *   "residual"  sums the squared updates over all ranks (MPI_Allreduce) and stops early when
 *               the residual is below the tolerance (it is not, at the default sizes).
 * "init" covers the set-up: the parameters are broadcast from rank 0 (MPI_Bcast) and the ranks
 * line up (MPI_Barrier) before iterating. The last rank holds `imbalance` times as many points
 * as the others (1.3 by default), so it computes ~30 % longer each iteration and everyone else
 * waits for it.
 *
 * usage: jacobi_imbalance [iterations=200] [points_per_rank=1500000] [imbalance=1.3]
 * About 1-2 s on 4 ranks of a 2-core machine. Rank 0 prints one line at the end.
 *
 * Region API: with include/critpath.h available, the regions above are marked with
 * critpath_region_define/critpath_enter/critpath_exit. The functions are declared weak and
 * called only when present, so the program runs unchanged with or without the library.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<critpath.h>)
#include <critpath.h>
#define EXAMPLE_HAVE_CRITPATH_H 1
#endif
#endif

#ifdef EXAMPLE_HAVE_CRITPATH_H
/* Re-declare weak: linking does not need the library, and the calls below check presence. */
#pragma weak critpath_region_define
#pragma weak critpath_enter
#pragma weak critpath_exit
#else
unsigned critpath_region_define(const char* name) __attribute__((weak));
void critpath_enter(unsigned region) __attribute__((weak));
void critpath_exit(unsigned region) __attribute__((weak));
#endif

/* Region handles; 0 (no library) makes enter/exit no-ops. */
static unsigned region_define(const char* name) {
  return critpath_region_define ? critpath_region_define(name) : 0u;
}
static void region_enter(unsigned region) {
  if (critpath_enter && region) critpath_enter(region);
}
static void region_exit(unsigned region) {
  if (critpath_exit && region) critpath_exit(region);
}

struct params {
  int iterations;
  int points_per_rank;
  double imbalance;
  double tolerance;
};

static struct params parse_params(int argc, char** argv) {
  struct params p = {200, 1500000, 1.3, 1e-30};
  if (argc > 1) p.iterations = atoi(argv[1]);
  if (argc > 2) p.points_per_rank = atoi(argv[2]);
  if (argc > 3) p.imbalance = atof(argv[3]);
  if (p.iterations < 1) p.iterations = 1;
  if (p.points_per_rank < 2) p.points_per_rank = 2;
  if (p.imbalance < 0.1) p.imbalance = 0.1;
  return p;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const unsigned r_init = region_define("init");
  const unsigned r_iteration = region_define("iteration");
  const unsigned r_compute = region_define("compute");
  const unsigned r_halo = region_define("halo");
  const unsigned r_residual = region_define("residual");

  region_enter(r_init);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Rank 0 owns the command line; everyone else gets the parameters from it. */
  struct params p;
  double wire[4] = {0, 0, 0, 0};
  if (rank == 0) {
    p = parse_params(argc, argv);
    wire[0] = p.iterations;
    wire[1] = p.points_per_rank;
    wire[2] = p.imbalance;
    wire[3] = p.tolerance;
  }
  MPI_Bcast(wire, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  p.iterations = (int)wire[0];
  p.points_per_rank = (int)wire[1];
  p.imbalance = wire[2];
  p.tolerance = wire[3];

  /* Block sizes: the last rank gets `imbalance` times the others' share. */
  const int n = (rank == size - 1 && size > 1) ? (int)(p.points_per_rank * p.imbalance + 0.5)
                                               : p.points_per_rank;
  /* u[0] and u[n + 1] are ghost cells (neighbour values or the boundary condition). */
  double* u = calloc((size_t)n + 2, sizeof *u);
  double* v = calloc((size_t)n + 2, sizeof *v);
  if (u == NULL || v == NULL) {
    fprintf(stderr, "jacobi: rank %d: out of memory for %d points\n", rank, n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) u[0] = v[0] = 1.0; /* u(0) = 1; u(1) = 0 stays in the last ghost cell */
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  MPI_Barrier(MPI_COMM_WORLD);
  region_exit(r_init);

  const double t_start = MPI_Wtime();
  double residual = 0.0;
  int done = 0;
  int it = 0;
  for (; it < p.iterations && !done; ++it) {
    region_enter(r_iteration);

    region_enter(r_halo);
    MPI_Request req[4];
    MPI_Status status[4]; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's access attributes */
    MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, status);
    if (rank == 0) u[0] = 1.0;
    region_exit(r_halo);

    region_enter(r_compute);
    double local = 0.0;
    for (int i = 1; i <= n; ++i) {
      const double next = 0.5 * (u[i - 1] + u[i + 1]);
      const double d = next - u[i];
      local += d * d;
      v[i] = next;
    }
    v[0] = u[0];
    v[n + 1] = u[n + 1];
    double* t = u;
    u = v;
    v = t;
    region_exit(r_compute);

    region_enter(r_residual);
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    residual = sqrt(residual);
    done = residual < p.tolerance;
    region_exit(r_residual);

    region_exit(r_iteration);
  }
  const double elapsed = MPI_Wtime() - t_start;

  if (rank == 0) {
    printf("jacobi: %d ranks, %d iterations, %d points/rank (last rank x%.2f), "
           "residual %.3e, %.2f s\n",
           size, it, p.points_per_rank, p.imbalance, residual, elapsed);
  }
  free(u);
  free(v);
  MPI_Finalize();
  return 0;
}
