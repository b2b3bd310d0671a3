// critpath — tests/unit/analyzer/engine/exchange_test.cpp: point-to-point matching
// (engine::exchange_p2p) on a local engine::Comm (one rank, no MPI): messages a rank sent to
// itself, matched by (communicator, tag) in send order against the receives in posting order,
// and a send and a receive that match nothing, counted as unmatched; receives of several
// threads on one (communicator, tag), paired in completion order.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/exchange.h"
#include "analyzer/engine/timeline.h"

using namespace critpath;
using namespace critpath::analyzer;

namespace {

// A timeline written record by record: one call per message operation, entered at
// `enter` seconds.
struct TimelineWriter {
  engine::Timeline t;
  uint64_t seq = 0;
  uint32_t call(double enter) {
    engine::CallRecord c;
    c.enter = enter;
    c.exit = enter + 0.001;
    t.calls.push_back(c);
    return uint32_t(t.calls.size() - 1);
  }
  void send(double enter, int32_t tag) {
    engine::SendRecord s;
    s.peer = 0;  // itself
    s.comm = defs::kCommWorld;
    s.tag = tag;
    s.call = s.complete_call = call(enter);
    t.sends.push_back(s);
  }
  // A receive posted in the call at `post` and completed in the call `complete` (the same
  // for a blocking one); post_seq is the order of posting.
  void recv(uint32_t post, uint32_t complete, uint64_t post_seq, int32_t tag) {
    engine::RecvRecord r;
    r.peer = 0;
    r.comm = defs::kCommWorld;
    r.tag = tag;
    r.post_call = post;
    r.complete_call = complete;
    r.post_seq = post_seq;
    t.recvs.push_back(r);
  }
};

}  // namespace

TEST_CASE("p2p matching: the k-th send of (comm, tag) meets the k-th receive posted", "[engine]") {
  TimelineWriter w;
  w.send(1.0, 5);                      // send 0: first of tag 5
  w.send(2.0, 5);                      // send 1: second of tag 5
  w.send(3.0, 7);                      // send 2: tag 7, never received
  const uint32_t irecv = w.call(4.0);  // MPI_Irecv tag 5: posted first...
  const uint32_t recv = w.call(5.0);   // ...MPI_Recv tag 5: posted second, completed first
  const uint32_t wait = w.call(6.0);
  const uint32_t lone = w.call(7.0);
  w.recv(recv, recv, 1, 5);   // recv 0
  w.recv(irecv, wait, 0, 5);  // recv 1
  w.recv(lone, lone, 2, 9);   // recv 2: tag 9, nothing sent

  const engine::Comm local;
  REQUIRE(local.is_local());
  engine::P2pMatch m;
  REQUIRE(engine::exchange_p2p(w.t, local, m) == Status::kOk);

  // The receiver's side: the sender's call entry per receive, in posting order.
  REQUIRE(m.send_enter.size() == 3);
  CHECK(m.send_enter[1] == 1.0);  // the Irecv, posted first, got the first send
  CHECK(m.send_enter[0] == 2.0);
  CHECK(std::isnan(m.send_enter[2]));
  CHECK(m.send_group[1] == 0);
  CHECK(m.send_pos[1] == 0);
  CHECK(m.send_pos[0] == 1);
  CHECK(m.send_group[2] == UINT32_MAX);
  // The sender's side: the posting call's entry per send (sent back relative, as a float).
  REQUIRE(m.recv_post_enter.size() == 3);
  CHECK(m.recv_post_enter[0] == Approx(4.0).margin(1e-6));
  CHECK(m.recv_post_enter[1] == Approx(5.0).margin(1e-6));
  CHECK(std::isnan(m.recv_post_enter[2]));
  // Groups towards rank 0 in (comm, tag) order: tag 5 is group 0, tag 7 group 1.
  CHECK(m.group == std::vector<uint32_t>{0, 0, 1});
  CHECK(m.pos == std::vector<uint32_t>{0, 1, 0});
  CHECK(m.send_of(0, 0, 1) == 1);
  CHECK(m.send_of(0, 1, 0) == 2);
  CHECK(m.recv_of(0, 0, 0) == 1);
  CHECK(m.recv_of(0, 0, 1) == 0);
  CHECK(m.recv_of(0, 1, 0) == UINT32_MAX);
  CHECK(m.send_of(1, 0, 0) == UINT32_MAX);  // no rank 1

  CHECK(m.unmatched_sends == 1);
  CHECK(m.unmatched_recvs == 1);
  // Forward: per group a 12-byte header and 8 bytes per message (28 + 20); backward: 4 bytes
  // per message of the groups received (3).
  CHECK(m.bytes_sent == 60);
}

TEST_CASE("p2p matching: receives of several threads on one tag pair in completion order", "[engine]") {
  TimelineWriter w;
  w.send(1.0, 0);  // sent first...
  w.send(2.0, 0);  // ...and second, by any threads
  // Thread 1 posted first but completed last (it got the second message); thread 2's receive
  // completed at 1.5, before the second send began: it got the first one.
  const uint32_t a = w.call(0.5), b = w.call(0.6);
  w.t.calls[a].exit = 2.5;
  w.t.calls[a].location = 1;
  w.t.calls[b].exit = 1.5;
  w.t.calls[b].location = 2;
  w.recv(a, a, 0, 0);
  w.recv(b, b, 1, 0);
  w.t.mpi_locations = 3;

  const engine::Comm local;
  engine::P2pMatch m;
  REQUIRE(engine::exchange_p2p(w.t, local, m) == Status::kOk);
  CHECK(m.send_enter[1] == 1.0);
  CHECK(m.send_enter[0] == 2.0);
  CHECK(m.recv_of(0, 0, 0) == 1);
  CHECK(m.recv_of(0, 0, 1) == 0);
  CHECK(m.unmatched_recvs == 0);

  // One thread's receives keep their posting order, whatever their completion order (an
  // Irecv posted first and waited for last still got the first message).
  w.t.calls[b].location = 1;
  REQUIRE(engine::exchange_p2p(w.t, local, m) == Status::kOk);
  CHECK(m.send_enter[0] == 1.0);
  CHECK(m.send_enter[1] == 2.0);
}
