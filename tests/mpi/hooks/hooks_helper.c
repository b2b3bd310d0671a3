/* critpath — tests/mpi/hooks/hooks_helper.c: functions in a second source file, for the
 * file-name rules of the filter test. */
__attribute__((noinline)) int helper_a(int x) { return x + 1; }
__attribute__((noinline)) int helper_b(int x) { return x * 3; }
