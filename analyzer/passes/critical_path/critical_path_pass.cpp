// critpath — analyzer/passes/critical_path/critical_path_pass.cpp: the critical-path pass
// (pass.h): analyze walks the path and clips it to the call paths (critical_path_window, once
// for the whole run or once per window), reduce derives the critical-path profile, imbalance
// and parallelism and writes their report (critical_path_report.h). Results:
// "critical_path.local" (CpLocal) between the two, then "critical_path": this rank's path
// segments (std::vector<CpSegment>; all of them when the run was analysed whole). Needs
// "wait_states".
#include "analyzer/passes/critical_path/critical_path_report.h"
#include "analyzer/passes/pass.h"
#include "analyzer/passes/wait_states/wait_states.h"

namespace critpath::analyzer::passes {
namespace {

constexpr const char* kLocal = "critical_path.local";

class CriticalPathPass : public Pass {
 public:
  const char* name() const override { return "critical_path"; }
  const char* analyze_phase() const override { return "critical_path_walk"; }
  const char* reduce_phase() const override { return "critical_path"; }
  // Window by window: the cuts are synchronizing collectives, through whose last arrival the
  // path passes (engine/window.h).
  bool windowed() const override { return true; }

  Status analyze(PassContext& c, const engine::Group& group) override {
    const WaitStates* ws = c.get<WaitStates>("wait_states");
    if (ws == nullptr) return Status::kInvalidArgument;
    CpLocal* acc = c.window > 0 ? c.get<CpLocal>(kLocal) : nullptr;
    if (acc == nullptr) acc = &c.put(kLocal, CpLocal{});
    CpWindowInput in;
    in.run = c.run;
    in.timeline = c.timeline;
    in.waits = ws;
    in.nodes = c.nodes;
    in.to_global = c.to_global;
    in.walk_mode = CpWalkMode(c.options.cp_walk_mode);
    in.first = c.window <= 0;
    in.last = c.last_window;
    in.cut_time = c.cut_time;
    in.cut_rank = c.cut_rank;
    return critical_path_window(in, group, *acc);
  }

  Status reduce(PassContext& c, const engine::Group& group) override {
    CpLocal* acc = c.get<CpLocal>(kLocal);
    if (acc == nullptr) return Status::kInvalidArgument;
    CriticalPathInput in;
    in.run = c.run;
    in.local = c.local;
    in.local_to_global = c.local_to_global;
    in.n_callpaths = c.n_callpaths;
    in.global = c.global;
    in.partitions = c.options.partitions;
    const Status s = analyze_critical_path(in, *acc, group, *c.report);
    c.put(name(), std::move(acc->walk.segments));
    return s;
  }

  std::string failure(Status, Step) const override { return "the critical-path analysis failed; the report lacks it"; }
};

}  // namespace

std::unique_ptr<Pass> make_critical_path_pass() { return std::make_unique<CriticalPathPass>(); }

}  // namespace critpath::analyzer::passes
