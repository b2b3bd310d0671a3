// critpath — analyzer/engine/analysis_engine.h
//
// The in-situ analysis as named stages on one object (analyzer/analysis.cpp calls them in
// order; docs/analyzer.md draws them):
//
//   choose_windows  whole run or window by window: the memory estimate agreed over the ranks,
//                   for a run that may not fit a scan of its cut candidates (engine/window.h)
//                   and the cuts agreed; the passes ordered by their needs
//   decode          the one forward traversal: the call-path profile and the replay index, the
//                   event handlers of the passes fused in; at each cut, and at the end:
//     exchange        matching, collective and window synchronization (engine/exchange.h)
//     clocks          the controlled logical clock when asked for (engine/clc.h)
//     analyze         the passes' analyze(), in the order of their needs
//   unify           the call paths across ranks (window by window: before the windows)
//   reduce          the passes' reduce(), in the pass list's order: metrics and sections
//   report_input    the per-rank statistics, notes and header lines for the report (rank 0)
//
// Every stage is collective over the group. A stage that fails says why (one `critpath:`
// line, a note) and the stages after it see ok() false. When the analysis deadline passed
// (CRITPATH_ANALYSIS_TIMEOUT, engine/watchdog.h) no operation starts any more, so the
// remaining stages cannot disagree: report_input() still gives rank 0 what it has, and the
// report is written with `analysis incomplete:` notes. Any other failure stops the analysis
// (report_possible() false): ranks that failed an exchange and ranks that did not would not
// meet in the same collectives.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/engine/pass.h"
#include "analyzer/engine/report_input.h"
#include "analyzer/engine/trace_set.h"
#include "analyzer/engine/window.h"

namespace critpath::analyzer::engine {

struct OwnFigures;   // analysis_engine.cpp: the analysis's own figures of one rank
struct NodeInfo;     // analysis_engine.cpp: where one rank ran
struct EndGathered;  // analysis_engine.cpp: what rank 0 gathers at the end

// The engine's own settings (analysis.cpp reads them from CRITPATH_*).
struct EngineSettings {
  bool clc = false;       // CRITPATH_CLOCK_CORRECTION=clc
  int debug_window = 0;   // CRITPATH_DEBUG_ANALYSIS_WINDOW
  int memory_mib = 0;     // CRITPATH_ANALYSIS_MEMORY
  bool host_shm = false;  // CRITPATH_ANALYSIS_HOST_SHM
  int timeout_s = 0;      // CRITPATH_ANALYSIS_TIMEOUT (its note)
  // CRITPATH_DEBUG_ANALYSIS_STALL / _STAGE: this rank stalls until the deadline has passed at
  // the start of that stage (tests of a timeout in the middle of the analysis).
  int stall_rank = -1;
  std::string stall_stage;
};

// What the ranks' meeting before the analysis told (meet_ranks): in situ with the
// shared-memory segment allowed, whether every rank runs on this host (the maximum of the host
// names' hashes), which WindowChoice reads instead of taking that maximum in an MPI round of its
// own once the analysis clock runs.
struct RanksMet {
  bool carried = false;   // the meeting took that maximum (else it was a barrier)
  bool one_host = false;  // ... and every rank's hash was this rank's
  int host_cpus = 0;      // ... and the CPUs its ranks may run on, all told (0: not known)
};

// When the analysis began: the last rank's arrival (after the meeting), the process's
// resident memory then, and the rank's own entry into MPI_Finalize; what the meeting carried.
struct AnalysisClock {
  uint64_t wall0 = 0;      // CLOCK_MONOTONIC ns at the entry of MPI_Finalize
  uint64_t analysis0 = 0;  // ... when every rank had arrived
  size_t rss0 = 0;         // resident bytes then
  RanksMet met;
};

// One round of counting the ranks that share a host (AnalysisEngine's memory budget) from the
// sums over the ranks of 3 numbers per bucket (`sums`): the ranks in the bucket, the sum of
// their hashes' low bits q and of q^2. Returns bucket `mine`'s count; `exact` says that all
// its ranks have the same q (count * sum(q^2) == sum(q)^2), `mixed` that some bucket does not.
uint64_t host_bucket_count(const std::vector<uint64_t>& sums, size_t mine, bool& exact, bool& mixed);

// Collective over `group`: the ranks meet before the analysis, which starts once the last one
// arrived (run_analysis). In situ the meeting is the maximum that tells whether every rank runs
// on one host and hands out rank 0's offer of the shared-memory segment (RanksMet); elsewhere a
// barrier. On failure no segment is left behind.
Status meet_ranks(const Group& group, const RunInfo& run, const EngineSettings& settings, RanksMet& out);

class AnalysisEngine {
 public:
  using Warn = std::function<void(const std::string&)>;
  AnalysisEngine(LocationTrace& location, const Group& group, const EngineSettings& settings,
                 std::vector<std::unique_ptr<Pass>> passes, const AnalysisClock& clock, Warn warn);
  ~AnalysisEngine();
  AnalysisEngine(const AnalysisEngine&) = delete;
  AnalysisEngine& operator=(const AnalysisEngine&) = delete;

  void choose_windows();
  void decode();
  void unify();
  void reduce();
  // The report's input (meaningful on rank 0), from the per-rank statistics and notes
  // gathered here.
  ReportInput report_input();

  bool ok() const { return !failed_; }
  // Whether a report can still be written (nothing failed, or only because the deadline
  // passed).
  bool report_possible() const;

  // The resident memory the process grew by since the analysis began (for critpath-analyze's
  // figures); the seconds of the analysis so far.
  static size_t resident_bytes();

 private:
  struct State;
  void fail(const std::string& why);
  void stall_if_chosen(const char* stage);
  void order_passes();
  bool unify_call_paths(const LocalProfile& profile);
  void analyze_window(int window, bool last);
  bool exchange(int window, bool last);
  void correct_clocks();
  void sync_windows();
  void run_analyze_steps(int window, bool last);
  void note_windows();
  bool needs_present(const Pass* p);
  std::vector<double> rank_stats() const;
  OwnFigures own_figures() const;
  NodeInfo node_info() const;
  std::string own_notes() const;
  void gather_end(ReportInput& in, EndGathered& got);
  void describe_nodes(ReportInput& in, const std::vector<NodeInfo>& all);
  void add_header_lines(ReportInput& in);
  void add_notes(ReportInput& in, std::vector<std::string> notes);

  LocationTrace& location_;
  const Group& group_;
  EngineSettings settings_;
  AnalysisClock clock_;
  Warn warn_;
  std::unique_ptr<State> s_;
  bool failed_ = false;
};

}  // namespace critpath::analyzer::engine
