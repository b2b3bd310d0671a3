// critpath — analyzer/passes/pass_list.cpp: the passes, in the order the engine runs them.
// The objects are made in the same order by make_passes() (passes/passes.cpp; kept apart so
// that the unit tests and the docs read the rows without linking the passes).
#include "analyzer/passes/pass_list.h"

#include <cstring>

namespace critpath::analyzer::passes {

const std::vector<PassInfo>& pass_list() {
  static const std::vector<PassInfo> kPasses = {
      // The one-sided patterns join the wait states: the wait-state pass merges the rma
      // pass's (so rma is analysed first; the report keeps the wait states first).
      {"wait_states", {"rma"}, wait_state_metric_decls(), {}},
      {"rma", {}, rma_metric_decls(), rma_scalar_decls()},
      {"delay", {"wait_states", "rma"}, delay_metric_decls(), delay_scalar_decls()},
      {"critical_path", {"wait_states"}, critical_path_metric_decls(), critical_path_scalar_decls()},
      {"whatif", {"rma", "critical_path"}, whatif_metric_decls(), whatif_scalar_decls()},
      // timeline.json (CRITPATH_TIMELINE): slices collected by its event handlers during the
      // profile's traversal; waits, messages and the critical path added at the end.
      {"timeline", {"wait_states", "critical_path"}, {}, {}},
  };
  return kPasses;
}

namespace {
// The engine reads the list through engine::pass_table() (engine/pass_info.h).
const bool kListed = engine::set_pass_table(&pass_list);
}  // namespace

}  // namespace critpath::analyzer::passes
