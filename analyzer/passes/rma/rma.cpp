// critpath — analyzer/passes/rma/rma.cpp: the one-sided wait-state search (rma.h).
#include "analyzer/passes/rma/rma.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

namespace critpath::analyzer::passes {

using defs::MpiRma;
using engine::CallRecord;
using engine::kNoCall;
using engine::RmaRecord;

namespace {

// The call with the longest duration among `calls` (kNoCall for none).
uint32_t longest(const engine::Timeline& t, const std::vector<uint32_t>& calls) {
  uint32_t best = kNoCall;
  for (uint32_t c : calls)
    if (best == kNoCall || t.calls[c].exit - t.calls[c].enter > t.calls[best].exit - t.calls[best].enter)
      best = c;
  return best;
}

// A note of `type` to `peer` about epoch `ordinal` on `win`, with times t0, t1.
RmaNote make_note(RmaNote::Type type, int32_t peer, uint32_t win, uint32_t ordinal, uint32_t call, double t0,
                  double t1 = 0) {
  RmaNote n;
  n.type = type;
  n.call = call;
  n.peer = peer;
  n.win = win;
  n.ordinal = ordinal;
  n.t[0] = t0;
  n.t[1] = t1;
  return n;
}

// What WinState::count counts per partner: epochs of each kind.
enum { kCountStart = 0, kCountPost = 1, kCountLock = 2 };

// Whether the ascending `sorted` holds `win`.
bool holds(const std::vector<uint32_t>& sorted, uint32_t win) {
  return std::binary_search(sorted.begin(), sorted.end(), win);
}

}  // namespace

// Per window, the epochs open while scanning the rank's records.
struct RmaSearch::WinState {
  std::vector<int32_t> members;      // window rank -> world rank
  int64_t access = -1;               // open PSCW access epoch (index in access_)
  std::vector<size_t> exposures;     // open exposure epochs (indices in exposure_), oldest first
  std::map<int32_t, size_t> locked;  // target -> open lock epoch (index in passive_)
  bool lock_all = false;             // a lock_all epoch is open: its targets are in `locked`
  uint32_t lock_all_call = kNoCall;
  // Fence epoch: operations after the n-th fence (n = fences so far) belong to epoch n.
  uint32_t fences = 0;
  struct LastOp {
    double exit = -1, enter = 0;
    uint32_t call = kNoCall;
  };
  std::map<int32_t, LastOp> fence_last;               // target -> the last operation towards it
  std::map<std::pair<int32_t, int>, uint32_t> count;  // (partner, kind) -> epochs so far

