// critpath — analyzer/passes/wait_states/wait_states_pass.cpp: the wait-state pass
// (engine/pass.h): analyze finds this rank's wait states (wait_states.h) and merges the rma
// pass's one-sided ones into them; reduce books the patterns and the MPI time hierarchy per
// call path and writes their report section (wait_states_report.h). Result kWaitStates.
// Needs "rma".
#include <algorithm>
#include <cstdlib>

#include "analyzer/passes/pass.h"
#include "analyzer/passes/rma/rma.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "analyzer/passes/wait_states/wait_states_report.h"

namespace critpath::analyzer::passes {
namespace {

// Adds the one-sided patterns (booked by the rma pass on their own) to `w`: per node, their
// statistics (no other pass books them, so a window's replace nothing but an empty record),
// and their wait records in call order after those of the same call (as one stable sort of
// both would place them).
void merge_one_sided(WaitStates& w, const WaitStates& rma) {
  if (w.by_node.size() < rma.by_node.size()) w.by_node.resize(rma.by_node.size());
  for (size_t n = 0; n < rma.by_node.size(); ++n)
    for (int p = kRmaLatePost; p < kPatternCount; ++p) w.by_node[n][size_t(p)] += rma.by_node[n][size_t(p)];
  for (int p = kRmaLatePost; p < kPatternCount; ++p) {
    const PatternStats& from = rma.stats[size_t(p)];
    PatternStats& to = w.stats[size_t(p)];
    if (from.count == 0) continue;
    if (to.count == 0) {
      to = from;
      continue;
    }
    // Window by window (a run with RMA is never cut: engine/window.h); kept for safety.
    to.min = std::min(to.min, from.min);
    to.max = std::max(to.max, from.max);
    to.count += from.count;
    to.sum += from.sum;
    to.seen += from.seen;
    to.worst.insert(to.worst.end(), from.worst.begin(), from.worst.end());
    std::stable_sort(to.worst.begin(), to.worst.end(),
                     [](const Instance& a, const Instance& b) { return a.value > b.value; });
    if (to.worst.size() > kWorstInstances) to.worst.resize(kWorstInstances);
  }
  if (rma.records.empty()) return;
  w.records.insert(w.records.end(), rma.records.begin(), rma.records.end());
  std::stable_sort(w.records.begin(), w.records.end(),
                   [](const WaitRecord& a, const WaitRecord& b) { return a.call < b.call; });
}

class WaitStatesPass : public Pass {
 public:
  const char* name() const override { return "wait_states"; }
  const char* analyze_phase() const override { return "wait_states"; }
  const char* reduce_phase() const override { return "wait_state_reduction"; }
  void configure(const config::Config& cfg) override {
    threshold_pct_ = std::atof(cfg.report_threshold.c_str());
  }

  bool windowed() const override { return true; }

  Status analyze(const PassContext& c, const WindowContext& w, const engine::Group&) override {
    RunSync rs;
    rs.latest_init_enter = w.latest_init_enter;
    rs.earliest_init_exit = w.earliest_init_exit;
    rs.latest_finalize_enter = w.latest_finalize_enter;
    // Window by window the statistics accumulate (engine/results.h withdraw).
    WaitStates ws = w.window > 0 ? c.results.withdraw(kWaitStates) : WaitStates{};
    add_wait_states(ws, w.timeline, w.match, w.csync, rs, c.definitions, w.nodes, c.run.rank);
    if (const RmaResult* rma = c.results.find(kRma)) merge_one_sided(ws, rma->one_sided);
    c.results.publish(kWaitStates, std::move(ws));
    return Status::kOk;
  }

  Status reduce(const PassContext& c, const ReduceContext& r, const engine::Group& group) override {
    const WaitStates* ws = c.results.find(kWaitStates);
    if (ws == nullptr) return Status::kInvalidArgument;
    return report_wait_states(*ws, r.local, c.definitions, c.run.conv, r.unified.local_to_global,
                              r.unified.n_callpaths, group, r.unified.global, r.wall_time_s, threshold_pct_,
                              r.report);
  }

  void add_rank_stats(const PassContext& c, std::vector<double>& row) const override {
    if (const WaitStates* ws = c.results.find(kWaitStates)) {
      row[kStatP2pViolations] = double(ws->p2p_clock_violations);
      row[kStatCollViolations] = double(ws->coll_clock_violations);
    }
  }

  std::string failure(Status, Step) const override {
    return "reducing the wait states failed; the report lacks them";
  }

 private:
  double threshold_pct_ = 0.1;  // CRITPATH_REPORT_THRESHOLD
};

}  // namespace

std::unique_ptr<Pass> make_wait_states_pass() { return std::make_unique<WaitStatesPass>(); }

}  // namespace critpath::analyzer::passes
