/* critpath — tests/mpi/hooks/hooks_autofilter.c: a tiny function called 10,000,000 times.
 * With the default automatic filter (100,000 visits, 200 ns) it stops being recorded after
 * its first 100,000 visits: the trace stays small while main/kernel/tiny keeps all 10M
 * visits and its time in the profile, and the report lists it as auto-filtered. */
#include <mpi.h>

static volatile int sink;

__attribute__((noinline)) int tiny(int x) { return x * 3 + 1; }

__attribute__((noinline)) void kernel(void) {
  for (int i = 0; i < 10000000; ++i) sink += tiny(i);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  kernel();
  MPI_Finalize();
  return 0;
}
