// critpath — tests/unit/analyzer/passes/rma/rma_test.cpp: the one-sided wait states
// (analyzer/passes/rma) on synthetic timelines of several ranks, without MPI: each rank's RmaSearch
// makes its notes, the test routes them as the engine's alltoallv would, and the booked values are
// compared with known answers — including each Late Post variant (blocking Win_start, blocking
// Win_complete, blocking RMA operation) that a real MPI library shows only one of.
#include <catch2/catch.hpp>

#include <map>
#include <memory>

#include "analyzer/engine/timeline.h"
#include "analyzer/passes/rma/rma.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "libtrace/defs/definitions.h"

using namespace critpath;
using namespace critpath::analyzer;
using defs::MpiRma;
using passes::RmaNote;
using passes::RmaSearch;
using passes::WaitStates;

namespace {

constexpr uint32_t kWin = 7;

// Regions with the spec's rma roles, far above the generated MPI table's ids.
uint32_t region_of(MpiRma role) { return 900 + uint32_t(role); }

defs::Definitions& rma_defs(int P) {
  static std::map<int, std::unique_ptr<defs::Definitions>> all;
  auto& d = all[P];
  if (d) return *d;
  d = std::make_unique<defs::Definitions>();
  for (int r = int(MpiRma::kComm); r <= int(MpiRma::kOther); ++r) {
    defs::MpiSemantics s;
    s.cls = defs::MpiClass::kRma;
    s.rma = MpiRma(r);
    d->regions.define_fixed(region_of(MpiRma(r)), "MPI_Win_x" + std::to_string(r), defs::RegionKind::kMpi, s);
  }
  defs::WindowDef w;
  w.id = kWin;
  w.comm = defs::kCommWorld;
  for (int r = 0; r < P; ++r) w.members.push_back(r);
  w.created_by = "MPI_Win_allocate";
  d->windows.define(std::move(w));
  return *d;
}

// One rank's timeline under construction: call i is call-path node i.
struct Rank {
  engine::Timeline t;
  std::vector<engine::CollSync> wsync;
  uint32_t call(MpiRma role, double enter, double exit, std::vector<int32_t> peers = {-1},
                engine::RmaRecord::Op op = engine::RmaRecord::kSync, uint8_t lock = 0) {
    engine::CallRecord c;
    c.enter = enter;
    c.exit = exit;
    c.region = region_of(role);
    c.node = int32_t(t.calls.size());
    t.calls.push_back(c);
    const uint32_t idx = uint32_t(t.calls.size() - 1);
    for (int32_t p : peers) {
      engine::RmaRecord r;
      r.call = idx;
      r.win = kWin;
      r.peer = p;
      r.kind = role;
      r.op = op;
      r.lock = lock;
      r.bytes = 32;
      t.rma.push_back(r);
    }
    return idx;
  }
  uint32_t put(int32_t target, double enter, double exit) {
    return call(MpiRma::kComm, enter, exit, {target}, engine::RmaRecord::kPut);
  }
  // A window collective (fence) whose synchronization the engine computed as `s`.
  uint32_t fence(double enter, double exit, const engine::CollSync& s) {
    const uint32_t c = call(MpiRma::kFence, enter, exit);
    engine::CollRecord r;
    r.comm = kWin;
    r.op = region_of(MpiRma::kFence);
    r.call = r.complete_call = c;
    t.win_colls.push_back(r);
    wsync.push_back(s);
    return c;
  }
};

engine::CollSync sync_of(double latest, int latest_rank, double earliest_end, int P) {
  engine::CollSync s;
  s.valid = true;
  s.comm_size = P;
  s.latest_begin = latest;
  s.latest_rank = latest_rank;
  s.earliest_end = earliest_end;
  return s;
}

// Runs the search on every rank, routing the notes; returns each rank's wait states.
std::vector<WaitStates> run(std::vector<Rank>& ranks) {
  const int P = int(ranks.size());
  std::vector<std::unique_ptr<RmaSearch>> s;
  const std::vector<uint32_t> none;
  for (int r = 0; r < P; ++r)
    s.push_back(
        std::make_unique<RmaSearch>(ranks[size_t(r)].t, ranks[size_t(r)].wsync, none, rma_defs(P), r));
  auto route = [&](auto notes_of, auto deliver) {
    std::vector<std::vector<RmaNote>> inbox(static_cast<size_t>(P));
    for (int r = 0; r < P; ++r)
      for (RmaNote n : notes_of(*s[size_t(r)])) {
        const int to = n.peer;
        n.peer = r;  // the receiver sees the sender
        inbox[size_t(to)].push_back(n);
      }
    for (int r = 0; r < P; ++r) deliver(*s[size_t(r)], inbox[size_t(r)]);
  };
  route([](RmaSearch& x) { return x.outgoing(); },
        [](RmaSearch& x, const std::vector<RmaNote>& n) { x.receive(n); });
  route([](RmaSearch& x) { return x.replies(); },
        [](RmaSearch& x, const std::vector<RmaNote>& n) { x.receive_replies(n); });
  std::vector<WaitStates> out(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) {
    out[size_t(r)].by_node.assign(ranks[size_t(r)].t.calls.size(), {});
    s[size_t(r)]->book(out[size_t(r)]);
  }
  return out;
}

double at(const WaitStates& w, uint32_t call, int pattern) { return w.by_node[call][size_t(pattern)]; }

}  // namespace