  int32_t world(int32_t r) const { return r >= 0 && size_t(r) < members.size() ? members[size_t(r)] : -1; }
};

RmaSearch::RmaSearch(const engine::Timeline& t, const std::vector<engine::CollSync>& wsync,
                     const std::vector<uint32_t>& inconsistent, const defs::Definitions& definitions,
                     int32_t my_rank)
    : t_(t), wsync_(wsync), definitions_(definitions), me_(my_rank), skipped_(inconsistent) {
  std::sort(skipped_.begin(), skipped_.end());
  scan();
}

void RmaSearch::close_passive(Passive& p) {
  p.blocking = longest(t_, p.calls);
  if (p.calls.empty() || p.blocking == kNoCall) return;
  const CallRecord& first = t_.calls[p.calls.front()];
  const CallRecord& last = t_.calls[p.calls.back()];
  const CallRecord& x = t_.calls[p.blocking];
  RmaNote n = make_note(RmaNote::kLockEpoch, p.target, p.win, p.ordinal, p.calls.back(), first.enter,
                        x.enter);
  n.lock = p.lock;
  n.t[2] = x.exit;
  n.t[3] = last.enter;
  n.t[4] = last.exit;
  out_.push_back(n);
  ++epochs_;
}

void RmaSearch::scan() {
  std::map<uint32_t, WinState> wins;
  auto state = [&](uint32_t win) -> WinState& {
    auto it = wins.find(win);
    if (it != wins.end()) return it->second;
    WinState& s = wins[win];
    defs::WindowDef d;
    if (definitions_.windows.find(win, d)) s.members = d.members;
    return s;
  };
  for (size_t i = 0; i < t_.rma.size();) {
    // The records of one call.
    size_t j = i;
    while (j < t_.rma.size() && t_.rma[j].call == t_.rma[i].call) ++j;
    const RmaRecord& r0 = t_.rma[i];
    const uint32_t win = r0.win;
    WinState& s = state(win);
    switch (r0.kind) {
      case MpiRma::kComm: scan_transfers(s, i, j); break;
      case MpiRma::kFence: {
        // Close fence epoch s.fences: tell each target when the last operation towards it ended.
        for (const auto& [target, last] : s.fence_last)
          out_.push_back(
              make_note(RmaNote::kFenceOps, target, win, s.fences, last.call, last.exit, last.enter));
        s.fence_last.clear();
        ++s.fences;
        break;
      }
      case MpiRma::kStart:
      case MpiRma::kComplete:
      case MpiRma::kPost:
      case MpiRma::kWait:
      case MpiRma::kTest: scan_pscw(s, i, j); break;
      case MpiRma::kLock:
      case MpiRma::kLockAll:
      case MpiRma::kFlush:
      case MpiRma::kFlushAll:
      case MpiRma::kUnlock:
      case MpiRma::kUnlockAll: scan_passive(s, i); break;
      case MpiRma::kFree:
        s.fences = 0;
        s.fence_last.clear();
        break;
      case MpiRma::kCreate:
      case MpiRma::kOther:
      case MpiRma::kNone: break;
    }
    i = j;
  }
}

RmaSearch::Passive* RmaSearch::passive_of(WinState& s, uint32_t win, int32_t target) {
  auto it = s.locked.find(target);
  if (it != s.locked.end()) return &passive_[it->second];
  if (!s.lock_all || target < 0) return nullptr;
  Passive p;
  p.win = win;
  p.target = target;
  p.lock = 2;  // lock_all: a shared lock on every target
  p.ordinal = s.count[{target, kCountLock}]++;
  if (s.lock_all_call != kNoCall) p.calls.push_back(s.lock_all_call);
  passive_.push_back(std::move(p));
  s.locked[target] = passive_.size() - 1;
  return &passive_.back();
}

void RmaSearch::add_call(Passive& p, uint32_t call) {
  if (p.calls.empty() || p.calls.back() != call) p.calls.push_back(call);
}

void RmaSearch::scan_transfers(WinState& s, size_t i, size_t j) {
  const uint32_t call = t_.rma[i].call;
  const CallRecord& c = t_.calls[call];
  const uint32_t win = t_.rma[i].win;
  for (size_t k = i; k < j; ++k) {
    const RmaRecord& r = t_.rma[k];
    const int32_t target = s.world(r.peer);
    if (c.node >= 0) {
      if (size_t(c.node) >= bytes_.size()) bytes_.resize(size_t(c.node) + 1, {0, 0, 0});
      bytes_[size_t(c.node)][r.op == RmaRecord::kPut   ? 0
                             : r.op == RmaRecord::kGet ? 1
                                                       : 2] += double(r.bytes);
    }
    if (target < 0 || (k > i && t_.rma[k - 1].peer == r.peer)) continue;  // one per call
    if (s.access >= 0) {
      access_[size_t(s.access)].ops.push_back({call, target});
    } else if (Passive* p = passive_of(s, win, target)) {
      add_call(*p, call);
    } else if (s.fences > 0) {
      auto& last = s.fence_last[target];
      if (c.exit > last.exit) last = {c.exit, c.enter, call};
    }
  }
}

void RmaSearch::scan_pscw(WinState& s, size_t i, size_t j) {
  const RmaRecord& r0 = t_.rma[i];
  const uint32_t call = r0.call;
  const CallRecord& c = t_.calls[call];
  const uint32_t win = r0.win;
  switch (r0.kind) {
    case MpiRma::kStart: {
      Access a;
      a.win = win;
      a.start = call;
      for (size_t k = i; k < j; ++k) {
        const int32_t target = s.world(t_.rma[k].peer);
        if (target >= 0) a.targets.push_back({target, s.count[{target, kCountStart}]++});
      }
      access_.push_back(std::move(a));
      s.access = int64_t(access_.size() - 1);
      break;
    }
    case MpiRma::kComplete: {
      if (s.access < 0) break;
      Access& a = access_[size_t(s.access)];
      a.complete = call;
      s.access = -1;
      ++epochs_;
      for (const auto& [target, ordinal] : a.targets) {
        double last_op = t_.calls[a.start].exit;
        for (const auto& [op, to] : a.ops)
          if (to == target) last_op = std::max(last_op, t_.calls[op].exit);
        out_.push_back(make_note(RmaNote::kComplete, target, win, ordinal, call, c.enter, last_op));
      }
      break;
    }
    case MpiRma::kPost: {
      Exposure e;
      e.win = win;
      e.post = call;
      for (size_t k = i; k < j; ++k) {
        const int32_t origin = s.world(t_.rma[k].peer);
        if (origin < 0) continue;
        const uint32_t ordinal = s.count[{origin, kCountPost}]++;
        e.origins.push_back({origin, ordinal});
        out_.push_back(make_note(RmaNote::kPost, origin, win, ordinal, call, c.enter));
      }
      exposure_.push_back(std::move(e));
      s.exposures.push_back(exposure_.size() - 1);
      break;
    }
    case MpiRma::kWait:
    case MpiRma::kTest: {
      if (s.exposures.empty()) break;
      Exposure& e = exposure_[s.exposures.front()];
      s.exposures.erase(s.exposures.begin());
      e.close = call;
      e.blocking = r0.kind == MpiRma::kWait;
      ++epochs_;
      break;
    }
    default: break;
  }
}

void RmaSearch::scan_passive(WinState& s, size_t i) {
  const RmaRecord& r0 = t_.rma[i];
  const uint32_t call = r0.call;
  const uint32_t win = r0.win;
  switch (r0.kind) {
    case MpiRma::kLock: {
      const int32_t target = s.world(r0.peer);
      if (target < 0) break;
      Passive p;
      p.win = win;
      p.target = target;
      p.lock = r0.lock == 1 ? 1 : 2;
      p.ordinal = s.count[{target, kCountLock}]++;
      p.calls.push_back(call);
      passive_.push_back(std::move(p));
      s.locked[target] = passive_.size() - 1;
      break;
    }
    case MpiRma::kLockAll:
      s.lock_all = true;
      s.lock_all_call = call;
      break;
    case MpiRma::kFlush: {
      if (Passive* p = passive_of(s, win, s.world(r0.peer))) add_call(*p, call);
      break;
    }
    case MpiRma::kFlushAll:
      for (auto& [target, at] : s.locked) add_call(passive_[at], call);
      break;
    case MpiRma::kUnlock: {
      auto it = s.locked.find(s.world(r0.peer));
      if (it == s.locked.end()) break;
      Passive& p = passive_[it->second];
      add_call(p, call);
      passive_at_[{win, p.target, p.ordinal}] = it->second;
      close_passive(p);
      s.locked.erase(it);
      break;
    }
    case MpiRma::kUnlockAll: {
      for (auto& [target, at] : s.locked) {
        Passive& p = passive_[at];
        add_call(p, call);
        passive_at_[{win, p.target, p.ordinal}] = at;
        close_passive(p);
      }
      s.locked.clear();
      s.lock_all = false;
      s.lock_all_call = kNoCall;
      break;
    }
    default: break;
  }
}

void RmaSearch::receive(const std::vector<RmaNote>& notes) {
  // As target: the passive epochs towards this rank, per window, for the lock verdicts.
  std::map<uint32_t, std::vector<const RmaNote*>> locks;
  for (const RmaNote& n : notes) {
    switch (n.type) {
      case RmaNote::kPost: posts_[{n.win, n.peer, n.ordinal}] = n; break;
      case RmaNote::kComplete: completes_[{n.win, n.peer, n.ordinal}] = n; break;
      case RmaNote::kFenceOps: {
        auto [it, fresh] = fence_ops_.try_emplace({n.win, n.ordinal}, n);
        if (!fresh && n.t[0] > it->second.t[0]) it->second = n;
        break;
      }
      case RmaNote::kLockEpoch: locks[n.win].push_back(&n); break;
      case RmaNote::kLockResult: break;
    }
  }
  // Location 0's MPI calls, for "was the target inside MPI" (wait for progress): they come
  // first in Timeline::calls, in call order, which is enter order.
  auto main_end = std::find_if(t_.calls.begin(), t_.calls.end(),
                               [](const CallRecord& c) { return c.location != 0; });
  for (auto& [win, epochs] : locks) {
    if (std::binary_search(skipped_.begin(), skipped_.end(), win)) continue;
    // Lock contention: the latest release, inside this epoch's blocking call, of another
    // origin's epoch holding a conflicting lock (exclusive on either side): the holder's unlock
    // entry frees the lock. Found by the releases' times, not by an assumed grant order: an
    // unlock may return after the next holder got the lock and even finished its epoch (Open
    // MPI: rank 0's unlock returned 0.3 ms after rank 1, which had waited 0.1 s for it,
    // unlocked), so ordering the epochs by their unlock's exit put the waiter first.
    std::vector<const RmaNote*> by_release(epochs.begin(), epochs.end());
    std::stable_sort(by_release.begin(), by_release.end(),
                     [](const RmaNote* a, const RmaNote* b) { return a->t[3] < b->t[3]; });
    for (size_t e = 0; e < epochs.size(); ++e) {
      const RmaNote& me = *epochs[e];
      RmaNote reply;
      reply.type = RmaNote::kLockResult;
      reply.peer = me.peer;
      reply.win = win;
      reply.ordinal = me.ordinal;
      const double x_enter = me.t[1], x_exit = me.t[2];
      double release = -1;
      auto first = std::upper_bound(by_release.begin(), by_release.end(), x_enter,
                                    [](double t, const RmaNote* n) { return t < n->t[3]; });
      for (auto it = first; it != by_release.end() && (*it)->t[3] < x_exit; ++it) {
        const RmaNote& prev = **it;
        if (prev.peer == me.peer || !(prev.lock == 1 || me.lock == 1)) continue;  // me included
        if (prev.t[0] >= x_exit) continue;  // began after this one had the lock
        release = prev.t[3];
        reply.cause = prev.peer;
        reply.call = prev.call;
      }
      if (release > 0) {
        reply.t[0] = release - x_enter;
        reply.t[1] = release;
      }
      // Wait for progress: from the start of the (rest of the) wait, the target (this rank)
      // was outside MPI and entered it only later, inside the blocking call.
      const double from = release > 0 ? release : x_enter;
      if (me.peer != me_) {
        auto it = std::upper_bound(t_.calls.begin(), main_end, from,
                                   [](double t, const CallRecord& c) { return t < c.enter; });
        const bool inside = it != t_.calls.begin() && std::prev(it)->exit > from;
        if (!inside && it != main_end && it->enter < x_exit) {
          reply.t[2] = it->enter - from;
          reply.t[3] = it->enter;
          reply.t[4] = double(it - t_.calls.begin());
        }
      }
      if (reply.t[0] > 0 || reply.t[2] > 0) replies_.push_back(reply);
    }
  }
}

void RmaSearch::add(int pattern, uint32_t call, double v, int32_t cause, double cause_time,
                    uint32_t cause_call, bool window_coll, uint32_t win, uint32_t nth) {
  if (v > 0 && call != kNoCall)
    bookings_.push_back({pattern, call, v, cause, cause_time, cause_call, window_coll, win, nth});
}

std::vector<RmaWait> RmaSearch::waits() const {
  std::vector<RmaWait> out;
  for (const Booking& b : bookings_) {
    if (b.pattern == kRmaLateComplete || b.pattern == kRmaEarlyFence) continue;  // parts
    RmaWait w;
    w.call = b.call;
    w.amount = std::min(b.value, t_.calls[b.call].exit - t_.calls[b.call].enter);
    w.causer = b.cause;
    w.window_coll = b.window_coll;
    w.cause_call = b.cause_call;
    w.win = b.win;
    w.nth = b.nth;
    w.cause_time = b.cause_time;
    out.push_back(w);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RmaWait& a, const RmaWait& b) { return a.call < b.call; });
  return out;
}

