// critpath — analyzer/passes/passes.cpp: the pass objects, in pass_list()'s order. A row
// without an object here (or an object without a row) is a programming error the engine
// reports as a warning instead of running the pass unlisted.
#include <cstring>

#include "analyzer/passes/pass.h"
#include "analyzer/passes/pass_list.h"
#include "libtrace/runtime/log.h"

namespace critpath::analyzer::passes {

std::vector<std::unique_ptr<Pass>> make_passes(const config::Config& cfg) {
  using Make = std::unique_ptr<Pass> (*)();
  // clang-format off
  static const std::pair<const char*, Make> kMake[] = {
      {"wait_states", make_wait_states_pass}, {"rma", make_rma_pass},
      {"delay", make_delay_pass},             {"critical_path", make_critical_path_pass},
      {"whatif", make_whatif_pass},           {"timeline", make_timeline_pass},
  };
  // clang-format on
  std::vector<std::unique_ptr<Pass>> out;
  for (const PassInfo& row : pass_list()) {
    bool found = false;
    for (const auto& [name, make] : kMake)
      if (std::strcmp(name, row.name) == 0) {
        out.push_back(make());
        out.back()->configure(cfg);
        found = true;
      }
    if (!found) log::warn("analysis pass '%s' is listed but not built; skipped", row.name);
  }
  return out;
}

}  // namespace critpath::analyzer::passes
