// critpath — tests/mpi/hooks/hooks_region_guard.cpp: the critpath::Region guard in a program
// built by critpath-cxx (-finstrument-functions). Known answers (check_region_guard.py): the
// region "guarded" is entered and left once, and the guard's own constructor and destructor
// are never recorded as functions (include/critpath.h marks them no_instrument_function).
#include <mpi.h>

#include <critpath.h>

static int work(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += i * i;
  return s;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int s = 0;
  {
    critpath::Region r("guarded");
    s = work(1000);
  }
  MPI_Finalize();
  return s == 42;  // keeps work() from being optimized away
}
