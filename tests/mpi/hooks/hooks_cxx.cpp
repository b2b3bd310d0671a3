// critpath — tests/mpi/hooks/hooks_cxx.cpp: a C++ program built with -finstrument-functions
// (as critpath-cxx does), linked against libcritpath.
//
// Known answers (per rank):
//   main/ns::Solver<double>::step(int)        2 visits, inclusive = exclusive = 2 x 50 ms
//   main/ns::Solver<float>::step(int)         2 visits, 2 x 30 ms
//   main/double ns::reduce_all<double>(double)/MPI_Allreduce   MPI beneath a template function
//   main/ns::thrower(int)                     throws: exits run during unwinding; the trace
//                                             stays balanced (no unmatched exits)
#include <mpi.h>

#include <stdexcept>

extern "C" {
#include "hooks_timing.h"
}

namespace ns {

template <typename T>
struct Solver {
  T state = 0;
  __attribute__((noinline)) void step(int ms) {
    hooks_sleep_ms(ms);
    state += T(1);
  }
};

template <typename T>
__attribute__((noinline)) T reduce_all(T v) {
  T out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

__attribute__((noinline)) int thrower(int x) {
  if (x > 0) throw std::runtime_error("expected");
  return x;
}

}  // namespace ns

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  hooks_clock_start();
  ns::Solver<double> sd;
  ns::Solver<float> sf;
  for (int i = 0; i < 2; ++i) {
    sd.step(50);
    sf.step(30);
  }
  double r = ns::reduce_all<double>(sd.state);
  try {
    ns::thrower(1);
  } catch (const std::exception&) {
    r += 1;
  }
  MPI_Finalize();
  hooks_print_lateness();
  return r > 0 ? 0 : 1;
}
