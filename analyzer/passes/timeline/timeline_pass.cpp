// critpath — analyzer/passes/timeline/timeline_pass.cpp: timeline.json (CRITPATH_TIMELINE),
// a pass with event handlers (engine/pass.h): during the engine's one forward traversal it
// collects this rank's region slices (passes/timeline/timeline_export.h's SliceRecorder, at most its
// share of CRITPATH_TIMELINE_MAX_EVENTS); at the end it adds the waiting intervals, the
// messages and the critical path's track and rank 0 writes the file. Needs "wait_states" and
// "critical_path" (the track comes from the report's critical-path section).
#include <algorithm>
#include <memory>

#include "analyzer/passes/pass.h"
#include "analyzer/passes/timeline/timeline_export.h"
#include "analyzer/passes/wait_states/wait_states.h"

namespace critpath::analyzer::passes {
namespace {

class TimelinePass : public Pass {
 public:
  const char* name() const override { return "timeline"; }
  const char* reduce_phase() const override { return "timeline"; }
  void configure(const config::Config& cfg) override {
    enabled_ = cfg.timeline;                                       // CRITPATH_TIMELINE
    max_events_ = uint64_t(std::max(1, cfg.timeline_max_events));  // CRITPATH_TIMELINE_MAX_EVENTS
  }
  bool enabled() const override { return enabled_; }
  bool wants_events() const override { return true; }

  void prepare(const PassContext& c) override {
    cap_ = size_t(max_events_) / size_t(std::max(1, c.run.size)) + 1;
    slices_ = std::make_unique<SliceRecorder>(c.definitions, cap_);
  }
  void begin_location(uint16_t location) override { slices_->begin_location(location); }
  void on_event(const trace::Event& e, double global_s, int32_t) override {
    if (e.kind == trace::EventKind::kEnter || e.kind == trace::EventKind::kExit)
      slices_->on_event(e, global_s);
  }

  Status reduce(const PassContext& c, const ReduceContext& r, const engine::Group& group) override {
    const WaitStates* ws = c.results.find(kWaitStates);
    if (ws == nullptr || !slices_ || r.whole == nullptr) return Status::kInvalidArgument;
    TimelineInput ti;
    ti.slices = slices_.get();
    ti.timeline = &r.whole->timeline;
    ti.match = &r.whole->match;
    ti.waits = ws;
    ti.definitions = &c.definitions;
    ti.rank = c.run.rank;
    ti.t0 = r.first_init_enter;
    ti.cap = cap_;
    return write_timeline(ti, group, c.run.output_dir, r.report);
  }

  std::string failure(Status, Step) const override { return "writing timeline.json failed"; }

 private:
  bool enabled_ = false;
  uint64_t max_events_ = 1000000;
  size_t cap_ = 0;
  std::unique_ptr<SliceRecorder> slices_;
};

}  // namespace

std::unique_ptr<Pass> make_timeline_pass() { return std::make_unique<TimelinePass>(); }

}  // namespace critpath::analyzer::passes
