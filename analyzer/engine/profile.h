// critpath — analyzer/engine/profile.h
//
// The call-path profile: a forward pass over this rank's trace that builds the call tree
// (ENTER/EXIT nesting; MPI calls are leaves) and books time, visits and bytes to its nodes.
// Then the cross-rank step unifies call paths (rank 0 assigns global ids) and reduces the
// per-call-path values to sum/min/max over ranks.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/engine/comm.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/clock/clock.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/event/event.h"

namespace critpath::analyzer {

namespace engine {
class TimelineBuilder;
}

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
  // Hardware counters (COUNTERS events after a function's ENTER/EXIT; see
  // compiler_hooks/counters.h), in the order of Definitions::counter_names(). A frame without its
  // own values (MPI call, root, user region) passes its children's values up: its inclusive
  // value is their sum and its exclusive value 0, so counts inside an MPI call land in the
  // caller's exclusive value.
  std::array<double, trace::kMaxCounters> counter_inclusive{};
  std::array<double, trace::kMaxCounters> counter_exclusive{};
};

struct LocalProfile {
  std::vector<CallNode> nodes;  // nodes[0] is the root; parents precede children
  uint64_t events = 0;
  uint64_t unmatched_exits = 0;  // EXIT without its ENTER, or closing the wrong region
  uint64_t unclosed_frames = 0;  // frames still open at the end of the trace
  // Instrumented functions still active when MPI_Finalize closed the root (main, or the
  // function that called MPI_Finalize): closed there, not counted as unmatched.
  uint64_t functions_open_at_finalize = 0;
  size_t counters = 0;          // values per COUNTERS event (counter_names().size())
  Status status = Status::kOk;  // decode problems make the profile partial
  // Node id during the pass -> final node id (the merge of the locations' trees); the
  // identity on location 0's nodes, which come first.
  std::vector<int32_t> node_remap;
  uint16_t locations = 0;  // locations (threads) with events
};

// Sees every event of the locations it wants (by default location 0, the thread that
// called MPI_Init) right after the profile handled it, with the call-path node on top of the
// stack then (after an ENTER: the node entered). begin_location() comes before a wanted
// location's first event. Node ids of other locations are remapped by the cross-location
// merge after the pass: an observer that wants them translates them with
// LocalProfile::node_remap.
class ProfileObserver {
 public:
  virtual ~ProfileObserver() = default;
  virtual bool wants_location(uint16_t location) { return location == 0; }
  virtual void begin_location(uint16_t /*location*/) {}
  virtual void on_event(const trace::Event& e, int32_t node) = 0;
  // An observer whose on_event only hands the event to a TimelineBuilder returns it (asked
  // after begin_location): build_profile then gives the events to the builder itself, without
  // a virtual call per event, and calls on_events(n) after each chunk's n events instead.
  virtual engine::TimelineBuilder* builder() { return nullptr; }
  virtual void on_events(uint64_t /*n*/) {}
};

// Forward pass over every location of `store`; `definitions` are the traced rank's (regions,
// counter names).
LocalProfile build_profile(const trace::ChunkStore& store, const defs::Definitions& definitions,
                           ProfileObserver* observer = nullptr);

struct GlobalCallpath {
  std::string path;    // region names joined by '/' from the root
  std::string region;  // the last region's name
  defs::RegionKind kind = defs::RegionKind::kUser;
  int32_t parent = -1;
  double sum[kColCount] = {};
  double min[kColCount] = {};  // over ranks that visited the call path
  double max[kColCount] = {};
  int ranks = 0;                          // ranks that visited it
  bool auto_filtered = false;             // the region was auto-filtered on some rank (compiler_hooks)
  std::vector<double> counter_inclusive;  // [counter] summed over ranks
  std::vector<double> counter_exclusive;
};

struct GlobalProfile {
  std::vector<GlobalCallpath> callpaths;              // rank 0 only
  std::vector<std::vector<double>> by_rank;           // rank 0 only: [rank][column] totals
  std::vector<std::string> counter_names;             // "PAPI_TOT_INS", ...
  std::vector<std::vector<double>> counters_by_rank;  // rank 0 only: [rank][counter] totals
};

// Collective over `comm`. Returns the unified profile on rank 0 (empty elsewhere).
// `definitions`: the ones `local` was built with (region names and kinds, counter names).
// `local_to_global`, when given, receives the global call-path id of every local node
// (on every rank), for passes that reduce their own per-call-path metrics; `n_callpaths`,
// when given, the number of global call paths (on every rank). The call trees merge up a
// binomial tree of point-to-point messages (engine/callpath_union.h), each wait up to
// `timeout_s`.
Status unify_profile(const LocalProfile& local, const defs::Definitions& definitions,
                     const clock::TickConverter& conv, const engine::Comm& comm, GlobalProfile& out,
                     std::vector<int>* local_to_global = nullptr, int* n_callpaths = nullptr,
                     double timeout_s = 600.0);

}  // namespace critpath::analyzer
