// critpath — analyzer/passes/rma/rma_pass.cpp: the one-sided pass (engine/pass.h): analyze
// finds the RMA wait states (rma.h), booked on their own for the wait-state pass to merge;
// reduce books the transfer metrics (rma_report.h). Result kRma.
#include "analyzer/passes/pass.h"
#include "analyzer/passes/rma/rma.h"
#include "analyzer/passes/rma/rma_report.h"

namespace critpath::analyzer::passes {
namespace {

class RmaPass : public Pass {
 public:
  const char* name() const override { return "rma"; }
  const char* analyze_phase() const override { return "rma"; }
  const char* reduce_phase() const override { return "rma_reduction"; }

  // A run analysed window by window has no one-sided communication (engine/window.h): each
  // window's result is empty.
  bool windowed() const override { return true; }

  Status analyze(const PassContext& c, const WindowContext& w, const engine::Group& group) override {
    RmaResult res;
    res.one_sided.by_node.resize(w.nodes);
    const Status s = compute_rma(w.timeline, w.wsync, w.inconsistent_windows, c.definitions, c.run.rank,
                                 group, res.one_sided, res);
    for (const std::string& n : res.notes) c.warn(n);
    c.results.publish(kRma, std::move(res));
    return s;
  }

  Status reduce(const PassContext& c, const ReduceContext& r, const engine::Group& group) override {
    const RmaResult* res = c.results.find(kRma);
    if (res == nullptr) return Status::kInvalidArgument;
    return report_rma(*res, r.unified.local_to_global, r.unified.n_callpaths, group, r.report);
  }

  std::string failure(Status, Step step) const override {
    return step == Step::kReduce ? "reducing the one-sided metrics failed; the report lacks them"
                                 : "the one-sided (RMA) analysis failed; the report lacks its wait states";
  }
};

}  // namespace

std::unique_ptr<Pass> make_rma_pass() { return std::make_unique<RmaPass>(); }

}  // namespace critpath::analyzer::passes
