/* critpath — tests/mpi/critpath/cp_util.h: shared helpers of the critical-path test programs.
 *
 * Known answers need reproducible timing: the tests run on one host, where CLOCK_MONOTONIC is
 * shared, so rank 0 broadcasts one absolute start time and ranks sleep to absolute deadlines
 * (clock_nanosleep TIMER_ABSTIME; sleeping is "work" to the tracer: time outside MPI).
 * Regions come from the user API; preload builds take it weak (libcritpath is preloaded).
 */
#ifndef CRITPATH_TEST_CP_UTIL_H
#define CRITPATH_TEST_CP_UTIL_H

#include <mpi.h>
#include <time.h>

#include "critpath.h"

#ifdef CRITPATH_TEST_PRELOAD
#pragma weak critpath_region_define
#pragma weak critpath_enter
#pragma weak critpath_exit
#endif

static struct timespec cp_t0;

static struct timespec cp_add_ms(struct timespec t, double ms) {
  long long ns = (long long)t.tv_nsec + (long long)(ms * 1e6);
  t.tv_sec += (time_t)(ns / 1000000000LL);
  t.tv_nsec = (long)(ns % 1000000000LL);
  return t;
}

static void cp_sleep_until(struct timespec d) {
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) != 0) {
  }
}

/* CLOCK_MONOTONIC now, in ns. */
static inline long long cp_now_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* Sleeps until `ms` after the common start time. */
static void cp_sleep_from_start_ms(double ms) { cp_sleep_until(cp_add_ms(cp_t0, ms)); }

/* Sleeps for `ms` from now, to an absolute deadline (not shortened by signals). */
static void cp_sleep_ms(double ms) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  cp_sleep_until(cp_add_ms(now, ms));
}

/* Region "name" around `ms` of sleep: the test's "work". */
static void cp_work(const char* name, double ms) {
  const unsigned h = critpath_region_define(name);
  critpath_enter(h);
  cp_sleep_ms(ms);
  critpath_exit(h);
}

/* All ranks agree on a start time 20 ms from now and sleep until it. */
static void cp_align(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const unsigned h = critpath_region_define("setup");
  critpath_enter(h);
  MPI_Barrier(MPI_COMM_WORLD);
  long long start_ns = 0;
  if (rank == 0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    start_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec + 20000000LL;
  }
  MPI_Bcast(&start_ns, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  critpath_exit(h);
  cp_t0.tv_sec = (time_t)(start_ns / 1000000000LL);
  cp_t0.tv_nsec = (long)(start_ns % 1000000000LL);
  cp_sleep_from_start_ms(0);
}

#endif /* CRITPATH_TEST_CP_UTIL_H */
