// critpath — analyzer/passes/whatif/whatif_metrics.cpp: what the what-if simulation books
// per call path (whatif.h; docs/metrics.md "What-if simulation"). Both are run-wide values
// of the automatic hypotheses' call paths (CRITPATH_WHATIF_TOP), 0 elsewhere; by_rank is
// empty (a span saving belongs to no rank).
#include "analyzer/passes/pass_list.h"

namespace critpath::analyzer::passes {

std::vector<engine::MetricDecl> whatif_metric_decls() {
  using engine::Combine;
  return {
      {"logical_zeroing", "s", "", "Logical zeroing",
       "Seed 003's logical zeroing: the span the simulator saves when the call path's own "
       "(exclusive) computation is set to 0 on every rank, the rest of the run replayed with "
       "its recorded dependencies. Between slack and critical-path time.",
       Combine::kMax, false},
      {"slack", "s", "", "Slack",
       "Seed 003's slack, the lower bound of what tuning the call path buys: the span the "
       "simulator saves when its own computation is set to 0 only where it lies on the "
       "critical path (elsewhere unchanged). slack <= logical_zeroing <= critical_path.",
       Combine::kMax, false},
  };
}

}  // namespace critpath::analyzer::passes
