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

/* Late wake-ups: how much later than their deadlines this rank's sleeps returned, summed per
 * scenario of run_scenarios (waits_lateness_ns[k] for the k-th name). A rank that wakes late
 * enters its MPI call late, which shortens its own wait and lengthens its partners' by as
 * much, whatever the tracer does; print_lateness() tells check_waits.py, which widens its
 * tolerance by it. */
#define WAITS_MAX_SCENARIOS 32
static long long waits_late_ns __attribute__((unused));
static long long waits_lateness_ns[WAITS_MAX_SCENARIOS] __attribute__((unused));
/* How long before the common start this rank left the last align()'s setup region, ns: the
 * ranks' values differ by how far apart they left it (a rank descheduled in the barrier or the
 * broadcast leaves it late, and its time from there to the start is shorter than the others'). */
static long long waits_align_slack_ns __attribute__((unused));

static void note_lateness(const struct timespec* deadline) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const long long late = (long long)(now.tv_sec - deadline->tv_sec) * 1000000000LL +
                         (now.tv_nsec - deadline->tv_nsec);
  if (late > 0) waits_late_ns += late;
}

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
  note_lateness(&d);
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
  note_lateness(&d);
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
  struct timespec left;
  clock_gettime(CLOCK_MONOTONIC, &left);
  waits_align_slack_ns = start_ns - ((long long)left.tv_sec * 1000000000LL + left.tv_nsec);
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
    waits_late_ns = 0; /* the alignment's wake-up included: a late rank starts late */
    if (!unaligned || strcmp(name, unaligned)) align();
    critpath_enter(h);
    body(name);
    critpath_exit(h);
    if (i < WAITS_MAX_SCENARIOS) waits_lateness_ns[i] = waits_late_ns;
  }
  CRITPATH_REGION_BEGIN("setup");
  MPI_Barrier(MPI_COMM_WORLD);
  CRITPATH_REGION_END("setup");
}

/* One stdout line "waits-lateness RANK SCENARIO NS" per scenario run (after run_scenarios). */
static inline void print_lateness(const char* const* names, size_t n, const char* only) {
  for (size_t i = 0; i < n && i < WAITS_MAX_SCENARIOS; ++i)
    if (!only || !strcmp(only, names[i]))
      printf("waits-lateness %d %s %lld\n", rank, names[i], waits_lateness_ns[i]);
  fflush(stdout);
}

#endif
