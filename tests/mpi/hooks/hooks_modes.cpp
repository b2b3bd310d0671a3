// critpath — tests/mpi/hooks/hooks_modes.cpp: one templated C++ program for every way
// critpath-cxx instruments (GCC defaults, GCC with --filter, GCC with --instrument-headers,
// XRay), checked by check_hooks.py (cases modes_*).
//
// Known answers (per rank, sleeps to absolute deadlines):
//   main/grid::Solver<double>::sweep(int)                2 visits, exclusive 2 x 50 ms
//   main/grid::Solver<float>::sweep(int)                 2 visits, exclusive 2 x 30 ms
//   .../sweep(int)/grid::Solver<double>::exchange()/MPI_Allreduce   MPI under its function
//   main/grid::outer()                                   2 visits, inclusive 2 x 60 ms,
//                                                        exclusive 2 x 20 ms
//   main/grid::outer()/grid::filtered_helper(int)        2 visits, 2 x 40 ms; never there
//                                                        when built with --filter
//                                                        hooks_modes_filter.txt
//   main/grid::kernel(int)/grid::tiny(int)               kTinyCalls visits: auto-filtered
//   grid::Field<double>::at(int)                         header function: only with
//                                                        --instrument-headers, kAtCalls visits
#include <mpi.h>

#include "hooks_modes.h"

extern "C" {
#include "hooks_timing.h"
}

namespace grid {

constexpr int kTinyCalls = 300000;
constexpr int kAtCalls = 40;  // per sweep

volatile int g_sink;

template <typename T>
struct Solver {
  Field<T> field{kAtCalls};

  // Waiting for the other rank here must not shorten the next function's sleep.
  __attribute__((noinline)) void exchange() {
    double v = double(field.at(0)), sum = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    hooks_skip_since(&t0);
    g_sink = int(sum);
  }

  __attribute__((noinline)) void sweep(int ms) {
    hooks_sleep_ms(ms);
    for (int i = 0; i < field.size(); ++i) field.at(i) += T(1);
    exchange();
  }
};

__attribute__((noinline)) void filtered_helper(int ms) {
  hooks_sleep_ms(ms);
  g_sink = ms;
}

__attribute__((noinline)) void outer() {
  hooks_sleep_ms(20);
  filtered_helper(40);
  g_sink = 0;
}

__attribute__((noinline)) int tiny(int x) { return x * 3 + 1; }

__attribute__((noinline)) int kernel(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += tiny(i);
  return s;
}

}  // namespace grid

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  hooks_clock_start();
  grid::Solver<double> sd;
  grid::Solver<float> sf;
  for (int i = 0; i < 2; ++i) {
    sd.sweep(50);
    sf.sweep(30);
    grid::outer();
  }
  grid::g_sink = grid::kernel(grid::kTinyCalls);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  hooks_print_lateness();
  return 0;
}
