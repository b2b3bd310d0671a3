// critpath — analyzer/passes/pass.h
//
// What an analysis pass is to the engine (analyzer/analysis.cpp runs them, in the order of
// passes/pass_list.cpp):
//
//   engine:  decode + profile + replay index (the one forward traversal of every event,
//            fused with the event handlers of the passes that want events), matching,
//            collective and window synchronization, clock correction
//   passes:  analyze()  in list order: local work and exchanges (results by name)
//   engine:  call-path unification across ranks (GlobalProfile, local_to_global)
//   passes:  reduce()   in list order: metrics reduced over the ranks, report sections
//   engine:  the report files
//
// A pass reads the engine's products and the results of the passes it needs (PassInfo::needs,
// by name), puts its own results under its name, talks to other ranks only through
// engine::Group, and gets its settings as typed AnalysisOptions fields. A pass that fails
// returns an error; the engine prints its failure() line, notes it in the report and goes on.
// Adding an analysis: one folder under analyzer/passes/ and one row in pass_list.cpp.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/passes/pass_list.h"
#include "analyzer/report/report.h"
#include "analyzer/session/run_info.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/event/event.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer {

// The settings the passes take (analysis.cpp fills them from CRITPATH_*).
struct AnalysisOptions {
  double report_threshold_pct = 0.1;  // CRITPATH_REPORT_THRESHOLD
  bool delay_analysis = true;         // CRITPATH_DELAY_ANALYSIS
  uint64_t delay_batch = 4194304;     // CRITPATH_DEBUG_DELAY_BATCH
  int delay_replay = 0;               // CRITPATH_DEBUG_DELAY_REPLAY (passes::DelayReplay)
  std::string partitions;             // CRITPATH_PARTITIONS
  int cp_walk_mode = 0;               // CRITPATH_DEBUG_CP_WALK (passes::CpWalkMode)
  bool simulation = true;             // CRITPATH_SIMULATION
  int simulation_budget_pct = 5;      // CRITPATH_SIMULATION_BUDGET
  std::string whatif;                 // CRITPATH_WHATIF
  int whatif_top = 5;                 // CRITPATH_WHATIF_TOP
  uint32_t simulation_delay_us = 0;   // CRITPATH_DEBUG_SIMULATION_DELAY
  int simulation_replay = 0;          // CRITPATH_DEBUG_SIMULATION_REPLAY (passes::ReplayMode)
  bool timeline = false;              // CRITPATH_TIMELINE
  uint64_t timeline_max_events = 1000000;  // CRITPATH_TIMELINE_MAX_EVENTS
};

struct PassContext {
  // The engine's products: this rank's (every rank has its own context).
  const RunInfo* run = nullptr;
  const defs::Definitions* definitions = nullptr;
  const engine::Timeline* timeline = nullptr;
  const engine::P2pMatch* match = nullptr;
  const std::vector<engine::CollSync>* csync = nullptr;  // aligned with Timeline::colls
  const std::vector<engine::CollSync>* wsync = nullptr;  // aligned with Timeline::win_colls
  const std::vector<uint32_t>* inconsistent_windows = nullptr;
  const LocalProfile* local = nullptr;  // nullptr in a window before the last (see Pass::windowed)
  size_t nodes = 0;  // local call-path nodes known so far (all of them with `local`)
  // Phase by phase (engine/window.h): the window analyze() is called for (0, 1, ...), or -1
  // when the analysis holds the whole run at once.
  int window = -1;
  bool last_window = true;  // the window that ends the run (the whole run: true)
  // A window that is not the last ends at a cut: a synchronizing MPI_COMM_WORLD collective,
  // its last arrival (the latest entry, global seconds) and that rank.
  double cut_time = 0;
  int cut_rank = -1;
  double latest_init_enter = 0, earliest_init_exit = 0, latest_finalize_enter = 0;  // run-wide
  std::function<double(uint64_t)> to_global;  // raw ticks -> global seconds
  AnalysisOptions options;
  // After unification (reduce() only).
  const GlobalProfile* global = nullptr;      // rank 0: the unified call paths
  const std::vector<int>* local_to_global = nullptr;
  int n_callpaths = 0;
  double first_init_enter = 0;  // run-wide: the span's start (global seconds)
  double wall_time_s = 0;       // run-wide: earliest MPI_Init entry to latest MPI_Finalize entry
  ReportInput* report = nullptr;  // written on rank 0 only

  // The passes' results by pass name: put by the pass that makes them, read by those that
  // need them.
  template <typename T>
  T& put(const std::string& pass, T value) {
    return std::any_cast<T&>(results_[pass] = std::move(value));
  }
  template <typename T>
  T* get(const std::string& pass) {
    auto it = results_.find(pass);
    return it == results_.end() ? nullptr : std::any_cast<T>(&it->second);
  }
  template <typename T>
  const T* get(const std::string& pass) const {
    auto it = results_.find(pass);
    return it == results_.end() ? nullptr : std::any_cast<T>(&it->second);
  }
  // A pass's warning: one `critpath:` line on stderr and a note in the report.
  std::function<void(const std::string&)> warn;

 private:
  std::map<std::string, std::any> results_;
};

class Pass {
 public:
  enum class Step : uint8_t { kAnalyze, kReduce };
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  // Whether the options ask for this pass at all.
  virtual bool enabled(const AnalysisOptions&) const { return true; }
  // Event handlers, fused into the engine's one forward traversal of the decoded trace: a
  // pass that wants events gets prepare() before it (the context holds the run, the
  // definitions, to_global and the options), then every location's events in order with
  // their global time and call-path node.
  virtual bool wants_events() const { return false; }
  virtual void prepare(PassContext&) {}
  virtual void begin_location(uint16_t /*location*/) {}
  virtual void on_event(const trace::Event& /*e*/, double /*global_s*/, int32_t /*node*/) {}
  // Before unification: local work and exchanges. Collective over `group`.
  virtual Status analyze(PassContext&, const engine::Group&) { return Status::kOk; }
  // Phase by phase (engine/window.h): whether analyze() can run once per window between
  // global synchronizations, seeing only that window's timeline, matches and collectives
  // (PassContext::window), and adding to its result; reduce() then runs once. A pass that
  // cannot (it needs the whole run: the critical path, the delay analysis, the what-if
  // simulation) is left out of an analysis that goes window by window, with a note.
  virtual bool windowed() const { return false; }
  // After unification: reductions and the report. Collective over `group`.
  virtual Status reduce(PassContext&, const engine::Group&) { return Status::kOk; }
  // The warning when `step` failed: what the report lacks.
  virtual std::string failure(Status s, Step step) const = 0;
  // Names of the analysis phases (report.json scalars.analysis_phases) of each step; nullptr:
  // the step does nothing worth a phase of its own.
  virtual const char* analyze_phase() const { return nullptr; }
  virtual const char* reduce_phase() const { return nullptr; }
};

namespace passes {

// The passes the engine runs, one object each, in pass_list() order (the engine's own
// "profile" traversal is not among them).
std::vector<std::unique_ptr<Pass>> make_passes();

// Each pass folder's pass (passes/<name>/<name>_pass.cpp).
std::unique_ptr<Pass> make_wait_states_pass();
std::unique_ptr<Pass> make_rma_pass();
std::unique_ptr<Pass> make_delay_pass();
std::unique_ptr<Pass> make_critical_path_pass();
std::unique_ptr<Pass> make_whatif_pass();
std::unique_ptr<Pass> make_timeline_pass();

}  // namespace passes
}  // namespace critpath::analyzer
