// critpath — analyzer/passes/wait_states/wait_states_report.h
//
// Reduces the wait-state pass's per-call-path values and per-pattern statistics to rank 0,
// adds the MPI time hierarchy (time ⊇ mpi_time ⊇ mpi_p2p, mpi_collective, mpi_rma,
// mpi_management; computation = time − mpi_time), and hands both to the report
// (metrics, the "Wait states" and "Wait-state statistics" sections, report.json's
// wait_state_stats).
#pragma once

#include <vector>

#include "analyzer/engine/group.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/report_input.h"
#include "analyzer/passes/wait_states/wait_states.h"

namespace critpath::analyzer::passes {

// Collective over `group`. local_to_global from unify_profile; n_callpaths = global count.
// `definitions`: the traced rank's (the MPI class of its regions).
// On rank 0 appends to `in` (extra_metrics, sections, extra_json). Patterns below
// `threshold_pct` % of the allocation stay out of summary.txt (CRITPATH_REPORT_THRESHOLD).
Status report_wait_states(const WaitStates& ws, const LocalProfile& local,
                          const defs::Definitions& definitions, const clock::TickConverter& conv,
                          const std::vector<int>& local_to_global, int n_callpaths,
                          const engine::Group& group, const GlobalProfile& global, double wall_time_s,
                          double threshold_pct, ReportInput& in);

}  // namespace critpath::analyzer::passes
