// critpath — tests/unit/analyzer/engine/path_walk_test.cpp: the critical-path walk by pointer
// jumping (analyzer/engine/path_walk.h) against the sequential reference walk, on synthetic hop
// records of a few "ranks" run as threads that exchange through shared memory.
#include "analyzer/engine/path_walk.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <barrier>
#include <cstring>
#include <random>
#include <thread>

using namespace critpath;
using namespace critpath::analyzer::engine;

namespace {

// P threads, one PathExchange each; every collective is two barrier phases.
struct ThreadWorld {
  explicit ThreadWorld(int p)
      : P(p), bar(p), send(size_t(p)), runs(size_t(p)), elem(size_t(p)), u(size_t(p)), d(size_t(p)) {}
  int P;
  std::barrier<> bar;
  std::vector<const unsigned char*> send;
  std::vector<std::vector<PathRun>> runs;
  std::vector<size_t> elem;
  std::vector<std::vector<uint64_t>> u;
  std::vector<std::vector<double>> d;
  bool mismatch = false;  // a rank's runs broke exchange()'s contract (set under the barrier)
};

class ThreadExchange final : public PathExchange {
 public:
  ThreadExchange(ThreadWorld& w, int me) : w_(w), me_(me) {}
  int rank() const override { return me_; }
  int size() const override { return w_.P; }
  Status exchange(const void* send, const std::vector<PathRun>& send_runs, size_t elem_bytes,
                  std::vector<unsigned char>& recv, std::vector<PathRun>& recv_runs, bool reply) override {
    for (size_t i = 0; i < send_runs.size(); ++i)  // ascending peers, no empty run
      if (send_runs[i].count == 0 || send_runs[i].peer < 0 || send_runs[i].peer >= w_.P ||
          (i > 0 && send_runs[i].peer <= send_runs[i - 1].peer))
        w_.mismatch = true;
    w_.send[size_t(me_)] = static_cast<const unsigned char*>(send);
    w_.runs[size_t(me_)] = send_runs;
    w_.elem[size_t(me_)] = elem_bytes;
    w_.bar.arrive_and_wait();
    recv.clear();
    recv_runs.clear();
    for (int s = 0; s < w_.P; ++s) {
      if (w_.elem[size_t(s)] != elem_bytes) w_.mismatch = true;
      size_t off = 0;  // elements before the run for this rank
      for (const PathRun& r : w_.runs[size_t(s)]) {
        if (r.peer == me_) {
          const unsigned char* from = w_.send[size_t(s)] + off * elem_bytes;
          recv.insert(recv.end(), from, from + size_t(r.count) * elem_bytes);
          recv_runs.push_back({s, r.count});
        }
        off += r.count;
      }
    }
    if (reply && !same_runs(recv_runs, sent_)) w_.mismatch = true;  // not the previous round's
    sent_ = send_runs;
    w_.bar.arrive_and_wait();
    return Status::kOk;
  }
  Status allreduce_sum(uint64_t* v, int n) override {
    w_.u[size_t(me_)].assign(v, v + n);
    w_.bar.arrive_and_wait();
    for (int i = 0; i < n; ++i) {
      uint64_t s = 0;
      for (int r = 0; r < w_.P; ++r) s += w_.u[size_t(r)][size_t(i)];
      v[i] = s;
    }
    w_.bar.arrive_and_wait();
    return Status::kOk;
  }
  Status allreduce_min(double* v, int n) override {
    w_.d[size_t(me_)].assign(v, v + n);
    w_.bar.arrive_and_wait();
    for (int i = 0; i < n; ++i) {
      double m = w_.d[0][size_t(i)];
      for (int r = 1; r < w_.P; ++r) m = std::min(m, w_.d[size_t(r)][size_t(i)]);
      v[i] = m;
    }
    w_.bar.arrive_and_wait();
    return Status::kOk;
  }

 private:
  static bool same_runs(const std::vector<PathRun>& a, const std::vector<PathRun>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].peer != b[i].peer || a[i].count != b[i].count) return false;
    return true;
  }

  ThreadWorld& w_;
  int me_;
  std::vector<PathRun> sent_;  // the previous round's runs
};

using Recs = std::vector<std::vector<HopRec>>;

struct Jumped {
  std::vector<PathWalkResult> by_rank;
  bool ok = true;
};

