// critpath — analyzer/analysis.cpp: the in-situ analysis, as a pipeline of the engine's stages
// (engine/analysis_engine.h; see analysis.h).
#include "analyzer/analysis.h"

#include <sys/stat.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyzer/engine/analysis_engine.h"
#include "analyzer/engine/atomic_file.h"
#include "analyzer/engine/group.h"
#include "analyzer/otf2/otf2_export.h"
#include "analyzer/passes/pass.h"
#include "analyzer/report/event_dump.h"
#include "analyzer/report/rank_matrix.h"
#include "analyzer/report/report.h"
#include "analyzer/session/trace_archive.h"
#include "libtrace/clock/clock.h"
#include "libtrace/config/config.h"
#include "libtrace/runtime/log.h"

namespace critpath::analyzer {
namespace {

// A warning of the analysis: one stderr line (log::warn) and a note of the location. The
// report takes the location's notes, never the process-wide log (which every location of a
// critpath-analyze process shares), so the analysis keeps its own warnings there itself.
void warn_line(LocationTrace& location, const std::string& line) {
  log::warn("%s", line.c_str());
  try {
    location.notes.push_back(line.size() < 1023 ? line : line.substr(0, 1023));  // as log::warn: cut
  } catch (...) {  // out of memory loses the note, not the stderr line (as log::warn)
  }
}

__attribute__((format(printf, 2, 3))) void warn(LocationTrace& location, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  warn_line(location, buf);
}

// What the run keeps besides the report: the event dump, the trace in critpath's own format
// and as an OTF2 archive (collective over the ranks).
void keep_outputs(LocationTrace& location, const engine::Comm& comm, const config::Config& cfg) {
  const RunInfo& run = location.run;
  if (run.output_dir.empty()) return;
  if (cfg.dump_events) {
    const std::string dir = run.output_dir + "/events";
    mkdir(dir.c_str(), 0755);
    const std::string path = dir + "/rank-" + std::to_string(run.rank) + ".txt";
    if (write_event_dump(*location.chunks, *location.definitions, path) != Status::kOk)
      warn(location, "cannot write the event dump %s", path.c_str());
  }
  // (Hosted, the trace is there already: session/hosted.h.)
  if (keeps_trace(cfg) && !run.offline && run.hosted_ranks == 0) {
    const std::string dir = run.output_dir + "/trace";
    if (save_trace(location, dir) != Status::kOk) warn(location, "cannot keep the trace in %s", dir.c_str());
  }
  std::string otf2_error;  // collective over the ranks (analyzer/otf2/otf2_export.h)
  if ((cfg.keep_trace == "otf2" || cfg.keep_trace == "both") && !run.offline &&
      otf2::export_location(location, comm, run.output_dir, otf2_error) != Status::kOk)
    warn(location, "cannot write the OTF2 archive into %s: %s", run.output_dir.c_str(), otf2_error.c_str());
}

// The engine's settings from CRITPATH_*.
engine::EngineSettings engine_settings(const config::Config& cfg) {
  engine::EngineSettings s;
  s.clc = cfg.clock_correction == "clc";
  s.debug_window = cfg.debug_analysis_window;
  s.memory_mib = cfg.analysis_memory;
  s.host_shm = cfg.analysis_host_shm;
  s.timeout_s = cfg.analysis_timeout;
  s.stall_rank = cfg.debug_analysis_stall_stage == "start" ? -1 : cfg.debug_analysis_stall;
  s.stall_stage = cfg.debug_analysis_stall_stage;
  return s;
}

// Rank 0: the report files, and one line saying where they are.
void write_report(LocationTrace& location, ReportInput in, const config::Config& cfg) {
  const RunInfo& run = location.run;
  in.config_text = config::describe(cfg);
  in.report_threshold_pct = std::atof(cfg.report_threshold.c_str());
  in.write_html = cfg.html;
  location.run.analysis_seconds = in.analysis_s;
  const Status ws = write_reports(in);
  if (ws == Status::kOk) log::info0(1, "report in %s/summary.txt", run.output_dir.c_str());
  else
    warn(location, "writing the report into %s failed (%s): %s; no partial file is left",
         run.output_dir.c_str(), to_string(ws), last_write_error().c_str());
}

// Collective: the call-path x rank matrix file (report/rank_matrix.h) when CRITPATH_RANK_MATRIX
// asks for it; report.json's `rank_matrix` says whether it was written (root).
void write_matrix(LocationTrace& location, const engine::Group& group, ReportInput& in,
                  const config::Config& cfg) {
  const RunInfo& run = location.run;
  nlohmann::json summary = {{"written", false}};
  if (in.rank_detail.empty()) summary["reason"] = "no per-rank metric";
  else if (!rank_matrix_wanted(cfg.rank_matrix, group.size()))
    summary["reason"] = "CRITPATH_RANK_MATRIX=" + cfg.rank_matrix + " at " + std::to_string(group.size()) +
                        " ranks";
  else if (write_rank_matrix(group, in.rank_detail, run.output_dir, group.is_root() ? in.profile : nullptr,
                             summary) != Status::kOk) {
    summary["reason"] = "writing it failed";
    if (group.is_root()) warn(location, "cannot write the rank matrix into %s", run.output_dir.c_str());
  } else {
    summary["written"] = true;
  }
  in.rank_detail.clear();
  if (group.is_root()) (*in.extra_json)["rank_matrix"] = std::move(summary);
}

}  // namespace

void run_analysis(LocationTrace& location, const engine::Comm& ranks, uint64_t wall0) {
  const config::Config& cfg = config::current();
  // The analysis communicator: the engine's exchanges and the passes go through it; freed when
  // `group` goes out of scope.
  engine::Group group;
  if (engine::Group::over(ranks, group) != Status::kOk)
    return warn(location, "cannot create the analysis communicator; no report");
  // Ranks reach MPI_Finalize at different times: the analysis proper starts when the last
  // one arrived. The time before is the application's imbalance, not analysis cost.
  const bool analyse = cfg.analysis && !location.run.output_dir.empty();
  const engine::EngineSettings settings = engine_settings(cfg);
  engine::RanksMet met;
  if (analyse && engine::meet_ranks(group, location.run, settings, met) != Status::kOk)
    return warn(location, "the ranks could not meet for the analysis; no report");
  const engine::AnalysisClock clock{wall0, clock::monotonic_ns(), engine::AnalysisEngine::resident_bytes(),
                                    met};
  keep_outputs(location, group.comm(), cfg);
  if (!analyse) {
    // No analysis, but the settings in force are still written, and the user told where.
    const RunInfo& run = location.run;
    if (run.rank == 0 && !run.output_dir.empty() && !run.offline &&
        write_config_only(run.output_dir, config::describe(cfg)) == Status::kOk)
      log::info0(1, "analysis off (CRITPATH_ANALYSIS=0); settings in %s/critpath.cfg",
                 run.output_dir.c_str());
    return;
  }
  engine::AnalysisEngine engine(location, group, settings, passes::make_passes(cfg), clock,
                                [&location](const std::string& w) { warn_line(location, w); });
  engine.choose_windows();
  engine.decode();
  engine.unify();
  engine.reduce();
  if (!engine.report_possible()) return;
  ReportInput in = engine.report_input();
  // The critical path's time at the findings' causing ranks (report/findings.cpp).
  if (look_up_cells(group, in.rank_detail, "critical_path", in.extra_metrics) != Status::kOk)
    warn(location, "the critical path's time at the causing ranks could not be looked up");
  write_matrix(location, group, in, cfg);
  if (location.run.rank == 0) write_report(location, std::move(in), cfg);
}

}  // namespace critpath::analyzer
