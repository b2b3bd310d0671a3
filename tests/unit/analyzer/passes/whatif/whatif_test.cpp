// critpath — tests/unit/analyzer/passes/whatif/whatif_test.cpp: the what-if simulator
// (analyzer/passes/whatif) on a synthetic one-rank timeline (no MPI: engine::Group::local()): every
// lane's span by hand, the hypothesis syntax, the lanes' encoding.
#include <catch2/catch.hpp>

#include "analyzer/passes/whatif/whatif.h"

using namespace critpath::analyzer;
using namespace critpath::analyzer::passes;

TEST_CASE("what-if: CRITPATH_WHATIF syntax", "[whatif]") {
  std::vector<Hypothesis> h;
  std::string error;
  REQUIRE(parse_whatif(" balance:solve ; scale:0.5:main/exchange;zero:io;;", h, error));
  REQUIRE(h.size() == 3);
  CHECK(h[0].kind == LaneKind::kBalance);
  CHECK(h[0].callpath == "solve");
  CHECK(h[0].spec == "balance:solve");
  CHECK(h[1].kind == LaneKind::kScale);
  CHECK(h[1].factor == 0.5);
  CHECK(h[1].callpath == "main/exchange");
  CHECK(h[2].kind == LaneKind::kZero);
  CHECK(h[2].factor == 0.0);
  for (const char* bad : {"balance", "balance:", "scale:x:solve", "scale:-1:solve", "scale:0.5",
                          "speedup:solve", "zero:a:b", "scale:nan:solve"}) {
    std::vector<Hypothesis> out;
    std::string why;
    CHECK_FALSE(parse_whatif(bad, out, why));
    CHECK_FALSE(why.empty());
  }
  h.clear();
  CHECK(parse_whatif("", h, error));
  CHECK(h.empty());
}

TEST_CASE("what-if: lanes travel to every rank unchanged", "[whatif]") {
  std::vector<Hypothesis> lanes(3);
  lanes[1].kind = LaneKind::kScale;
  lanes[1].factor = 0.25;
  lanes[1].callpaths = {4, 7, 9};
  lanes[2].kind = LaneKind::kSlack;
  lanes[2].callpaths = {3};
  std::vector<Hypothesis> back;
  REQUIRE(decode_lanes(encode_lanes(lanes), back));
  REQUIRE(back.size() == 3);
  CHECK(back[1].kind == LaneKind::kScale);
  CHECK(back[1].factor == 0.25);
  CHECK(back[1].callpaths == std::vector<int>{4, 7, 9});
  CHECK(back[2].kind == LaneKind::kSlack);
  std::vector<unsigned char> cut = encode_lanes(lanes);
  cut.pop_back();
  CHECK_FALSE(decode_lanes(cut, back));
}

// A one-rank timeline: MPI_Init [0, 1], a message to itself sent at call 1 and received
// (completed) at call 2, MPI_Finalize as call 3; `calls` holds the four (enter, exit) pairs,
// `gaps` the computation before calls 1, 2, 3 as (node, seconds) lists. The match says the
// send began at `send_enter`.
struct OneRank {
  engine::Timeline t;
  engine::P2pMatch m;
  std::vector<engine::CollSync> csync;
  critpath::defs::Definitions defs;
  const std::vector<int> l2g = {0, 1, 2};  // node 1: solve, node 2: other
  WhatIfInput in;

