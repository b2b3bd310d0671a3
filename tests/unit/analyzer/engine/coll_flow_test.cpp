// critpath — tests/unit/analyzer/engine/coll_flow_test.cpp: who waits for whom in a collective
// instance (engine::synchronizes, engine::coll_ready, engine::coll_flow), on synthetic records
// of one rank, and the clock-condition check that takes the same decision
// (engine::count_violations). The late member (world rank 3) begins at 2.0, after this rank
// (comm rank 1) left at 1.1: only an instance whose data flows from it to this rank makes that
// a violation.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "analyzer/engine/clc.h"
#include "analyzer/engine/exchange.h"
#include "analyzer/engine/timeline.h"

using namespace critpath::analyzer;
using engine::CollFlow;
using engine::CollKind;

namespace {

// Rank 1 of 4; rank 3 began last (2.0) and sent data unless `late_sent` is false, rank 0 sent
// too (began 1.0); every member sent and received data when `dense`.
engine::CollSync late_instance(bool late_sent = true, bool dense = true) {
  engine::CollSync s;
  s.valid = true;
  s.comm_size = 4;
  s.my_comm_rank = 1;
  s.latest_begin = 2.0;
  s.latest_rank = 3;
  s.earliest_end = 1.05;
  s.latest_sender_begin = late_sent ? 2.0 : 1.0;
  s.latest_sender_rank = late_sent ? 3 : 0;
  s.root_begin = 2.0;
  s.root_sent = 8;
  s.prefix_latest = 1.0;
  s.dense = dense;
  return s;
}

engine::CollRecord record(CollKind kind, CollFlow flow, uint64_t received = 8, int32_t root = -1) {
  engine::CollRecord c;
  c.kind = kind;
  c.flow = flow;
  c.root = root;
  c.call = c.complete_call = 0;
  c.sent = 8;
  c.received = received;
  return c;
}

// The number of clock-condition violations of one call [1.0, 1.1] completing `c`.
uint64_t violations(const engine::CollRecord& c, const engine::CollSync& s) {
  engine::Timeline t;
  engine::CallRecord call;
  call.enter = 1.0;
  call.exit = 1.1;
  t.calls.push_back(call);
  t.colls.push_back(c);
  return engine::count_violations(t, engine::P2pMatch{}, {s});
}

}  // namespace

TEST_CASE("coll_flow: pairwise and neighbourhood collectives by name", "[engine]") {
  CHECK(engine::coll_flow("MPI_Allreduce") == CollFlow::kEvery);
  CHECK(engine::coll_flow("MPI_Allgatherv") == CollFlow::kEvery);
  CHECK(engine::coll_flow("MPI_Reduce_scatter") == CollFlow::kEvery);
  CHECK(engine::coll_flow("MPI_Alltoall") == CollFlow::kEvery);
  for (const char* n : {"MPI_Alltoallv", "MPI_Ialltoallw", "MPI_Alltoallv_init"})
    CHECK(engine::coll_flow(n) == CollFlow::kPairwise);
  for (const char* n : {"MPI_Neighbor_allgather", "MPI_Ineighbor_alltoallv", "MPI_Neighbor_alltoall_init"})
    CHECK(engine::coll_flow(n) == CollFlow::kNeighbor);
  CHECK(engine::coll_flow(nullptr) == CollFlow::kEvery);
}

