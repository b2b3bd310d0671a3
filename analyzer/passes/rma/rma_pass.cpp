// critpath — analyzer/passes/rma/rma_pass.cpp: the one-sided pass (pass.h): analyze finds the
// RMA wait states (rma.h; they join the wait-state pass's records), reduce books the transfer
// metrics (rma_report.h). Result "rma": RmaResult. Needs "wait_states".
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

  Status analyze(PassContext& c, const engine::Group& group) override {
    RmaResult& res = c.put(name(), RmaResult{});
    WaitStates* ws = c.get<WaitStates>("wait_states");
    if (ws == nullptr) return Status::kInvalidArgument;
    const Status s = compute_rma(*c.timeline, *c.wsync, *c.inconsistent_windows, *c.definitions,
                                 c.run->rank, group, *ws, res);
    for (const std::string& n : res.notes) c.warn(n);
    return s;
  }

  Status reduce(PassContext& c, const engine::Group& group) override {
    const RmaResult* res = c.get<RmaResult>(name());
    if (res == nullptr) return Status::kInvalidArgument;
    return report_rma(*res, *c.local_to_global, c.n_callpaths, group, *c.report);
  }

  std::string failure(Status, Step step) const override {
    return step == Step::kReduce ? "reducing the one-sided metrics failed; the report lacks them"
                     : "the one-sided (RMA) analysis failed; the report lacks its wait states";
  }
};

}  // namespace

std::unique_ptr<Pass> make_rma_pass() { return std::make_unique<RmaPass>(); }

}  // namespace critpath::analyzer::passes
