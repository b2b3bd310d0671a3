// critpath — analyzer/passes/critical_path/critical_path.cpp: the backward walk, the clip, busy intervals.
#include "analyzer/passes/critical_path/critical_path.h"

#include <algorithm>
#include <limits>

#include "analyzer/engine/big_memory.h"

namespace critpath::analyzer::passes {

using engine::kNoCall;

CpWalkMode cp_walk_mode(std::string_view word) {
  if (word == "jump" || word == "token") return CpWalkMode::kJump;
  if (word == "gather") return CpWalkMode::kGather;
  return CpWalkMode::kAuto;
}

CpRecords cp_records(const engine::Timeline& t, const WaitStates& ws, const RunBounds& b) {
  CpRecords out;
  out.base = &ws.records;
  if (t.init_call == kNoCall) return out;
  const engine::CallRecord& c = t.calls[t.init_call];
  const double end = std::min(b.last_init_enter, c.exit);
  if (!(end > c.enter)) return out;
  const std::vector<WaitRecord>& v = ws.records;
  const auto it = std::lower_bound(v.begin(), v.end(), t.init_call,
                                   [](const WaitRecord& r, uint32_t call) { return r.call < call; });
  out.has_init = true;
  out.at = size_t(it - v.begin());
  out.replaces = it != v.end() && it->call == t.init_call;
  WaitRecord& r = out.init;
  if (out.replaces) {
    r = *it;
  } else {
    r.call = t.init_call;
    r.wait_end = c.enter;
    r.completion_begin = c.exit;
  }
  if (end > r.wait_end) {
    r.wait_end = end;
    r.cause_rank = b.last_init_rank;
    r.cause_time = b.last_init_enter;
  }
  r.completion_begin = std::max(r.completion_begin, r.wait_end);
  return out;
}

namespace {

// The waiting calls at which the walk may leave the rank: a cause on another rank of the
// group's `P` (this rank is `me`; the engine would copy the records once more to drop the
// others). Ascending by enter. Fresh memory (32 B a record) on huge pages where they are
// available: a 4 KiB page's first-touch fault per 128 records costs more than the copy.
// Written by index into room for every record, cut to those kept after (a push_back per
// record checked the capacity and, with its out-of-line growth, kept the loop's values in
// memory).
std::vector<engine::HopRec> hop_records(const engine::Timeline& t, const CpRecords& records, int me, int P) {
  std::vector<engine::HopRec> out;
  engine::reserve_big(out, records.size());
  out.resize(records.size());
  engine::HopRec* const h = out.data();
  const engine::CallRecord* const calls = t.calls.data();
  size_t kept = 0;
  records.for_each([&](const WaitRecord& r) __attribute__((always_inline)) {
    const engine::CallRecord& c = calls[r.call];
    // Without a known cause elsewhere the path stays on the rank, through the wait. The path
    // follows each rank's main thread (location 0): other threads' waits are no hops.
    // (A negative cause, as an unsigned one, lies above any group's size.)
    if (uint32_t(r.cause_rank) >= uint32_t(P) || r.cause_rank == me || !(r.wait_end > c.enter) ||
        c.location != 0)
      return;
    engine::HopRec& x = h[kept++];
    x.enter = c.enter;
    x.wait_end = r.wait_end;
    x.cause_time = r.cause_time;
    x.cause_rank = r.cause_rank;
  });
  out.resize(kept);
  return out;
}

// The time per node of the segment clip_by_gaps books to, for its dominant node. A segment
// touches few nodes (a ping-pong's: the receive, the gap's node, the send): the first kFew
// are summed in a small array searched in order, a piece then costs a few instructions
// inline; beyond them a node-indexed sum, valid while stamped with the segment's opening,
// and the nodes in the order touched. All of it sized once, up front (as by_node is): no call
// is left in the clip's loop, where one (a vector growing) made GCC keep the loop's doubles
// in memory across it, a load and a store each per use.
class OpenSegment {
 public:
  OpenSegment(std::vector<CpSegment>& segments, size_t nodes)
      : segments_(segments), time_(nodes, 0.0), stamp_(nodes, 0), touched_(nodes, 0) {}
  [[gnu::always_inline]] void add(size_t j, int32_t n, double piece) {
    if (j != open_) reopen(j);  // a segment opened again (a gap over two segments) starts afresh
    for (uint32_t i = 0; i < nfew_; ++i)
      if (few_[i].node == n) {
        few_[i].time += piece;
        return;
      }
    if (nfew_ < kFew) {
      few_[nfew_++] = {n, piece};
      return;
    }
    const size_t i = size_t(n);
    if (stamp_[i] != stamp_now_) {
      stamp_[i] = stamp_now_;
      time_[i] = piece;
      touched_[ntouched_++] = n;
      return;
    }
    time_[i] += piece;
  }
  // Sets the open segment's dominant node (the most time; the lowest node of a tie).
  [[gnu::always_inline]] void close() {
    if (open_ >= segments_.size()) return;
    double best = -1;
    int32_t& node = segments_[open_].node;
    auto take = [&](int32_t n, double v) {
      if (v > best || (v == best && n < node)) {
        best = v;
        node = n;
      }
    };
    for (uint32_t i = 0; i < nfew_; ++i) take(few_[i].node, few_[i].time);
    for (size_t i = 0; i < ntouched_; ++i) take(touched_[i], time_[size_t(touched_[i])]);
    ntouched_ = 0;
    nfew_ = 0;
    open_ = SIZE_MAX;
  }