TEST_CASE("coll_ready: the late member counts only when its data reaches this rank", "[engine]") {
  const engine::CollSync s = late_instance();
  // Data from every sender to every receiver: this rank waited for rank 3; leaving before
  // it began is a violation.
  const engine::CollRecord all = record(CollKind::kNxN, CollFlow::kEvery);
  CHECK(engine::synchronizes(all, s));
  CHECK(engine::coll_ready(all, s) == 2.0);
  CHECK(violations(all, s) == 1);
  // A barrier synchronizes every member, data or none.
  const engine::CollRecord bar = record(CollKind::kBarrier, CollFlow::kEvery, 0);
  CHECK(engine::coll_ready(bar, late_instance(false, false)) == 2.0);
  CHECK(violations(bar, late_instance(false, false)) == 1);
  // This rank received nothing (its Reduce_scatter count zero): it waited for nobody.
  const engine::CollRecord none_in = record(CollKind::kNxN, CollFlow::kEvery, 0);
  CHECK(engine::synchronizes(none_in, s));  // the instance does, for the others
  CHECK(std::isnan(engine::coll_ready(none_in, s)));
  CHECK(violations(none_in, s) == 0);
  // Rank 3 sent nothing (an Allgatherv with its count zero): the latest sender is rank 0.
  CHECK(engine::coll_ready(all, late_instance(false)) == 1.0);
  CHECK(violations(all, late_instance(false)) == 0);
  // Nobody sent (every count zero): no member waits.
  engine::CollSync empty = late_instance(false, false);
  empty.latest_sender_rank = -1;
  empty.latest_sender_begin = -1e300;
  CHECK_FALSE(engine::synchronizes(all, empty));
  CHECK(violations(all, empty) == 0);
}

TEST_CASE("coll_ready: no decision where the byte totals do not name the senders", "[engine]") {
  const engine::CollSync s = late_instance();
  // An intercommunicator's data comes from the remote group, never from the local one over
  // which the instance was synchronized; neighbours are unknown; both for every kind.
  for (CollFlow f : {CollFlow::kRemote, CollFlow::kNeighbor})
    for (CollKind k :
         {CollKind::kBarrier, CollKind::kNxN, CollKind::kOneToN, CollKind::kNToOne, CollKind::kScan}) {
      const engine::CollRecord c = record(k, f, 8, k == CollKind::kOneToN || k == CollKind::kNToOne ? 1 : -1);
      CHECK_FALSE(engine::synchronizes(c, s));
      CHECK(std::isnan(engine::coll_ready(c, s)));
      CHECK(violations(c, s) == 0);
    }
  // Alltoallv/w: when every member sent and received data, as an all-to-all; when some member
  // sent or received nothing (zero counts), its counts may be the late member's: no decision.
  const engine::CollRecord v = record(CollKind::kNxN, CollFlow::kPairwise);
  CHECK(engine::coll_ready(v, s) == 2.0);
  CHECK(violations(v, s) == 1);
  CHECK_FALSE(engine::synchronizes(v, late_instance(true, false)));
  CHECK(violations(v, late_instance(true, false)) == 0);
  // Every member sent and received, but this rank's block from some member is empty (rank i
  // sends to rank i+1 only): the late member's data may not have reached it. The instance
  // still synchronizes the others.
  engine::CollRecord gap = v;
  gap.some_block_empty = true;
  CHECK(engine::synchronizes(gap, s));
  CHECK(std::isnan(engine::coll_ready(gap, s)));
  CHECK(violations(gap, s) == 0);
}

TEST_CASE("coll_ready: rooted collectives and scans", "[engine]") {
  const engine::CollSync s = late_instance();
  // 1 -> N: a member waits for the root when it received data; the root waits for nobody.
  CHECK(engine::coll_ready(record(CollKind::kOneToN, CollFlow::kEvery, 8, 3), s) == 2.0);
  CHECK(std::isnan(engine::coll_ready(record(CollKind::kOneToN, CollFlow::kEvery, 0, 3), s)));
  CHECK(std::isnan(engine::coll_ready(record(CollKind::kOneToN, CollFlow::kEvery, 8, 1), s)));
  // N -> 1: the root waits for the latest sender; the others for nobody.
  CHECK(engine::coll_ready(record(CollKind::kNToOne, CollFlow::kEvery, 8, 1), s) == 2.0);
  CHECK(std::isnan(engine::coll_ready(record(CollKind::kNToOne, CollFlow::kEvery, 0, 3), s)));
  // A scan: members 0..me only (rank 3 is after this rank); Exscan's rank 0 receives nothing.
  CHECK(engine::coll_ready(record(CollKind::kScan, CollFlow::kEvery), s) == 1.0);
  CHECK(violations(record(CollKind::kScan, CollFlow::kEvery), s) == 0);
  CHECK(std::isnan(engine::coll_ready(record(CollKind::kScan, CollFlow::kEvery, 0), s)));
}
