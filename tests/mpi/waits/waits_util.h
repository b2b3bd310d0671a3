/* critpath — tests/mpi/waits/waits_util.h: what the known-answer wait-state programs share:
 * sleeping to absolute deadlines from a start time all ranks agree on, so that waits hold on
 * a loaded machine. Each program defines its scenarios after including this header.
 */
#ifndef CRITPATH_TESTS_WAITS_UTIL_H
#define CRITPATH_TESTS_WAITS_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "critpath.h"

#ifdef CRITPATH_TEST_PRELOAD
#pragma weak critpath_region_define
#pragma weak critpath_enter
#pragma weak critpath_exit
#endif

#define D_MS 100
#define L_MS 200

static struct timespec t0;
static int rank, size;

static void sleep_from_start_ms(long ms) {
  struct timespec d = t0;
  d.tv_nsec += (ms % 1000) * 1000000L;
  d.tv_sec += ms / 1000;
  while (d.tv_nsec >= 1000000000L) {
    d.tv_nsec -= 1000000000L;
    d.tv_sec += 1;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) != 0) {
  }
}

/* Sleeps `us` microseconds from now to an absolute deadline (clock_nanosleep TIMER_ABSTIME):
 * the programs' computation, whose length must hold on a loaded machine. */
static inline void work_us(long us) {
  struct timespec d;
  clock_gettime(CLOCK_MONOTONIC, &d);
  d.tv_sec += us / 1000000;
  d.tv_nsec += (us % 1000000) * 1000L;
  while (d.tv_nsec >= 1000000000L) {
    d.tv_nsec -= 1000000000L;
    d.tv_sec += 1;
  }
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) != 0) {
  }
}

static void align(void) {
  CRITPATH_REGION_BEGIN("setup");
  MPI_Barrier(MPI_COMM_WORLD);
  long long start_ns = 0;
  if (rank == 0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    start_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec + 20000000LL; /* +20 ms */
  }
  MPI_Bcast(&start_ns, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  CRITPATH_REGION_END("setup");
  t0.tv_sec = (time_t)(start_ns / 1000000000LL);
  t0.tv_nsec = (long)(start_ns % 1000000000LL);
  sleep_from_start_ms(0);
}

/* Runs each scenario of `names` (only `only` when not NULL) inside the region "s_<name>",
 * after aligning the ranks to a common start unless `unaligned` names it; then a final
 * barrier outside the scenarios. `body` runs one scenario by name. */
static inline void run_scenarios(const char* const* names, size_t n, const char* only, const char* unaligned,
                          void (*body)(const char*)) {
  for (size_t i = 0; i < n; ++i) {
    const char* name = names[i];
    if (only && strcmp(only, name)) continue;
    char region[64];
    snprintf(region, sizeof region, "s_%s", name);
    const unsigned h = critpath_region_define(region);
    if (!unaligned || strcmp(name, unaligned)) align();
    critpath_enter(h);
    body(name);
    critpath_exit(h);
  }
  CRITPATH_REGION_BEGIN("setup");
  MPI_Barrier(MPI_COMM_WORLD);
  CRITPATH_REGION_END("setup");
}

#endif
