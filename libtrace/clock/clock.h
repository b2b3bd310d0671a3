// critpath — libtrace/clock/clock.h
//
// Which clock timestamps come from, and how ticks become seconds.
//
// Choice (CRITPATH_TIMER=auto): the TSC when the CPU declares it invariant (constant_tsc and
// nonstop_tsc in /proc/cpuinfo), else CLOCK_MONOTONIC. Why: on this class of machine
// (KVM guest, AMD EPYC) rdtsc costs ≈ 9.5 ns while clock_gettime(CLOCK_MONOTONIC) through
// the vDSO costs 21–23 ns, and the event record's floor is one clock read plus a 16-byte
// store. An invariant TSC ticks at a constant rate in every P/C-state and is synchronized
// across the cores of a node, so ticks from different threads of a rank are comparable.
// Events keep raw ticks until analysis; seconds come from a linear map fitted between two
// (ticks, CLOCK_MONOTONIC) pairs taken at MPI_Init and at MPI_Finalize, so the TSC rate is
// never guessed and the result is in the same time base as CLOCK_MONOTONIC.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace critpath::clock {

enum class TimerKind : uint8_t { kTsc = 0, kMonotonic = 1 };
const char* to_string(TimerKind k);

// True when /proc/cpuinfo lists both constant_tsc and nonstop_tsc (x86-64 only).
bool tsc_invariant();
// Resolves "auto" | "tsc" | "monotonic". `why` receives a short human explanation;
// "tsc" on a machine without an invariant TSC falls back to monotonic and says so.
TimerKind choose(std::string_view setting, std::string* why);

uint64_t monotonic_ns();
uint64_t read_ticks(TimerKind k);

// A (ticks, monotonic ns) pair read as close together as possible (the monotonic reads
// bracket the tick read; the pair with the narrowest bracket of a few tries wins).
struct ClockPair {
  uint64_t ticks = 0;
  uint64_t ns = 0;
};
ClockPair sample_pair(TimerKind k);

// Linear tick -> nanosecond map between two pairs.
class TickConverter {
 public:
  TickConverter() = default;
  TickConverter(TimerKind k, ClockPair begin, ClockPair end);
  // Nanoseconds of CLOCK_MONOTONIC for a tick value.
  double to_ns(uint64_t ticks) const {
    return double(begin_.ns) + (double(int64_t(ticks - begin_.ticks))) * ns_per_tick_;
  }
  // Seconds between two tick values.
  double seconds(uint64_t from, uint64_t to) const {
    return double(int64_t(to - from)) * ns_per_tick_ * 1e-9;
  }
  double ticks_to_seconds(uint64_t ticks) const { return double(ticks) * ns_per_tick_ * 1e-9; }
  double ns_per_tick() const { return ns_per_tick_; }
  TimerKind kind() const { return kind_; }

 private:
  TimerKind kind_ = TimerKind::kMonotonic;
  ClockPair begin_;
  double ns_per_tick_ = 1.0;
};

}  // namespace critpath::clock
