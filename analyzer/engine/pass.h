// critpath — analyzer/engine/pass.h
//
// What an analysis pass is to the engine (engine/analysis_engine.h runs the stages, the
// passes in the order their needs give, passes/pass_list.cpp lists them):
//
//   engine:  decode: the call-path profile and the replay index (the one forward traversal
//            of every event, fused with the event handlers of the passes that want events)
//   engine:  exchange + clocks: matching, collective and window synchronization, clock
//            correction (per window when the run is cut into windows)
//   passes:  analyze()  local work and exchanges, results published (engine/results.h)
//   engine:  unify: the call paths across ranks
//   passes:  reduce()   metrics booked and reduced over the ranks, the report's sections
//   engine:  report input (the per-rank statistics and notes), then the report files
//
// What a pass sees is split by step, each context valid for the call it is handed to:
// PassContext for every step (the run, its definitions, the results), WindowContext for
// analyze() (one window's products, or the whole run's), ReduceContext for reduce() (the
// unified call paths, the report being built). A pass talks to other ranks only through
// engine::Group, parses its own settings in configure(), and reads other passes' results by
// their typed keys (engine/results.h) that pass_list.cpp's `needs` names. A pass that fails
// returns an error; the engine prints its failure() line, notes it in the report and goes on.
// Adding an analysis: one folder under analyzer/passes/ and one row in pass_list.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/report_input.h"
#include "analyzer/engine/results.h"
#include "analyzer/engine/run_info.h"
#include "analyzer/engine/timeline.h"
#include "libtrace/config/config.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/event/event.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer {

// Every step: what the pass may read of the rank and the run, and the passes' results.
struct PassContext {
  const RunInfo& run;
  const defs::Definitions& definitions;
  const std::function<double(uint64_t)>& to_global;  // raw ticks -> global seconds
  engine::Results& results;
  // A pass's warning: one `critpath:` line on stderr and a note in the report.
  const std::function<void(const std::string&)>& warn;
};

// The call paths unified across ranks (after the engine's unify stage; window by window, it
// runs before the windows).
struct UnifiedCallPaths {
  const GlobalProfile& global;  // rank 0: the unified call paths
  const std::vector<int>& local_to_global;
  int n_callpaths;
};

// analyze(): one window of the run (engine/window.h), or the whole run (window -1).
struct WindowContext {
  const engine::Timeline& timeline;
  const engine::P2pMatch& match;
  const std::vector<engine::CollSync>& csync;  // aligned with Timeline::colls
  const std::vector<engine::CollSync>& wsync;  // aligned with Timeline::win_colls
  const std::vector<uint32_t>& inconsistent_windows;
  size_t nodes;      // local call-path nodes known so far (all of them in the last window)
  int window;        // 0, 1, ...; -1: the whole run at once
  bool last_window;  // the window that ends the run (the whole run: true)
  // A window that is not the last ends at a cut: a synchronizing collective over every rank,
  // its last arrival (the latest entry, global seconds) and that rank.
  double cut_time;
  int cut_rank;
  // Run-wide (reduced over the ranks): what the patterns of MPI_Init and MPI_Finalize need.
  double latest_init_enter, earliest_init_exit, latest_finalize_enter;
  const LocalProfile* local;        // the last window only (nullptr before)
  const UnifiedCallPaths* unified;  // window by window only (nullptr: the whole run)
};

// reduce(): after unification, once.
struct ReduceContext {
  const LocalProfile& local;
  const UnifiedCallPaths& unified;
  double first_init_enter;  // run-wide: the span's start (global seconds)
  double wall_time_s;       // run-wide: earliest MPI_Init entry to latest MPI_Finalize entry
  // The whole run's replay products, still alive when the run was analysed at once;
  // nullptr when it went window by window.
  const WindowContext* whole;
  ReportInput& report;  // written on rank 0 only
};

class Pass {
 public:
  enum class Step : uint8_t { kAnalyze, kReduce };
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  // Its settings, parsed from the CRITPATH_* variables it owns (before any step).
  virtual void configure(const config::Config&) {}
  // Whether its settings ask for this pass at all.
  virtual bool enabled() const { return true; }
  // Event handlers, fused into the engine's one forward traversal of the decoded trace: a
  // pass that wants events gets prepare() before it, then every location's events in order
  // with their global time and call-path node.
  virtual bool wants_events() const { return false; }
  virtual void prepare(const PassContext&) {}
  virtual void begin_location(uint16_t /*location*/) {}
  virtual void on_event(const trace::Event& /*e*/, double /*global_s*/, int32_t /*node*/) {}
  // Before unification: local work and exchanges. Collective over `group`.
  virtual Status analyze(const PassContext&, const WindowContext&, const engine::Group&) {
    return Status::kOk;
  }
  // Phase by phase (engine/window.h): whether analyze() can run once per window between
  // global synchronizations, seeing only that window (WindowContext::window), and adding to
  // its result; reduce() then runs once. A pass that cannot is left out of an analysis that
  // goes window by window, with a note.
  virtual bool windowed() const { return false; }
  // After unification: reductions and the report. Collective over `group`.
  virtual Status reduce(const PassContext&, const ReduceContext&, const engine::Group&) {
    return Status::kOk;
  }
  // Its columns of the rank's statistics (report/report.h RankStat), after reduce() or when
  // the analysis stopped early.
  virtual void add_rank_stats(const PassContext&, std::vector<double>& /*row*/) const {}
  // The warning when `step` failed: what the report lacks.
  virtual std::string failure(Status s, Step step) const = 0;
  // Names of the analysis phases (report.json scalars.analysis_phases) of each step; nullptr:
  // the step does nothing worth a phase of its own.
  virtual const char* analyze_phase() const { return nullptr; }
  virtual const char* reduce_phase() const { return nullptr; }
};

}  // namespace critpath::analyzer
