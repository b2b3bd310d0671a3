// critpath — analyzer/passes/pass.h: the pass objects the engine runs (engine/pass.h says what
// a pass is to the engine; pass_list.cpp lists them with their needs and metrics).
#pragma once

#include <memory>
#include <vector>

#include "analyzer/engine/pass.h"
#include "libtrace/config/config.h"

namespace critpath::analyzer::passes {

// One object per pass of pass_list() (the engine's own "profile" traversal is not among
// them), each configured from `cfg`, in the list's order.
std::vector<std::unique_ptr<Pass>> make_passes(const config::Config& cfg);

// Each pass folder's pass (passes/<name>/<name>_pass.cpp).
std::unique_ptr<Pass> make_wait_states_pass();
std::unique_ptr<Pass> make_rma_pass();
std::unique_ptr<Pass> make_delay_pass();
std::unique_ptr<Pass> make_critical_path_pass();
std::unique_ptr<Pass> make_whatif_pass();
std::unique_ptr<Pass> make_timeline_pass();

}  // namespace critpath::analyzer::passes
