// critpath — analyzer/session/partial_trace.h
//
// critpath-analyze's side of partial traces (fault.h writes them): a rank that ended in a
// fault left its stored chunks (rank-<r>.cptrace), its raw unfinished buffers (rank-<r>.tail)
// and a rank-<r>.json with a `partial` object. Before the analysis, the run is cut to its
// consistent prefix, so that the unchanged analysis sees a well-formed run:
//
//   1. the tail's raw chunks become chunks of the rank's store (merge_tail);
//   2. the cut time T is the earliest fault of any partial rank; every location drops its
//      events after T, and an MPI call still open at T is dropped whole;
//   3. every communicator keeps as many collective instances on each member as the member
//      with the fewest (a rank cut inside the collective sequence cuts the others there too),
//      repeated until no rank changes;
//   4. regions still open are closed at T, and the rank's run ends at T.
//
// Notes say which ranks ended how and what was left out. Times are compared in each rank's
// CLOCK_MONOTONIC (exact on one host; across hosts off by the clock offsets, which a partial
// run has measured only at MPI_Init).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/trace_set.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer {

// "0", "0-3", "0,2,5-7": ascending ranks as ranges.
std::string format_rank_list(const std::vector<int>& ranks);

// Adds the raw chunks of the tail file at `path` (runtime/recorder_control.h, kTailMagic)
// that `store` does not hold yet, compressed. A missing file adds nothing; a damaged record
// ends the file there (kCorrupt, the records before it added).
Status merge_tail(const std::string& path, trace::ChunkStore& store);

// Collective over `procs` (every process of critpath-analyze, one analysis rank each).
// `locations`: this process's traced ranks, in order. When any traced rank of the run is
// partial, replaces each location's chunk store by its consistent prefix (owned by `cut`,
// which must stay alive as long as the LocationTrace is used) and adjusts its run facts and
// notes. `summary` is set, on the process hosting traced rank 0, to one line naming the
// partial ranks and the cut (empty when no rank is partial). kMpiError when an exchange
// between the processes failed (the stores then may be cut or not).
Status cut_to_consistent_prefix(const std::vector<LocationTrace*>& locations,
                                std::vector<std::unique_ptr<trace::ChunkStore>>& cut,
                                const engine::Comm& procs, std::string& summary);

}  // namespace critpath::analyzer
