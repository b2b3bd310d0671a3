// critpath — tests/unit/analyzer/engine/timeline_test.cpp: engine::TimelineBuilder on hand-written
// events (no MPI): which events become calls, sends, receives and collectives, with which peers
// (world ranks through the communicator's members, an intercommunicator's remote group,
// MPI_COMM_SELF as this rank), a blocking probe as the receive's call (not where other threads
// share its tag), requests completed in a later call, threads' records in time order, and a
// window taken mid-trace.
#include <catch2/catch.hpp>

#include <vector>

#include "analyzer/engine/timeline.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/event/event.h"
#include "tests/unit/analyzer/synthetic_trace.h"

// A namespace of this file's own: the unit tests build several files as one (unity build,
// tests/CMakeLists.txt), and its helpers share names with other files'.
namespace timeline_test {

using namespace critpath;
using namespace critpath::analyzer;
using trace::Event;
using trace::EventKind;

namespace {

constexpr uint32_t kInit = 960, kFinalize = 961, kSend = 962, kIsend = 963, kRecv = 964, kIrecv = 965,
                   kWaitall = 966, kAllreduce = 967, kIbarrier = 968, kProbe = 969, kIprobe = 970;
constexpr uint32_t kPairComm = 7;   // comm rank 0 is world rank 2, comm rank 1 world rank 0
constexpr uint32_t kInterComm = 8;  // local group {3, 1}, remote group {0, 2}
constexpr int32_t kMe = 3;          // this rank in MPI_COMM_WORLD

defs::Definitions& test_defs() {
  static defs::Definitions* d = [] {
    auto* defs = new defs::Definitions;
    using C = defs::MpiClass;
    using S = defs::MpiSync;
    using L = defs::MpiLifecycle;
    test::define_mpi(*defs, kInit, "MPI_Init", C::kNone, S::kNone, L::kInit);
    test::define_mpi(*defs, kFinalize, "MPI_Finalize", C::kNone, S::kNone, L::kFinalize);
    test::define_mpi(*defs, kSend, "MPI_Send", C::kP2p);
    test::define_mpi(*defs, kIsend, "MPI_Isend", C::kP2p);
    test::define_mpi(*defs, kRecv, "MPI_Recv", C::kP2p);
    test::define_mpi(*defs, kIrecv, "MPI_Irecv", C::kP2p);
    test::define_mpi(*defs, kWaitall, "MPI_Waitall", C::kP2p);
    test::define_mpi(*defs, kAllreduce, "MPI_Allreduce", C::kCollective, S::kNxN);
    test::define_mpi(*defs, kIbarrier, "MPI_Ibarrier", C::kCollective, S::kBarrier);
    test::define_mpi(*defs, kProbe, "MPI_Probe", C::kP2p);
    test::define_mpi(*defs, kIprobe, "MPI_Iprobe", C::kP2p);
    defs::CommDef inter;
    inter.id = kInterComm;
    inter.members = {3, 1};
    inter.remote = {0, 2};
    defs->comms.define(inter);
    defs::CommDef pair;
    pair.id = kPairComm;
    pair.members = {2, 0};
    defs->comms.define(pair);
    return defs;
  }();
  return *d;
}

double to_global(uint64_t ticks) { return double(ticks) * 1e-3; }  // 1 tick = 1 ms

// Feeds `w`'s events as location `location`; the call-path node given with each event is its
// index in `w` (so a call's node tells which ENTER made it).
void feed(engine::TimelineBuilder& b, const test::TraceWriter& w, uint16_t location = 0) {
  b.begin_location(location);
  for (size_t i = 0; i < w.events.size(); ++i) b.on_event(w.events[i], int32_t(i));
}

// A message event (p2p or collective) inside its own MPI call.
Event& in_call(test::TraceWriter& w, uint32_t region, EventKind k, uint32_t comm, int32_t peer, int32_t tag,
               uint64_t bytes, uint64_t request = 0) {
  w.call(region);
  Event& e = w.add(k, k == EventKind::kCollEnd || k == EventKind::kIcollPost ? region : 0);
  e.comm = comm;
  e.peer = peer;
  e.tag = tag;
  e.bytes = bytes;
  e.request = request;
  return e;
}

}  // namespace

TEST_CASE("timeline: calls, messages and collectives of one thread", "[engine]") {
  test::TraceWriter w;        // events at 1010, 1020, ... ticks; event i's node is i
  w.call(defs::kRootRegion);  // 0: not MPI
  w.call(kInit);              // 1: call 0
  w.end(kInit);
  in_call(w, kSend, EventKind::kSend, kPairComm, 1, 5, 64);  // 3: call 1
  w.end(kSend);
  in_call(w, kIrecv, EventKind::kIrecvRequest, kPairComm, 0, 5, 0, 42);  // 6: call 2
  w.end(kIrecv);
  in_call(w, kRecv, EventKind::kRecv, defs::kCommSelf, 0, 9, 16);  // 9: call 3
  w.end(kRecv);
  in_call(w, kIsend, EventKind::kIsend, defs::kCommWorld, 2, 1, 8, 43);  // 12: call 4
  w.end(kIsend);
  w.call(kAllreduce);  // 15: call 5
  w.add(EventKind::kCollBegin);
  Event& red = w.add(EventKind::kCollEnd, kAllreduce);
  red.comm = defs::kCommWorld;
  red.root = -1;
  red.bytes = 8;
  red.bytes_received = 32;
  w.end(kAllreduce);
  in_call(w, kIbarrier, EventKind::kIcollPost, defs::kCommWorld, 0, 0, 0, 44).root = -1;  // 19
  w.end(kIbarrier);
  in_call(w, kWaitall, EventKind::kIrecv, kPairComm, 0, 5, 128, 42);  // 22: call 7
  w.add(EventKind::kIsendComplete).request = 43;
  w.add(EventKind::kIcollComplete).request = 44;
  w.end(kWaitall);
  in_call(w, kSend, EventKind::kSend, 99, 0, 0, 4);  // 27: unknown comm
  w.end(kSend);
  w.call(kFinalize);  // 30: call 9
  w.end(kFinalize);
  w.end(defs::kRootRegion);

  engine::TimelineBuilder b(to_global, kMe, test_defs());
  feed(b, w);
  const engine::Timeline t = b.finish();

  REQUIRE(t.calls.size() == 10);
  const std::vector<int32_t> nodes = {1, 3, 6, 9, 12, 15, 19, 22, 27, 30};
  for (size_t k = 0; k < nodes.size(); ++k) CHECK(t.calls[k].node == nodes[k]);
  CHECK(t.calls[0].region == kInit);
  CHECK(t.calls[0].enter == Approx(1.020));
  CHECK(t.calls[0].exit == Approx(1.030));
  CHECK(t.calls[7].region == kWaitall);
  CHECK(t.calls[7].enter == Approx(1.230));
  CHECK(t.calls[7].exit == Approx(1.270));
  CHECK(t.init_call == 0);
  CHECK(t.finalize_call == 9);
  CHECK(t.mpi_locations == 1);
  CHECK(t.unresolved_peers == 1);  // the send on communicator 99 (not recorded)

  REQUIRE(t.sends.size() == 2);
  CHECK(t.sends[0].peer == 0);  // comm rank 1 of kPairComm
  CHECK(t.sends[0].comm == kPairComm);
  CHECK(t.sends[0].tag == 5);
  CHECK(t.sends[0].call == 1);
  CHECK(t.sends[0].complete_call == 1);
  CHECK(t.sends[1].peer == 2);
  CHECK(t.sends[1].call == 4);
  CHECK(t.sends[1].complete_call == 7);  // MPI_Isend completed in the MPI_Waitall

  // Receives in completion order; post_seq is the posting order (the Irecv came first).
  REQUIRE(t.recvs.size() == 2);
  CHECK(t.recvs[0].peer == kMe);  // MPI_COMM_SELF
  CHECK(t.recvs[0].tag == 9);
  CHECK(t.recvs[0].post_call == 3);
  CHECK(t.recvs[0].complete_call == 3);
  CHECK(t.recvs[0].post_seq == 1);
  CHECK(t.recvs[1].peer == 2);  // comm rank 0 of kPairComm
  CHECK(t.recvs[1].post_call == 2);
  CHECK(t.recvs[1].complete_call == 7);
  CHECK(t.recvs[1].post_seq == 0);

  REQUIRE(t.colls.size() == 2);
  CHECK(t.colls[0].kind == engine::CollKind::kNxN);
  CHECK(t.colls[0].op == kAllreduce);
  CHECK(t.colls[0].root == -1);
  CHECK(t.colls[0].call == 5);
  CHECK(t.colls[0].complete_call == 5);
  CHECK(t.colls[0].sent == 8);
  CHECK(t.colls[0].received == 32);
  CHECK(t.colls[1].kind == engine::CollKind::kBarrier);
  CHECK(t.colls[1].call == 6);
  CHECK(t.colls[1].complete_call == 7);  // the MPI_Ibarrier completed in the MPI_Waitall
}

TEST_CASE("timeline: threads' records in time order, a window taken mid-trace", "[engine]") {
  test::TraceWriter main_thread, worker;
  main_thread.step = worker.step = 100;
  in_call(main_thread, kSend, EventKind::kSend, defs::kCommWorld, 1, 0, 8);  // enter at 1100
  main_thread.end(kSend);
  main_thread.t = 1500;
  in_call(main_thread, kSend, EventKind::kSend, defs::kCommWorld, 2, 0, 8);  // enter at 1600
  main_thread.end(kSend);
  worker.t = 1200;
  in_call(worker, kSend, EventKind::kSend, defs::kCommWorld, 3, 0, 8);  // enter at 1300
  worker.end(kSend);

  SECTION("two locations: calls location after location, sends in time order") {
    engine::TimelineBuilder b(to_global, 0, test_defs());
    feed(b, main_thread, 0);
    feed(b, worker, 1);
    const engine::Timeline t = b.finish();
    CHECK(t.mpi_locations == 2);
    REQUIRE(t.calls.size() == 3);
    CHECK(t.calls[2].location == 1);
    REQUIRE(t.sends.size() == 3);
    CHECK(t.sends[0].peer == 1);
    CHECK(t.sends[1].peer == 3);  // the worker's, between the main thread's two
    CHECK(t.sends[1].call == 2);
    CHECK(t.sends[2].peer == 2);
  }
  SECTION("take_window: the records so far, then a timeline indexed from 0") {
    engine::TimelineBuilder b(to_global, 0, test_defs());
    b.begin_location(0);
    for (size_t i = 0; i < 3; ++i) b.on_event(main_thread.events[i], 0);  // the first send's call
    const engine::Timeline first = b.take_window();
    for (size_t i = 3; i < main_thread.events.size(); ++i) b.on_event(main_thread.events[i], 0);
    const engine::Timeline second = b.finish();
    REQUIRE(first.calls.size() == 1);
    REQUIRE(first.sends.size() == 1);
    CHECK(first.sends[0].peer == 1);
    REQUIRE(second.calls.size() == 1);
    CHECK(second.calls[0].enter == Approx(1.600));
    REQUIRE(second.sends.size() == 1);
    CHECK(second.sends[0].peer == 2);
    CHECK(second.sends[0].call == 0);
    CHECK(second.mpi_locations == 1);  // carried on
  }
}

TEST_CASE("timeline: intercommunicator peers, a blocking probe waits for the receive after it", "[engine]") {
  test::TraceWriter w;
  in_call(w, kSend, EventKind::kSend, kInterComm, 0, 1, 4);  // 1: call 0, to remote rank 0
  w.end(kSend);
  w.call(kProbe);  // call 1
  w.end(kProbe);
  in_call(w, kRecv, EventKind::kRecv, kInterComm, 1, 2, 4);  // call 2: from remote rank 1
  w.end(kRecv);
  w.call(kIprobe);  // call 3: a test, not a wait
  w.end(kIprobe);
  in_call(w, kRecv, EventKind::kRecv, kPairComm, 0, 3, 4);  // call 4
  w.end(kRecv);

  engine::TimelineBuilder b(to_global, kMe, test_defs());
  feed(b, w);
  const engine::Timeline t = b.finish();
  REQUIRE(t.sends.size() == 1);
  CHECK(t.sends[0].peer == 0);  // the remote group's rank 0, not this rank (local rank 0)
  REQUIRE(t.recvs.size() == 2);
  CHECK(t.recvs[0].peer == 2);
  CHECK(t.recvs[0].post_call == 1);  // the MPI_Probe
  CHECK(t.recvs[0].complete_call == 1);
  CHECK(t.recvs[1].peer == 2);
  CHECK(t.recvs[1].post_call == 4);  // an MPI_Iprobe does not wait: the receive's own call
  CHECK(t.recvs[1].complete_call == 4);
}

TEST_CASE("timeline: a probe does not speak for a receive whose tag other threads receive too", "[engine]") {
  test::TraceWriter main_thread, worker;
  main_thread.call(kProbe);  // call 0
  main_thread.end(kProbe);
  in_call(main_thread, kRecv, EventKind::kRecv, defs::kCommWorld, 1, 7, 4);  // call 1
  main_thread.end(kRecv);
  main_thread.call(kProbe);  // call 2
  main_thread.end(kProbe);
  in_call(main_thread, kRecv, EventKind::kRecv, defs::kCommWorld, 1, 8, 4);  // call 3: tag 8
  main_thread.end(kRecv);
  in_call(worker, kRecv, EventKind::kRecv, defs::kCommWorld, 1, 7, 4);  // call 4: tag 7 too
  worker.end(kRecv);

  engine::TimelineBuilder b(to_global, 0, test_defs());
  feed(b, main_thread, 0);
  feed(b, worker, 1);
  const engine::Timeline t = b.finish();
  REQUIRE(t.recvs.size() == 3);
  CHECK(t.recvs[0].complete_call == 1);  // tag 7, shared with the worker: its own MPI_Recv
  CHECK(t.recvs[0].post_call == 1);
  CHECK(t.recvs[1].complete_call == 2);  // tag 8, this thread's alone: the probe
  CHECK(t.recvs[2].complete_call == 4);
}

TEST_CASE("timeline: a probe speaks only for the receive of the call right after it", "[engine]") {
  // As mpi.corpus.proc_null: MPI_Probe on MPI_PROC_NULL, then calls that record no receive,
  // then a receive much later: the probe is not where that receive waited (the what-if replay
  // deadlocked on such a receive, completed before what came between).
  test::TraceWriter w;
  w.call(kProbe);  // call 0
  w.end(kProbe);
  w.call(kRecv);  // call 1: from MPI_PROC_NULL, no receive record
  w.end(kRecv);
  w.call(kProbe);  // call 2
  w.end(kProbe);
  w.call(kIprobe);  // call 3
  w.end(kIprobe);
  in_call(w, kRecv, EventKind::kRecv, defs::kCommWorld, 1, 7, 4);  // call 4
  w.end(kRecv);

  engine::TimelineBuilder b(to_global, kMe, test_defs());
  feed(b, w);
  const engine::Timeline t = b.finish();
  REQUIRE(t.recvs.size() == 1);
  CHECK(t.recvs[0].post_call == 4);
  CHECK(t.recvs[0].complete_call == 4);
}

}  // namespace timeline_test
