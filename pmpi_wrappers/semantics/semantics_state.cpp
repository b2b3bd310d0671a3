// critpath — pmpi_wrappers/semantics/semantics_state.cpp
//
// The process-wide tracking state behind request_table.h and counters.h, plus the names of
// the collective byte rules. Everything here is constant-initialised static storage: no
// constructor runs at load time and nothing is allocated.
#include <atomic>

#include "libtrace/runtime/status.h"

#include "pmpi_wrappers/semantics/coll_bytes.h"
#include "pmpi_wrappers/semantics/counters.h"
#include "pmpi_wrappers/semantics/request_table.h"

namespace critpath::pmpi {
namespace detail {
constinit RequestTable g_requests;
constinit MessageTable g_messages;
constinit std::atomic<uint32_t> g_id_generation{1};
constinit thread_local IdBlock t_ids __attribute__((tls_model("initial-exec"))) = {0, 0, 0};
}  // namespace detail

namespace {

constinit std::atomic<uint64_t> g_next_request{1};  // first id of the next free block

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

uint64_t detail::refill_request_ids() {
  IdBlock& b = t_ids;
  b.generation = g_id_generation.load(std::memory_order_relaxed);
  b.next = g_next_request.fetch_add(kIdBlock, std::memory_order_relaxed);
  b.end = b.next + kIdBlock;
  return b.next++;
}

void reset_request_tracking() {
  detail::g_requests.clear();
  detail::g_messages.clear();
  g_next_request.store(1, std::memory_order_relaxed);
  detail::g_id_generation.fetch_add(1, std::memory_order_relaxed);
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

// Locations below kCounterSlots own their slot (one thread each): a plain load + store
// replaces the locked read-modify-write on the polling path (~20 cycles saved per failed
// test or probe). Threads past kCounterSlots share slots and keep the atomic add.
void add_to(std::atomic<uint64_t>& counter, uint16_t location, uint64_t n) {
  if (CRITPATH_LIKELY(location < kCounterSlots))
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  else counter.fetch_add(n, std::memory_order_relaxed);
}

void count_test_without_completion(uint16_t location, uint64_t ticks) {
  LocationCounters& c = g_counters[location % kCounterSlots];
  add_to(c.failed_tests, location, 1);
  add_to(c.failed_test_ticks, location, ticks);
}
void count_probe_without_message(uint16_t location) {
  add_to(g_counters[location % kCounterSlots].failed_probes, location, 1);
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
