// critpath — analyzer/report/report.h
//
// The last stage of the data flow: metric store -> files. Rank 0 only. Formatters read the
// unified profile and per-rank statistics; they never touch the trace or MPI.
//   summary.txt  — text for people and grep (fixed `@---` section markers, mpiP-style)
//   report.json  — the stable machine-readable contract (schema critpath-report/1)
#pragma once

#include <string>
#include <vector>

#include "analyzer/profile/profile.h"
#include "analyzer/session/run_info.h"

namespace critpath::analyzer {

// Per-rank measurement statistics (gathered to rank 0).
enum RankStat : int {
  kStatEvents = 0,
  kStatChunks,
  kStatCompressedBytes,
  kStatEncodedBytes,
  kStatSpilledBytes,
  kStatChunksSpilled,
  kStatOverheadSeconds,   // cold-path time on the application threads during the run
  kStatCompressSeconds,   // time spent compressing (any thread)
  kStatInitNs,            // CLOCK_MONOTONIC ns at MPI_Init entry
  kStatFinalizeNs,        // CLOCK_MONOTONIC ns at MPI_Finalize entry
  kStatUnmatchedExits,
  kStatUnclosedFrames,
  kStatPartial,           // 1 when this rank's trace did not decode completely
  kStatThreads,
  kStatCount
};

// One metric of report.json: id, unit, description and the profile column it reads.
struct MetricDef {
  const char* id;
  const char* unit;
  const char* description;
  int column;
};
// The metric registry (docs/metrics.md documents each entry).
const std::vector<MetricDef>& metric_registry();

struct ReportInput {
  const RunInfo* run = nullptr;
  const GlobalProfile* profile = nullptr;
  std::vector<std::vector<double>> rank_stats;  // [rank][RankStat]
  std::vector<std::string> notes;
  double wall_time_s = 0;
  double analysis_s = 0;
  std::string config_text;  // effective configuration, CRITPATH_NAME=value lines
};

// Writes summary.txt, report.json and critpath.cfg into run->output_dir.
Status write_reports(const ReportInput& in);

}  // namespace critpath::analyzer