  OneRank(const std::vector<std::pair<double, double>>& calls,
          const std::vector<std::vector<engine::GapEntry>>& gaps, double send_enter) {
    for (size_t k = 0; k < calls.size(); ++k)
      t.calls.push_back({calls[k].first, calls[k].second, 0, uint16_t(k), 0});
    t.init_call = 0;
    t.finalize_call = 3;
    t.mpi_locations = 1;
    t.gap_begin = {0, 0};
    for (const auto& g : gaps) {
      t.gaps.insert(t.gaps.end(), g.begin(), g.end());
      t.gap_begin.push_back(uint32_t(t.gaps.size()));
    }
    engine::SendRecord s;
    s.peer = 0;
    s.call = 1;
    t.sends = {s};
    engine::RecvRecord r;
    r.peer = 0;
    r.post_call = 2;
    r.complete_call = 2;
    t.recvs = {r};
    m.send_enter = {send_enter};
    m.send_group = {0};
    m.send_pos = {0};
    m.group = {0};
    m.pos = {0};
    in.timeline = &t;
    in.match = &m;
    in.csync = &csync;
    in.definitions = &defs;
    in.local_to_global = &l2g;
  }
};

// One rank: MPI_Init [0, 1]; computation 2.0 s (solve 1.5, other 0.5); MPI_Send to itself
// [3, 3.5]; other 0.5 s; MPI_Recv of that message [4, 4.2]; solve 1.8 s; MPI_Finalize at 6.
TEST_CASE("what-if: every lane of a one-rank timeline by hand", "[whatif]") {
  OneRank o({{0.0, 1.0}, {3.0, 3.5}, {4.0, 4.2}, {6.0, 6.0}}, {{{1, 1.5}, {2, 0.5}}, {{2, 0.5}}, {{1, 1.8}}},
            3.0);
  WhatIfInput& in = o.in;
  in.first_init_enter = 0.0;
  in.earliest_init_exit = 1.0;
  std::vector<Hypothesis> lanes(6);
  lanes[1].kind = LaneKind::kIdealNetwork;
  lanes[2].kind = LaneKind::kZero;
  lanes[2].callpaths = {1};
  lanes[3].kind = LaneKind::kScale;
  lanes[3].factor = 0.5;
  lanes[3].callpaths = {1};
  lanes[4].kind = LaneKind::kBalance;  // one rank: its own time is the mean
  lanes[4].callpaths = {1};
  lanes[5].kind = LaneKind::kZero;  // the root's time is not touched
  lanes[5].callpaths = {0};
  const engine::Group g = engine::Group::local();
  WhatIfResult res;
  REQUIRE(simulate(in, lanes, g, res) == critpath::Status::kOk);
  REQUIRE(res.ok);
  CHECK(res.measured_span == Approx(6.0));
  CHECK(res.span[0] == Approx(6.0));  // identity
  // Ideal network: the Send's 0.5 s and the Recv's 0.2 s vanish.
  CHECK(res.span[1] == Approx(5.3));
  // Zero solve: 1 + 0.5 -> Send [1.5, 2.0] -> 0.5 -> Recv [2.5, 2.7] -> Finalize 2.7.
  CHECK(res.span[2] == Approx(2.7));
  // Half solve: 1 + 1.25 -> Send [2.25, 2.75] -> Recv [3.25, 3.45] -> + 0.9 = 4.35.
  CHECK(res.span[3] == Approx(4.35));
  CHECK(res.span[4] == Approx(6.0));
  CHECK(res.span[5] == Approx(6.0));
  CHECK(res.pop_span[0] == Approx(5.0));
  CHECK(res.useful_sum == Approx(2.0 + 0.5 + 1.8));
  CHECK(res.wait[0] == Approx(0.0));
  CHECK(res.clamped == 0);
}

// Clock errors: the receive [3.0, 3.05] ended before its message's send began (3.1, as the
// match reports it). Its cost beyond waiting is clamped to 0, the call is counted, and the
// identity lane drifts from the measurement (the model check shows it): the receive now ends
// at max(3.0, the send's replayed entry 2.0) + 0 = 3.0, the finalize 0.95 s later.
TEST_CASE("what-if: a call that ended before what it waited for is clamped and counted", "[whatif]") {
  OneRank o({{0.0, 1.0}, {2.0, 2.1}, {3.0, 3.05}, {4.0, 4.0}}, {{{1, 1.0}}, {{2, 0.9}}, {{1, 0.95}}}, 3.1);
  WhatIfInput& in = o.in;
  std::vector<Hypothesis> lanes(1);
  WhatIfResult res;
  REQUIRE(simulate(in, lanes, engine::Group::local(), res) == critpath::Status::kOk);
  REQUIRE(res.ok);
  CHECK(res.clamped == 1);
  CHECK(res.measured_span == Approx(4.0));
  CHECK(res.span[0] == Approx(3.95));
  CHECK(res.measured_wait == Approx(0.1));  // 3.1 - 3.0, as measured
  CHECK(res.wait[0] == Approx(0.0));
}

