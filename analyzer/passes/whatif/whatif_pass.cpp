// critpath — analyzer/passes/whatif/whatif_pass.cpp: the what-if pass (pass.h): the
// trace-based simulation, slack, logical zeroing and POP metrics (whatif_report.h), after the
// delay and critical-path passes (it ranks their call paths). Needs "rma" and
// "critical_path".
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
  bool enabled(const AnalysisOptions& o) const override { return o.simulation; }

  Status reduce(PassContext& c, const engine::Group& group) override {
    const RmaResult* rma = c.get<RmaResult>("rma");
    const std::vector<CpSegment>* segs = c.get<std::vector<CpSegment>>("critical_path");
    WhatIfInput wi;
    wi.timeline = c.timeline;
    wi.match = c.match;
    wi.csync = c.csync;
    wi.wsync = c.wsync;
    wi.definitions = c.definitions;
    wi.local_to_global = c.local_to_global;
    wi.cp_segments = segs;
    wi.rma_waits = rma ? &rma->waits : nullptr;
    wi.first_init_enter = c.first_init_enter;
    wi.earliest_init_exit = c.earliest_init_exit;
    // In situ the replay has a budget (a message-bound run replays about as long as it
    // communicated); offline only a deadline that stops a broken one.
    const double wall = std::max(0.0, c.wall_time_s);
    wi.timeout_s = c.run->offline ? 60.0 + 2.0 * wall
                                  : std::max(0.5, 0.01 * double(c.options.simulation_budget_pct) * wall);
    wi.budgeted = !c.run->offline;
    wi.debug_delay_us = c.options.simulation_delay_us;
    wi.replay = ReplayMode(c.options.simulation_replay);
    WhatIfOptions wo;
    wo.hypotheses = c.options.whatif;
    wo.top = c.options.whatif_top;
    return analyze_whatif(wi, wo, *c.global, group, *c.report);
  }

  std::string failure(Status, Step) const override { return "the what-if simulation failed; the report lacks it"; }
};

}  // namespace

std::unique_ptr<Pass> make_whatif_pass() { return std::make_unique<WhatIfPass>(); }

}  // namespace critpath::analyzer::passes
