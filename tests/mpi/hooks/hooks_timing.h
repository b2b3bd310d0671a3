/* critpath — tests/mpi/hooks/hooks_timing.h: sleeping to absolute deadlines, so that known
 * durations hold on a loaded machine (a late wake-up shortens the next sleep). */
#ifndef HOOKS_TIMING_H
#define HOOKS_TIMING_H
#include <time.h>

static struct timespec hooks_deadline;

__attribute__((no_instrument_function)) static void hooks_clock_start(void) { clock_gettime(CLOCK_MONOTONIC, &hooks_deadline); }

/* Sleeps until `ms` milliseconds after the previous deadline. */
__attribute__((no_instrument_function)) static void hooks_sleep_ms(int ms) {
  hooks_deadline.tv_nsec += (long)ms * 1000000L;
  while (hooks_deadline.tv_nsec >= 1000000000L) {
    hooks_deadline.tv_nsec -= 1000000000L;
    hooks_deadline.tv_sec += 1;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &hooks_deadline, 0) != 0) {
  }
}
#endif
