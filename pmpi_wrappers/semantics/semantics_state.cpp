// critpath — pmpi_wrappers/semantics/semantics_state.cpp
//
// The process-wide tracking state behind request_table.h and counters.h, plus the names of
// the collective byte rules. Everything here is constant-initialised static storage: no
// constructor runs at load time and nothing is allocated.
#include <atomic>

#include "pmpi_wrappers/semantics/coll_bytes.h"
#include "pmpi_wrappers/semantics/counters.h"
#include "pmpi_wrappers/semantics/request_table.h"

namespace critpath::pmpi {
namespace {

constinit RequestTable g_requests;
constinit MessageTable g_messages;
constinit std::atomic<uint64_t> g_next_request{1};

struct alignas(64) LocationCounters {
  std::atomic<uint64_t> failed_tests{0};
  std::atomic<uint64_t> failed_test_ticks{0};
  std::atomic<uint64_t> failed_probes{0};
};
constexpr unsigned kCounterSlots = 256;
constinit LocationCounters g_counters[kCounterSlots];
constinit std::atomic<uint64_t> g_untracked_requests{0};
constinit std::atomic<uint64_t> g_unknown_comm{0};

template <class F>
uint64_t sum_slots(F field) {
  uint64_t s = 0;
  for (const LocationCounters& c : g_counters) s += field(c).load(std::memory_order_relaxed);
  return s;
}

}  // namespace

RequestTable& requests() { return g_requests; }
MessageTable& messages() { return g_messages; }

uint64_t next_request_id() { return g_next_request.fetch_add(1, std::memory_order_relaxed); }

void reset_request_tracking() {
  g_requests.clear();
  g_messages.clear();
  g_next_request.store(1, std::memory_order_relaxed);
}

uint64_t test_calls_without_completion() {
  return sum_slots([](const LocationCounters& c) -> const auto& { return c.failed_tests; });
}
uint64_t test_ticks_without_completion() {
  return sum_slots([](const LocationCounters& c) -> const auto& { return c.failed_test_ticks; });
}
uint64_t probe_calls_without_message() {
  return sum_slots([](const LocationCounters& c) -> const auto& { return c.failed_probes; });
}
uint64_t untracked_requests() { return g_untracked_requests.load(std::memory_order_relaxed); }
uint64_t unknown_comm_uses() { return g_unknown_comm.load(std::memory_order_relaxed); }

void count_test_without_completion(uint16_t location, uint64_t ticks) {
  LocationCounters& c = g_counters[location % kCounterSlots];
  c.failed_tests.fetch_add(1, std::memory_order_relaxed);
  c.failed_test_ticks.fetch_add(ticks, std::memory_order_relaxed);
}
void count_probe_without_message(uint16_t location) {
  g_counters[location % kCounterSlots].failed_probes.fetch_add(1, std::memory_order_relaxed);
}
void count_untracked_request() { g_untracked_requests.fetch_add(1, std::memory_order_relaxed); }
void count_unknown_comm() { g_unknown_comm.fetch_add(1, std::memory_order_relaxed); }

void reset_counters() {
  for (LocationCounters& c : g_counters) {
    c.failed_tests.store(0, std::memory_order_relaxed);
    c.failed_test_ticks.store(0, std::memory_order_relaxed);
    c.failed_probes.store(0, std::memory_order_relaxed);
  }
  g_untracked_requests.store(0, std::memory_order_relaxed);
  g_unknown_comm.store(0, std::memory_order_relaxed);
}

const char* to_string(CollRule r) {
  switch (r) {
    case CollRule::kBarrier: return "barrier";
    case CollRule::kBcast: return "bcast";
    case CollRule::kGather: return "gather";
    case CollRule::kGatherv: return "gatherv";
    case CollRule::kScatter: return "scatter";
    case CollRule::kScatterv: return "scatterv";
    case CollRule::kAllgather: return "allgather";
    case CollRule::kAllgatherv: return "allgatherv";
    case CollRule::kAlltoall: return "alltoall";
    case CollRule::kAlltoallv: return "alltoallv";
    case CollRule::kAlltoallw: return "alltoallw";
    case CollRule::kReduce: return "reduce";
    case CollRule::kAllreduce: return "allreduce";
    case CollRule::kReduceScatter: return "reduce_scatter";
    case CollRule::kReduceScatterBlock: return "reduce_scatter_block";
    case CollRule::kScan: return "scan";
    case CollRule::kExscan: return "exscan";
    case CollRule::kNeighborAllgather: return "neighbor_allgather";
    case CollRule::kNeighborAllgatherv: return "neighbor_allgatherv";
    case CollRule::kNeighborAlltoall: return "neighbor_alltoall";
    case CollRule::kNeighborAlltoallv: return "neighbor_alltoallv";
    case CollRule::kNeighborAlltoallw: return "neighbor_alltoallw";
    case CollRule::kNone: return "none";
  }
  return "?";
}

}  // namespace critpath::pmpi