// CRITPATH_DEBUG_SIMULATION_REPLAY: every mode replays the same program to the same figures
// (one rank: one group of one rank, which is also every rank: `gathered`), and says so.
TEST_CASE("what-if: every replay mode gives the same figures", "[whatif]") {
  OneRank o({{0.0, 1.0}, {3.0, 3.5}, {4.0, 4.2}, {6.0, 6.0}}, {{{1, 1.5}, {2, 0.5}}, {{2, 0.5}}, {{1, 1.8}}},
            3.0);
  std::vector<Hypothesis> lanes(3);
  lanes[1].kind = LaneKind::kIdealNetwork;
  lanes[2].kind = LaneKind::kScale;
  lanes[2].factor = 0.5;
  lanes[2].callpaths = {1};
  std::vector<WhatIfResult> res;
  for (ReplayMode m : {ReplayMode::kAuto, ReplayMode::kDistributed, ReplayMode::kGathered}) {
    o.in.replay = m;
    res.emplace_back();
    REQUIRE(simulate(o.in, lanes, engine::Group::local(), res.back()) == critpath::Status::kOk);
    REQUIRE(res.back().ok);
    CHECK(res.back().group_ranks == 1);
    CHECK(res.back().gathered);
    CHECK(res.back().messages == 1);  // the message to itself: one dependency
  }
  for (const WhatIfResult& r : res) {
    CHECK(r.span == res[0].span);
    CHECK(r.wait == res[0].wait);
    CHECK(r.pop_span == res[0].pop_span);
    CHECK(r.bytes_sent == res[0].bytes_sent);
  }
  CHECK(res[0].span[2] == Approx(4.35));
}

// A call that sends or receives one message and nothing else is one operation of the program
// when no lane changes its gap, three when one does: lane 0 replays alike either way. Here a
// lane that scales `other` (node 2) changes the gaps before the send and the receive, a lane
// that scales a node without time changes none.
TEST_CASE("what-if: a one-message call replays alike in one operation or in three", "[whatif]") {
  OneRank o({{0.0, 1.0}, {3.0, 3.5}, {4.0, 4.2}, {6.0, 6.0}}, {{{1, 1.5}, {2, 0.5}}, {{2, 0.5}}, {{1, 1.8}}},
            3.0);
  std::vector<Hypothesis> fused(2), apart(2);
  fused[1].kind = apart[1].kind = LaneKind::kScale;
  fused[1].factor = apart[1].factor = 0.5;
  fused[1].callpaths = {0};  // the root: no gap books time there
  apart[1].callpaths = {2};
  WhatIfResult one, three;
  REQUIRE(simulate(o.in, fused, engine::Group::local(), one) == critpath::Status::kOk);
  REQUIRE(simulate(o.in, apart, engine::Group::local(), three) == critpath::Status::kOk);
  REQUIRE(one.ok);
  REQUIRE(three.ok);
  CHECK(one.span[0] == three.span[0]);
  CHECK(one.wait[0] == three.wait[0]);
  CHECK(one.span[1] == one.span[0]);
  CHECK(one.span[0] == Approx(6.0));
  // Half the other: 0.25 s less before the send, 0.25 s less before the receive.
  CHECK(three.span[1] == Approx(5.5));
  CHECK(one.bytes_sent < three.bytes_sent);
  CHECK(one.messages == 1);
  CHECK(three.messages == 1);
}
