// critpath — analyzer/passes/critical_path/critical_path_metrics.cpp: the critical-path
// pass's declarations ([Böhme2012]: critical-path profile, imbalance, performance impact).
// d_p(i) is the non-waiting time of rank p in call path i: its exclusive time minus the
// waiting intervals of its calls.
#include "analyzer/passes/pass_list.h"

namespace critpath::analyzer::passes {

std::vector<engine::MetricDecl> critical_path_metric_decls() {
  using engine::Combine;
  return {
      {"critical_path", "s", "", "Critical path",
       "Critical-path profile: the exclusive time of the call path that lies inside the critical "
       "path's segments on their ranks (the thread that called MPI_Init). by_callpath_stats gives its "
       "statistics over the ranks (rank_matrix.zst each rank's value); by_rank[r] is rank r's share of the path; the sum is critical_path_length_s.",
       Combine::kSum, true},
      {"critical_path_imbalance", "s", "critical_path", "Critical-path imbalance",
       "max(critical_path(i) - avg_p d_p(i), 0), the average over all ranks (wall seconds). by_rank "
       "spreads it over the ranks in proportion to their critical_path share of i.",
       Combine::kSum, false},
      {"performance_impact", "s", "", "Performance impact",
       "sum_p d_p(i) + imbalance_cost_intra(i) + imbalance_cost_inter(i) (allocation seconds); the "
       "sum over call paths is ranks x critical_path_length_s.",
       Combine::kSum, false},
      {"imbalance_cost_intra", "s", "performance_impact", "Imbalance cost, intra-partition",
       "Per rank p: headroom h_p = critical_path_length_s - sum_i d_p(i); excess "
       "delta_p(i) = max(critical_path(i) - d_p(i), 0); the rank's cost of i is "
       "h_p delta_p(i) / sum_j delta_p(j), booked here when some rank of p's partition visited i.",
       Combine::kSum, false},
      {"imbalance_cost_inter", "s", "performance_impact", "Imbalance cost, inter-partition",
       "As imbalance_cost_intra, booked when no rank of p's partition visited i.", Combine::kSum, false},
  };
}

std::vector<engine::ScalarDecl> critical_path_scalar_decls() {
  return {
      {"critical_path_length_s", "s", "Σ segment lengths of the critical path (= `run.wall_time_s`)."},
      {"critical_path_hops", "count", "Ownership transfers along the critical path."},
      {"average_parallelism", "count",
       "The non-waiting work of all ranks in the application phase (their measured spans minus "
       "their waiting intervals, clipped to the phase) / the phase's length (see *Critical path*)."},
  };
}

}  // namespace critpath::analyzer::passes
