// critpath — analyzer/engine/clock_sync.h
//
// One time base for all ranks. Each rank's events carry its own clock; before any analysis
// compares times of two ranks they are mapped onto rank 0's clock:
//
//   t_global = t_local + offset(t_local),  offset linear between the offsets measured at
//   MPI_Init and at MPI_Finalize (CRITPATH_CLOCK_CORRECTION=linear, the default)
//
// Offsets are measured against rank 0 with a few ping-pongs per rank; the exchange with the
// smallest round trip wins (its error is at most half that round trip). `none` uses local
// times as they are (exact on one node, where CLOCK_MONOTONIC is shared).
//
// For tests, CRITPATH_DEBUG_CLOCK_SKEW="<offset seconds>,<drift ppm>[,<jump seconds>]"
// distorts every rank's clock on purpose: rank r reads t + s_r·offset + s_r·drift·1e-6·
// (t − t_init), with s_r = +1 on odd ranks and −1 on even ranks (rank 0 undistorted); the
// linear correction must undo it. The optional jump shifts only the recorded events (not
// the clock the offsets are measured with) by s_r·jump: a clock error the linear correction
// cannot see, left for `clc` to repair.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

namespace critpath::analyzer {

struct ClockSkew {
  double offset_s = 0;      // injected offset of this rank
  double drift = 0;         // injected drift (dimensionless)
  double origin_ns = 0;     // drift reference (this rank's undistorted init time)
  double event_jump_s = 0;  // applied to event times only (see above)
  bool active = false;
};
// Parses a CRITPATH_DEBUG_CLOCK_SKEW value for `rank`; origin_ns is the init time.
ClockSkew parse_debug_skew(const std::string& spec, int rank, double origin_ns);

// Maps a rank's undistorted CLOCK_MONOTONIC nanoseconds to what its (possibly injected)
// local clock shows.
inline double skewed_ns(const ClockSkew& s, double ns) {
  if (!s.active) return ns;
  return ns + s.offset_s * 1e9 + s.drift * (ns - s.origin_ns);
}

struct OffsetSample {
  double local_ns = 0;   // local time of the measurement (midpoint)
  double offset_ns = 0;  // rank 0's clock minus ours at that time
  double rtt_ns = 0;     // best round trip (error bound = rtt / 2)
};

// Collective over `comm` (rank 0 of comm is the reference). `local_now` reads this rank's
// clock in ns (with any injected skew). Returns this rank's offset sample (zero on rank 0).
OffsetSample measure_offset(MPI_Comm comm, double (*local_now)(), int pingpongs = 8);

// The correction of one rank.
class GlobalClock {
 public:
  GlobalClock() = default;
  GlobalClock(OffsetSample at_init, OffsetSample at_finalize, bool linear);
  // Global seconds for local nanoseconds.
  double to_global_s(double local_ns) const { return (local_ns + offset_at(local_ns)) * 1e-9; }
  double offset_at(double local_ns) const {
    if (!linear_) return 0;
    return a_.offset_ns + slope_ * (local_ns - a_.local_ns);
  }
  double max_error_s() const { return 0.5 * std::max(a_.rtt_ns, b_.rtt_ns) * 1e-9; }

 private:
  OffsetSample a_, b_;
  double slope_ = 0;
  bool linear_ = false;
};

}  // namespace critpath::analyzer