TEST_CASE("Late Post: in a blocking Win_start, in Win_complete, in an RMA operation", "[rma]") {
  // Rank 1 (target) posts at 1.0; rank 0 (origin) starts at 0.2.
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<Rank> ranks(2);
    Rank& o = ranks[0];
    Rank& tg = ranks[1];
    tg.call(MpiRma::kPost, 1.0, 1.01, {0});
    const uint32_t wait = tg.call(MpiRma::kWait, 1.02, 1.6);
    uint32_t start, put, complete;
    if (variant == 0) {  // MPI blocks in Win_start until the post
      start = o.call(MpiRma::kStart, 0.2, 1.05, {1});
      put = o.put(1, 1.1, 1.11);
      complete = o.call(MpiRma::kComplete, 1.5, 1.52);
    } else if (variant == 1) {  // Win_start returns at once; Win_complete blocks
      start = o.call(MpiRma::kStart, 0.2, 0.21, {1});
      put = o.put(1, 0.3, 0.31);
      complete = o.call(MpiRma::kComplete, 0.4, 1.05);
    } else {  // the Put blocks until the post
      start = o.call(MpiRma::kStart, 0.2, 0.21, {1});
      put = o.put(1, 0.3, 1.04);
      complete = o.call(MpiRma::kComplete, 1.5, 1.52);
    }
    const auto w = run(ranks);
    INFO("variant " << variant);
    CHECK(at(w[0], start, passes::kRmaLatePost) == Approx(variant == 0 ? 0.8 : 0.0).margin(1e-9));
    CHECK(at(w[0], complete, passes::kRmaLatePost) == Approx(variant == 1 ? 0.6 : 0.0).margin(1e-9));
    CHECK(at(w[0], put, passes::kRmaEarlyTransfer) == Approx(variant == 2 ? 0.7 : 0.0).margin(1e-9));
    // The wait record hands the critical path to the target at its post.
    bool hop = false;
    for (const passes::WaitRecord& r : w[0].records)
      if (r.cause_rank == 1 && r.cause_time == Approx(1.0)) hop = true;
    CHECK(hop);
    // Early Wait at the target: the origin's Win_complete entered at 1.5 (variants 0, 2).
    CHECK(at(w[1], wait, passes::kRmaEarlyWait) == Approx(variant == 1 ? 0.0 : 0.48).margin(1e-9));
  }
}

