// critpath — tests/unit/analyzer/passes/delay/delay_test.cpp: the delay analysis's cost model on
// synthetic inputs (no MPI): the delay vector, the backward cost propagation, [Böhme2010] Fig. 2,
// the galloping search of the synchronization index, and the varints of the gathered propagation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "analyzer/passes/delay/delay.h"

using namespace critpath::analyzer::passes;

TEST_CASE("delay vector: causer minus waiter per call path, negatives clipped", "[passes]") {
  // Call paths 1 (foo), 2 (bar), 3 (baz): C spent more in foo, less in bar, only C ran baz.
  const std::vector<std::pair<uint32_t, double>> tc = {{1, 0.150}, {2, 0.010}, {3, 0.005}};
  const std::vector<std::pair<uint32_t, double>> tw = {{1, 0.050}, {2, 0.030}, {4, 0.200}};
  std::vector<std::pair<uint32_t, double>> d;
  const double sum = delay_vector(tc, tw, d);
  REQUIRE(d.size() == 2);
  CHECK(d[0].first == 1);
  CHECK(d[0].second == Approx(0.100));
  CHECK(d[1].first == 3);
  CHECK(d[1].second == Approx(0.005));
  CHECK(sum == Approx(0.105));
  // Without W's entries (a wait whose interval on W holds nothing): d is tc's positive entries,
  // appended after what `d` holds.
  const std::vector<std::pair<uint32_t, double>> tc2 = {{1, 0.150}, {2, 0.0}, {3, 0.005}};
  CHECK(delay_vector(tc2, {}, d) == Approx(0.155));
  REQUIRE(d.size() == 4);
  CHECK(d[2] == std::pair<uint32_t, double>{1, 0.150});
  CHECK(d[3] == std::pair<uint32_t, double>{3, 0.005});
}

TEST_CASE("cost propagation: Böhme et al. 2010 Fig. 2 and a fan-in", "[passes]") {
  // Nodes: 0 = B's wait (caused by A), 1 = C's wait (caused by B, whose interval holds B's
  // wait 0 with a_u = 0.1, D = 0.1, scale = 1): base_0 = scale * a_0 = 0.1, edge 1 -> 0 with
  // coef a_0 / D = 1. C's wait has no consumer: r_1 = 0, so r_0 = 0.1 (+ 1 * r_1).
  std::vector<double> r = {0.1, 0.0};
  std::vector<uint32_t> v_of = {1};  // one caused record: wait 1's, at B
  std::vector<uint32_t> e_begin = {0, 1};
  std::vector<CostEdge> e_list = {{0, 1.0}};
  std::vector<uint32_t> indeg = {1, 0};
  std::vector<uint8_t> done;
  propagate_costs(r, v_of, e_begin, e_list, indeg, done);
  CHECK(r[0] == Approx(0.1));
  CHECK(r[1] == Approx(0.0));
  CHECK(done[0] == 1);
  CHECK(done[1] == 1);

  // A chain 2 -> 1 -> 0 with halving coefficients and a base on 1: r_2 = 0.4 (its own base),
  // r_1 = 0.1 + 0.5 * 0.4 = 0.3, r_0 = 0 + 0.5 * 0.3 = 0.15 — processed in reverse order.
  r = {0.0, 0.1, 0.4};
  v_of = {2, 1};
  e_begin = {0, 1, 2};
  e_list = {{1, 0.5}, {0, 0.5}};
  indeg = {1, 1, 0};
  propagate_costs(r, v_of, e_begin, e_list, indeg, done);
  CHECK(r[1] == Approx(0.3));
  CHECK(r[0] == Approx(0.15));

  // A caused record whose wait is no node (UINT32_MAX) carries nothing.
  r = {0.2, 0.0};
  v_of = {UINT32_MAX, 1};
  e_begin = {0, 1, 2};
  e_list = {{0, 1.0f}, {0, 0.5f}};
  indeg = {1, 0};
  propagate_costs(r, v_of, e_begin, e_list, indeg, done);
  CHECK(r[0] == Approx(0.2));
  CHECK(done[0] == 1);
}

TEST_CASE("cost propagation: a cycle (inconsistent clocks) stops, never loops", "[passes]") {
  std::vector<double> r = {0.1, 0.2};
  std::vector<uint32_t> v_of = {0, 1};
  std::vector<uint32_t> e_begin = {0, 1, 2};
  std::vector<CostEdge> e_list = {{1, 1.0}, {0, 1.0}};
  std::vector<uint32_t> indeg = {1, 1};
  std::vector<uint8_t> done;
  propagate_costs(r, v_of, e_begin, e_list, indeg, done);
  CHECK(done[0] == 0);
  CHECK(done[1] == 0);
  CHECK(r[0] == Approx(0.1));
}

TEST_CASE("galloping lower bound: std::lower_bound's answer from any hint", "[passes]") {
  std::mt19937 rng(12345);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint32_t> v(rng() % 300);
    for (uint32_t& x : v) x = rng() % 1000;
    std::sort(v.begin(), v.end());
    size_t hint = rng() % (v.size() + 3);  // out of range too
    for (int q = 0; q < 100; ++q) {
      // Mostly ascending queries, as the delay analysis asks; some jump anywhere.
      const uint32_t k = q % 7 == 0 ? uint32_t(rng() % 1100) : uint32_t(q * 10 + rng() % 15);
      const size_t want = size_t(std::lower_bound(v.begin(), v.end(), k) - v.begin());
      REQUIRE(lower_bound_from(v, k, hint) == want);
      REQUIRE(hint == want);
    }
  }
  std::vector<uint32_t> empty;
  size_t hint = 5;
  CHECK(lower_bound_from(empty, 3, hint) == 0);
}
