// critpath — analyzer/analysis.h
//
// The in-situ analysis run inside MPI_Finalize, after the recorder stopped and before
// PMPI_Finalize. Every rank calls it; it communicates only on its own duplicate of the
// analysis ranks (errors returned, never fatal) and catches everything.
//
//   per rank:  [dump events] [keep trace] -> profile pass (forward replay of own trace)
//   all ranks: unify call paths at rank 0 -> reduce per-call-path metrics -> gather per-rank
//   rank 0:    summary.txt, report.json, critpath.cfg; one stderr line with the report path
#pragma once

#include <cstdint>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/trace_set.h"

namespace critpath::analyzer {

// Analyses `location` (engine/trace_set.h): everything the analysis reads of the traced rank
// comes from it, nothing from process-wide state. wall0: CLOCK_MONOTONIC ns at the entry of
// MPI_Finalize (for the analysis-time figure). location.run must be complete (clock samples,
// offsets, recorder statistics): the same call serves the in-situ analysis and
// critpath-analyze's re-analysis of a kept trace. Sets location.run.analysis_seconds (rank 0)
// and appends the warnings it logs to location.notes. `ranks`: the analysis ranks, one per
// traced rank (engine/comm.h; rank r analyses traced rank r), collective over all of them.
void run_analysis(LocationTrace& location, const engine::Comm& ranks, uint64_t wall0);

}  // namespace critpath::analyzer
