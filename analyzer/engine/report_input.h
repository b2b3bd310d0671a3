// critpath — analyzer/engine/report_input.h
//
// What the analysis hands the report (analyzer/report/): the engine's report_input stage fills
// the per-rank statistics, notes and header lines, the passes their metrics, scalars and
// sections in reduce(). Data only: report/ formats it, on rank 0.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analyzer/engine/json_box.h"
#include "analyzer/engine/metric_store.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/run_info.h"

namespace critpath::analyzer {

// Per-rank measurement statistics (gathered to rank 0).
enum RankStat : int {
  kStatEvents = 0,
  kStatChunks,
  kStatCompressedBytes,
  kStatEncodedBytes,
  kStatSpilledBytes,
  kStatChunksSpilled,
  kStatOverheadSeconds,  // cold-path time on the application threads during the run
  kStatCompressSeconds,  // time spent compressing (any thread)
  kStatInitNs,           // CLOCK_MONOTONIC ns at MPI_Init entry
  kStatFinalizeNs,       // CLOCK_MONOTONIC ns at MPI_Finalize entry
  kStatUnmatchedExits,
  kStatUnclosedFrames,
  kStatPartial,  // 1 when this rank's trace did not decode completely
  kStatThreads,
  kStatMpiThreads,           // threads (locations) that made at least one MPI call
  kStatReplayBytes,          // p2p replay payload this rank sent (both directions, with counts)
  kStatReplayCollBytes,      // collective synchronization payload this rank contributed
  kStatMessages,             // point-to-point messages this rank sent
  kStatUnmatched,            // messages the replay could not match (sends + receives)
  kStatP2pViolations,        // receive completed before its send began (after correction)
  kStatCollViolations,       // collective ended before its latest participant began
  kStatClockError,           // max error bound of the clock correction (s)
  kStatClcPasses,            // controlled-logical-clock passes (clc)
  kStatClcCorrected,         // call times the logical clock moved on this rank
  kStatClcMaxShift,          // largest such move (s)
  kStatClcViolationsBefore,  // violations before the logical clock
  // Compiler instrumentation (defs::Instrumentation; docs/instrumentation.md)
  kStatInstrModes,            // bit 0: -finstrument-functions hooks ran, bit 1: XRay sleds patched
  kStatInstrFunctions,        // instrumented functions (XRay: with sleds; GCC: whose hooks ran)
  kStatInstrPatched,          // XRay: patched at recording start
  kStatInstrUnpatched,        // XRay: unpatched again by the automatic filter
  kStatInstrFiltered,         // left out by CRITPATH_FILTER
  kStatInstrAutoFiltered,     // dropped by the automatic filter
  kStatInstrSitesPatchedOut,  // GCC: hook call sites patched out (CRITPATH_PATCH_HOOKS)
  kStatInconsistentComms,     // communicators whose members recorded different collective counts
  kStatCollsDropped,          // this rank's collectives beyond the common count (not analysed)
  kStatCount
};

// A metric computed by an analysis pass, already reduced over ranks (rank 0).
using ExtraMetric = engine::ReducedMetric;

// A summary.txt section contributed by an analysis (inserted before Notes).
struct ReportSection {
  std::string title;
  std::string body;
};

struct ReportInput {
  const RunInfo* run = nullptr;
  const GlobalProfile* profile = nullptr;
  std::vector<std::vector<double>> rank_stats;  // [rank][RankStat]
  std::vector<std::string> notes;
  double wall_time_s = 0;
  double analysis_s = 0;       // rank 0: from the last rank's arrival in MPI_Finalize to the report
  double finalize_wait_s = 0;  // rank 0: from its MPI_Finalize entry to the last rank's arrival
  double analysis_memory_peak_bytes = 0;  // the most a rank's resident memory grew (phase ends)
  int analysis_memory_peak_rank = 0;
  std::vector<std::pair<std::string, double>> analysis_phases;  // rank 0's seconds per phase
  std::string config_text;  // effective configuration, CRITPATH_NAME=value lines
  // The settings the report follows (the report never reads the configuration itself).
  double report_threshold_pct = 0.1;       // CRITPATH_REPORT_THRESHOLD: findings from max(it, 0.5) %
  bool write_html = true;                  // CRITPATH_HTML: also report.html
  std::vector<std::string> header_lines;   // extra "@ Key : value" lines
  std::vector<std::string> lead_findings;  // findings that come before the measured ones
  std::vector<ExtraMetric> extra_metrics;
  // Every rank: its own values of the rank_detail metrics, for the call-path x rank matrix
  // file (report/rank_matrix.h).
  std::vector<engine::RankDetail> rank_detail;
  std::vector<ReportSection> sections;
  engine::Scalars scalars;  // the passes' and the engine's; report.json adds its own (`scalars`)
  // The analyses' other report.json objects ("critical_path", "whatif", ...), merged into its
  // top level; "run" is extended key by key. An object; who reads or writes it includes
  // <nlohmann/json.hpp>.
  engine::JsonBox extra_json;
};

}  // namespace critpath::analyzer
