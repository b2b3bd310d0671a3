// critpath — analyzer/passes/wait_states.h
//
// The wait-state search: after the exchange (replay/exchange.h) each rank knows, for every
// message and collective instance it took part in, the remote times it needs, so the
// patterns are computed locally in one pass over its Timeline. Definitions follow Scalasca
// 2.6 (../shared/reference/scalasca-definitions.md §1.2–1.3); docs/metrics.md states each
// one exactly, with critpath's extensions (Alltoallv/w and Allgatherv as N×N, nonblocking
// collectives waited for in their completion call).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/replay/exchange.h"
#include "analyzer/replay/timeline.h"

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
  kPatternCount
};

struct PatternDef {
  const char* id;           // metric id in report.json
  const char* title;        // summary.txt row name
  const char* description;  // one line (docs/metrics.md has the exact definition)
};
const PatternDef& pattern_def(int p);

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
  void add(double v, int32_t node, int32_t rank);
};

// Run-wide facts the patterns of MPI_Init and MPI_Finalize need (reduced over the world).
struct RunSync {
  double latest_init_enter = 0;
  double earliest_init_exit = 0;
  double latest_finalize_enter = 0;
};

struct WaitStates {
  // [local call-path node][pattern], seconds.
  std::vector<std::array<double, kPatternCount>> by_node;
  std::array<PatternStats, kPatternCount> stats;
  uint64_t p2p_clock_violations = 0;
  uint64_t coll_clock_violations = 0;
};

WaitStates compute_wait_states(const replay::Timeline& t, const replay::P2pMatch& m,
                               const std::vector<replay::CollSync>& cs, const RunSync& run,
                               size_t nodes, int32_t my_rank);

}  // namespace critpath::analyzer::passes
