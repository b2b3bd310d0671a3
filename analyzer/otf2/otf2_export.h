// critpath — analyzer/otf2/otf2_export.h
//
// critpath's trace as an OTF2 archive, written with the OTF2 writer API and laid out as
// Score-P lays one out, for Vampir, Scalasca, the OTF2 Python reader and critpath-analyze
// --otf2 (docs/other-tools.md):
//
//   <dir>/traces.otf2        anchor: version, clock, critpath's CRITPATH::* properties
//   <dir>/traces.def         global definitions: strings, system tree, one location group per
//                            rank (its threads the locations), regions with paradigm and role,
//                            groups, communicators (MPI_COMM_WORLD a group of all ranks),
//                            RMA windows, metrics of the hardware counters, clock properties
//   <dir>/traces/<loc>.evt   per location: its events, with the rank's own ids ...
//   <dir>/traces/<loc>.def   ... and the mapping tables to the global definitions
//
// Each traced rank writes its own locations (threads), then its definitions go to rank 0,
// which unifies them and writes the global definitions; rank 0 sends every rank its
// mapping tables (Score-P's unification, done the same way). Time stamps are picoseconds on
// the analysis's time base (engine/global_time.h): clock-corrected when correction ran, and
// the archive's CRITPATH::CLOCK_CORRECTION property says how.
//
//   in situ:            CRITPATH_KEEP_TRACE=otf2 (or both), from run_analysis()
//   from a kept trace:  critpath-analyze --export-otf2 OUT DIR (one call per traced rank,
//                       hosted ranks in threads)
#pragma once

#include <string>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/trace_set.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::otf2 {

// Writes `location` (one traced rank: its chunks, definitions and run facts) into the
// archive in directory `dir`, which must exist and hold no archive named "traces" yet.
// Collective over `ranks` (engine/comm.h; rank r of it exports traced rank r): every rank
// calls it once, with the same `dir`. Returns kOk on every rank or an error on every rank;
// `error` then says why (on the ranks that know). Never throws.
Status export_location(const LocationTrace& location, const engine::Comm& ranks, const std::string& dir,
                       std::string& error);

}  // namespace critpath::analyzer::otf2