Jumped run_jump(const Recs& recs, const PathStart& start, ListPath lists = ListPath::kAlways) {
  const int P = int(recs.size());
  ThreadWorld w(P);
  Jumped j;
  j.by_rank.resize(size_t(P));
  std::vector<Status> st(size_t(P), Status::kOk);
  std::vector<std::thread> th;
  for (int r = 0; r < P; ++r)
    th.emplace_back([&, r] {
      ThreadExchange ex(w, r);
      st[size_t(r)] = walk_jump(recs[size_t(r)], start, ex, j.by_rank[size_t(r)], lists);
    });
  for (auto& t : th) t.join();
  for (Status s : st) j.ok = j.ok && s == Status::kOk;
  j.ok = j.ok && !w.mismatch;
  return j;
}

struct Serial {
  std::vector<std::vector<PathSegment>> segs;
  uint64_t hops = 0;
  bool partial = false;
};

Serial run_serial(const Recs& recs, const PathStart& start) {
  std::vector<const HopRec*> p;
  std::vector<size_t> n;
  for (const auto& v : recs) {
    p.push_back(v.data());
    n.push_back(v.size());
  }
  Serial s;
  s.segs = walk_serial(p, n, start, s.hops, s.partial);
  return s;
}

PathStart make_start(const Recs& recs, int rank, double time, double first) {
  PathStart s;
  s.rank = rank;
  s.time = time;
  s.first = first;
  for (const auto& v : recs) s.max_hops += v.size();
  s.max_hops += recs.size() + 2;
  return s;
}

HopRec rec(double enter, double wait_end, int cause_rank, double cause_time) {
  HopRec h;
  h.enter = enter;
  h.wait_end = wait_end;
  h.cause_rank = cause_rank;
  h.cause_time = cause_time;
  return h;
}

bool same_segments(const std::vector<PathSegment>& a, const std::vector<PathSegment>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].begin != b[i].begin || a[i].end != b[i].end) return false;
  return true;
}

// Jump == serial on every rank (segments, hops, partial), with and without the list path.
void require_same(const Recs& recs, const PathStart& start) {
  const Serial s = run_serial(recs, start);
  for (ListPath lists : {ListPath::kAlways, ListPath::kNever, ListPath::kAuto}) {
    const Jumped j = run_jump(recs, start, lists);
    REQUIRE(j.ok);
    for (size_t r = 0; r < recs.size(); ++r) {
      INFO("rank " << r << ", list path " << int(lists));
      CHECK(same_segments(j.by_rank[r].segments, s.segs[r]));
      CHECK(j.by_rank[r].hops == s.hops);
      CHECK(j.by_rank[r].partial == s.partial);
      if (lists == ListPath::kNever) CHECK_FALSE(j.by_rank[r].listed);
    }
  }
}

// The ring of bench_chain: `laps` times around P ranks, every receive a Late Sender.
Recs ring(int P, int laps) {
  Recs recs(static_cast<size_t>(P));
  for (int s = 1; s < laps * P; ++s) {  // step s: rank s % P receives from rank (s - 1) % P
    const int r = s % P;
    const double send_enter = 10.0 * (s - 1) + 2;  // the sender entered its send
    const double recv_enter = s >= P ? 10.0 * (s - P) + 3 : 0.5;
    recs[size_t(r)].push_back(rec(recv_enter, send_enter, (s - 1) % P, send_enter));
  }
  return recs;
}

}  // namespace

TEST_CASE("latest_before and arrive", "[engine]") {
  const std::vector<HopRec> h = {rec(1, 3, 1, 3), rec(5, 8, 2, 7), rec(10, 12, 1, 12)};
  CHECK(latest_before(h.data(), h.size(), 1) == kNoRecord);
  CHECK(latest_before(h.data(), h.size(), 1.5) == 0);
  CHECK(latest_before(h.data(), h.size(), 5) == 0);
  CHECK(latest_before(h.data(), h.size(), 100) == 2);
  CHECK(arrive(h.data(), h.size(), 0.5).kind == Arrival::kBegan);
  const Arrival f = arrive(h.data(), h.size(), 9);
  CHECK(f.kind == Arrival::kFound);
  CHECK(f.index == 1);
  CHECK(f.begin == 8);
  const Arrival p = arrive(h.data(), h.size(), 6);  // inside the wait [5, 8]
  CHECK(p.kind == Arrival::kPass);
  CHECK(p.next_rank == 2);
  CHECK(p.next_time == 6);
  CHECK(next_time(h[1]) == 7);
}