TEST_CASE("Early Wait and Late Complete over two origins", "[rma]") {
  std::vector<Rank> ranks(3);
  Rank& tg = ranks[2];
  tg.call(MpiRma::kPost, 0.0, 0.01, {0, 1});
  const uint32_t wait = tg.call(MpiRma::kWait, 0.1, 2.0);
  ranks[0].call(MpiRma::kStart, 0.0, 0.01, {2});
  ranks[0].put(2, 0.5, 0.51);
  ranks[0].call(MpiRma::kComplete, 0.6, 0.61);
  ranks[1].call(MpiRma::kStart, 0.0, 0.01, {2});
  ranks[1].put(2, 1.0, 1.01);                   // the last operation ends at 1.01
  ranks[1].call(MpiRma::kComplete, 1.5, 1.99);  // the latest complete enters at 1.5
  const auto w = run(ranks);
  CHECK(at(w[2], wait, passes::kRmaEarlyWait) == Approx(1.4));
  CHECK(at(w[2], wait, passes::kRmaLateComplete) == Approx(1.5 - 1.01));
  // Cause: rank 1's Win_complete.
  REQUIRE(w[2].records.size() == 1);
  CHECK(w[2].records[0].cause_rank == 1);
  CHECK(w[2].records[0].cause_time == Approx(1.5));
}

TEST_CASE("Wait at Fence needs full overlap; Early Fence counts regardless", "[rma]") {
  // Three ranks; fence 0 opens, fence 1 closes the epoch in which rank 1 puts to rank 0 late.
  std::vector<Rank> ranks(3);
  const engine::CollSync open = sync_of(0.0, 0, 0.01, 3);
  for (Rank& r : ranks) r.fence(0.0, 0.01, open);
  ranks[1].put(0, 0.9, 1.0);
  // Fence 1: ranks 0, 2 enter at 0.1, rank 1 at 1.0; all leave after 1.0: synchronizing.
  const engine::CollSync close = sync_of(1.0, 1, 1.01, 3);
  const uint32_t f0 = ranks[0].fence(0.1, 1.02, close);
  ranks[1].fence(1.0, 1.02, close);
  const uint32_t f2 = ranks[2].fence(0.1, 1.02, close);
  auto w = run(ranks);
  CHECK(at(w[0], f0, passes::kRmaWaitAtFence) == Approx(0.9));
  CHECK(at(w[0], f0, passes::kRmaEarlyFence) == Approx(0.9));  // the Put to rank 0 ended at 1.0
  CHECK(at(w[2], f2, passes::kRmaWaitAtFence) == Approx(0.9));
  CHECK(at(w[2], f2, passes::kRmaEarlyFence) == Approx(0.0));
  // Without full overlap (rank 2 left before rank 1 entered) only Early Fence remains, and
  // Wait at Fence includes it.
  std::vector<Rank> partial(3);
  for (Rank& r : partial) r.fence(0.0, 0.01, open);
  partial[1].put(0, 0.5, 0.6);
  const engine::CollSync loose = sync_of(1.0, 1, 0.2, 3);
  const uint32_t g0 = partial[0].fence(0.1, 1.02, loose);
  partial[1].fence(1.0, 1.02, loose);
  partial[2].fence(0.1, 0.2, loose);
  w = run(partial);
  CHECK(at(w[0], g0, passes::kRmaEarlyFence) == Approx(0.5));
  CHECK(at(w[0], g0, passes::kRmaWaitAtFence) == Approx(0.5));
}

