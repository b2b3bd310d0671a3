// critpath — analyzer/passes/delay/delay_pass.cpp: the delay pass (pass.h): root causes of
// the waiting time (delay.h), its metrics and report section (delay_report.h), after
// unification (the whole run), or window by window with the call paths unified before the
// windows ("delay.windows" between them). Needs "wait_states" and "rma".
#include <algorithm>

#include "analyzer/engine/metric_store.h"
#include "analyzer/passes/delay/delay.h"
#include "analyzer/passes/delay/delay_report.h"
#include "analyzer/passes/pass.h"

namespace critpath::analyzer::passes {
namespace {

// Window by window (engine/window.h): the costs booked so far and the results added up.
struct DelayWindows {
  engine::MetricStore store;
  DelayResult res;
};

class DelayPass : public Pass {
 public:
  const char* name() const override { return "delay"; }
  const char* reduce_phase() const override { return "delay"; }
  bool enabled(const AnalysisOptions& o) const override { return o.delay_analysis; }
  // Window by window: the cuts are synchronizations between every pair of ranks, so every
  // wait's interval on its causer, and every cost propagated from it, lies in its window; the
  // call paths are unified before the windows (analysis.cpp).
  bool windowed() const override { return true; }

  Status analyze(PassContext& c, const engine::Group& group) override {
    if (c.window < 0) return Status::kOk;  // the whole run: after unification, in reduce()
    if (c.get<WaitStates>("wait_states") == nullptr) return Status::kInvalidArgument;
    DelayWindows* acc = c.window > 0 ? c.get<DelayWindows>("delay.windows") : nullptr;
    if (acc == nullptr) acc = &c.put("delay.windows", DelayWindows{engine::MetricStore{size_t(c.n_callpaths)}, {}});
    DelayResult res;
    const double span = c.to_global(c.run->finalize_enter_ticks) - c.to_global(c.run->init_enter_ticks);
    CRITPATH_FORWARD_IF_ERROR(compute_delay(input(c, span), group, acc->store, res));
    DelayResult& a = acc->res;
    a.analysed_s += res.analysed_s;
    a.remainder_s += res.remainder_s;
    a.instances += res.instances;
    a.bytes_sent += res.bytes_sent;
    a.graph_instances += res.graph_instances;
    a.batches += res.batches;
    a.largest_batch = std::max(a.largest_batch, res.largest_batch);
    a.distributed = a.distributed || res.distributed;
    a.replay_batches += res.replay_batches;
    return Status::kOk;
  }

  Status reduce(PassContext& c, const engine::Group& group) override {
    if (DelayWindows* acc = c.get<DelayWindows>("delay.windows"))
      return report_delay(acc->res, acc->store, group, *c.definitions, *c.global, *c.report);
    if (c.get<WaitStates>("wait_states") == nullptr) return Status::kInvalidArgument;
    engine::MetricStore store{size_t(c.n_callpaths)};
    DelayResult res;
    CRITPATH_FORWARD_IF_ERROR(compute_delay(input(c, c.wall_time_s), group, store, res));
    return report_delay(res, store, group, *c.definitions, *c.global, *c.report);
  }

  std::string failure(Status s, Step) const override {
    return std::string("the delay analysis failed (") + to_string(s) + "); the report lacks root causes";
  }

 private:
  static DelayInput input(PassContext& c, double span_s) {
    const WaitStates* ws = c.get<WaitStates>("wait_states");
    const RmaResult* rma = c.get<RmaResult>("rma");
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
    in.timeout_s = 60.0 + 2.0 * std::max(0.0, span_s);
    return in;
  }
};

}  // namespace

std::unique_ptr<Pass> make_delay_pass() { return std::make_unique<DelayPass>(); }

}  // namespace critpath::analyzer::passes
