// critpath — analyzer/engine/trace_set.h
//
// What the analysis reads of one traced rank (a "location"), handed to it as a value rather
// than read from process-wide state, so that one process can analyse several locations
// (critpath-analyze re-analysing a 16-rank trace on 4 or 1 MPI ranks):
//
//   chunks       the compressed events (docs/trace-format.md)
//   definitions  what the ids in those events mean (regions, communicators, windows,
//                counter names)
//   run          the run facts and clock samples (analyzer/engine/run_info.h)
//   notes        the rank's report notes from before the analysis
//
// Who builds one:
//   in situ, at MPI_Finalize (analyzer/session/session.cpp): the recorder's chunk store
//     (runtime::chunk_store()), the process-wide definitions (defs::current()), the session's
//     RunInfo and a snapshot of log::notes() taken after recording stopped;
//   critpath-analyze (analyzer/tool/critpath_analyze.cpp): per kept rank, its own
//     trace::ChunkStore opened on trace/rank-<r>.cptrace and its own defs::Definitions, run
//     facts and notes loaded from trace/rank-<r>.json (analyzer/session/trace_archive.h).
#pragma once

#include <string>
#include <vector>

#include "analyzer/engine/run_info.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer {

// One traced rank, as the analysis reads it. The chunk store and the definitions are not
// owned: whoever builds the LocationTrace keeps them alive (and unchanged) while it is used.
struct LocationTrace {
  const trace::ChunkStore* chunks = nullptr;
  const defs::Definitions* definitions = nullptr;
  RunInfo run;  // run_analysis() sets run.analysis_seconds
  // The report notes of the rank ("rank <r>: " is prefixed when they are gathered). The
  // analysis appends the warnings it logs itself, so that they reach the report although it
  // never reads the process-wide log::notes() (shared by every location of the process).
  std::vector<std::string> notes;
};

}  // namespace critpath::analyzer
