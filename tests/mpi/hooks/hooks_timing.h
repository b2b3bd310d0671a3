/* critpath — tests/mpi/hooks/hooks_timing.h: sleeping to absolute deadlines, so that known
 * durations hold on a loaded machine (a late wake-up shortens the next sleep). */
#ifndef HOOKS_TIMING_H
#define HOOKS_TIMING_H
#include <time.h>

/* Never instrumented: neither by -finstrument-functions nor by XRay (critpath-cxx --xray). */
#ifdef __clang__
#define HOOKS_NOINSTR __attribute__((no_instrument_function, xray_never_instrument))
#else
#define HOOKS_NOINSTR __attribute__((no_instrument_function))
#endif

static struct timespec hooks_deadline;

HOOKS_NOINSTR static void hooks_clock_start(void) { clock_gettime(CLOCK_MONOTONIC, &hooks_deadline); }

/* Sleeps until `ms` milliseconds after the previous deadline. */
HOOKS_NOINSTR static void hooks_sleep_ms(int ms) {
  hooks_deadline.tv_nsec += (long)ms * 1000000L;
  while (hooks_deadline.tv_nsec >= 1000000000L) {
    hooks_deadline.tv_nsec -= 1000000000L;
    hooks_deadline.tv_sec += 1;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &hooks_deadline, 0) != 0) {
  }
}

/* Moves the deadline on by the time since `since`: time spent waiting (in MPI) that the
 * next sleep must not make up for. */
HOOKS_NOINSTR static void hooks_skip_since(const struct timespec* since) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  long ns = (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
  hooks_deadline.tv_nsec += ns;
  while (hooks_deadline.tv_nsec >= 1000000000L) {
    hooks_deadline.tv_nsec -= 1000000000L;
    hooks_deadline.tv_sec += 1;
  }
}
#endif
