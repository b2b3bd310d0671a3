// critpath — analyzer/passes/delay/delay.h
//
// Root causes of waiting time: the delay analysis of [Böhme2010] §IV (Böhme et al.), with
// Scalasca 2.6's cost model ([Scalasca2.6]; docs/references.md). A wait state v on rank W is
// caused by rank C arriving late at their synchronization; the *delay* is what C did more
// than W since the two last synchronized:
//
//   t_W, t_C   time per call path on each side, from their previous synchronization point to
//              the wait (W) / to the causing call (C), waiting time excluded
//   d          = max(0, t_C - t_W) per call path (the delay vector)
//   w_C        C's own wait states in its interval (amounts a_u)
//   D          = sum(d) + sum(a_u);   scale = min(1, a_v / D)
//   short-term cost of C's call paths   += scale * d          (the direct wait v)
//   u's propagated cost r_u             += scale * a_u + r_v * a_u / D
//   long-term cost of C's call paths    += r_v * d / D        (waits further downstream)
//
// r_v (the cost that later waits put on v) flows backward, from effect to cause: a backward
// replay over the wait instances. The local parts (intervals, vectors, d, scale) are computed
// in parallel with one exchange W -> C and one reply; the backward propagation of r, a
// chain across ranks as long as the run's dependency chains, runs as a distributed backward
// replay (engine/mailbox.h): each rank holds only its own waits and those it caused, r_u
// travels to u's causer once every later wait whose interval holds u has told its r_v. Nothing
// converges on rank 0, and the rounds are the two exchanges and the Mailbox's closing one,
// whatever the number of ranks or phases. A testing aid (DelayReplay::kGathered) solves the
// instances' graph on rank 0 instead, in reverse topological order, in batches of whole phases
// between global synchronizations (at most DelayInput::batch_limit instances each, unless a
// single phase holds more), latest first.
//
// Invariant: total short-term + long-term cost + remainder = the waiting time analysed (late
// sender, late receiver, wait at barrier / N x N, late broadcast, early reduce, and the
// one-sided patterns but their parts Late Complete and Early Fence). The
// remainder is the waiting the model cannot explain (D < a_v, an unresolved cause, waits of
// threads other than the main one).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/metric_store.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/passes/rma/rma.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::passes {

// Wait-state families whose delays are costed, in metric order (delay_metrics.cpp).
enum DelayFamily : int {
  kDelayLateSender = 0,
  kDelayLateReceiver,
  kDelayBarrier,
  kDelayNxN,
  kDelayLateBroadcast,
  kDelayEarlyReduce,
  kDelayRma,  // the one-sided patterns (analyzer/passes/rma), their top-level ones
  kDelayFamilies
};

// Wait instances per batch of the gathered propagation on rank 0 (~60 B each there).
constexpr uint64_t kDelayGraphLimit = uint64_t(1) << 22;

// Where step 4, the backward propagation of the costs, runs (CRITPATH_DEBUG_DELAY_REPLAY):
// distributed as a backward replay over the ranks (engine/mailbox.h; each rank holds only its
// own waits, whatever the length of a phase, and pays a message latency per dependency that
// crosses ranks), or gathered on rank 0 in batches of phases (a sequential pass over the
// instances' graph). The same costs either way, to the order of the sums. kAuto replays
// distributed above kDelayGatherRanks ranks or when one batch would hold more than
// kDelayGatherMax wait instances, and gathers otherwise: a long chain of dependencies across
// few ranks (a token ring: one message latency per hop) is ~100x faster gathered, and at most
// 64 ranks' graphs keep rank 0 within ~1.5x the others' memory (the 4-rank chain benchmark).
enum class DelayReplay : uint8_t { kAuto = 0, kGathered, kDistributed };
constexpr int kDelayGatherRanks = 64;
constexpr uint64_t kDelayGatherMax = uint64_t(1) << 24;  // ~1 GiB on rank 0

