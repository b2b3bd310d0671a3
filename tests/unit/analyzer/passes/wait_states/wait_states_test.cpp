// critpath — tests/unit/analyzer/passes/wait_states/wait_states_test.cpp: every wait-state pattern
// on synthetic timelines, without MPI: the timeline, the matched remote times (what the engine's
// exchange delivers) and the collective synchronization are written by hand with known answers.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "libtrace/defs/definitions.h"

// A namespace of this file's own: the unit tests build several files as one (unity build,
// tests/CMakeLists.txt), and its helpers share names with other files'.
namespace wait_states_test {

using namespace critpath;
using namespace critpath::analyzer;
using engine::CollKind;
using passes::WaitStates;

namespace {

// Region ids far above the generated MPI table's, with the semantics the spec gives them.
constexpr uint32_t kRecv = 990, kSsend = 991, kTest = 992, kBarrier = 993, kColl = 994, kInit = 995,
                   kFinalize = 996, kWaitall = 997;

// The test's own definitions, not the process-wide ones: the pass reads only what it is given.
defs::Definitions& test_defs() {
  static defs::Definitions* d = new defs::Definitions;
  return *d;
}

void define_regions() {
  using defs::MpiClass;
  using defs::MpiCompletion;
  using defs::MpiLifecycle;
  auto def = [](uint32_t id, const char* name, MpiClass c, MpiCompletion comp = MpiCompletion::kNone,
                MpiLifecycle life = MpiLifecycle::kNone) {
    defs::MpiSemantics s;
    s.cls = c;
    s.completion = comp;
    s.lifecycle = life;
    test_defs().regions.define_fixed(id, name, defs::RegionKind::kMpi, s);
  };
  def(kRecv, "MPI_Recv", MpiClass::kP2p);
  def(kSsend, "MPI_Ssend", MpiClass::kP2p);
  def(kTest, "MPI_Test", MpiClass::kP2p, MpiCompletion::kTest);
  def(kWaitall, "MPI_Waitall", MpiClass::kP2p, MpiCompletion::kWait);
  def(kBarrier, "MPI_Barrier", MpiClass::kCollective);
  def(kColl, "MPI_Bcast", MpiClass::kCollective);
  def(kInit, "MPI_Init", MpiClass::kManagement, MpiCompletion::kNone, MpiLifecycle::kInit);
  def(kFinalize, "MPI_Finalize", MpiClass::kManagement, MpiCompletion::kNone, MpiLifecycle::kFinalize);
}

// A timeline under construction; call i is booked to call-path node i.
struct Synth {
  engine::Timeline t;
  engine::P2pMatch m;
  std::vector<engine::CollSync> cs;
  passes::RunSync run;
  uint32_t call(uint32_t region, double enter, double exit) {
    engine::CallRecord c;
    c.enter = enter;
    c.exit = exit;
    c.region = region;
    c.node = int32_t(t.calls.size());
    t.calls.push_back(c);
    return uint32_t(t.calls.size() - 1);
  }
  // A receive from `peer` completed in `call`, whose matching send began at `send_enter`.
  void recv(uint32_t call, int32_t peer, double send_enter) {
    engine::RecvRecord r;
    r.peer = peer;
    r.post_call = r.complete_call = call;
    r.post_seq = t.recvs.size();
    t.recvs.push_back(r);
    m.send_enter.push_back(send_enter);
    m.send_group.push_back(0);
    m.send_pos.push_back(0);
  }
  void send(uint32_t call, int32_t peer, double recv_post_enter) {
    engine::SendRecord s;
    s.peer = peer;
    s.call = s.complete_call = call;
    t.sends.push_back(s);
    m.recv_post_enter.push_back(recv_post_enter);
    m.group.push_back(0);
    m.pos.push_back(0);
  }
  void coll(uint32_t call, CollKind kind, int32_t root, const engine::CollSync& sync, uint64_t sent = 8,
            uint64_t received = 8) {
    engine::CollRecord c;
    c.comm = defs::kCommWorld;
    c.kind = kind;
    c.root = root;
    c.call = c.complete_call = call;
    c.sent = sent;
    c.received = received;
    t.colls.push_back(c);
    cs.push_back(sync);
  }
  WaitStates run_pass(int32_t me = 1) {
    return passes::compute_wait_states(t, m, cs, run, test_defs(), t.calls.size(), me);
  }
};

double at(const WaitStates& w, uint32_t node, int pattern) { return w.by_node[node][size_t(pattern)]; }

// An instance in which rank 0 sent data (it synchronizes; engine::synchronizes).
engine::CollSync sync_of(int size, int me) {
  engine::CollSync s;
  s.valid = true;
  s.comm_size = size;
  s.my_comm_rank = me;
  s.latest_sender_rank = 0;
  return s;
}

// Rank 1's view of a barrier of 4 whose last member, rank 3, arrived at `latest` and whose
// first member left at `earliest_end`.
engine::CollSync barrier_of_4(double latest, double earliest_end) {
  engine::CollSync y = sync_of(4, 1);
  y.latest_begin = latest;
  y.latest_rank = 3;
  y.earliest_end = earliest_end;
  return y;
}

}  // namespace

TEST_CASE("late sender: the receive waits until the send begins", "[passes]") {
  define_regions();
  Synth s;
  const uint32_t c = s.call(kRecv, 1.0, 1.3);
  s.recv(c, 0, 1.2);
  const WaitStates w = s.run_pass();
  CHECK(at(w, c, passes::kLateSender) == Approx(0.2));
  CHECK(w.stats[passes::kLateSender].count == 1);
  REQUIRE(w.records.size() == 1);
  CHECK(w.records[0].cause_rank == 0);
  CHECK(w.records[0].wait_end == Approx(1.2));
  // The send began after the receive ended: a clock-condition violation, cut at the exit.
  Synth v;
  const uint32_t c2 = v.call(kRecv, 1.0, 1.3);
  v.recv(c2, 0, 1.5);
  const WaitStates wv = v.run_pass();
  CHECK(at(wv, c2, passes::kLateSender) == Approx(0.3));
  CHECK(wv.p2p_clock_violations == 1);
}

TEST_CASE("late sender: MPI_Test completions are skipped, Waitall counts its largest wait", "[passes]") {
  define_regions();
  Synth s;
  const uint32_t t = s.call(kTest, 1.0, 1.3);
  s.recv(t, 0, 1.2);
  const uint32_t w = s.call(kWaitall, 2.0, 2.5);
  s.recv(w, 0, 2.1);
  s.recv(w, 2, 2.4);
  const WaitStates ws = s.run_pass();
  // Only the given definitions say that kTest is an MPI_Test: the process-wide ones don't.
  REQUIRE(defs::regions().mpi(kTest) == defs::MpiSemantics{});
  CHECK(at(ws, t, passes::kLateSender) == 0.0);
  CHECK(at(ws, w, passes::kLateSender) == Approx(0.4));
  CHECK(ws.stats[passes::kLateSender].count == 1);
}

TEST_CASE("late sender, wrong order: a later receive got a message sent earlier", "[passes]") {
  define_regions();
  Synth s;
  const uint32_t a = s.call(kRecv, 1.0, 1.5);
  s.recv(a, 0, 1.4);  // waits 0.4 for a message sent at 1.4
  const uint32_t b = s.call(kRecv, 1.6, 1.7);
  s.recv(b, 0, 1.1);  // ...though this one was sent at 1.1
  const WaitStates w = s.run_pass();
  CHECK(at(w, a, passes::kLateSender) == Approx(0.4));
  CHECK(at(w, a, passes::kLateSenderWrongOrder) == Approx(0.4));
  CHECK(at(w, a, passes::kLateSenderWrongOrderSameSource) == Approx(0.4));
  CHECK(at(w, a, passes::kLateSenderWrongOrderDifferentSource) == 0.0);
}

TEST_CASE("late sender, wrong order: only the last 100 late senders are compared", "[passes]") {
  define_regions();
  // 5,000 late senders (more than the window's compaction interval), then a receive of a
  // message sent before the last 101 of them: the last 100 are wrong-order instances, the
  // one before them is out of the window.
  Synth s;
  constexpr uint32_t kN = 5000;
  for (uint32_t i = 0; i < kN; ++i) {
    const double t0 = 10.0 * i;
    s.recv(s.call(kRecv, t0, t0 + 2), 0, t0 + 1);  // waits 1 s
  }
  const uint32_t last = s.call(kRecv, 10.0 * kN, 10.0 * kN + 1);
  s.recv(last, 0, 10.0 * (kN - 101) + 1.5);
  const WaitStates w = s.run_pass();
  CHECK(w.stats[passes::kLateSender].count == kN);
  CHECK(w.stats[passes::kLateSenderWrongOrder].count == 100);
  CHECK(at(w, kN - 101, passes::kLateSenderWrongOrder) == 0.0);
  CHECK(at(w, kN - 100, passes::kLateSenderWrongOrder) == Approx(1.0));
  CHECK(at(w, kN - 1, passes::kLateSenderWrongOrder) == Approx(1.0));
}

TEST_CASE("late receiver: a synchronous send waits for the receive to be posted", "[passes]") {
  define_regions();
  Synth s;
  const uint32_t c = s.call(kSsend, 1.0, 1.5);
  s.send(c, 2, 1.4);
  const uint32_t buffered = s.call(kSsend, 2.0, 2.1);
  s.send(buffered, 2, 2.5);  // ended before the receive was posted: buffered, no wait
  const WaitStates w = s.run_pass();
  CHECK(at(w, c, passes::kLateReceiver) == Approx(0.4));
  CHECK(at(w, buffered, passes::kLateReceiver) == 0.0);
}

TEST_CASE("barrier and N x N: wait for the last, completion after the first left", "[passes]") {
  define_regions();
  Synth s;
  const engine::CollSync y = barrier_of_4(2.0, 2.05);
  const uint32_t b = s.call(kBarrier, 1.5, 2.1);
  s.coll(b, CollKind::kBarrier, -1, y);
  const uint32_t n = s.call(kColl, 3.0, 3.6);
  engine::CollSync z = y;
  z.latest_begin = z.latest_sender_begin = 3.25;  // every member sent: the latest is a sender
  z.latest_sender_rank = 3;
  z.earliest_end = 3.5;
  s.coll(n, CollKind::kNxN, -1, z);
  const WaitStates w = s.run_pass();
  CHECK(at(w, b, passes::kWaitBarrier) == Approx(0.5));
  CHECK(at(w, b, passes::kBarrierCompletion) == Approx(0.05));
  CHECK(at(w, n, passes::kWaitNxN) == Approx(0.25));
  CHECK(at(w, n, passes::kNxNCompletion) == Approx(0.1));
}

// All counts zero (no rank sent anything): MPI lets every rank leave at once, so a late
// rank entering after this one left is no clock-condition violation and nobody waited.
TEST_CASE("collectives without data do not synchronize (barriers do)", "[passes]") {
  define_regions();
  Synth s;
  engine::CollSync none = sync_of(4, 1);
  none.latest_sender_rank = -1;
  none.latest_begin = 1.5;  // after this rank's exit: would be a violation
  none.latest_rank = 3;
  none.earliest_end = 1.05;
  none.prefix_latest = 1.5;
  const uint32_t n = s.call(kColl, 1.0, 1.1);
  s.coll(n, CollKind::kNxN, -1, none, 0, 0);
  const uint32_t sc = s.call(kColl, 1.2, 1.3);
  s.coll(sc, CollKind::kScan, -1, none, 0, 0);
  const uint32_t bc = s.call(kColl, 1.4, 1.45);
  engine::CollSync bcast = none;
  bcast.root_begin = 1.5;
  s.coll(bc, CollKind::kOneToN, 0, bcast, 0, 0);
  const WaitStates w = s.run_pass();
  CHECK(w.coll_clock_violations == 0);
  for (uint32_t call : {n, sc, bc})
    for (int p : {passes::kWaitNxN, passes::kNxNCompletion, passes::kEarlyScan, passes::kLateBroadcast})
      CHECK(at(w, call, p) == 0.0);
  CHECK(w.records.empty());
  // A barrier moves no data either, and synchronizes.
  Synth b;
  const uint32_t c = b.call(kBarrier, 1.0, 1.1);
  b.coll(c, CollKind::kBarrier, -1, none, 0, 0);
  const WaitStates wb = b.run_pass();
  CHECK(wb.coll_clock_violations == 1);
  CHECK(at(wb, c, passes::kWaitBarrier) == Approx(0.1));
}

TEST_CASE("rooted collectives: late broadcast, early reduce, early scan", "[passes]") {
  define_regions();
  Synth s;
  engine::CollSync bc = sync_of(3, 1);
  bc.root_begin = 1.3;
  bc.root_sent = 8;
  const uint32_t b = s.call(kColl, 1.0, 1.4);
  s.coll(b, CollKind::kOneToN, 0, bc);
  engine::CollSync rd = sync_of(3, 0);  // this rank is the root
  rd.latest_sender_begin = 2.25;
  rd.latest_sender_rank = 2;
  const uint32_t r = s.call(kColl, 2.0, 2.3);
  s.coll(r, CollKind::kNToOne, 0, rd);
  engine::CollSync sc = sync_of(3, 1);
  sc.prefix_latest = 3.1;
  sc.latest_begin = 3.1;
  sc.latest_rank = 0;
  const uint32_t c = s.call(kColl, 3.0, 3.2);
  s.coll(c, CollKind::kScan, -1, sc);
  // The root of a broadcast does not wait for itself.
  engine::CollSync own = sync_of(3, 0);
  own.root_begin = 4.0;
  own.root_sent = 8;
  const uint32_t o = s.call(kColl, 4.0, 4.2);
  s.coll(o, CollKind::kOneToN, 0, own);
  const WaitStates w = s.run_pass();
  CHECK(at(w, b, passes::kLateBroadcast) == Approx(0.3));
  CHECK(at(w, r, passes::kEarlyReduce) == Approx(0.25));
  CHECK(at(w, c, passes::kEarlyScan) == Approx(0.1));
  CHECK(at(w, o, passes::kLateBroadcast) == 0.0);
}

TEST_CASE("MPI_Init completion and wait at MPI_Finalize", "[passes]") {
  define_regions();
  Synth s;
  s.t.init_call = s.call(kInit, 0.0, 1.0);
  s.t.finalize_call = s.call(kFinalize, 5.0, 5.0);
  s.run.latest_init_enter = 0.2;
  s.run.earliest_init_exit = 0.7;
  s.run.latest_finalize_enter = 5.75;
  const WaitStates w = s.run_pass();
  CHECK(at(w, s.t.init_call, passes::kInitCompletion) == Approx(0.3));
  CHECK(at(w, s.t.finalize_call, passes::kWaitFinalize) == Approx(0.75));
}

TEST_CASE("wait records: in call order, one per call, whatever order the patterns book them in", "[passes]") {
  define_regions();
  Synth s;
  const engine::CollSync y = barrier_of_4(0.9, 0.95);
  const uint32_t b = s.call(kBarrier, 0.5, 1.0);  // waits 0.4 for rank 3, then 0.05 to complete
  s.coll(b, CollKind::kBarrier, -1, y);
  const uint32_t ss1 = s.call(kSsend, 1.0, 1.5);  // late receiver (booked after every late sender)
  s.send(ss1, 2, 1.4);
  const uint32_t r1 = s.call(kRecv, 2.0, 2.5);  // late sender
  s.recv(r1, 0, 2.2);
  const uint32_t ss2 = s.call(kSsend, 3.0, 3.5);  // late receiver
  s.send(ss2, 2, 3.1);
  const uint32_t r2 = s.call(kRecv, 4.0, 4.5);  // late sender and a late receiver in one call:
  s.recv(r2, 0, 4.3);                           // only the late sender is booked
  s.send(r2, 2, 4.4);
  const WaitStates w = s.run_pass();
  REQUIRE(w.records.size() == 5);
  const uint32_t calls[5] = {b, ss1, r1, ss2, r2};
  const double ends[5] = {0.9, 1.4, 2.2, 3.1, 4.3};
  const int32_t causes[5] = {3, 2, 0, 2, 0};
  for (size_t i = 0; i < 5; ++i) {
    CHECK(w.records[i].call == calls[i]);
    CHECK(w.records[i].wait_end == Approx(ends[i]));
    CHECK(w.records[i].cause_rank == causes[i]);
  }
  CHECK(w.records[0].completion_begin == Approx(0.95));
  CHECK(w.records[1].completion_begin == Approx(1.5));
}

}  // namespace wait_states_test
