// critpath — analyzer/session/trace_archive.h
//
// A kept trace (CRITPATH_KEEP_TRACE=1): per rank, the compressed chunks
// (`trace/rank-<r>.cptrace`, docs/trace-format.md) and everything else the analysis reads
// from the live process (`trace/rank-<r>.json`): run facts and clock samples, recorder
// statistics, region / communicator definitions, counter names and the rank's notes.
// critpath-analyze loads both and calls the very same run_analysis(), so the re-analysis
// reproduces the in-situ report.
#pragma once

#include <string>

#include "analyzer/session/run_info.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer {

// Writes trace/rank-<run.rank>.json into `dir`.
Status save_archive(const RunInfo& run, const std::string& dir);
// Reads `dir`/rank-<rank>.json: fills `run` (offline = true) and defines this process's
// regions, communicators and counter names; re-adds the rank's notes.
Status load_archive(const std::string& dir, int rank, RunInfo& run);

}  // namespace critpath::analyzer
