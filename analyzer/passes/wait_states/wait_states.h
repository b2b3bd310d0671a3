// critpath — analyzer/passes/wait_states/wait_states.h
//
// The wait-state search: after the exchange (engine/exchange.h) each rank knows, for every
// message and collective instance it took part in, the remote times it needs, so the
// patterns are computed locally in one pass over its Timeline. Definitions follow Scalasca
// 2.6 ([Scalasca2.6]; docs/references.md); docs/metrics.md states each
// one exactly, with critpath's extensions (Alltoallv/w and Allgatherv as N×N, nonblocking
// collectives waited for in their completion call).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/results.h"
#include "analyzer/engine/timeline.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer::passes {

enum WaitPattern : int {
  kLateSender = 0,
  kLateSenderWrongOrder,
  kLateSenderWrongOrderSameSource,
  kLateSenderWrongOrderDifferentSource,
  kLateReceiver,
  kWaitBarrier,
  kBarrierCompletion,
  kWaitNxN,
  kNxNCompletion,
  kLateBroadcast,
  kEarlyReduce,
  kEarlyScan,
  kWaitFinalize,
  kInitCompletion,
  // One-sided (analyzer/passes/rma, declared in rma_metrics.cpp).
  kRmaLatePost,
  kRmaEarlyTransfer,
  kRmaEarlyWait,
  kRmaLateComplete,
  kRmaWaitAtFence,
  kRmaEarlyFence,
  kRmaWaitAtCreate,
  kRmaWaitAtFree,
  kRmaLockContention,
  kRmaWaitForProgress,
  kPatternCount
};

struct PatternDef {
  const char* id;           // metric id in report.json
  const char* title;        // summary.txt row name
  const char* description;  // one line (docs/metrics.md has the exact definition)
};
const PatternDef& pattern_def(int p);

// Whether region `region` is an MPI_Test* (completion by polling: Scalasca books no late
// sender there).
bool is_test_call(const defs::RegionTable& regions, uint32_t region);
// World rank of rank `r` of communicator `comm`; -1 when unknown.
int32_t world_rank_of(const defs::CommTable& comms, uint32_t comm, int32_t r, int32_t me);

struct Instance {
  double value = 0;
  int32_t node = -1;  // local call-path node (global call-path id after unification)
  int32_t rank = -1;
};

constexpr size_t kWorstInstances = 5;
constexpr size_t kSampleSize = 256;  // per rank and pattern, for the median

struct PatternStats {
  uint64_t count = 0;
  double sum = 0, min = 0, max = 0;
  std::vector<Instance> worst;  // largest first, at most kWorstInstances
  std::vector<double> sample;   // uniform sample of instance values (all when count <= size)
  uint64_t seen = 0;            // for reservoir sampling
  // Inline the usual instance of a long run (the worst and the sample full, and no worse than
  // the least of the worst); the others through add_slow. The same statistics either way.
  void add(double v, int32_t node, int32_t rank) {
    if (count == 0 || worst.size() < kWorstInstances || sample.size() < kSampleSize || v > worst.back().value)
      return add_slow(v, node, rank);
    min = std::min(min, v);
    max = std::max(max, v);
    ++count;
    sum += v;
    const uint64_t j = sample_slot(++seen);
    if (j < kSampleSize) sample[j] = v;
  }
  void add_slow(double v, int32_t node, int32_t rank);
  // The reservoir's slot for the `seen`-th value once it is full (kept if below kSampleSize):
  // a deterministic LCG, so that reports are reproducible.
  static uint64_t sample_slot(uint64_t seen) {
    return (seen * 6364136223846793005ull + 1442695040888963407ull) % seen;
  }
};

// Run-wide facts the patterns of MPI_Init and MPI_Finalize need (reduced over the world).
struct RunSync {
  double latest_init_enter = 0;
  double earliest_init_exit = 0;
  double latest_finalize_enter = 0;
};

// One MPI call that waited, with what ended its wait: the critical path (critical_path.h)
// leaves a rank at such a call and continues on the rank that caused the wait. A call holds
// at most two waiting intervals, [enter, wait_end] and [completion_begin, exit]; every
// pattern booked at the call lies in one of them (the wrong-order patterns are subsets).
struct WaitRecord {
  uint32_t call = engine::kNoCall;  // index in Timeline::calls
  int32_t cause_rank = -1;          // world rank whose event ended [enter, wait_end]; -1 unknown
  double wait_end = 0;              // end of the wait that began at the call's enter (= enter: none)
  double completion_begin = 0;      // start of the completion wait ending at exit (= exit: none)
  double cause_time = 0;            // that event: the enter of the causing call on cause_rank
};
static_assert(sizeof(WaitRecord) == 32, "a wait record is 32 bytes (no padding)");

struct WaitStates {
  // [local call-path node][pattern], seconds.
  std::vector<std::array<double, kPatternCount>> by_node;
  // Calls with a booked wait (Wait at Finalize excepted: it lies after the call's enter,
  // outside the measured span), by call index.
  std::vector<WaitRecord> records;
  std::array<PatternStats, kPatternCount> stats;
  uint64_t p2p_clock_violations = 0;
  uint64_t coll_clock_violations = 0;
};

// `definitions`: the traced rank's (MPI call semantics, communicator members).
WaitStates compute_wait_states(const engine::Timeline& t, const engine::P2pMatch& m,
                               const std::vector<engine::CollSync>& cs, const RunSync& run,
                               const defs::Definitions& definitions, size_t nodes, int32_t my_rank);
// The same, added to `w` (phase by phase, engine/window.h: one call per window, in window
// order): the per-node times and the statistics accumulate, `records` are the window's.
void add_wait_states(WaitStates& w, const engine::Timeline& t, const engine::P2pMatch& m,
                     const std::vector<engine::CollSync>& cs, const RunSync& run,
                     const defs::Definitions& definitions, size_t nodes, int32_t my_rank);

// The wait-state pass's result (engine/results.h): two-sided and collective patterns, with the
// one-sided ones of the rma pass merged in.
inline constexpr engine::ResultKey<WaitStates> kWaitStates{"wait_states"};

}  // namespace critpath::analyzer::passes