void RmaSearch::receive_replies(const std::vector<RmaNote>& notes) {
  for (const RmaNote& n : notes) {
    if (n.type != RmaNote::kLockResult) continue;
    auto it = passive_at_.find({n.win, n.peer, n.ordinal});
    if (it == passive_at_.end()) continue;
    const Passive& p = passive_[it->second];
    add(kRmaLockContention, p.blocking, n.t[0], n.cause, n.t[1], n.call);
    add(kRmaWaitForProgress, p.blocking, n.t[2], p.target, n.t[3], uint32_t(n.t[4]));
  }
}

void RmaSearch::book(WaitStates& w) {
  book_access_epochs();
  book_exposure_epochs();
  book_window_collectives();
  write_wait_states(w);
}

// --- PSCW access epochs (origin): Late Post, Early Transfer.
void RmaSearch::book_access_epochs() {
  for (const Access& a : access_) {
    if (a.complete == kNoCall || holds(skipped_, a.win)) continue;
    double latest = -1;
    int32_t latest_rank = -1;
    uint32_t latest_call = kNoCall;
    std::map<int32_t, const RmaNote*> post_of;
    bool complete = true;
    for (const auto& [target, ordinal] : a.targets) {
      auto it = posts_.find({a.win, target, ordinal});
      if (it == posts_.end()) {
        complete = false;
        continue;
      }
      post_of[target] = &it->second;
      if (it->second.t[0] > latest) {
        latest = it->second.t[0];
        latest_rank = target;
        latest_call = it->second.call;
      }
    }
    if (!complete) ++unmatched_[a.win];
    if (latest_rank < 0) continue;
    const CallRecord& st = t_.calls[a.start];
    const CallRecord& co = t_.calls[a.complete];
    if (latest > st.enter && latest < st.exit) {
      add(kRmaLatePost, a.start, latest - st.enter, latest_rank, latest, latest_call);  // blocking Win_start
    } else {
      add(kRmaLatePost, a.complete, std::min(latest, co.exit) - co.enter, latest_rank, latest, latest_call);
      for (const auto& [op, target] : a.ops) {  // an operation waiting for its target's post
        auto it = post_of.find(target);
        const CallRecord& oc = t_.calls[op];
        if (it == post_of.end()) continue;
        const double post = it->second->t[0];
        if (post > oc.enter && post < oc.exit)
          add(kRmaEarlyTransfer, op, post - oc.enter, target, post, it->second->call);
      }
    }
  }
}

