// critpath — analyzer/passes/pass_list.cpp: the passes, in the order the engine runs them.
// The objects are made in the same order by make_passes() (passes/passes.cpp; kept apart so
// that the unit tests and the docs read the rows without linking the passes).
#include "analyzer/passes/pass_list.h"

namespace critpath::analyzer::passes {

const std::vector<PassInfo>& pass_list() {
  static const std::vector<PassInfo> kPasses = {
      {"profile", Direction::kForward, {}, profile_metric_decls(), {}},
      {"wait_states", Direction::kNone, {"profile"}, wait_state_metric_decls(), {}},
      {"rma", Direction::kNone, {"profile", "wait_states"}, rma_metric_decls(), rma_scalar_decls()},
      {"delay", Direction::kBackward, {"profile", "wait_states"}, delay_metric_decls(), delay_scalar_decls()},
      {"critical_path", Direction::kBackward, {"profile", "wait_states"}, critical_path_metric_decls(),
       critical_path_scalar_decls()},
      {"whatif", Direction::kForward, {"profile", "wait_states", "delay", "critical_path"},
       whatif_metric_decls(), whatif_scalar_decls()},
      // timeline.json (CRITPATH_TIMELINE): slices collected by its event handlers during the
      // profile's traversal; waits, messages and the critical path added at the end.
      {"timeline", Direction::kForward, {"profile", "wait_states", "critical_path"}, {}, {}},
  };
  return kPasses;
}

}  // namespace critpath::analyzer::passes
