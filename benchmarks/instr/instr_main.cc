// critpath — benchmarks/instr/instr_main.cc: driver of the instrumentation-cost kernel.
//
// usage: instr_kernel <edge> <steps> <label>
// Builds an edge^3-element mesh, runs <steps> Lagrange steps between MPI_Init and
// MPI_Finalize (critpath records only there) and prints, from rank 0,
//   instr.<label>.kernel_s: <seconds of the time-step loop>
//   instr.<label>.check: <total energy>   (equal for every build variant)
// Each rank runs its own mesh; the only MPI call in the loop is one MPI_Allreduce per step.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "instr_mesh.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int edge = argc > 1 ? std::atoi(argv[1]) : 30;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  const char* label = argc > 3 ? argv[3] : "run";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  instr::Mesh mesh(edge);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int s = 0; s < steps; ++s) {
    instr::lagrange_step(mesh);
    double dt = mesh.deltatime(), all = 0;
    MPI_Allreduce(&dt, &all, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    mesh.deltatime() = all;
  }
  const double t = MPI_Wtime() - t0;
  const double energy = instr::total_energy(mesh);
  if (rank == 0) {
    std::printf("instr.%s.kernel_s: %.4f s\n", label, t);
    std::printf("instr.%s.check: %.9e\n", label, energy);
  }
  MPI_Finalize();
  return 0;
}
