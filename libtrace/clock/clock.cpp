// critpath — libtrace/clock/clock.cpp: timer choice, clock pairs, tick conversion.
#include "libtrace/clock/clock.h"

#include <x86intrin.h>

#include <cstdio>
#include <cstring>
#include <ctime>

namespace critpath::clock {

const char* to_string(TimerKind k) { return k == TimerKind::kTsc ? "tsc" : "monotonic"; }

bool tsc_invariant() {
  FILE* f = std::fopen("/proc/cpuinfo", "re");
  if (!f) return false;
  char line[4096];
  bool constant = false, nonstop = false;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "flags", 5) != 0) continue;
    constant = std::strstr(line, " constant_tsc") != nullptr;
    nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
    break;  // the first CPU's flags speak for all (homogeneous node)
  }
  std::fclose(f);
  return constant && nonstop;
}

TimerKind choose(std::string_view setting, std::string* why) {
  const bool invariant = tsc_invariant();
  auto say = [&](const char* s) {
    if (why) *why = s;
  };
  if (setting == "monotonic") {
    say("CLOCK_MONOTONIC (requested)");
    return TimerKind::kMonotonic;
  }
  if (setting == "tsc") {
    if (invariant) {
      say("TSC (requested; invariant)");
      return TimerKind::kTsc;
    }
    say("CLOCK_MONOTONIC (TSC requested but not invariant on this CPU)");
    return TimerKind::kMonotonic;
  }
  if (invariant) {
    say("TSC (invariant: constant_tsc nonstop_tsc)");
    return TimerKind::kTsc;
  }
  say("CLOCK_MONOTONIC (no invariant TSC)");
  return TimerKind::kMonotonic;
}

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

uint64_t read_ticks(TimerKind k) { return k == TimerKind::kTsc ? __rdtsc() : monotonic_ns(); }

ClockPair sample_pair(TimerKind k) {
  if (k == TimerKind::kMonotonic) {
    uint64_t t = monotonic_ns();
    return {t, t};
  }
  ClockPair best;
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 16; ++i) {
    const uint64_t a = monotonic_ns();
    const uint64_t t = __rdtsc();
    const uint64_t b = monotonic_ns();
    if (b - a < best_width) {
      best_width = b - a;
      best = {t, a + (b - a) / 2};
    }
  }
  return best;
}

TickConverter::TickConverter(TimerKind k, ClockPair begin, ClockPair end) : kind_(k), begin_(begin) {
  if (k == TimerKind::kTsc && end.ticks > begin.ticks && end.ns > begin.ns)
    ns_per_tick_ = double(end.ns - begin.ns) / double(end.ticks - begin.ticks);
  else if (k == TimerKind::kTsc)
    ns_per_tick_ = 0.4;  // no usable span (clock went wrong): assume 2.5 GHz, visibly odd
  else ns_per_tick_ = 1.0;
}

}  // namespace critpath::clock