// --- PSCW exposure epochs (target): Early Wait, Late Complete.
void RmaSearch::book_exposure_epochs() {
  for (const Exposure& e : exposure_) {
    if (e.close == kNoCall || holds(skipped_, e.win)) continue;
    double latest = -1, last_op = -1;
    int32_t latest_rank = -1;
    uint32_t latest_call = kNoCall;
    bool complete = true;
    for (const auto& [origin, ordinal] : e.origins) {
      auto it = completes_.find({e.win, origin, ordinal});
      if (it == completes_.end()) {
        complete = false;
        continue;
      }
      if (it->second.t[0] > latest) {
        latest = it->second.t[0];
        latest_rank = origin;
        latest_call = it->second.call;
      }
      last_op = std::max(last_op, it->second.t[1]);
    }
    if (!complete) ++unmatched_[e.win];
    if (!e.blocking || latest_rank < 0) continue;  // Win_test polls: no wait state
    const CallRecord& wc = t_.calls[e.close];
    const double end = std::min(latest, wc.exit);
    add(kRmaEarlyWait, e.close, end - wc.enter, latest_rank, latest, latest_call);
    add(kRmaLateComplete, e.close, end - std::max(last_op, wc.enter), -1, 0);
  }
}

// --- Window collectives: creation, fences (with Early Fence), free.
void RmaSearch::book_window_collectives() {
  std::map<uint32_t, uint32_t> fence_no;  // window -> fences seen
  std::map<uint32_t, uint32_t> coll_no;   // window -> window collectives seen (creation, fences, free)
  for (size_t i = 0; i < t_.win_colls.size() && i < wsync_.size(); ++i) {
    const engine::CollRecord& c = t_.win_colls[i];
    const engine::CollSync& s = wsync_[i];
    if (holds(skipped_, c.comm)) continue;
    const uint32_t nth = coll_no[c.comm]++;
    const CallRecord& cr = t_.calls[c.call];
    const MpiRma role = definitions_.regions.mpi(c.op).rma;  // creation, fence or free
    // Synchronizing only when every member's call overlapped every other (Scalasca's test).
    const bool sync = s.valid && s.comm_size > 1 && s.latest_begin < s.earliest_end;
    const double wait = sync ? std::min(s.latest_begin, cr.exit) - cr.enter : 0.0;
    if (role == MpiRma::kCreate)
      add(kRmaWaitAtCreate, c.call, wait, s.latest_rank, s.latest_begin, kNoCall, true, c.comm, nth);
    if (role == MpiRma::kFree)
      add(kRmaWaitAtFree, c.call, wait, s.latest_rank, s.latest_begin, kNoCall, true, c.comm, nth);
    if (role != MpiRma::kFence) continue;
    // Early Fence: this fence closes epoch n (operations after fence n - 1); the latest
    // operation towards this rank ended inside it.
    const uint32_t n = fence_no[c.comm]++;
    double early = 0;
    int32_t early_rank = -1;
    double early_time = 0;
    uint32_t early_call = kNoCall;
    if (n > 0) {
      auto it = fence_ops_.find({c.comm, n});
      if (it != fence_ops_.end() && it->second.t[0] > cr.enter) {
        early = std::min(it->second.t[0], cr.exit) - cr.enter;
        early_rank = it->second.peer;
        early_time = it->second.t[1];
        early_call = it->second.call;
      }
    }
    add(kRmaEarlyFence, c.call, early, early_rank, early_time, early_call);
    // Wait at Fence includes Early Fence, which counts even when the fence did not visibly
    // synchronize all members.
    if (wait >= early)
      add(kRmaWaitAtFence, c.call, wait, s.latest_rank, s.latest_begin, kNoCall, true, c.comm, nth);
    else add(kRmaWaitAtFence, c.call, early, early_rank, early_time, early_call);
  }
}

