// critpath — analyzer/passes/delay/delay_pass.cpp: the delay pass (pass.h): root causes of
// the waiting time (delay.h), its metrics and report section (delay_report.h), after
// unification. Needs "wait_states" and "rma".
#include <algorithm>

#include "analyzer/engine/metric_store.h"
#include "analyzer/passes/delay/delay.h"
#include "analyzer/passes/delay/delay_report.h"
#include "analyzer/passes/pass.h"

namespace critpath::analyzer::passes {
namespace {

class DelayPass : public Pass {
 public:
  const char* name() const override { return "delay"; }
  const char* reduce_phase() const override { return "delay"; }
  bool enabled(const AnalysisOptions& o) const override { return o.delay_analysis; }

  Status reduce(PassContext& c, const engine::Group& group) override {
    const WaitStates* ws = c.get<WaitStates>("wait_states");
    const RmaResult* rma = c.get<RmaResult>("rma");
    if (ws == nullptr) return Status::kInvalidArgument;
    DelayInput in;
    in.timeline = c.timeline;
    in.match = c.match;
    in.csync = c.csync;
    in.waits = ws;
    in.rma = rma ? &rma->waits : nullptr;
    in.definitions = c.definitions;
    in.local_to_global = c.local_to_global;
    in.n_callpaths = c.n_callpaths;
    in.my_rank = c.run->rank;
    in.batch_limit = c.options.delay_batch;
    in.replay = DelayReplay(c.options.delay_replay);
    // A deadline that stops the distributed propagation of a broken trace (the analysis's own
    // timeout, CRITPATH_ANALYSIS_TIMEOUT, bounds everything besides).
    in.timeout_s = 60.0 + 2.0 * std::max(0.0, c.wall_time_s);
    engine::MetricStore store{size_t(c.n_callpaths)};
    DelayResult res;
    CRITPATH_FORWARD_IF_ERROR(compute_delay(in, group, store, res));
    return report_delay(res, store, group, *c.definitions, *c.global, *c.report);
  }

  std::string failure(Status s, Step) const override {
    return std::string("the delay analysis failed (") + to_string(s) + "); the report lacks root causes";
  }
};

}  // namespace

std::unique_ptr<Pass> make_delay_pass() { return std::make_unique<DelayPass>(); }

}  // namespace critpath::analyzer::passes