TEST_CASE("Lock contention: the second exclusive origin waits for the first one's unlock", "[rma]") {
  std::vector<Rank> ranks(3);  // origins 0 and 1, target 2 (inside MPI all along)
  ranks[2].call(MpiRma::kOther, 0.0, 2.0);
  ranks[0].call(MpiRma::kLock, 0.0, 0.01, {2}, engine::RmaRecord::kSync, 1);
  ranks[0].put(2, 0.02, 0.03);
  ranks[0].call(MpiRma::kUnlock, 1.2, 1.21, {2});
  const uint32_t lock1 = ranks[1].call(MpiRma::kLock, 0.2, 1.22, {2}, engine::RmaRecord::kSync, 1);
  ranks[1].put(2, 1.23, 1.24);
  ranks[1].call(MpiRma::kUnlock, 1.25, 1.26, {2});
  auto w = run(ranks);
  CHECK(at(w[1], lock1, passes::kRmaLockContention) == Approx(1.0));
  CHECK(at(w[1], lock1, passes::kRmaWaitForProgress) == Approx(0.0));
  REQUIRE(w[1].records.size() == 1);
  CHECK(w[1].records[0].cause_rank == 0);
  CHECK(w[1].records[0].cause_time == Approx(1.2));
  // Two shared locks do not contend.
  for (int o = 0; o < 2; ++o)
    for (engine::RmaRecord& r : ranks[size_t(o)].t.rma)
      if (r.kind == MpiRma::kLock) r.lock = 2;
  w = run(ranks);
  CHECK(at(w[1], lock1, passes::kRmaLockContention) == Approx(0.0));
}

TEST_CASE("Wait for progress: the target computes outside MPI", "[rma]") {
  std::vector<Rank> ranks(2);
  ranks[1].call(MpiRma::kOther, 0.0, 0.01);  // then computes until 1.0
  ranks[1].call(MpiRma::kOther, 1.0, 1.5);   // its next MPI call
  ranks[0].call(MpiRma::kLock, 0.1, 0.11, {1}, engine::RmaRecord::kSync, 2);
  ranks[0].put(1, 0.12, 0.13);
  const uint32_t unlock = ranks[0].call(MpiRma::kUnlock, 0.2, 1.05, {1});
  auto w = run(ranks);
  CHECK(at(w[0], unlock, passes::kRmaWaitForProgress) == Approx(0.8));
  CHECK(at(w[0], unlock, passes::kRmaLockContention) == Approx(0.0));
}

TEST_CASE("Unmatched PSCW epochs are noted, never guessed", "[rma]") {
  std::vector<Rank> ranks(2);
  ranks[0].call(MpiRma::kStart, 0.0, 1.0, {1});  // rank 1 never posts
  ranks[0].call(MpiRma::kComplete, 1.0, 1.1);
  const std::vector<uint32_t> none;
  RmaSearch s0(ranks[0].t, ranks[0].wsync, none, rma_defs(2), 0);
  s0.receive({});
  WaitStates w;
  w.by_node.assign(2, {});
  s0.book(w);
  CHECK(w.stats[passes::kRmaLatePost].count == 0);
  REQUIRE(s0.notes().size() == 1);
  CHECK(s0.notes()[0].find("inconsistent RMA epochs") != std::string::npos);
  // A window the engine found inconsistent is skipped with its own note.
  RmaSearch s1(ranks[0].t, ranks[0].wsync, {kWin}, rma_defs(2), 0);
  CHECK(s1.notes()[0].find("analysis skipped: inconsistent RMA epochs on window 7") != std::string::npos);
}

TEST_CASE("Lock contention in a lock_all epoch: its flush waits for an exclusive holder", "[rma]") {
  std::vector<Rank> ranks(3);
  ranks[2].call(MpiRma::kOther, 0.0, 3.0);
  ranks[0].call(MpiRma::kLock, 0.0, 0.01, {2}, engine::RmaRecord::kSync, 1);
  ranks[0].put(2, 0.02, 0.03);
  ranks[0].call(MpiRma::kUnlock, 1.5, 1.51, {2});
  ranks[1].call(MpiRma::kLockAll, 0.1, 0.11);
  ranks[1].put(2, 0.2, 0.21);
  ranks[1].put(0, 0.22, 0.23);  // another target: its own (uncontended) epoch
  const uint32_t flush = ranks[1].call(MpiRma::kFlush, 0.3, 1.52, {2});
  ranks[1].call(MpiRma::kUnlockAll, 1.6, 1.61);
  const auto w = run(ranks);
  CHECK(at(w[1], flush, passes::kRmaLockContention) == Approx(1.2));
  CHECK(w[1].stats[passes::kRmaLockContention].count == 1);
}
