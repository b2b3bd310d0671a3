// critpath — analyzer/passes/timeline/timeline_export.h
//
// timeline.json (CRITPATH_TIMELINE=1): the run as Chrome/Perfetto trace events (the JSON
// "traceEvents" format that ui.perfetto.dev and chrome://tracing open):
//
//   pid = rank, tid = thread (location)   regions and MPI calls as complete slices ("X")
//   tid = 1000 + location                 the waiting intervals of that thread ("waiting")
//   flow "s" -> "f", cat "msg"            each matched message, sender's call to receiver's
//   pid = ranks ("critical path")         the critical path's segments, one slice each
//
// Times in microseconds from the first MPI_Init entry (the report's time base). Each rank
// keeps at most CRITPATH_TIMELINE_MAX_EVENTS / ranks events (a note says when it dropped
// some); rank 0 gathers and writes the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/report_input.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/event/event.h"

namespace critpath::analyzer {

// Collects one rank's slices during the first pass (fed every event of every location).
class SliceRecorder {
 public:
  SliceRecorder(const defs::Definitions& defs, size_t cap) : defs_(defs), cap_(cap) {}
  void begin_location(uint16_t location) {
    loc_ = location;
    open_.clear();
  }
  // `t`: the event's global time in seconds.
  void on_event(const trace::Event& e, double t);

  struct Slice {
    uint16_t location;
    uint32_t region;
    double begin, end;
  };
  const std::vector<Slice>& slices() const { return slices_; }
  uint64_t dropped() const { return dropped_; }

 private:
  const defs::Definitions& defs_;
  size_t cap_;
  uint16_t loc_ = 0;
  std::vector<std::pair<uint32_t, double>> open_;
  std::vector<Slice> slices_;
  uint64_t dropped_ = 0;
};

struct TimelineInput {
  const SliceRecorder* slices = nullptr;
  const engine::Timeline* timeline = nullptr;
  const engine::P2pMatch* match = nullptr;
  const passes::WaitStates* waits = nullptr;
  const defs::Definitions* definitions = nullptr;
  int rank = 0;
  double t0 = 0;   // global seconds of the first MPI_Init entry
  size_t cap = 0;  // events per rank
};

// Collective over `group`: every rank's events to rank 0, which writes
// `output_dir`/timeline.json with the critical-path track from in.extra_json. Notes go to `in`.
Status write_timeline(const TimelineInput& t, const engine::Group& group, const std::string& output_dir,
                      ReportInput& in);

}  // namespace critpath::analyzer