// Into the wait states: values per node, statistics, and wait records (one per call).
void RmaSearch::write_wait_states(WaitStates& w) const {
  for (const Booking& b : bookings_) {
    const int32_t node = t_.calls[b.call].node;
    if (node >= 0 && size_t(node) < w.by_node.size()) w.by_node[size_t(node)][size_t(b.pattern)] += b.value;
    w.stats[size_t(b.pattern)].add(b.value, node, me_);
  }
  // Wait records: the parts (Late Complete, Early Fence) lie inside their parents; a call's
  // wait ends at the largest of its waits, caused by that one's cause.
  std::map<uint32_t, WaitRecord> recs;
  for (const Booking& b : bookings_) {
    if (b.pattern == kRmaLateComplete) continue;
    const CallRecord& c = t_.calls[b.call];
    auto [it, fresh] = recs.try_emplace(b.call);
    WaitRecord& r = it->second;
    if (fresh) {
      r.call = b.call;
      r.wait_end = c.enter;
      r.completion_begin = c.exit;
    }
    const double end = std::min(c.exit, c.enter + b.value);
    if (end > r.wait_end) {
      r.wait_end = end;
      r.cause_rank = b.cause == me_ ? -1 : b.cause;
      r.cause_time = b.cause_time;
    }
  }
  if (!recs.empty()) {
    for (auto& [call, r] : recs) w.records.push_back(r);
    std::stable_sort(w.records.begin(), w.records.end(),
                     [](const WaitRecord& a, const WaitRecord& b) { return a.call < b.call; });
  }
}