 private:
  static constexpr uint32_t kFew = 6;
  struct Sum {
    int32_t node;
    double time;
  };
  [[gnu::always_inline]] void reopen(size_t j) {
    close();
    open_ = j;
    ++stamp_now_;
  }

  std::vector<CpSegment>& segments_;
  Sum few_[kFew];
  uint32_t nfew_ = 0;
  std::vector<double> time_;
  std::vector<uint64_t> stamp_;
  std::vector<int32_t> touched_;  // ntouched_ of them: each node at most once per segment
  size_t ntouched_ = 0;
  uint64_t stamp_now_ = 0;
  size_t open_ = SIZE_MAX;
};

}  // namespace

Status walk_critical_path(const engine::Timeline& t, const CpRecords& records, const RunBounds& b,
                          const engine::Group& group, CpWalkMode mode, CpWalk& out) {
  out = CpWalk{};
  engine::PathStart start;
  start.rank = b.last_finalize_rank;
  start.time = b.last_finalize_enter;
  start.first = b.first_init_enter;
  start.max_hops = b.max_hops;
  const engine::PathWalkMethod method = mode == CpWalkMode::kJump     ? engine::PathWalkMethod::kJump
                                        : mode == CpWalkMode::kGather ? engine::PathWalkMethod::kGather
                                                                      : engine::PathWalkMethod::kAuto;
  engine::PathWalkResult res;
  const Status s = engine::walk_path(hop_records(t, records, group.rank(), group.size()), start, group.comm(),
                                     method, res);
  // Sized first, then written by index (no capacity check per segment).
  const size_t nseg = res.segments.size();
  out.segments.resize(nseg);
  CpSegment* const seg = out.segments.data();
  const engine::PathSegment* const from = res.segments.data();
  for (size_t i = 0; i < nseg; ++i) {
    seg[i].begin = from[i].begin;
    seg[i].end = from[i].end;
  }
  out.hops = res.hops;
  out.partial = res.partial || s != Status::kOk;
  out.gathered = res.method == engine::PathWalkMethod::kGather;
  out.levels = res.levels;
  out.rounds = res.rounds;
  out.bytes_sent = res.bytes_sent;
  return s;
}

std::vector<double> clip_by_gaps(const engine::Timeline& t, std::vector<CpSegment>& segments, size_t nodes,
                                 int32_t init_node) {
  std::vector<double> by_node(nodes, 0.0);
  if (segments.empty() || t.gap_begin.size() != t.calls.size() + 1) return by_node;
  OpenSegment seg(segments, nodes);
  // The arrays through local pointers and counts: the loop's calls out of line (a segment's
  // opening, a node beyond the few) made GCC load each vector's bounds again per piece.
  const CpSegment* const segs = segments.data();
  const size_t nsegs = segments.size();
  const engine::CallRecord* const calls = t.calls.data();
  const size_t ncalls = t.calls.size();
  const engine::GapEntry* const gaps = t.gaps.data();
  const uint32_t* const gap_begin = t.gap_begin.data();
  // The next segment (the first that ends after the time booked) and its bounds in locals, both
  // +inf past the last: one comparison each for "past it?" and "before it?".
  constexpr double kInf = std::numeric_limits<double>::infinity();
  size_t next = 0;
  double sb = segs[0].begin, se = segs[0].end;
  auto skip_to = [&](double x) __attribute__((always_inline)) {
    while (se <= x) {
      if (++next == nsegs) {
        sb = se = kInf;
        return;
      }
      sb = segs[next].begin;
      se = segs[next].end;
    }
  };
  // add and book inline (GCC keeps both out of line otherwise): a call out per piece cost
  // about a tenth of the clip on a ping-pong (two pieces a call).
  auto add = [&](size_t j, int32_t n, double piece) __attribute__((always_inline)) {
    by_node[size_t(n)] += piece;
    seg.add(j, n, piece);
  };
  // Books [a, b) of node `n` (share `w` of the piece's time) to the segments it overlaps. Most
  // pieces lie before the next segment or wholly inside it: those take no loop. A negative
  // node is no node (its size_t lies above any count of nodes: one test for both).
  auto book = [&](double a, double b, int32_t n, double w) __attribute__((always_inline)) {
    if (!(b > a) || size_t(n) >= nodes) return;
    skip_to(a);
    if (!(sb < b)) return;
    if (a >= sb && b <= se) {  // min, max give b, a
      const double piece = (b - a) * w;
      if (piece > 0) add(next, n, piece);
      return;
    }
    for (size_t j = next; j < nsegs && segs[j].begin < b; ++j) {
      const double piece = (std::min(b, segs[j].end) - std::max(a, segs[j].begin)) * w;
      if (piece > 0) add(j, n, piece);
    }
  };
  double covered = -std::numeric_limits<double>::infinity();
  for (uint32_t k = 0; k < ncalls && calls[k].location == 0; ++k) {
    const engine::CallRecord& c = calls[k];
    const uint32_t g0 = gap_begin[k], g1 = gap_begin[k + 1];
    auto gap_seconds = [&] {
      double gap_s = 0;
      for (uint32_t e = g0; e < g1; ++e) gap_s += gaps[e].seconds;
      return gap_s;
    };
    // The gap begins at the latest exit so far (`covered` holds the previous call's), the
    // first call's its length before the call (earlier time is init_node's).
    double gs = covered;
    if (k == 0) {
      gs = c.enter - gap_seconds();
      book(-std::numeric_limits<double>::infinity(), gs, init_node, 1.0);
    }
    // The gap: its nodes' times spread evenly over it (the gap profile has no finer timing;
    // segments begin and end at MPI calls, so gaps lie wholly inside or outside them). A gap
    // before the next segment (off the path: half a ping-pong's) is not summed.
    if (c.enter > gs) {
      skip_to(gs);
      const double gap_s = sb < c.enter ? gap_seconds() : 0;
      if (gap_s > 0 && gs >= sb && c.enter <= se) {
        for (uint32_t e = g0; e < g1; ++e) {  // wholly inside: book's test once for all entries
          const int32_t n = gaps[e].node;
          const double piece = (c.enter - gs) * (gaps[e].seconds / gap_s);
          if (size_t(n) < nodes && piece > 0) add(next, n, piece);
        }
      } else if (gap_s > 0) {
        // Entries in the order booked; a segment boundary inside a gap splits every node alike.
        for (uint32_t e = g0; e < g1; ++e) book(gs, c.enter, gaps[e].node, gaps[e].seconds / gap_s);
      }
    }
    // The call itself (a call nested in an earlier one stays the outer call's).
    book(std::max(c.enter, covered), c.exit, c.node, 1.0);
    covered = std::max(covered, c.exit);
  }
  seg.close();
  return by_node;
}

namespace {

// A main-thread record's waiting intervals, [enter, wait end] and [completion begin, exit],
// the non-empty ones, in that order, to f(a, z).
template <typename F>
[[gnu::always_inline]] inline void waits_of(const engine::CallRecord& c, const WaitRecord& r, F&& f) {
  if (r.wait_end > c.enter) f(c.enter, r.wait_end);
  if (c.exit > r.completion_begin) f(r.completion_begin, c.exit);
}

// busy_intervals' output, written by index: the vector is grown (within the room reserved,
// value-initialised) ahead of what is written, a block at a time, out of the records' loop:
// `need` intervals past `used`. Returns the elements.
constexpr size_t kBusyBlock = 2048;  // records between two looks at the room
[[gnu::noinline]] std::pair<double, double>* grow_busy(std::vector<std::pair<double, double>>& v, size_t used,
                                                       size_t need) {
  if (v.size() < used + need) v.resize(std::min(v.capacity(), std::max(used + need, v.size() + 2 * need)));
  return v.data();
}

}  // namespace

std::vector<std::pair<double, double>> busy_intervals(const engine::Timeline& t, const CpRecords& records,
                                                      double init_enter, double finalize_enter,
                                                      std::vector<double>* wait_node) {
  // The waiting intervals in call order, merged as they come while their beginnings ascend
  // (the main thread's calls one after another); else collected and sorted first. Room for
  // every interval at once, on huge pages where the host has them: growing the vector copied
  // it and faulted in twice its final size.
  std::vector<std::pair<double, double>> busy;
  engine::reserve_big(busy, 2 * records.size() + 1);
  std::pair<double, double>* out = busy.data();
  size_t nb = 0;  // intervals written (busy.size() is the room made)
  double cur = init_enter;
  auto take = [&](double a, double z) __attribute__((always_inline)) {
    const double lo = std::max(a, init_enter), hi = std::min(z, finalize_enter);
    if (!(hi > lo)) return;
    if (lo > cur) out[nb++] = {cur, lo};
    cur = std::max(cur, hi);
  };
  // No node's index reaches the size of an absent wait_node (a negative node's neither).
  double* by_node = wait_node != nullptr ? wait_node->data() : nullptr;
  const size_t nodes = wait_node != nullptr ? wait_node->size() : 0;
  const engine::CallRecord* const calls = t.calls.data();
  // The first pass merges while the intervals ascend (lexicographically, as the sort's order);
  // the first one out of order leaves the rest to the sort below. Its work per record inline
  // (a call per record before: nine tenths of the function).
  bool sorted = true;
  double last_a = -std::numeric_limits<double>::infinity(), last_z = last_a;
  auto merge = [&](double a, double z) __attribute__((always_inline)) {
    if (!sorted) return;
    if (a < last_a || (a == last_a && z < last_z)) {
      sorted = false;
      return;
    }
    last_a = a;
    last_z = z;
    take(a, z);
  };
  // Each record gives at most two intervals (then one more, the last).
  auto room = [&] { out = grow_busy(busy, nb, 2 * kBusyBlock + 1); };
  auto first_pass = [&](const WaitRecord& r) __attribute__((always_inline)) {
    const engine::CallRecord& c = calls[r.call];
    if (size_t(c.node) < nodes)
      by_node[size_t(c.node)] += std::max(r.wait_end - c.enter, 0.0) +
                                 std::max(c.exit - r.completion_begin, 0.0);
    if (c.location != 0 || !sorted) return;  // the main thread's busy time
    waits_of(c, r, merge);
  };
  records.for_each_block(kBusyBlock, room, first_pass);
  if (!sorted) {
    std::vector<std::pair<double, double>> waits;
    waits.reserve(2 * records.size());
    records.for_each([&](const WaitRecord& r) {
      const engine::CallRecord& c = calls[r.call];
      if (c.location == 0) waits_of(c, r, [&](double a, double z) { waits.push_back({a, z}); });
    });
    std::sort(waits.begin(), waits.end());
    nb = 0;
    cur = init_enter;
    out = grow_busy(busy, 0, waits.size() + 1);
    for (const auto& [a, z] : waits) take(a, z);
  }
  out = grow_busy(busy, nb, 1);
  if (finalize_enter > cur) out[nb++] = {cur, finalize_enter};
  busy.resize(nb);
  return busy;
}

}  // namespace critpath::analyzer::passes
