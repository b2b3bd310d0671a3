// critpath — analyzer/passes/wait_states/wait_states_pass.cpp: the wait-state pass (pass.h):
// analyze finds this rank's wait states (wait_states.h), reduce books the patterns and the MPI
// time hierarchy per call path and writes their report section (wait_states_report.h).
// Result "wait_states": WaitStates.
#include "analyzer/passes/pass.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "analyzer/passes/wait_states/wait_states_report.h"

namespace critpath::analyzer::passes {
namespace {

class WaitStatesPass : public Pass {
 public:
  const char* name() const override { return "wait_states"; }
  const char* analyze_phase() const override { return "wait_states"; }
  const char* reduce_phase() const override { return "wait_state_reduction"; }

  bool windowed() const override { return true; }

  Status analyze(PassContext& c, const engine::Group&) override {
    RunSync rs;
    rs.latest_init_enter = c.latest_init_enter;
    rs.earliest_init_exit = c.earliest_init_exit;
    rs.latest_finalize_enter = c.latest_finalize_enter;
    WaitStates* w = c.window > 0 ? c.get<WaitStates>(name()) : nullptr;
    if (w == nullptr) w = &c.put(name(), WaitStates{});
    add_wait_states(*w, *c.timeline, *c.match, *c.csync, rs, *c.definitions, c.nodes, c.run->rank);
    return Status::kOk;
  }

  Status reduce(PassContext& c, const engine::Group& group) override {
    const WaitStates* ws = c.get<WaitStates>(name());
    if (ws == nullptr) return Status::kInvalidArgument;
    return report_wait_states(*ws, *c.local, *c.definitions, c.run->conv, *c.local_to_global,
                              c.n_callpaths, group, *c.global, c.wall_time_s,
                              c.options.report_threshold_pct, *c.report);
  }

  std::string failure(Status, Step) const override { return "reducing the wait states failed; the report lacks them"; }
};

}  // namespace

std::unique_ptr<Pass> make_wait_states_pass() { return std::make_unique<WaitStatesPass>(); }

}  // namespace critpath::analyzer::passes
