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
       "[Hollingsworth1994]'s logical zeroing: the span the simulator saves when the call path's own "
       "(exclusive) computation is set to 0 on every rank, the rest of the run replayed with "
       "its recorded dependencies. Between slack and critical-path time.",
       Combine::kMax, false},
      {"slack", "s", "", "Slack",
       "[Hollingsworth1994]'s slack, the lower bound of what tuning the call path buys: the span the "
       "simulator saves when its own computation is set to 0 only where it lies on the "
       "critical path (elsewhere unchanged). slack <= logical_zeroing <= critical_path.",
       Combine::kMax, false},
  };
}

std::vector<engine::ScalarDecl> whatif_scalar_decls() {
  return {
      {"whatif_identity_span_error_pct", "%",
       "The what-if model check: |span′₀ − span| / span of the identity lane (see *What-if simulation*)."},
      {"whatif_identity_wait_error_pct", "%",
       "The what-if model check: |waiting′₀ − waiting| / waiting of the identity lane."},
      {"whatif_identity_span_s", "s", "The identity lane's span."},
      {"whatif_identity_wait_s", "s", "The identity lane's waiting time."},
      {"whatif_measured_wait_s", "s",
       "The measured waiting time by the model's definition (Σ max(0, ready − enter))."},
      {"whatif_clamped_calls", "count",
       "Calls that ended before what they waited for began (clock errors): their replay drifts; "
       "the bounds slack ≤ logical zeroing ≤ critical path are checked only when 0."},
      {"whatif_lanes", "count", "Lanes of the replay (identity, ideal network, hypotheses)."},
      {"whatif_messages", "count", "Dependencies of the replay: the sim-time entries told, all ranks."},
      {"whatif_bytes", "bytes",
       "Payload of the replay, all ranks: the programs gathered on the groups' first ranks (their "
       "own included) and the sim times sent between groups."},
      {"whatif_analysis_s", "s",
       "The replay's time on the slowest rank, compiling the programs included (an analysis time)."},
      {"whatif_gathered", "0/1",
       "1 when the replay ran gathered on rank 0 (one group of every rank), 0 when distributed over "
       "groups (*What-if simulation*, The replay)."},
      {"whatif_group_ranks", "count",
       "Ranks per replay group: each group's programs run on its first rank (*What-if simulation*, The "
       "replay)."},
  };
}

}  // namespace critpath::analyzer::passes
