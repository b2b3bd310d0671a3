/* critpath — tests/mpi/hooks/hooks_c.c: a C program built with critpath-cc (compiler hooks).
 *
 * Known answers (per rank, 3 iterations):
 *   main/outer          inclusive 3 x 100 ms = 0.300 s, exclusive 3 x 60 ms = 0.180 s
 *   main/outer/inner    inclusive = exclusive = 3 x 40 ms = 0.120 s
 *   main/outer/helper_a, main/outer/helper_b (hooks_helper.c): visited, ~0 s
 *   main/MPI_Barrier    MPI calls beneath the instrumented functions
 * Calls before MPI_Init (pre_init) and after MPI_Finalize (post_finalize) must not appear or
 * unbalance anything; MPI_Init is called from a function (setup), so the functions on the
 * stack at MPI_Init are entered at that point: main is folded into the root (no main/main). */
#include <mpi.h>
#include <stdio.h>

#include "hooks_timing.h"

int helper_a(int x);
int helper_b(int x);

static volatile int sink;

__attribute__((noinline)) void inner(void) { hooks_sleep_ms(40); }

__attribute__((noinline)) void outer(void) {
  hooks_sleep_ms(30);
  inner();
  sink += helper_a(1) + helper_b(2);
  hooks_sleep_ms(30);
}

__attribute__((noinline)) int pre_init(int v) { return v * 2; }
__attribute__((noinline)) int post_finalize(int v) { return v + 1; }

__attribute__((noinline)) void setup(int* argc, char*** argv) { MPI_Init(argc, argv); }

int main(int argc, char** argv) {
  sink = pre_init(3);
  setup(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  hooks_clock_start();
  for (int i = 0; i < 3; ++i) outer();
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  sink = post_finalize(sink);
  hooks_print_lateness();
  return 0;
}