TEST_CASE("a chain across 4 ranks walks like the sequential walk", "[engine][tsan]") {
  const int P = 4, laps = 50;
  const Recs recs = ring(P, laps);
  const int last = (laps * P - 1) % P;
  const PathStart start = make_start(recs, last, 10.0 * (laps * P) + 1, 0);
  require_same(recs, start);
  const Jumped j = run_jump(recs, start);
  CHECK(j.by_rank[0].hops == uint64_t(laps * P - 1));
  CHECK_FALSE(j.by_rank[0].partial);
  CHECK(j.by_rank[0].levels <= 8);  // 2^8 >= 199 records + 2
  double total = 0;
  for (const auto& r : j.by_rank)
    for (const PathSegment& s : r.segments) total += s.end - s.begin;
  CHECK(total == Approx(start.time - start.first));
}

TEST_CASE("merging successors: only the record on the path counts", "[engine][tsan]") {
  // Ranks 1 and 2 both wait for rank 0 after its wait for rank 3: one successor, two
  // predecessors. The path comes from rank 2 (the start), rank 1's record is not on it.
  Recs recs(4);
  recs[0] = {rec(1, 4, 3, 4)};
  recs[1] = {rec(2, 6, 0, 6)};
  recs[2] = {rec(3, 7, 0, 7)};
  recs[3] = {};
  const PathStart start = make_start(recs, 2, 20, 0);
  require_same(recs, start);
  const Jumped j = run_jump(recs, start);
  CHECK(j.by_rank[0].hops == 2);  // 2 -> 0 -> 3
  CHECK(same_segments(j.by_rank[2].segments, {{7, 20}}));
  CHECK(same_segments(j.by_rank[0].segments, {{4, 7}}));
  CHECK(same_segments(j.by_rank[3].segments, {{0, 4}}));
  CHECK(j.by_rank[1].segments.empty());
}

TEST_CASE("a start without hop records is where the path began", "[engine][tsan]") {
  Recs recs(4);
  recs[0] = {rec(1, 4, 3, 4)};
  recs[3] = {rec(2, 5, 0, 5)};
  const PathStart start = make_start(recs, 1, 30, 0.25);
  require_same(recs, start);
  const Jumped j = run_jump(recs, start);
  CHECK(j.by_rank[0].hops == 0);
  CHECK(same_segments(j.by_rank[1].segments, {{0.25, 30}}));
  CHECK(j.by_rank[0].segments.empty());
  // No records at all.
  const Recs none(3);
  require_same(none, make_start(none, 2, 9, 1));
}

TEST_CASE("a cycle makes the walk partial and never hangs", "[engine][tsan]") {
  Recs recs(4);
  recs[0] = {rec(1, 5, 1, 5)};
  recs[1] = {rec(1, 5, 0, 5)};
  const PathStart start = make_start(recs, 0, 10, 0);
  const Serial s = run_serial(recs, start);
  const Jumped j = run_jump(recs, start);
  REQUIRE(j.ok);
  CHECK(s.partial);
  double total = 0;
  for (const auto& r : j.by_rank) {
    CHECK(r.partial);
    for (size_t i = 0; i < r.segments.size(); ++i) {
      CHECK(r.segments[i].end > r.segments[i].begin);
      if (i) CHECK(r.segments[i].begin >= r.segments[i - 1].end);
      total += r.segments[i].end - r.segments[i].begin;
    }
  }
  CHECK(total == Approx(10));  // [0, 5] cut + [5, 10]
  // Arrivals inside waits passed on forever: broken, partial.
  Recs pass(2);
  pass[0] = {rec(1, 8, 1, 9)};
  pass[1] = {rec(1, 8, 0, 9)};
  const Jumped p = run_jump(pass, make_start(pass, 0, 5, 0));
  REQUIRE(p.ok);
  CHECK(p.by_rank[0].partial);
}

