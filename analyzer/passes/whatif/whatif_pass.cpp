// critpath — analyzer/passes/whatif/whatif_pass.cpp: the what-if pass (engine/pass.h): the
// trace-based simulation, slack, logical zeroing and POP metrics (whatif_report.h), after the
// delay and critical-path passes (it ranks their call paths). Needs "rma" and
// "critical_path".
#include <algorithm>

#include "analyzer/passes/critical_path/critical_path.h"
#include "analyzer/passes/pass.h"
#include "analyzer/passes/rma/rma.h"
#include "analyzer/passes/whatif/whatif_report.h"

namespace critpath::analyzer::passes {
namespace {

class WhatIfPass : public Pass {
 public:
  const char* name() const override { return "whatif"; }
  const char* reduce_phase() const override { return "whatif"; }
  void configure(const config::Config& cfg) override {
    enabled_ = cfg.simulation;                         // CRITPATH_SIMULATION
    budget_pct_ = cfg.simulation_budget;               // CRITPATH_SIMULATION_BUDGET
    options_.hypotheses = cfg.whatif;                  // CRITPATH_WHATIF
    options_.top = cfg.whatif_top;                     // CRITPATH_WHATIF_TOP
    delay_us_ = uint32_t(cfg.debug_simulation_delay);  // CRITPATH_DEBUG_SIMULATION_DELAY
    replay_ = cfg.debug_simulation_replay == "gathered" ? ReplayMode::kGathered  // _DEBUG_SIMULATION_REPLAY
              : cfg.debug_simulation_replay == "distributed" ? ReplayMode::kDistributed
                                                             : ReplayMode::kAuto;
  }
  bool enabled() const override { return enabled_; }

  Status reduce(const PassContext& c, const ReduceContext& r, const engine::Group& group) override {
    if (r.whole == nullptr) return Status::kInvalidArgument;  // it needs the whole run at once
    const RmaResult* rma = c.results.find(kRma);
    WhatIfInput wi;
    wi.timeline = &r.whole->timeline;
    wi.match = &r.whole->match;
    wi.csync = &r.whole->csync;
    wi.wsync = &r.whole->wsync;
    wi.definitions = &c.definitions;
    wi.local_to_global = &r.unified.local_to_global;
    wi.cp_segments = c.results.find(kCriticalPath);
    wi.rma_waits = rma ? &rma->waits : nullptr;
    wi.first_init_enter = r.first_init_enter;
    wi.earliest_init_exit = r.whole->earliest_init_exit;
    // In situ the replay has a budget (a message-bound run replays about as long as it
    // communicated); offline only a deadline that stops a broken one.
    const double wall = std::max(0.0, r.wall_time_s);
    wi.timeout_s = c.run.offline ? 60.0 + 2.0 * wall : std::max(0.5, 0.01 * double(budget_pct_) * wall);
    wi.budgeted = !c.run.offline;
    wi.debug_delay_us = delay_us_;
    wi.replay = replay_;
    return analyze_whatif(wi, options_, r.unified.global, group, r.report);
  }

  std::string failure(Status, Step) const override {
    return "the what-if simulation failed; the report lacks it";
  }

 private:
  bool enabled_ = true;
  int budget_pct_ = 5;
  WhatIfOptions options_;
  uint32_t delay_us_ = 0;
  ReplayMode replay_ = ReplayMode::kAuto;
};

}  // namespace

std::unique_ptr<Pass> make_whatif_pass() { return std::make_unique<WhatIfPass>(); }

}  // namespace critpath::analyzer::passes
