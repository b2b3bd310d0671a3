// critpath — tests/unit/clock/clock_test.cpp: timer choice, monotonicity, tick conversion.
#include <catch2/catch.hpp>

#include <time.h>

#include "libtrace/clock/clock.h"

using namespace critpath::clock;

TEST_CASE("clock: both timers are monotonic", "[clock]") {
  for (TimerKind k : {TimerKind::kTsc, TimerKind::kMonotonic}) {
    uint64_t prev = read_ticks(k);
    for (int i = 0; i < 1000000; ++i) {
      const uint64_t now = read_ticks(k);
      REQUIRE(now >= prev);
      prev = now;
    }
  }
}

TEST_CASE("clock: choice honours the setting", "[clock]") {
  std::string why;
  CHECK(choose("monotonic", &why) == TimerKind::kMonotonic);
  CHECK_FALSE(why.empty());
  const TimerKind a = choose("auto", &why);
  CHECK(a == (tsc_invariant() ? TimerKind::kTsc : TimerKind::kMonotonic));
  const TimerKind t = choose("tsc", &why);
  CHECK(t == (tsc_invariant() ? TimerKind::kTsc : TimerKind::kMonotonic));
}

TEST_CASE("clock: converted TSC intervals match CLOCK_MONOTONIC within 0.5 %", "[clock]") {
  const TimerKind k = choose("auto", nullptr);
  const ClockPair a = sample_pair(k);
  // Sleep to an absolute deadline 50 ms ahead.
  timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_nsec += 50000000;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000;
  }
  const ClockPair mid0 = sample_pair(k);
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
  const ClockPair mid1 = sample_pair(k);
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
  const ClockPair b = sample_pair(k);
  const TickConverter conv(k, a, b);
  const double measured = conv.seconds(mid0.ticks, mid1.ticks);
  const double truth = double(mid1.ns - mid0.ns) * 1e-9;
  CHECK(measured == Approx(truth).epsilon(0.005));
  CHECK(conv.to_ns(b.ticks) == Approx(double(b.ns)).epsilon(1e-9));
}
