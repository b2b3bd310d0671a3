// critpath — analyzer/engine/global_time.h
//
// The analysis's time base for one traced rank: its raw ticks -> seconds on rank 0's clock,
// linearly corrected between the offsets measured at MPI_Init and MPI_Finalize
// (engine/clock_sync.h) unless the run needs no correction (one rank, one host,
// CRITPATH_CLOCK_CORRECTION=none): the analysis's to_global (engine/analysis_engine.cpp), and
// the times the OTF2 export writes.
#pragma once

#include <cstdint>

#include "analyzer/engine/clock_sync.h"
#include "analyzer/engine/run_info.h"

namespace critpath::analyzer {

class GlobalTime {
 public:
  explicit GlobalTime(const RunInfo& run)
      : run_(run), clock_(run.init_offset, run.fin_offset, corrected(run) && !run.same_host_as_root) {}
  // Whether the ranks' times are put on rank 0's clock at all (else local times count).
  static bool corrected(const RunInfo& run) {
    return run.clock_linear && run.size > 1 && !run.all_on_one_host;
  }
  // The correction's error bound (engine/clock_sync.h).
  double max_error_s() const { return clock_.max_error_s(); }
  double seconds(uint64_t ticks) const {
    return clock_.to_global_s(skewed_ns(run_.skew, run_.conv.to_ns(ticks))) + run_.skew.event_jump_s;
  }

 private:
  const RunInfo& run_;
  GlobalClock clock_;
};

}  // namespace critpath::analyzer
