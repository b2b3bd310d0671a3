// critpath — analyzer/passes/critical_path/critical_path_pass.cpp: the critical-path pass
// (engine/pass.h): analyze walks the path and clips it to the call paths (critical_path_window,
// once for the whole run or once per window, into the pass's own CpLocal), reduce derives the
// critical-path profile, imbalance and parallelism and writes their report
// (critical_path_report.h). Result kCriticalPath: this rank's path segments (all of them when
// the run was analysed whole). Needs "wait_states".
#include "analyzer/passes/critical_path/critical_path_report.h"
#include "analyzer/passes/pass.h"
#include "analyzer/passes/wait_states/wait_states.h"

namespace critpath::analyzer::passes {
namespace {

class CriticalPathPass : public Pass {
 public:
  const char* name() const override { return "critical_path"; }
  const char* analyze_phase() const override { return "critical_path_walk"; }
  const char* reduce_phase() const override { return "critical_path"; }
  void configure(const config::Config& cfg) override {
    walk_mode_ = cp_walk_mode(cfg.debug_cp_walk);  // CRITPATH_DEBUG_CP_WALK
    partitions_ = cfg.partitions;                  // CRITPATH_PARTITIONS
  }
  // Window by window: the cuts are synchronizing collectives, through whose last arrival the
  // path passes (engine/window.h).
  bool windowed() const override { return true; }

  Status analyze(const PassContext& c, const WindowContext& w, const engine::Group& group) override {
    const WaitStates* ws = c.results.find(kWaitStates);
    if (ws == nullptr) return Status::kInvalidArgument;
    if (w.window <= 0) acc_ = CpLocal{};
    CpWindowInput in;
    in.run = &c.run;
    in.timeline = &w.timeline;
    in.waits = ws;
    in.nodes = w.nodes;
    in.to_global = c.to_global;
    in.walk_mode = walk_mode_;
    in.first = w.window <= 0;
    in.last = w.last_window;
    in.cut_time = w.cut_time;
    in.cut_rank = w.cut_rank;
    return critical_path_window(in, group, acc_);
  }

  Status reduce(const PassContext& c, const ReduceContext& r, const engine::Group& group) override {
    CriticalPathInput in;
    in.run = &c.run;
    in.local = &r.local;
    in.local_to_global = &r.unified.local_to_global;
    in.n_callpaths = r.unified.n_callpaths;
    in.global = &r.unified.global;
    in.partitions = partitions_;
    const Status s = analyze_critical_path(in, acc_, group, r.report);
    c.results.publish(kCriticalPath, std::move(acc_.walk.segments));
    return s;
  }

  std::string failure(Status, Step) const override {
    return "the critical-path analysis failed; the report lacks it";
  }

 private:
  CpWalkMode walk_mode_ = CpWalkMode::kAuto;
  std::string partitions_;
  CpLocal acc_;  // over the windows (the whole run: one)
};

}  // namespace

std::unique_ptr<Pass> make_critical_path_pass() { return std::make_unique<CriticalPathPass>(); }

}  // namespace critpath::analyzer::passes
