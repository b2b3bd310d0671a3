// critpath — analyzer/passes/wait_states/wait_states.cpp
#include "analyzer/passes/wait_states/wait_states.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "analyzer/engine/big_memory.h"
#include "analyzer/passes/pass_list.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer::passes {

using engine::CollKind;
using engine::kNoCall;

const PatternDef& pattern_def(int p) {
  // The rows of wait_states_metrics.cpp, then rma_metrics.cpp's patterns, in WaitPattern order.
  static const std::vector<PatternDef> kDefs = [] {
    std::vector<PatternDef> defs;
    for (const engine::MetricDecl& d : wait_state_metric_decls())
      defs.push_back({d.id, d.title, d.definition});
    for (const engine::MetricDecl& d : rma_pattern_decls()) defs.push_back({d.id, d.title, d.definition});
    return defs;
  }();
  return kDefs[size_t(p)];
}

void PatternStats::add_slow(double v, int32_t node, int32_t rank) {
  if (count == 0) {
    min = max = v;
  } else {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  ++count;
  sum += v;
  // Top instances, largest first.
  if (worst.size() < kWorstInstances || v > worst.back().value) {
    Instance in{v, node, rank};
    auto it = std::upper_bound(worst.begin(), worst.end(), in,
                               [](const Instance& a, const Instance& b) { return a.value > b.value; });
    worst.insert(it, in);
    if (worst.size() > kWorstInstances) worst.pop_back();
  }
  // Reservoir sample.
  ++seen;
  if (sample.size() < kSampleSize) {
    sample.push_back(v);
  } else {
    const uint64_t j = sample_slot(seen);
    if (j < kSampleSize) sample[j] = v;
  }
}

bool is_test_call(const defs::RegionTable& regions, uint32_t region) {
  return regions.mpi(region).completion == defs::MpiCompletion::kTest;
}

int32_t world_rank_of(const defs::CommTable& comms, uint32_t comm, int32_t r, int32_t me) {
  if (r < 0) return -1;
  if (comm == defs::kCommWorld) return r;
  if (comm == defs::kCommSelf) return r == 0 ? me : -1;
  defs::CommDef d;
  if (!comms.find(comm, d) || size_t(r) >= d.members.size()) return -1;
  return d.members[size_t(r)];
}

namespace {

struct Ctx {
  const engine::Timeline& t;
  WaitStates& w;
  int32_t rank;
  void book(int pattern, uint32_t call, double v) {
    if (!(v > 0) || call == kNoCall) return;
    const int32_t node = t.calls[call].node;
    if (node >= 0 && size_t(node) < w.by_node.size()) w.by_node[size_t(node)][size_t(pattern)] += v;
    w.stats[size_t(pattern)].add(v, node, rank);
  }
};

// The waiting intervals of each call, with their causes (WaitRecord), merged per call.
// Records are kept in ascending call order: a booking for a call after the last record's
// appends (late senders and receivers of one thread are booked so), one for an earlier call
// finds the call's record by a search from where the previous such search ended (the late
// receivers and the collectives are each booked in call order, after the late senders), or
// when there is none adds one aside; finish() folds those into place. A run whose few late
// receivers fall between its millions of late senders adds a few records aside and moves the
// others once, in the room reserved at the start: no index per call, no copy of the records.
class RecordBook {
 public:
  // Room for a record per call (address space: pages are touched as records arrive), on huge
  // pages where the host gives them: a message-bound run books a record at every other call,
  // which on 4 KiB pages cost a fault per 128 records (12 % of a ping-pong's faults).
  explicit RecordBook(const engine::Timeline& t) : t_(t) { engine::reserve_big(recs_, t.calls.size()); }
  // The call waited from its enter until `end` for `cause_time` on `cause_rank`.
  void pre(uint32_t call, double end, int32_t cause_rank, double cause_time) {
    if (call == kNoCall || !(end > t_.calls[call].enter)) return;
    pre_into(get(call), end, cause_rank, cause_time);
  }
  // The call waited from `begin` until its exit (a completion wait).
  void post(uint32_t call, double begin) {
    if (call == kNoCall || !(t_.calls[call].exit > begin)) return;
    WaitRecord& r = get(call);
    r.completion_begin = std::min(r.completion_begin, begin);
  }
  // By call index.
  std::vector<WaitRecord> finish() {
    if (!aside_.empty()) fold_aside();
    for (WaitRecord& r : recs_) r.completion_begin = std::max(r.completion_begin, r.wait_end);
    return std::move(recs_);
  }

 private:
  static void pre_into(WaitRecord& r, double end, int32_t cause_rank, double cause_time) {
    if (end > r.wait_end) {
      r.wait_end = end;
      r.cause_rank = cause_rank;
      r.cause_time = cause_time;
    }
  }
  // The record of `call`: appended, or the last one, inline (a late sender's every booking);
  // an earlier call's out of line.
  [[gnu::always_inline]] WaitRecord& get(uint32_t call) {
    if (recs_.empty() || recs_.back().call < call) return add(recs_, call);
    if (recs_.back().call == call) return recs_.back();
    return get_earlier(call);
  }
  [[gnu::noinline]] WaitRecord& get_earlier(uint32_t call) {
    const size_t at = find(call);
    if (at < recs_.size() && recs_[at].call == call) return recs_[at];
    return add(aside_, call);  // (the same call may come aside twice: fold_aside merges them)
  }
  // The first record at or after `call` (recs_ ascending), searched from the last answer on
  // when `call` is not below the last one asked for, else over the records before it.
  size_t find(uint32_t call) {
    size_t lo = 0, hi = std::min(hint_, recs_.size());
    if (hi < recs_.size() && recs_[hi].call < call) {  // after the hint: galloping
      size_t step = 1;
      lo = hi + 1;
      while (lo + step < recs_.size() && recs_[lo + step - 1].call < call) {
        lo += step;
        step *= 2;
      }
      hi = std::min(recs_.size(), lo + step);
    }
    const auto it = std::lower_bound(recs_.begin() + long(lo), recs_.begin() + long(hi), call,
                                     [](const WaitRecord& r, uint32_t c) { return r.call < c; });
    hint_ = size_t(it - recs_.begin());
    return hint_;
  }
  WaitRecord& add(std::vector<WaitRecord>& to, uint32_t call) {
    WaitRecord& r = to.emplace_back();
    r.call = call;
    r.wait_end = t_.calls[call].enter;
    r.completion_begin = t_.calls[call].exit;
    return r;
  }
  // The records aside, by call (a call's in booking order, merged as its bookings would have
  // merged into one record), into recs_: merged from the back within the reserved room.
  void fold_aside() {
    std::stable_sort(aside_.begin(), aside_.end(),
                     [](const WaitRecord& a, const WaitRecord& b) { return a.call < b.call; });
    size_t n = 0;
    for (size_t i = 0; i < aside_.size(); ++i) {
      if (n > 0 && aside_[n - 1].call == aside_[i].call) {
        WaitRecord& r = aside_[n - 1];
        pre_into(r, aside_[i].wait_end, aside_[i].cause_rank, aside_[i].cause_time);
        r.completion_begin = std::min(r.completion_begin, aside_[i].completion_begin);
      } else {
        aside_[n++] = aside_[i];
      }
    }
    size_t a = recs_.size(), b = n;
    recs_.resize(a + n);
    for (size_t w = a + n; b > 0; --w) {
      if (a > 0 && recs_[a - 1].call > aside_[b - 1].call) recs_[w - 1] = recs_[--a];
      else recs_[w - 1] = aside_[--b];
    }
    aside_.clear();
  }
  const engine::Timeline& t_;
  std::vector<WaitRecord> recs_;   // ascending by call
  std::vector<WaitRecord> aside_;  // calls before recs_.back() with no record in recs_ yet
  size_t hint_ = 0;                // find()'s last answer
};

// --- Late sender (+ wrong order). Receives are in completion order, so the receives a
// call completes are consecutive; in a call completing several receives only the largest
// wait counts (Scalasca's Waitall/any/some rule), booked once at that call. Marks the calls
// holding a late-sender wait in `ls_calls` (a bit per call).
void book_late_senders(Ctx& ctx, RecordBook& rb, const engine::P2pMatch& m,
                       const defs::Definitions& definitions, std::vector<uint64_t>& ls_calls) {
  const engine::Timeline& t = ctx.t;
  // Region -> whether an MPI_Test* call: looked up at each region's first receive, then the
  // last region's answer (a run of receives completes in one kind of call) or the map.
  std::unordered_map<uint32_t, bool> test_regions;
  uint32_t last_region = UINT32_MAX;
  bool last_test = false;
  auto is_test = [&](uint32_t call) {
    const uint32_t region = t.calls[call].region;
    if (region == last_region) return last_test;
    auto it = test_regions.find(region);
    if (it == test_regions.end())
      it = test_regions.emplace(region, is_test_call(definitions.regions, region)).first;
    last_region = region;
    last_test = it->second;
    return last_test;
  };
  struct LsInstance {
    double send_enter;
    int32_t source;
    double idle;
    uint32_t call;
  };
  // The last 100 late-sender instances: recent[head ..), a vector whose front is dropped by
  // moving `head` (compacted now and then): a deque's push and pop cost a call each per wait.
  std::vector<LsInstance> recent;
  size_t head = 0;
  // An upper bound of their send_enter: receives whose message was sent after it (the usual
  // case, messages in send order) skip the scan for wrong-order instances.
  double recent_max = -std::numeric_limits<double>::infinity();
  LsInstance group{0, -1, 0, kNoCall};  // the largest wait of the current call
  // Forced inline: GCC kept it out of line, a call per late sender.
  auto close_group = [&]() __attribute__((always_inline)) {
    if (group.call == kNoCall) return;
    ctx.book(kLateSender, group.call, group.idle);
    rb.pre(group.call, t.calls[group.call].enter + group.idle, group.source, group.send_enter);
    ls_calls[group.call / 64] |= uint64_t(1) << (group.call % 64);
    recent.push_back(group);
    recent_max = std::max(recent_max, group.send_enter);
    if (recent.size() - head > 100 && ++head >= 4096) {
      recent.erase(recent.begin(), recent.begin() + long(head));
      head = 0;
    }
    group = {0, -1, 0, kNoCall};
  };
  for (uint32_t i = 0; i < t.recvs.size(); ++i) {
    const engine::RecvRecord& r = t.recvs[i];
    const double ts = m.send_enter[i];
    if (std::isnan(ts) || r.complete_call == kNoCall) continue;
    if (r.complete_call != group.call) close_group();
    const engine::CallRecord& c = t.calls[r.complete_call];
    if (c.exit < ts) ++ctx.w.p2p_clock_violations;
    // Wrong order: an earlier late-sender instance of this thread whose message was sent
    // after this one's (MPI orders no receives of different threads).
    if (recent_max > ts) {
      recent_max = -std::numeric_limits<double>::infinity();
      for (auto it = recent.begin() + long(head); it != recent.end();) {
        if (it->send_enter > ts && t.calls[it->call].location == c.location) {
          ctx.book(kLateSenderWrongOrder, it->call, it->idle);
          ctx.book(
              it->source == r.peer ? kLateSenderWrongOrderSameSource : kLateSenderWrongOrderDifferentSource,
              it->call, it->idle);
          it = recent.erase(it);
        } else {
          recent_max = std::max(recent_max, it->send_enter);
          ++it;
        }
      }
    }
    if (is_test(r.complete_call)) continue;  // Scalasca skips MPI_Test*
    const double idle = std::min(ts, c.exit) - c.enter;
    if (idle > 0 && idle > group.idle) group = {ts, r.peer, idle, r.complete_call};
  }
  close_group();
}

// --- Late receiver: the sender's completion call waited for the receive to be posted
// (Scalasca's condition: the call ended after the post). Per call only the largest wait;
// a call that already holds a late-sender wait is skipped (no double counting).
void book_late_receivers(Ctx& ctx, RecordBook& rb, const engine::P2pMatch& m,
                         const std::vector<uint64_t>& ls_calls) {
  const engine::Timeline& t = ctx.t;
  std::map<uint32_t, double> lr;                            // ordered: reports must be reproducible
  std::map<uint32_t, std::pair<int32_t, double>> lr_cause;  // call -> (receiver, post enter)
  for (uint32_t i = 0; i < t.sends.size(); ++i) {
    const engine::SendRecord& s = t.sends[i];
    const double tp = m.recv_post_enter[i];
    if (std::isnan(tp) || s.complete_call == kNoCall) continue;
    const engine::CallRecord& c = t.calls[s.complete_call];
    if (c.exit <= tp) continue;  // finished before the receive was posted: buffered
    const double idle = tp - c.enter;
    if (idle > 0 && idle > lr[s.complete_call]) {
      lr[s.complete_call] = idle;
      lr_cause[s.complete_call] = {s.peer, tp};
    }
  }
  for (const auto& [call, idle] : lr)
    if (!(ls_calls[call / 64] >> (call % 64) & 1)) {
      ctx.book(kLateReceiver, call, idle);
      rb.pre(call, t.calls[call].enter + idle, lr_cause[call].first, lr_cause[call].second);
    }
}

// --- Collectives. Who waits for whom is engine::coll_ready's decision (the call's data flow):
// an instance that did not make this rank wait books nothing, and only one that did can be a
// clock-condition violation (the completion ended before the member it waited for began).
void book_collectives(Ctx& ctx, RecordBook& rb, const std::vector<engine::CollSync>& cs,
                      const defs::Definitions& definitions) {
  const engine::Timeline& t = ctx.t;
  WaitStates& w = ctx.w;
  for (uint32_t i = 0; i < t.colls.size() && i < cs.size(); ++i) {
    const engine::CollRecord& c = t.colls[i];
    const engine::CollSync& s = cs[i];
    if (c.complete_call == kNoCall || c.call == kNoCall) continue;
    const double ready = engine::coll_ready(c, s);
    if (std::isnan(ready)) continue;
    const engine::CallRecord& wc = t.calls[c.complete_call];
    const double wait_enter = wc.enter, end = wc.exit;
    const double latest = std::min(ready, end);
    if (ready > end) ++w.coll_clock_violations;
    switch (c.kind) {
      case CollKind::kBarrier:
      case CollKind::kNxN: {
        const bool barrier = c.kind == CollKind::kBarrier;
        ctx.book(barrier ? kWaitBarrier : kWaitNxN, c.complete_call, latest - wait_enter);
        ctx.book(barrier ? kBarrierCompletion : kNxNCompletion, c.complete_call,
                 end - std::max(s.earliest_end, latest));
        rb.pre(c.complete_call, latest, barrier ? s.latest_rank : s.latest_sender_rank, ready);
        rb.post(c.complete_call, std::max(s.earliest_end, latest));
        break;
      }
      case CollKind::kOneToN:
        ctx.book(kLateBroadcast, c.complete_call, latest - wait_enter);
        rb.pre(c.complete_call, latest, world_rank_of(definitions.comms, c.comm, c.root, ctx.rank), ready);
        break;
      case CollKind::kNToOne:
        ctx.book(kEarlyReduce, c.complete_call, latest - wait_enter);
        rb.pre(c.complete_call, latest, s.latest_sender_rank, ready);
        break;
      case CollKind::kScan:
        ctx.book(kEarlyScan, c.complete_call, latest - wait_enter);
        // The exchange names the latest rank overall only: the cause is known when that
        // rank is also the latest of the prefix.
        rb.pre(c.complete_call, latest, ready == s.latest_begin ? s.latest_rank : -1, ready);
        break;
      case CollKind::kOther: break;
    }
  }
}

// --- MPI_Init / MPI_Finalize.
void book_init_finalize(Ctx& ctx, RecordBook& rb, const RunSync& run) {
  const engine::Timeline& t = ctx.t;
  if (t.init_call != kNoCall) {
    const engine::CallRecord& c = t.calls[t.init_call];
    ctx.book(kInitCompletion, t.init_call, c.exit - std::max(run.earliest_init_exit, run.latest_init_enter));
    rb.post(t.init_call, std::max(run.earliest_init_exit, run.latest_init_enter));
  }
  if (t.finalize_call != kNoCall)
    ctx.book(kWaitFinalize, t.finalize_call, run.latest_finalize_enter - t.calls[t.finalize_call].enter);
}

}  // namespace

WaitStates compute_wait_states(const engine::Timeline& t, const engine::P2pMatch& m,
                               const std::vector<engine::CollSync>& cs, const RunSync& run,
                               const defs::Definitions& definitions, size_t nodes, int32_t my_rank) {
  WaitStates w;
  add_wait_states(w, t, m, cs, run, definitions, nodes, my_rank);
  return w;
}

void add_wait_states(WaitStates& w, const engine::Timeline& t, const engine::P2pMatch& m,
                     const std::vector<engine::CollSync>& cs, const RunSync& run,
                     const defs::Definitions& definitions, size_t nodes, int32_t my_rank) {
  if (w.by_node.size() < nodes) w.by_node.resize(nodes, {});
  Ctx ctx{t, w, my_rank};
  RecordBook rb(t);
  std::vector<uint64_t> ls_calls((t.calls.size() + 63) / 64, 0);  // calls holding a late-sender wait
  book_late_senders(ctx, rb, m, definitions, ls_calls);
  book_late_receivers(ctx, rb, m, ls_calls);
  book_collectives(ctx, rb, cs, definitions);
  book_init_finalize(ctx, rb, run);
  w.records = rb.finish();
}

}  // namespace critpath::analyzer::passes