std::vector<std::string> RmaSearch::notes() const {
  std::vector<std::string> out;
  char buf[256];
  for (uint32_t win : skipped_) {
    // Every member knows: the first one says it.
    defs::WindowDef d;
    if (definitions_.windows.find(win, d) && !d.members.empty() && d.members.front() != me_) continue;
    std::snprintf(buf, sizeof buf,
                  "RMA analysis skipped: inconsistent RMA epochs on window %u (its members "
                  "recorded different numbers of creations, fences or frees)",
                  win);
    out.emplace_back(buf);
  }
  for (const auto& [win, n] : unmatched_) {
    std::snprintf(buf, sizeof buf,
                  "RMA: %llu epochs on window %u have no matching epoch on their partner "
                  "(inconsistent RMA epochs); their wait states are not analysed",
                  static_cast<unsigned long long>(n), win);
    out.emplace_back(buf);
  }
  return out;
}

Status compute_rma(const engine::Timeline& t, const std::vector<engine::CollSync>& wsync,
                   const std::vector<uint32_t>& inconsistent, const defs::Definitions& definitions,
                   int32_t my_rank, const engine::Group& group, WaitStates& w, RmaResult& out) {
  RmaSearch search(t, wsync, inconsistent, definitions, my_rank);
  const int P = group.size();
  // Every rank takes part in both exchanges (the collectives are over the whole group), even
  // without RMA: a rank cannot know that nobody sends it a note.
  auto exchange = [&](const std::vector<RmaNote>& notes, std::vector<RmaNote>& received) -> Status {
    std::map<int32_t, std::vector<RmaNote>> by_dest;  // only the ranks written to
    for (const RmaNote& n : notes)
      if (n.peer >= 0 && n.peer < P) by_dest[n.peer].push_back(n);
    std::vector<engine::Comm::Piece> pieces;
    for (const auto& [d, v] : by_dest) {
      pieces.push_back({d, reinterpret_cast<const unsigned char*>(v.data()), v.size() * sizeof(RmaNote)});
      out.bytes_sent += v.size() * sizeof(RmaNote);
    }
    std::vector<engine::Comm::Parcel> recv;
    CRITPATH_FORWARD_IF_ERROR(group.exchange(pieces, recv));
    received.clear();
    for (const engine::Comm::Parcel& parcel : recv) {
      const size_t at = received.size(), n = parcel.bytes.size() / sizeof(RmaNote);
      received.resize(at + n);
      if (n) std::memcpy(received.data() + at, parcel.bytes.data(), n * sizeof(RmaNote));
      for (size_t m = at; m < at + n; ++m) received[m].peer = parcel.peer;
    }
    return Status::kOk;
  };
  // Whether anybody has RMA records at all: most runs have none, and skip both exchanges.
  int any = t.rma.empty() ? 0 : 1;
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(&any, 1, engine::ReduceOp::kMax));
  out.any = any != 0;
  if (any) {
    std::vector<RmaNote> received, replies;
    CRITPATH_FORWARD_IF_ERROR(exchange(search.outgoing(), received));
    search.receive(received);
    CRITPATH_FORWARD_IF_ERROR(exchange(search.replies(), replies));
    search.receive_replies(replies);
  }
  search.book(w);
  out.epochs = search.epochs();
  out.notes = search.notes();
  out.bytes_by_node = search.bytes_by_node();
  out.waits = search.waits();
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
