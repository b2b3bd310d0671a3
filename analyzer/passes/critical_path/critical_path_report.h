// critpath — analyzer/passes/critical_path/critical_path_report.h
//
// The critical-path analysis end to end, after the wait states and the call-path
// unification (docs/metrics.md "Critical path" defines every figure):
//
//   walk, clip and busy time per window (critical_path.h critical_path_window, computed in
//   critical_path_window.cpp) -> segments per rank -> CP time per call path and rank
//   -> partitions (MPI_APPNUM, or CRITPATH_PARTITIONS) -> per call path: CP imbalance,
//      performance impact = own time + imbalance costs (intra / inter partition, [Böhme2012]
//      §II-D-3 headroom and excess-time scaling)
//   -> busy intervals -> average parallelism and the parallelism histogram
//   -> rank 0: metrics critical_path, critical_path_imbalance, performance_impact,
//      imbalance_cost_intra, imbalance_cost_inter; the summary.txt sections "Critical path"
//      and "Parallelism"; report.json critical_path{}, scalars.*, run.partitions.
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/engine/group.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/report_input.h"
#include "analyzer/engine/run_info.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/passes/critical_path/critical_path.h"
#include "analyzer/passes/wait_states/wait_states.h"

namespace critpath::analyzer::passes {

struct CriticalPathInput {
  const RunInfo* run = nullptr;
  const LocalProfile* local = nullptr;
  const std::vector<int>* local_to_global = nullptr;  // from unify_profile
  int n_callpaths = 0;                                // global call paths (every rank)
  const GlobalProfile* global = nullptr;              // rank 0: the unified call paths
  std::string partitions;                             // CRITPATH_PARTITIONS (rank 0's counts)
};

// Collective over `group` (every rank must call it; the walk uses the group's communicator
// for nothing else meanwhile). On rank 0 appends to `report`
// (extra_metrics, sections, header_lines, extra_json). Errors are returned; the walk never
// hangs (critical_path.h).
// `acc`: every window's critical_path_window (the whole run's: one).
Status analyze_critical_path(const CriticalPathInput& in, const CpLocal& acc, const engine::Group& group,
                             ReportInput& report);

}  // namespace critpath::analyzer::passes
