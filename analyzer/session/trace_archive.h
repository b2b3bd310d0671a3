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
#include <vector>

#include "analyzer/engine/run_info.h"
#include "analyzer/engine/trace_set.h"
#include "libtrace/config/config.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer {

// Writes trace/rank-<run.rank>.json into `dir`: `run`, `definitions` and `notes` (in situ:
// the session's RunInfo, defs::current() and the notes logged so far).
Status save_archive(const RunInfo& run, const defs::Definitions& definitions,
                    const std::vector<std::string>& notes, const std::string& dir);
// The whole kept rank into `dir` (created if need be): rank-<r>.cptrace, the location's chunks,
// and rank-<r>.json (save_archive). In situ for CRITPATH_KEEP_TRACE, and for the hosted
// analysis's hand-off (session/hosted.h).
Status save_trace(const LocationTrace& location, const std::string& dir);
// Whether CRITPATH_KEEP_TRACE keeps critpath's own trace (`true` or `both`).
bool keeps_trace(const config::Config& cfg);
// The start of rank-<run.rank>.json as far as it is known at MPI_Init: `{"format":...,
// "run":{...` with every run field except end, finalize_enter_ticks and fin_offset, and both
// objects left open. The fault handler (fault.h) completes it without allocating. Empty when
// it cannot be built.
std::string archive_prefix(const RunInfo& run);
// Reads `dir`/rank-<rank>.json: fills `run` (offline = true), defines the rank's regions,
// communicators, windows and counter names in `definitions` (normally fresh: one per
// location) and sets `notes` to the rank's notes. The process's own log is not touched.
Status load_archive(const std::string& dir, int rank, RunInfo& run, defs::Definitions& definitions,
                    std::vector<std::string>& notes);

}  // namespace critpath::analyzer
