// critpath — analyzer/profile/profile.h
//
// The call-path profile: a forward pass over this rank's trace that builds the call tree
// (ENTER/EXIT nesting; MPI calls are leaves) and books time, visits and bytes to its nodes.
// Then the cross-rank step unifies call paths (rank 0 assigns global ids) and reduces the
// per-call-path values to sum/min/max over ranks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libtrace/buffer/chunk_store.h"
#include "libtrace/clock/clock.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer {

// Per-call-path quantities, in this order everywhere (arrays are indexed by these).
enum ProfileColumn : int {
  kColVisits = 0,
  kColExclusive,  // seconds
  kColInclusive,  // seconds
  kColMpi,        // seconds of MPI calls (exclusive time of MPI regions)
  kColBytesSent,
  kColBytesReceived,
  kColCount
};

struct CallNode {
  uint32_t region = 0;
  int32_t parent = -1;
  uint64_t visits = 0;
  uint64_t inclusive_ticks = 0;
  uint64_t exclusive_ticks = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

struct LocalProfile {
  std::vector<CallNode> nodes;  // nodes[0] is the root; parents precede children
  uint64_t events = 0;
  uint64_t unmatched_exits = 0;  // EXIT without its ENTER, or closing the wrong region
  uint64_t unclosed_frames = 0;  // frames still open at the end of the trace
  Status status = Status::kOk;   // decode problems make the profile partial
};

// Forward pass over every location of `store`.
LocalProfile build_profile(const trace::ChunkStore& store);

struct GlobalCallpath {
  std::string path;    // region names joined by '/' from the root
  std::string region;  // the last region's name
  defs::RegionKind kind = defs::RegionKind::kUser;
  int32_t parent = -1;
  double sum[kColCount] = {};
  double min[kColCount] = {};  // over ranks that visited the call path
  double max[kColCount] = {};
  int ranks = 0;               // ranks that visited it
};

struct GlobalProfile {
  std::vector<GlobalCallpath> callpaths;             // rank 0 only
  std::vector<std::vector<double>> by_rank;          // rank 0 only: [rank][column] totals
};

// Collective over `comm`. Returns the unified profile on rank 0 (empty elsewhere).
Status unify_profile(const LocalProfile& local, const clock::TickConverter& conv, MPI_Comm comm,
                     GlobalProfile& out);

}  // namespace critpath::analyzer