TEST_CASE("random traces, consistent or not, walk like the sequential walk", "[engine][tsan]") {
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 150; ++trial) {
    const int P = 1 + int(rng() % 5);
    Recs recs(static_cast<size_t>(P));
    std::uniform_real_distribution<double> U(0, 100);
    const bool consistent = trial % 2 == 0;
    for (int r = 0; r < P; ++r) {
      const int n = int(rng() % 40);
      std::vector<double> enters;
      for (int i = 0; i < n; ++i) enters.push_back(std::floor(U(rng) * 4) / 4);  // ties too
      std::sort(enters.begin(), enters.end());
      for (int i = 0; i < n && P > 1; ++i) {
        int q = int(rng() % uint64_t(P - 1));
        if (q >= r) ++q;
        const double we = enters[size_t(i)] + std::floor(U(rng) / 4) / 4 + 0.25;
        const double ct = consistent ? we : std::floor(U(rng) * 4) / 4;
        recs[size_t(r)].push_back(rec(enters[size_t(i)], we, q, ct));
      }
    }
    const PathStart start = make_start(recs, int(rng() % uint64_t(P)), 130, -1);
    const Serial s = run_serial(recs, start);
    if (s.partial) continue;  // a cycle: both partial, the cut differs (tested above)
    INFO("trial " << trial);
    require_same(recs, start);
  }
}

TEST_CASE("more ranks than records: runs grouped by sorting, the same walk", "[engine][tsan]") {
  // Each rank's few records (fewer than the ranks) go out grouped by a sort, not a count per
  // rank: the runs ascend by peer (ThreadExchange checks) and the walk is the sequential one.
  std::mt19937_64 rng(777);
  for (int trial = 0; trial < 6; ++trial) {
    const int P = 24 + int(rng() % 24);
    Recs recs(static_cast<size_t>(P));
    double t = 1;
    for (int s = 0; s < 4 * P; ++s) {  // a consistent trace: each wait ends at its cause
      const int r = int(rng() % uint64_t(P));
      int q = int(rng() % uint64_t(P - 1));
      if (q >= r) ++q;
      const double enter = std::max(t, recs[size_t(r)].empty() ? 0.0 : recs[size_t(r)].back().wait_end) + 1;
      recs[size_t(r)].push_back(rec(enter, enter + 2, q, enter + 2));
      t = enter;
    }
    INFO("trial " << trial);
    require_same(recs, make_start(recs, int(rng() % uint64_t(P)), t + 10, 0));
  }
}

TEST_CASE("rings are lists: tokens, runs, the same path in fewer rounds", "[engine][tsan]") {
  // Up to 4 ranks: every token is back on its rank within the trial rounds, one run per rank,
  // no pointer jumping, fewer rounds than the doubling over all records; 6 and 11: the
  // tokens stop after the trial, the runs' first items jump.
  for (int P : {2, 3, 4, 6, 11}) {
    INFO("P " << P);
    const int laps = 40;
    const Recs recs = ring(P, laps);
    const PathStart start = make_start(recs, (laps * P - 1) % P, 10.0 * (laps * P) + 1, 0);
    require_same(recs, start);
    const Jumped j = run_jump(recs, start);
    const Jumped d = run_jump(recs, start, ListPath::kNever);
    REQUIRE(j.ok);
    CHECK(j.by_rank[0].listed);
    CHECK(j.by_rank[0].hops == uint64_t(laps * P - 1));
    if (P <= 4) {
      CHECK(j.by_rank[0].levels == 0);
      CHECK(j.by_rank[0].rounds < d.by_rank[0].rounds);
    } else {
      CHECK(j.by_rank[0].levels > 0);
    }
  }
}

TEST_CASE("a cycle off the path and no merges: the list path hands over to doubling", "[engine][tsan]") {
  // Ranks 2 and 3 wait for each other (an inconsistent trace), each record the other's one
  // successor; the path goes 0 -> 1. The tokens find a return that is not earlier.
  Recs recs(4);
  recs[0] = {rec(2, 6, 1, 6)};
  recs[2] = {rec(1, 5, 3, 5)};
  recs[3] = {rec(1, 5, 2, 5)};
  const PathStart start = make_start(recs, 0, 10, 0);
  require_same(recs, start);
  const Jumped j = run_jump(recs, start);
  REQUIRE(j.ok);
  CHECK_FALSE(j.by_rank[0].listed);
  CHECK_FALSE(j.by_rank[0].partial);
  CHECK(same_segments(j.by_rank[0].segments, {{6, 10}}));
  CHECK(same_segments(j.by_rank[1].segments, {{0, 6}}));
}

