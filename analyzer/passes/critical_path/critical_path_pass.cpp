// critpath — analyzer/passes/critical_path/critical_path_pass.cpp: the critical-path pass
// (pass.h): the walk, the critical-path profile, imbalance and parallelism, and their report
// (critical_path_report.h), after unification. Result "critical_path": this rank's path
// segments (std::vector<CpSegment>). Needs "wait_states".
#include "analyzer/passes/critical_path/critical_path_report.h"
#include "analyzer/passes/pass.h"
#include "analyzer/passes/wait_states/wait_states.h"

namespace critpath::analyzer::passes {
namespace {

class CriticalPathPass : public Pass {
 public:
  const char* name() const override { return "critical_path"; }
  const char* reduce_phase() const override { return "critical_path"; }

  Status reduce(PassContext& c, const engine::Group& group) override {
    const WaitStates* ws = c.get<WaitStates>("wait_states");
    if (ws == nullptr) return Status::kInvalidArgument;
    CriticalPathInput in;
    in.run = c.run;
    in.timeline = c.timeline;
    in.waits = ws;
    in.local = c.local;
    in.local_to_global = c.local_to_global;
    in.n_callpaths = c.n_callpaths;
    in.global = c.global;
    in.to_global = c.to_global;
    in.segments_out = &c.put(name(), std::vector<CpSegment>{});
    in.walk_mode = CpWalkMode(c.options.cp_walk_mode);
    in.partitions = c.options.partitions;
    return analyze_critical_path(in, group, *c.report);
  }

  std::string failure(Status, Step) const override { return "the critical-path analysis failed; the report lacks it"; }
};

}  // namespace

std::unique_ptr<Pass> make_critical_path_pass() { return std::make_unique<CriticalPathPass>(); }

}  // namespace critpath::analyzer::passes
