// critpath — analyzer/passes/delay/delay_pass.cpp: the delay pass (engine/pass.h): root causes
// of the waiting time (delay.h), its metrics and report section (delay_report.h), after
// unification (the whole run), or window by window with the call paths unified before the
// windows (the costs booked so far kept by the pass between them). Needs "wait_states" and
// "rma".
#include <algorithm>
#include <optional>

#include "analyzer/engine/metric_store.h"
#include "analyzer/passes/delay/delay.h"
#include "analyzer/passes/delay/delay_report.h"
#include "analyzer/passes/pass.h"
#include "analyzer/passes/rma/rma.h"

namespace critpath::analyzer::passes {
namespace {

// Adds one window's figures to those of the windows before.
void add_window(DelayResult& a, const DelayResult& res) {
  a.analysed_s += res.analysed_s;
  a.remainder_s += res.remainder_s;
  a.instances += res.instances;
  a.bytes_sent += res.bytes_sent;
  a.graph_instances += res.graph_instances;
  a.batches += res.batches;
  a.largest_batch = std::max(a.largest_batch, res.largest_batch);
  a.distributed = a.distributed || res.distributed;
  a.replay_batches += res.replay_batches;
}

class DelayPass : public Pass {
 public:
  const char* name() const override { return "delay"; }
  const char* reduce_phase() const override { return "delay"; }
  void configure(const config::Config& cfg) override {
    enabled_ = cfg.delay_analysis;                                           // CRITPATH_DELAY_ANALYSIS
    batch_ = uint64_t(std::max(1, cfg.debug_delay_batch));                   // CRITPATH_DEBUG_DELAY_BATCH
    replay_ = cfg.debug_delay_replay == "gathered" ? DelayReplay::kGathered  // CRITPATH_DEBUG_DELAY_REPLAY
              : cfg.debug_delay_replay == "distributed" ? DelayReplay::kDistributed
                                                        : DelayReplay::kAuto;
  }
  bool enabled() const override { return enabled_; }
  // Window by window: the cuts are synchronizations between every pair of ranks, so every
  // wait's interval on its causer, and every cost propagated from it, lies in its window; the
  // call paths are unified before the windows (engine/analysis_engine.h).
  bool windowed() const override { return true; }

  Status analyze(const PassContext& c, const WindowContext& w, const engine::Group& group) override {
    if (w.window < 0) return Status::kOk;  // the whole run: after unification, in reduce()
    if (c.results.find(kWaitStates) == nullptr || w.unified == nullptr) return Status::kInvalidArgument;
    if (w.window == 0) windows_.emplace(Windows{engine::MetricStore{size_t(w.unified->n_callpaths)}, {}});
    DelayResult res;
    const double span = c.to_global(c.run.finalize_enter_ticks) - c.to_global(c.run.init_enter_ticks);
    CRITPATH_FORWARD_IF_ERROR(compute_delay(
        input(c, w, w.unified->local_to_global, w.unified->n_callpaths, span), group, windows_->store, res));
    add_window(windows_->res, res);
    return Status::kOk;
  }

  Status reduce(const PassContext& c, const ReduceContext& r, const engine::Group& group) override {
    if (windows_)
      return report_delay(windows_->res, windows_->store, group, c.definitions, r.unified.global, r.report);
    if (c.results.find(kWaitStates) == nullptr || r.whole == nullptr) return Status::kInvalidArgument;
    engine::MetricStore store{size_t(r.unified.n_callpaths)};
    DelayResult res;
    CRITPATH_FORWARD_IF_ERROR(
        compute_delay(input(c, *r.whole, r.unified.local_to_global, r.unified.n_callpaths, r.wall_time_s),
                      group, store, res));
    return report_delay(res, store, group, c.definitions, r.unified.global, r.report);
  }

  std::string failure(Status s, Step) const override {
    return std::string("the delay analysis failed (") + to_string(s) + "); the report lacks root causes";
  }

 private:
  DelayInput input(const PassContext& c, const WindowContext& w, const std::vector<int>& local_to_global,
                   int n_callpaths, double span_s) const {
    const RmaResult* rma = c.results.find(kRma);
    DelayInput in;
    in.timeline = &w.timeline;
    in.match = &w.match;
    in.csync = &w.csync;
    in.waits = c.results.find(kWaitStates);
    in.rma = rma ? &rma->waits : nullptr;
    in.definitions = &c.definitions;
    in.local_to_global = &local_to_global;
    in.n_callpaths = n_callpaths;
    in.my_rank = c.run.rank;
    in.batch_limit = batch_;
    in.replay = replay_;
    // A deadline that stops the distributed propagation of a broken trace (the analysis's own
    // timeout, CRITPATH_ANALYSIS_TIMEOUT, bounds everything besides).
    in.timeout_s = 60.0 + 2.0 * std::max(0.0, span_s);
    return in;
  }

  // Window by window: the costs booked so far and the results added up.
  struct Windows {
    engine::MetricStore store;
    DelayResult res;
  };
  bool enabled_ = true;
  uint64_t batch_ = 4194304;
  DelayReplay replay_ = DelayReplay::kAuto;
  std::optional<Windows> windows_;
};

}  // namespace

std::unique_ptr<Pass> make_delay_pass() { return std::make_unique<DelayPass>(); }

}  // namespace critpath::analyzer::passes
