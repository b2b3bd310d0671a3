// critpath — analyzer/passes/critical_path/critical_path_report.h
//
// The critical-path analysis end to end, after the wait states and the call-path
// unification (docs/metrics.md "Critical path" defines every figure):
//
//   walk (critical_path.h) -> segments per rank -> clip: CP time per call path and rank
//   -> partitions (MPI_APPNUM, or CRITPATH_PARTITIONS) -> per call path: CP imbalance,
//      performance impact = own time + imbalance costs (intra / inter partition, [Böhme2012]
//      §II-D-3 headroom and excess-time scaling)
//   -> busy intervals -> average parallelism and the parallelism histogram
//   -> rank 0: metrics critical_path, critical_path_imbalance, performance_impact,
//      imbalance_cost_intra, imbalance_cost_inter; the summary.txt sections "Critical path"
//      and "Parallelism"; report.json critical_path{}, scalars.*, run.partitions.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "analyzer/passes/critical_path/critical_path.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/report/report.h"
#include "analyzer/session/run_info.h"

namespace critpath::analyzer::passes {

// One rank's walk, clip and busy time: of the whole run, or added window by window
// (engine/window.h; each window is cut at a clean, synchronizing MPI_COMM_WORLD collective
// C_k, through whose last arrival (L_k, T_k) the path of a consistent trace always passes, so
// the path of window k runs from (L_k, T_k) back to T_{k-1}). What analyze_critical_path
// reports from.
struct CpLocal {
  RunBounds b;               // the run's (set by the first window)
  double my_init = 0, my_fin = 0;  // this rank's MPI_Init / MPI_Finalize entries
  double t0 = 0, t1 = 0;     // the application phase: first MPI_Init exit, last MPI_Finalize entry
  CpWalk walk;               // hops, partial, method, levels (max), rounds, bytes (sums); segments:
                             // all (whole run) or the longest (window by window)
  double walk_s = 0;         // walk time (sum over windows)
  double analysis_s = 0;     // critical_path_window's time (sum over windows)
  uint64_t segments = 0;     // this rank's segments in all
  double seg_len = 0;        // their length
  std::vector<double> cp_node;    // CP seconds per local call-path node
  std::vector<double> wait_node;  // waiting seconds per local node (the walk's records)
  double busy = 0, busy_span = 0;  // non-waiting work: in the application phase, in the span
  // Rank 0: the parallelism histogram, fraction × window length per k, and that length.
  std::vector<double> histogram;
  double hist_len = 0;
  bool hist_exact = true;
  // Between windows.
  int windows = 0;
  double prev_cut_time = 0;  // T_{k-1}
  int prev_cut_rank = -1;    // L_{k-1}
  double prev_exit = 0;      // this rank's exit of C_{k-1}
  int32_t prev_node = -1;    // C_{k-1}'s call-path node on this rank
  uint64_t hop_adjust = 0;   // hops at the cuts (the path's owner after C_{k-1} was not L_{k-1})
  std::vector<std::pair<double, double>> carry;  // busy intervals reaching past T_{k-1}
};

// The window's place in the run and what the walk of a window needs.
struct CpWindowInput {
  const RunInfo* run = nullptr;
  const engine::Timeline* timeline = nullptr;  // the window's (or the whole run's)
  const WaitStates* waits = nullptr;           // its records are the window's
  size_t nodes = 0;                            // local call-path nodes known so far
  std::function<double(uint64_t)> to_global;
  CpWalkMode walk_mode = CpWalkMode::kAuto;
  bool first = true, last = true;              // the whole run: both
  double cut_time = 0;                         // not last: T_k, the cut's latest entry
  int cut_rank = -1;                           // and L_k, whose entry it is
};

// Collective over `group`: the window's walk, clip, busy time and parallelism, added to `acc`.
Status critical_path_window(const CpWindowInput& in, const engine::Group& group, CpLocal& acc);

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
