// critpath — analyzer/report/report.h
//
// The last stage of the data flow: metric store -> files. Rank 0 only. Formatters read the
// unified profile and per-rank statistics; they never touch the trace or MPI.
//   summary.txt  — text for people and grep (fixed `@---` section markers, mpiP-style)
//   report.json  — the stable machine-readable contract (schema critpath-report/2)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/engine/report_input.h"

namespace critpath::analyzer {

// Writes summary.txt, report.json and critpath.cfg into run->output_dir. Consumes
// in.extra_json: its values are moved into report.json's object (the critical path's segment
// list alone is about 1 MB of JSON; a copy cost more than building it).
Status write_reports(ReportInput& in);
// critpath.cfg alone (CRITPATH_ANALYSIS=0: the run's settings are still on record).
Status write_config_only(const std::string& dir, const std::string& config_text);

}  // namespace critpath::analyzer
