// critpath — tests/unit/analyzer/engine/window_test.cpp: cutting a run into analysis windows
// (analyzer/engine/window.h) without MPI: the scan of a hand-written trace (which MPI_COMM_WORLD
// collectives are candidates, what is in flight at each), the agreement on one rank (Group::local)
// and the greedy choice of cuts; and the wait states added window by window equal those of the
// whole timeline.
#include <catch2/catch.hpp>

#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/engine/window.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/event/event.h"
#include "tests/unit/analyzer/synthetic_trace.h"

// A namespace of this file's own: the unit tests build several files as one (unity build,
// tests/CMakeLists.txt), and its helpers share names with other files'.
namespace window_test {

using namespace critpath;
using namespace critpath::analyzer;
using trace::Event;
using trace::EventKind;

namespace {

constexpr uint32_t kBarrier = 980, kAllreduce = 981, kSend = 982, kRecv = 983, kIrecv = 984, kWait = 985,
                   kUser = 986, kPut = 987, kBcast = 988;

defs::Definitions& test_defs() {
  static defs::Definitions* d = [] {
    auto* defs = new defs::Definitions;
    using C = defs::MpiClass;
    using S = defs::MpiSync;
    test::define_mpi(*defs, kBarrier, "MPI_Barrier", C::kCollective, S::kBarrier);
    test::define_mpi(*defs, kAllreduce, "MPI_Allreduce", C::kCollective, S::kNxN);
    test::define_mpi(*defs, kBcast, "MPI_Bcast", C::kCollective, S::kOneToN);
    test::define_mpi(*defs, kSend, "MPI_Send", C::kP2p);
    test::define_mpi(*defs, kRecv, "MPI_Recv", C::kP2p);
    test::define_mpi(*defs, kIrecv, "MPI_Irecv", C::kP2p);
    test::define_mpi(*defs, kWait, "MPI_Wait", C::kP2p);
    test::define_mpi(*defs, kPut, "MPI_Put", C::kRma);
    defs->regions.define_fixed(kUser, "work", defs::RegionKind::kUser);
    return defs;
  }();
  return *d;
}

// A location's events written by hand (test::TraceWriter), with the shapes this test uses.
struct Writer : test::TraceWriter {
  void world_coll(uint32_t region, uint32_t comm = defs::kCommWorld, uint64_t bytes = 8) {
    call(region);
    add(EventKind::kCollBegin);
    Event& e = add(EventKind::kCollEnd, region);
    e.comm = comm;
    e.bytes = e.bytes_received = bytes;
    end(region);
  }
  void p2p(uint32_t region, EventKind k, uint64_t request = 0) {
    call(region);
    Event& e = add(k);
    e.comm = defs::kCommWorld;
    e.peer = 1;
    e.request = request;
    end(region);
  }
};

}  // namespace

TEST_CASE("window scan: candidates, requests and messages in flight", "[engine][window]") {
  Writer w;
  w.call(kUser);
  w.world_coll(kBarrier);          // 0: clean
  w.p2p(kSend, EventKind::kSend);  // a message out...
  w.world_coll(kAllreduce);        // 1: net +1
  w.p2p(kRecv, EventKind::kRecv);  // ...and one in
  w.world_coll(kAllreduce, 7);     // another communicator: no candidate
  w.world_coll(kBcast);            // not N x N: no candidate
  w.p2p(kIrecv, EventKind::kIrecvRequest, 42);
  w.p2p(kSend, EventKind::kSend);  // (its message, on one rank)
  w.world_coll(kBarrier);          // 2: a receive pending, net +1
  w.p2p(kWait, EventKind::kIrecv, 42);
  w.world_coll(kBarrier);                         // 3: clean
  w.world_coll(kAllreduce, defs::kCommWorld, 0);  // 4: moves no data, need not synchronize
  w.end(kUser);
  trace::ChunkStore store;
  w.store(store);
  const engine::WindowScan scan = engine::scan_windows(store, test_defs(), 2);
  REQUIRE(scan.ineligible == nullptr);
  REQUIRE(scan.at.size() == 5);
  CHECK(scan.at[0] == 5);  // user enter + the barrier's four events
  CHECK(scan.net == std::vector<int64_t>{0, 1, 1, 0, 0});
  CHECK(scan.busy == std::vector<uint8_t>{0, 0, 1, 0, 1});
  CHECK(scan.events == w.events.size());

  // One rank: the cuts are the clean candidates the target allows.
  engine::Group local = engine::Group::local();
  engine::WindowPlan plan;
  REQUIRE(engine::plan_windows(scan, local, 1, plan) == Status::kOk);
  CHECK(plan.candidates == 5);
  CHECK(plan.cuts == std::vector<uint64_t>{0, 3});
  // A window must hold at least the target: candidate 0's 5 events are too few for 6.
  REQUIRE(engine::plan_windows(scan, local, 6, plan) == Status::kOk);
  CHECK(plan.cuts == std::vector<uint64_t>{3});
  CHECK(plan.largest_window >= double(scan.at[3]));
}

TEST_CASE("window scan: one-sided communication and MPI on other threads are not cut", "[engine][window]") {
  {
    Writer w;
    w.world_coll(kBarrier);
    w.call(kPut);
    w.add(EventKind::kRmaPut).comm = 1;
    w.end(kPut);
    trace::ChunkStore store;
    w.store(store);
    const engine::WindowScan scan = engine::scan_windows(store, test_defs(), 2);
    REQUIRE(scan.ineligible != nullptr);
    engine::WindowPlan plan;
    engine::Group local = engine::Group::local();
    REQUIRE(engine::plan_windows(scan, local, 1, plan) == Status::kOk);
    CHECK(plan.cuts.empty());
    CHECK(plan.why_not.find("one-sided") != std::string::npos);
  }
  {
    Writer main, worker;
    main.world_coll(kBarrier);
    worker.p2p(kSend, EventKind::kSend);
    trace::ChunkStore store;
    main.store(store, 0);
    worker.store(store, 1);
    const engine::WindowScan scan = engine::scan_windows(store, test_defs(), 2);
    REQUIRE(scan.ineligible != nullptr);
    CHECK(std::string(scan.ineligible).find("thread") != std::string::npos);
  }
}

TEST_CASE("choose_cuts: greedy, only at clean candidates", "[engine][window]") {
  const std::vector<double> span = {4, 4, 4, 4, 4, 4};
  CHECK(engine::choose_cuts(span, {1, 1, 1, 1, 1, 1}, 8) == std::vector<uint64_t>{1, 3, 5});
  CHECK(engine::choose_cuts(span, {1, 0, 1, 0, 0, 1}, 8) == std::vector<uint64_t>{2, 5});
  CHECK(engine::choose_cuts(span, {0, 0, 0, 0, 0, 0}, 1).empty());
  CHECK(engine::choose_cuts(span, {1, 1, 1, 1, 1, 1}, 100).empty());
}

namespace {

// A window of a synthetic rank 1: a receive that waited for a late sender (node 0) and a
// barrier that waited for the last arrival (node 1), `shift` seconds into the run.
struct WindowTimeline {
  engine::Timeline t;
  engine::P2pMatch m;
  std::vector<engine::CollSync> cs;
  void append(double shift, double late) {
    engine::CallRecord recv;
    recv.enter = shift;
    recv.exit = shift + late + 0.001;
    recv.region = kRecv;
    recv.node = 0;
    t.calls.push_back(recv);
    engine::RecvRecord r;
    r.peer = 0;
    r.post_call = r.complete_call = uint32_t(t.calls.size() - 1);
    r.post_seq = t.recvs.size();
    t.recvs.push_back(r);
    m.send_enter.push_back(shift + late);
    m.send_group.push_back(0);
    m.send_pos.push_back(0);
    engine::CallRecord bar;
    bar.enter = shift + 0.5;
    bar.exit = shift + 0.5 + 2 * late + 0.001;
    bar.region = kBarrier;
    bar.node = 1;
    t.calls.push_back(bar);
    engine::CollRecord c;
    c.comm = defs::kCommWorld;
    c.kind = engine::CollKind::kBarrier;
    c.call = c.complete_call = uint32_t(t.calls.size() - 1);
    t.colls.push_back(c);
    engine::CollSync s;
    s.valid = true;
    s.comm_size = 2;
    s.my_comm_rank = 1;
    s.latest_begin = shift + 0.5 + 2 * late;
    s.latest_rank = 0;
    s.earliest_end = s.latest_begin + 0.001;
    cs.push_back(s);
  }
};

}  // namespace

TEST_CASE("wait states added window by window equal the whole timeline's", "[engine][window]") {
  const double late[3] = {0.010, 0.030, 0.020};
  WindowTimeline whole;
  passes::WaitStates by_window;
  passes::RunSync run;
  for (int w = 0; w < 3; ++w) {
    whole.append(w, late[w]);
    WindowTimeline one;
    one.append(w, late[w]);
    passes::add_wait_states(by_window, one.t, one.m, one.cs, run, test_defs(), 2, 1);
  }
  const passes::WaitStates all = passes::compute_wait_states(whole.t, whole.m, whole.cs, run, test_defs(), 2,
                                                             1);
  REQUIRE(by_window.by_node.size() == all.by_node.size());
  for (size_t n = 0; n < all.by_node.size(); ++n)
    for (int p = 0; p < passes::kPatternCount; ++p)
      CHECK(by_window.by_node[n][size_t(p)] == Approx(all.by_node[n][size_t(p)]).margin(1e-12));
  CHECK(all.by_node[0][passes::kLateSender] == Approx(0.060));
  CHECK(all.by_node[1][passes::kWaitBarrier] == Approx(0.120));
  for (int p : {int(passes::kLateSender), int(passes::kWaitBarrier)}) {
    CHECK(by_window.stats[size_t(p)].count == 3);
    CHECK(by_window.stats[size_t(p)].count == all.stats[size_t(p)].count);
    CHECK(by_window.stats[size_t(p)].max == Approx(all.stats[size_t(p)].max));
    CHECK(by_window.stats[size_t(p)].min == Approx(all.stats[size_t(p)].min));
  }
  // The records are the last window's (their call indices are its own).
  REQUIRE(by_window.records.size() == 2);
  CHECK(by_window.records[0].call == 0);
}

}  // namespace window_test
