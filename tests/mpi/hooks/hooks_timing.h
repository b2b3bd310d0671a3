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

#include <stdio.h>

static struct timespec hooks_deadline;
/* The sum of every sleep's late wake-up (ns): on a loaded machine a region that ends with a
 * sleep ends that much later than its known answer. hooks_print_lateness() prints it for
 * check_hooks.py, which widens its tolerance by it (the tracer cannot be blamed for it). */
static long long hooks_late_ns;

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
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  long long late = (long long)(now.tv_sec - hooks_deadline.tv_sec) * 1000000000LL +
                   (now.tv_nsec - hooks_deadline.tv_nsec);
  if (late > 0) hooks_late_ns += late;
}

/* One stdout line "hooks-lateness NS" per rank (check_hooks.py reads OUTDIR.stdout). */
HOOKS_NOINSTR static inline void hooks_print_lateness(void) {
  printf("hooks-lateness %lld\n", hooks_late_ns);
  fflush(stdout);
}

/* Moves the deadline on by the time since `since`: time spent waiting (in MPI) that the
 * next sleep must not make up for. */
HOOKS_NOINSTR static inline void hooks_skip_since(const struct timespec* since) {
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