TEST_CASE("chains of consistent random traces without merges walk as lists", "[engine][tsan]") {
  // A token passed around at random: each receive waits for the previous holder's send, so
  // every record has one predecessor (the next receive of the token) and the walk is a list.
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 20; ++trial) {
    const int P = 2 + int(rng() % 7);
    Recs recs(static_cast<size_t>(P));
    int holder = 0;
    double t = 1;
    for (int s = 0; s < 60; ++s) {
      int q = int(rng() % uint64_t(P - 1));
      if (q >= holder) ++q;
      recs[size_t(q)].push_back(rec(t - 0.5, t + 1, holder, t + 1));  // q waits for holder's send at t + 1
      holder = q;
      t += 2;
    }
    INFO("trial " << trial);
    const PathStart start = make_start(recs, holder, t + 5, 0);
    require_same(recs, start);
    CHECK(run_jump(recs, start).by_rank[0].listed);
  }
}

TEST_CASE("rings with receives that did not wait: merges, marked by the flood", "[engine][tsan]") {
  // A receive that found its message waiting leaves no record: the path stays on its rank,
  // and the previous lap's record there is the successor of two records (a merge).
  std::mt19937_64 rng(99);
  for (int P : {2, 3, 4}) {
    for (int trial = 0; trial < 4; ++trial) {
      Recs full = ring(P, 50), recs(static_cast<size_t>(P));
      for (int r = 0; r < P; ++r)
        for (const HopRec& h : full[size_t(r)])
          if (rng() % 10 != 0) recs[size_t(r)].push_back(h);
      INFO("P " << P << " trial " << trial);
      const PathStart start = make_start(recs, (50 * P - 1) % P, 10.0 * (50 * P) + 1, 0);
      require_same(recs, start);
      const Jumped j = run_jump(recs, start);
      const Jumped d = run_jump(recs, start, ListPath::kNever);
      CHECK(j.by_rank[0].listed);
      CHECK(j.by_rank[0].rounds < d.by_rank[0].rounds);
    }
  }
}

TEST_CASE("the list path runs by itself on many records that seldom merge", "[engine][tsan]") {
  const Recs small = ring(2, 100);
  const PathStart s0 = make_start(small, 1, 10.0 * 200 + 1, 0);
  CHECK_FALSE(run_jump(small, s0, ListPath::kAuto).by_rank[0].listed);  // few records: doubling
  const int laps = int(kListMinRecords / 2) + 8;
  const Recs big = ring(2, laps);
  const PathStart s1 = make_start(big, 1, 10.0 * (2 * laps) + 1, 0);
  const Jumped j = run_jump(big, s1, ListPath::kAuto);
  REQUIRE(j.ok);
  CHECK(j.by_rank[0].listed);
  CHECK(j.by_rank[0].hops == uint64_t(2 * laps - 1));
  Recs merging(2);  // every other receive found its message: a merge per lap
  for (int r = 0; r < 2; ++r)
    for (size_t i = 0; i < big[size_t(r)].size(); i += 2) merging[size_t(r)].push_back(big[size_t(r)][i]);
  CHECK_FALSE(run_jump(merging, s1, ListPath::kAuto).by_rank[0].listed);
}

TEST_CASE("a 2-rank ping-pong sends no token: the replies show every return", "[engine][tsan]") {
  // Each record's successor lies on the other rank and continues on its own: the successor
  // rounds' replies name that second hop, so the token round carries nothing. Rounds: the id
  // width's allreduce, one successor round (query, reply, allreduce), the empty token round
  // (exchange, allreduce), the start's root and hops, the segments (exchange, allreduce).
  const int laps = 200;
  const Recs recs = ring(2, laps);
  const PathStart start = make_start(recs, 1, 10.0 * (2 * laps) + 1, 0);
  require_same(recs, start);
  const Jumped j = run_jump(recs, start);
  REQUIRE(j.ok);
  CHECK(j.by_rank[0].listed);
  CHECK(j.by_rank[0].levels == 0);
  CHECK(j.by_rank[0].rounds == 9);
  CHECK(j.by_rank[1].rounds == 9);
}

TEST_CASE("the marking: allgathers while few ask, sparse all-to-alls below, the same path",
          "[engine][tsan]") {
  // 1,199 records on one chain: more than 2^9 levels' worth, so the doubling's marking takes
  // its top levels (at most 2^8 requests) by allgather and the lower ones by exchange().
  const int laps = 400;
  const Recs recs = ring(3, laps);
  const PathStart start = make_start(recs, (laps * 3 - 1) % 3, 10.0 * (laps * 3) + 1, 0);
  require_same(recs, start);
  const Jumped d = run_jump(recs, start, ListPath::kNever);
  REQUIRE(d.ok);
  CHECK(d.by_rank[0].levels > 9);
  CHECK(d.by_rank[0].hops == uint64_t(laps * 3 - 1));
}