struct DelayInput {
  const engine::Timeline* timeline = nullptr;
  const engine::P2pMatch* match = nullptr;
  const std::vector<engine::CollSync>* csync = nullptr;
  const WaitStates* waits = nullptr;
  const std::vector<RmaWait>* rma = nullptr;  // the one-sided waits (RmaResult::waits), or none
  const defs::Definitions* definitions = nullptr;
  const std::vector<int>* local_to_global = nullptr;  // local node -> global call path
  int n_callpaths = 0;
  int32_t my_rank = 0;
  uint64_t batch_limit = kDelayGraphLimit;  // wait instances per batch of the gathered propagation
  DelayReplay replay = DelayReplay::kAuto;
  double timeout_s = 60;  // the distributed propagation gives up after this
};

struct DelayResult {
  double analysed_s = 0;         // this rank's waiting time of the costed families
  double remainder_s = 0;        // booked on this rank: waiting time the model left unexplained
  uint64_t instances = 0;        // this rank's wait instances
  uint64_t bytes_sent = 0;       // analysis payload this rank sent
  uint64_t graph_instances = 0;  // wait instances of all ranks (gathered propagation only)
  uint32_t batches = 0;          // rounds of the gathered propagation on rank 0
  uint64_t largest_batch = 0;    // wait instances in the largest (rank 0's memory bound)
  bool distributed = false;      // step 4 ran as a distributed backward replay (DelayReplay)
  uint64_t replay_batches = 0;   // its mailbox batches this rank posted
};

// The cost model's pieces, exposed for unit tests:
// d = max(0, tc - tw) per call path (both sorted by call path) appended to `d`; returns sum(d).
// Inline: once per wait, mostly with tw empty (then d is tc's positive entries).
[[gnu::always_inline]] inline double delay_vector(const std::vector<std::pair<uint32_t, double>>& tc,
                                                  const std::vector<std::pair<uint32_t, double>>& tw,
                                                  std::vector<std::pair<uint32_t, double>>& d) {
  double sum = 0;
  if (tw.empty()) {  // no search in tw: d is tc's positive entries
    for (const auto& x : tc)
      if (x.second > 0) {
        d.push_back(x);
        sum += x.second;
      }
    return sum;
  }
  size_t k = 0;
  for (const auto& [g, c] : tc) {
    while (k < tw.size() && tw[k].first < g) ++k;
    const double w = k < tw.size() && tw[k].first == g ? tw[k].second : 0.0;
    if (c - w > 0) {
      d.push_back({g, c - w});
      sum += c - w;
    }
  }
  return sum;
}
// std::lower_bound(v, k) (v ascending), searched by galloping from `hint` (the previous
// answer, updated): the calls the delay analysis asks about mostly ascend, so a search touches
// a few neighbouring entries where a binary search over millions would miss the cache at
// every step.
size_t lower_bound_from(const std::vector<uint32_t>& v, uint32_t k, size_t& hint);
// The backward propagation over N wait instances (N < 2^32): r (in: each one's base, scale_v *
// a_u summed; out: its propagated cost r_u = base_u + sum over consumers v of coef * r_v).
// Caused record c belongs to wait v_of[c] (none: N or more) and holds the edges
// e_list[e_begin[c] .. e_begin[c + 1]) = (u, a_u / D_v); indeg[u] = the number of edges into u
// (consumed). done[x] = 0 for waits on a cycle. The coefficients travel in single precision.
struct CostEdge {
  uint32_t u;
  float coef;
};
void propagate_costs(std::vector<double>& r, const std::vector<uint32_t>& v_of,
                     const std::vector<uint32_t>& e_begin, const std::vector<CostEdge>& e_list,
                     std::vector<uint32_t>& indeg, std::vector<uint8_t>& done);

// Collective over `group`. Books the delay metrics (delay_metrics.cpp) into `store`, whose
// call paths are the global ones.
Status compute_delay(const DelayInput& in, const engine::Group& group, engine::MetricStore& store,
                     DelayResult& out);

}  // namespace critpath::analyzer::passes
