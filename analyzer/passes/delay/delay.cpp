// critpath — analyzer/passes/delay/delay.cpp: the delay analysis (see delay.h).
//
//   1. wait instances of this rank (the costed families), each with its causer and the
//      causing call's identity on the causer (send/receive index, collective instance)
//   2. W -> C: per instance its amount and W's time vector since W's previous
//      synchronization with C                                       (one alltoallv)
//   3. at C: C's vector and own waits since the same point; d, D, scale; short-term cost;
//      the local part of the propagated costs; reply W the indirect share  (one alltoallv)
//   4. backward propagation of the costs over every rank's instances: a distributed backward
//      replay over the engine's mailbox (or, a testing aid, on rank 0 in batches of phases:
//      DelayReplay)
//   5. at C: long-term cost r_v * d / D; at W: direct/indirect, propagating/terminal
#include "analyzer/passes/delay/delay.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyzer/engine/grouping.h"
#include "analyzer/engine/mailbox.h"
#include "libtrace/buffer/varint.h"

namespace critpath::analyzer::passes {

using engine::CollKind;
using engine::kNoCall;
// The gathered propagation's integers: LEB128 varints, signed deltas zigzagged.
using trace::get_varint;
using trace::put_varint;
using trace::unzigzag;
using trace::zigzag;

namespace {

constexpr uint32_t kNone = UINT32_MAX;

// How the causer finds its causing call: the message (send / receive), the collective or
// window-collective instance, or the call index itself (one-sided notes carry it).
enum CauseKind : uint8_t {
  kCauseSend = 0,
  kCauseRecv = 1,
  kCauseColl = 2,
  kCauseCall = 3,
  kCauseWinColl = 4
};

// 40 bytes, no padding but the last 6 (one per wait instance: millions in a message-bound run).
struct Inst {
  double amount = 0;
  double cause_time = 0;    // when the cause happened (global seconds, the causer's clock)
  uint32_t call = kNoCall;  // the waiting call (location 0)
  int32_t causer = -1;      // world rank
  uint32_t cause_a = 0;     // send / receive index on the causer, or the communicator
  uint32_t cause_b = 0;     // the collective's instance number on that communicator
  uint8_t family = 0;
  uint8_t cause_kind = 0;
};
static_assert(sizeof(Inst) == 40, "a wait instance is 40 bytes");

template <typename T>
void put(std::vector<unsigned char>& b, T v) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  b.insert(b.end(), bytes, bytes + sizeof(T));
}
// Writes fixed-size fields into room made beforehand: no capacity check per field.
struct Writer {
  unsigned char* p;
  template <typename T>
  void put(T v) {
    std::memcpy(p, &v, sizeof(T));
    p += sizeof(T);
  }
};
template <typename T>
bool get(const unsigned char*& p, const unsigned char* end, T& v) {
  if (size_t(end - p) < sizeof(T)) return false;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return true;
}

using Vec = std::vector<std::pair<uint32_t, double>>;  // (global call path, seconds), sorted

// An allocator whose resize() leaves new bytes as they are (no memset): for buffers written
// through a pointer right after (step 2's, tens of MB in a message-bound run).
template <typename T>
struct UninitAlloc : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitAlloc<U>;
  };
  UninitAlloc() = default;
  template <typename U>
  UninitAlloc(const UninitAlloc<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using Bytes = std::vector<unsigned char, UninitAlloc<unsigned char>>;

// lower_bound_from with its three common answers (the hint itself, or one of the two entries
// after it: a ping-pong's synchronizations with its peer alternate sends and receives) inline:
// it is asked four times per wait.
[[gnu::always_inline]] inline size_t lower_bound_near(const std::vector<uint32_t>& v, uint32_t k,
                                                      size_t& hint) {
  const size_t h = hint;
  if (h <= v.size() && (h == 0 || v[h - 1] < k)) {
    if (h == v.size() || v[h] >= k) return h;
    if (h + 1 == v.size() || v[h + 1] >= k) return hint = h + 1;
    if (h + 2 == v.size() || v[h + 2] >= k) return hint = h + 2;
  }
  return lower_bound_from(v, k, hint);
}

// Where this rank last synchronized with a peer before a call: messages exchanged with it
// (either direction) and collectives over a communicator holding it that synchronize
// (engine::synchronizes: not those with every count zero, nor those whose senders the byte
// totals cannot name).
class SyncIndex {
 public:
  SyncIndex(const engine::Timeline& t, const std::vector<engine::CollSync>& cs, const defs::Definitions& defs,
            int32_t me)
      : defs_(defs), me_(me) {
    // With one location calling MPI every call is location 0's: no call is looked at.
    const bool one = t.mpi_locations <= 1 && (t.calls.empty() || t.calls.back().location == 0);
    add_messages(t, one);
    for (size_t i = 0; i < t.colls.size(); ++i) {
      const engine::CollRecord& c = t.colls[i];
      if (c.complete_call != kNoCall && t.calls[c.complete_call].location == 0 &&
          c.kind != CollKind::kOther && (i >= cs.size() || engine::synchronizes(c, cs[i])))
        colls_.push_back({c.complete_call, c.comm});
    }
    add_rma(t);
    for (auto& [peer, ps] : p2p_) {
      if (ps.unsorted) std::sort(ps.calls.begin(), ps.calls.end());
      if (ps.epochs.empty()) continue;
      // One-sided epochs too (each list mostly ascending as recorded, so sorted cheaply).
      if (!std::is_sorted(ps.epochs.begin(), ps.epochs.end())) std::sort(ps.epochs.begin(), ps.epochs.end());
      std::vector<uint32_t> all(ps.epochs.size() + ps.calls.size());
      std::merge(ps.epochs.begin(), ps.epochs.end(), ps.calls.begin(), ps.calls.end(), all.begin());
      ps.calls.swap(all);
      ps.epochs = std::vector<uint32_t>();
    }
    std::sort(colls_.begin(), colls_.end());
  }
  // The messages' completing calls per peer, sends and receives merged by call as they are
  // read (each list mostly ascends as recorded): straight into PeerSyncs::calls, without the
  // two lists, their sortedness checks and a merge (a ping-pong's every message).
  // The peer's entry and its last call kept in locals: one load of the list's end per message.
  void add_messages(const engine::Timeline& t, bool one) {
    const engine::SendRecord* s = t.sends.data();
    const engine::SendRecord* const s_end = s + t.sends.size();
    const engine::RecvRecord* r = t.recvs.data();
    const engine::RecvRecord* const r_end = r + t.recvs.size();
    int32_t peer = -1;
    PeerSyncs* at = nullptr;
    uint32_t last = 0;  // at's last call
    while (s != s_end || r != r_end) {
      const bool send = r == r_end || (s != s_end && s->complete_call <= r->complete_call);
      const int32_t p = send ? s->peer : r->peer;
      const uint32_t call = send ? s->complete_call : r->complete_call;
      s += send ? 1 : 0;
      r += send ? 0 : 1;
      if (call == kNoCall || p < 0 || !(one || t.calls[call].location == 0)) continue;
      if (p != peer) {
        at = &p2p_[p];
        peer = p;
        last = at->calls.empty() ? 0 : at->calls.back();
      }
      if (call < last) at->unsorted = true;
      last = call;
      at->calls.push_back(call);
    }
  }
  // One-sided synchronizations: PSCW epochs with their partners (start, complete / post,
  // wait), lock epochs with their target, window collectives with the window's members.
  void add_rma(const engine::Timeline& t) {
    std::unordered_map<uint32_t, std::vector<int32_t>> access;                 // win -> targets
    std::unordered_map<uint32_t, std::deque<std::vector<int32_t>>> exposures;  // win -> origins
    for (size_t i = 0; i < t.rma.size(); ++i) {
      const engine::RmaRecord& r = t.rma[i];
      if (t.calls[r.call].location != 0) continue;
      const int32_t peer = window_member(r.win, r.peer);
      switch (r.kind) {
        case defs::MpiRma::kStart:
          if (i == 0 || t.rma[i - 1].call != r.call) access[r.win].clear();
          if (peer >= 0) access[r.win].push_back(peer);
          break;
        case defs::MpiRma::kPost:
          if (i == 0 || t.rma[i - 1].call != r.call) exposures[r.win].emplace_back();
          if (peer >= 0) exposures[r.win].back().push_back(peer);
          break;
        case defs::MpiRma::kComplete:
          for (int32_t p : access[r.win]) add_sync(p, r.call);
          break;
        case defs::MpiRma::kWait:
        case defs::MpiRma::kTest:
          if (!exposures[r.win].empty()) {
            for (int32_t p : exposures[r.win].front()) add_sync(p, r.call);
            exposures[r.win].pop_front();
          }
          break;
        case defs::MpiRma::kLock:
        case defs::MpiRma::kUnlock:
        case defs::MpiRma::kFlush: add_sync(peer, r.call); break;
        default: break;
      }
    }
    for (const auto& c : t.win_colls)
      if (t.calls[c.call].location == 0) colls_.push_back({c.call, kWindowBit | c.comm});
  }

  // The latest synchronization call with `peer` strictly before call `k`; kNone when none.
  // Inline: asked twice per wait, mostly of the same peer, answered by the cursor's entry.
  [[gnu::always_inline]] uint32_t before(int32_t peer, uint32_t k) {
    uint32_t best = kNone;
    if (peer != asked_peer_) ask(peer);  // consecutive questions mostly name the same peer
    if (asked_) {
      const size_t at = lower_bound_near(asked_->calls, k, asked_->cursor);
      if (at > 0) best = asked_->calls[at - 1];
    }
    return colls_.empty() ? best : coll_before(peer, k, best);
  }

 private:
  void ask(int32_t peer) {
    const auto it = peer >= 0 ? p2p_.find(peer) : p2p_.end();
    asked_ = it == p2p_.end() ? nullptr : &it->second;
    asked_peer_ = peer;
  }
  // before() past the messages: a later synchronizing collective with `peer` than `best`.
  uint32_t coll_before(int32_t peer, uint32_t k, uint32_t best) {
    auto c = std::lower_bound(colls_.begin(), colls_.end(), std::make_pair(k, uint32_t(0)));
    for (int scanned = 0; c != colls_.begin() && scanned < 256; ++scanned) {
      --c;
      if (best != kNone && c->first <= best) break;
      if (member(c->second, peer)) {
        best = best == kNone ? c->first : std::max(best, c->first);
        break;
      }
    }
    return best;
  }

  // Window collectives share colls_, their window id marked (ids are below 2^31).
  static constexpr uint32_t kWindowBit = 0x80000000u;
  int32_t window_member(uint32_t win, int32_t r) {
    const std::vector<int32_t>& m = window_members(win);
    return r >= 0 && size_t(r) < m.size() ? m[size_t(r)] : -1;
  }
  const std::vector<int32_t>& window_members(uint32_t win) {
    auto it = windows_.find(win);
    if (it == windows_.end()) {
      defs::WindowDef d;
      it = windows_.emplace(win, defs_.windows.find(win, d) ? d.members : std::vector<int32_t>{}).first;
    }
    return it->second;
  }
  bool member(uint32_t comm, int32_t peer) {
    if (comm & kWindowBit) {
      const std::vector<int32_t>& m = window_members(comm & ~kWindowBit);
      return std::find(m.begin(), m.end(), peer) != m.end();
    }
    if (comm == defs::kCommWorld) return true;
    if (comm == defs::kCommSelf) return peer == me_;
    auto it = members_.find(comm);
    if (it == members_.end()) {
      defs::CommDef d;
      std::vector<int32_t> m;
      if (defs_.comms.find(comm, d)) m = d.members;
      std::sort(m.begin(), m.end());
      it = members_.emplace(comm, std::move(m)).first;
    }
    return std::binary_search(it->second.begin(), it->second.end(), peer);
  }
  const defs::Definitions& defs_;
  int32_t me_;
  // Per peer (world rank), the calls that synchronized with it, ascending: one search per
  // question. The one-sided epochs' in a list of their own, merged with the messages' at the
  // end.
  void add_sync(int32_t peer, uint32_t call) {
    if (peer < 0) return;
    if (peer != last_peer_) {
      last_ = &p2p_[peer];
      last_peer_ = peer;
    }
    last_->epochs.push_back(call);
  }
  // Only the peers this rank synchronized with (nothing here is sized by the ranks), with
  // where its last search ended.
  struct PeerSyncs {
    std::vector<uint32_t> epochs;  // while the index is made: the one-sided epochs' calls
    std::vector<uint32_t> calls;   // the messages' (add_messages), then all, ascending
    size_t cursor = 0;
    bool unsorted = false;  // a message's call below the one before it
  };
  std::unordered_map<int32_t, PeerSyncs> p2p_;
  PeerSyncs* last_ = nullptr;  // p2p_[last_peer_] (the nodes never move)
  int32_t last_peer_ = -1;
  PeerSyncs* asked_ = nullptr;  // the entry of the peer before() last asked about, or none
  int32_t asked_peer_ = INT32_MIN;
  std::vector<std::pair<uint32_t, uint32_t>> colls_;  // (call, comm), by call
  std::unordered_map<uint32_t, std::vector<int32_t>> members_;
  std::unordered_map<uint32_t, std::vector<int32_t>> windows_;  // window -> world ranks
};

// The waiting time inside each call (the wait records' intervals, at most the call), to
// exclude from time vectors. The records are by call (WaitStates::records): a call's is
// found from where the last question's search ended, as the questions mostly ascend; no
// array per call (16 MB for a ping-pong's 2M calls, made for the one interval that starts
// at the run's start). Records out of call order (not made so today) fall back to the array.
class WaitOf {
 public:
  WaitOf(const engine::Timeline& t, const std::vector<WaitRecord>& records) : t_(t), records_(records) {}
  double operator[](uint32_t k) {
    if (!checked_) {
      checked_ = true;
      sorted_ = std::is_sorted(records_.begin(), records_.end(),
                               [](const WaitRecord& x, const WaitRecord& y) { return x.call < y.call; });
      if (!sorted_) make();
    }
    if (!sorted_) return by_call_[k];
    // The last record of call k (the one the array would keep): past every record up to k.
    size_t i = cursor_;
    const auto up = [k](uint32_t call, const WaitRecord& r) { return call < r.call; };
    if (i > 0 && records_[i - 1].call > k) {
      i = size_t(std::upper_bound(records_.begin(), records_.begin() + long(i), k, up) - records_.begin());
    } else {
      for (int step = 0; i < records_.size() && records_[i].call <= k; ++i)
        if (++step == 8) {  // far ahead: a search
          i = size_t(std::upper_bound(records_.begin() + long(i), records_.end(), k, up) - records_.begin());
          break;
        }
    }
    cursor_ = i;
    return i > 0 && records_[i - 1].call == k ? wait_in(records_[i - 1]) : 0.0;
  }

 private:
  double wait_in(const WaitRecord& r) const {
    const engine::CallRecord& c = t_.calls[r.call];
    const double w = std::max(0.0, r.wait_end - c.enter) + std::max(0.0, c.exit - r.completion_begin);
    return std::min(w, c.exit - c.enter);
  }
  void make() {
    by_call_.assign(t_.calls.size(), 0.0);
    for (const WaitRecord& r : records_) by_call_[r.call] = wait_in(r);
  }
  const engine::Timeline& t_;
  const std::vector<WaitRecord>& records_;
  bool checked_ = false, sorted_ = false;
  size_t cursor_ = 0;            // past the records of the calls up to the last question's
  std::vector<double> by_call_;  // per call, when the records are not by call
};

// Time per global call path between the exit of call `a` (kNone: the start) and the enter of
// call `b`, waiting time excluded: the gaps before calls a+1..b and the MPI calls a+1..b-1.
// Into `out` (sorted by call path); `raw` is scratch. Both reused: no allocation per wait.
void interval_vector_any(const engine::Timeline& t, WaitOf& wait_of, const std::vector<int>& l2g,
                         uint32_t first, uint32_t b, Vec& raw, Vec& out) {
  raw.clear();
  out.clear();
  auto add = [&](int32_t node, double s) {
    if (node < 0 || size_t(node) >= l2g.size() || !(s > 0)) return;
    const int g = l2g[size_t(node)];
    if (g >= 0) raw.push_back({uint32_t(g), s});
  };
  for (uint32_t k = first; k <= b && k < t.calls.size(); ++k) {
    if (t.calls[k].location != 0) break;  // location 0's calls come first
    if (k + 1 < t.gap_begin.size())
      for (uint32_t e = t.gap_begin[k]; e < t.gap_begin[k + 1]; ++e) add(t.gaps[e].node, t.gaps[e].seconds);
    if (k < b) add(t.calls[k].node, t.calls[k].exit - t.calls[k].enter - wait_of[k]);
  }
  if (raw.size() > 1) std::sort(raw.begin(), raw.end());
  for (const auto& [g, s] : raw) {
    if (!out.empty() && out.back().first == g) out.back().second += s;
    else out.push_back({g, s});
  }
}
// The timeline's arrays the steps read per wait, as pointers and counts taken once: a
// vector's size() is two loads, a subtraction and a division by the record's size at every
// use (a fifth of step 3's instructions per wait, before).
template <typename T>
struct View {
  const T* p = nullptr;
  size_t n = 0;
  explicit View(const std::vector<T>& v) : p(v.data()), n(v.size()) {}
  const T& operator[](size_t i) const { return p[i]; }
  size_t size() const { return n; }
};
struct TimelineView {
  TimelineView(const engine::Timeline& t, const std::vector<int>& l2g)
      : calls(t.calls), sends(t.sends), recvs(t.recvs), gap_begin(t.gap_begin), gaps(t.gaps), l2g(l2g) {}
  View<engine::CallRecord> calls;
  View<engine::SendRecord> sends;
  View<engine::RecvRecord> recvs;
  View<uint32_t> gap_begin;
  View<engine::GapEntry> gaps;
  View<int> l2g;  // local node -> global call path
};

// The common interval (a ping-pong's on both sides: b follows the synchronization at once) is
// b's gap alone, mostly one entry: true with its entries (`n`, 0 or 1) in `x`, without a
// vector; false for any other interval (interval_vector_any).
[[gnu::always_inline]] inline bool gap_only(const TimelineView& t, uint32_t a, uint32_t b,
                                            std::pair<uint32_t, double>& x, uint32_t& n) {
  n = 0;
  const uint32_t first = a == kNone ? 0 : a + 1;
  if (first != b || size_t(b) + 1 >= t.gap_begin.size()) return false;
  const uint32_t e0 = t.gap_begin[b], e1 = t.gap_begin[b + 1];
  if (e1 - e0 > 1 || t.calls[b].location != 0) return false;
  if (e1 == e0) return true;
  const int32_t node = t.gaps[e0].node;
  const double s = t.gaps[e0].seconds;
  if (node < 0 || size_t(node) >= t.l2g.size() || !(s > 0)) return true;
  const int g = t.l2g[size_t(node)];
  if (g >= 0) {
    x = {uint32_t(g), s};
    n = 1;
  }
  return true;
}

// Step 1: this rank's wait instances of the costed families, by call (the same amounts the
// wait-state pass books: per call the largest late-sender / late-receiver wait).
class InstanceCollector {
 public:
  InstanceCollector(const DelayInput& in, double& elsewhere)
      : in_(in), t_(*in.timeline), m_(*in.match), elsewhere_(elsewhere), has_ls_(t_.calls.size(), 0) {}

  // Late sender: receives are in completion order; per call the largest wait.
  void add_late_senders() {
    out_.reserve(t_.recvs.size() + t_.colls.size());  // at most one per receive or collective
    Inst group;
    auto close = [&] {
      if (group.call != kNoCall && group.amount > 0) {
        has_ls_[group.call] = 1;
        keep(group);
      }
      group = Inst{};
    };
    // The arrays as pointers in locals: close() stores bytes, after which the compiler would
    // read every vector's bounds again.
    const engine::RecvRecord* const recvs = t_.recvs.data();
    const engine::CallRecord* const calls = t_.calls.data();
    const double* const send_enter = m_.send_enter.data();
    const uint32_t* const send_group = m_.send_group.data();
    const uint32_t* const send_pos = m_.send_pos.data();
    const uint32_t n = uint32_t(t_.recvs.size());
    for (uint32_t i = 0; i < n; ++i) {
      const engine::RecvRecord& r = recvs[i];
      const double ts = send_enter[i];
      if (std::isnan(ts) || r.complete_call == kNoCall || send_group[i] == UINT32_MAX) continue;
      if (r.complete_call != group.call) close();
      if (test_call(r.complete_call)) continue;
      const engine::CallRecord& c = calls[r.complete_call];
      const double idle = std::min(ts, c.exit) - c.enter;
      if (idle > 0 && idle > group.amount) {
        group.call = r.complete_call;
        group.amount = idle;
        group.cause_time = ts;
        group.causer = r.peer;
        group.family = kDelayLateSender;
        group.cause_kind = kCauseSend;
        group.cause_a = send_group[i];  // the message, as the sender names it
        group.cause_b = send_pos[i];
      }
    }
    close();
  }

  // Late receiver: per call the largest (the first of equals); calls with a late-sender wait
  // are skipped. After add_late_senders.
  void add_late_receivers() {
    end_run();
    std::vector<Inst> lr;
    const engine::SendRecord* const sends = t_.sends.data();
    const engine::CallRecord* const calls = t_.calls.data();
    const double* const post_enter = m_.recv_post_enter.data();
    const uint32_t* const group = m_.group.data();
    const uint32_t n = uint32_t(t_.sends.size());
    for (uint32_t i = 0; i < n; ++i) {
      const engine::SendRecord& s = sends[i];
      const double tp = post_enter[i];
      if (std::isnan(tp) || s.complete_call == kNoCall || group[i] == UINT32_MAX) continue;
      const engine::CallRecord& c = calls[s.complete_call];
      const double idle = tp - c.enter;
      if (c.exit <= tp || !(idle > 0)) continue;
      Inst v;
      v.call = s.complete_call;
      v.amount = idle;
      v.cause_time = tp;
      v.causer = s.peer;
      v.family = kDelayLateReceiver;
      v.cause_kind = kCauseRecv;
      v.cause_a = group[i];  // this send's (group, position): the receiver resolves it
      v.cause_b = m_.pos[i];
      lr.push_back(v);
    }
    std::stable_sort(lr.begin(), lr.end(), [](const Inst& a, const Inst& b) { return a.call < b.call; });
    for (size_t i = 0; i < lr.size();) {
      size_t best = i, j = i;
      for (; j < lr.size() && lr[j].call == lr[i].call; ++j)
        if (lr[j].amount > lr[best].amount) best = j;
      if (!has_ls_[lr[best].call]) keep(lr[best]);
      i = j;
    }
  }

  // Collectives: the latecomer (or root, or last sender) causes the others' waits.
  void add_collectives() {
    end_run();
    std::unordered_map<uint32_t, uint32_t> ordinal;  // comm -> instances seen
    const auto& cs = *in_.csync;
    for (uint32_t i = 0; i < t_.colls.size() && i < cs.size(); ++i) {
      const engine::CollRecord& c = t_.colls[i];
      const uint32_t nth = ordinal[c.comm]++;
      const engine::CollSync& s = cs[i];
      if (!s.valid || s.comm_size < 2 || c.complete_call == kNoCall || c.call == kNoCall) continue;
      if (!engine::synchronizes(c, s)) continue;
      Inst v;
      v.call = c.complete_call;
      v.cause_kind = kCauseColl;
      v.cause_a = c.comm;
      v.cause_b = nth;
      if (collective_cause(c, s, v) && v.amount > 0) keep(v);
    }
  }

  // One-sided: every booked wait of a top-level pattern, with its cause as the RMA pass found it.
  void add_rma() {
    end_run();
    if (!in_.rma) return;
    for (const RmaWait& w : *in_.rma) {
      Inst v;
      v.call = w.call;
      v.amount = w.amount;
      v.cause_time = w.cause_time;
      v.causer = w.causer;
      v.family = kDelayRma;
      v.cause_kind = w.window_coll ? kCauseWinColl : kCauseCall;
      v.cause_a = w.window_coll ? w.win : w.cause_call;
      v.cause_b = w.nth;
      if (v.amount > 0) keep(v);
    }
  }

  // The instances kept, by call.
  // Each add_* appends a run mostly ascending by call already: the runs sorted (stable) where
  // they are not and merged (stable), as one stable sort of the whole would order them.
  std::vector<Inst> take() {
    auto by_call = [](const Inst& a, const Inst& b) { return a.call < b.call; };
    end_run();
    size_t begin = 0;
    for (size_t end : runs_) {
      const auto b = out_.begin() + long(begin), m = out_.begin() + long(end);
      if (!std::is_sorted(b, m, by_call)) std::stable_sort(b, m, by_call);
      if (begin > 0) merge_run(begin, end);
      begin = end;
    }
    return std::move(out_);
  }

 private:
  bool test_call(uint32_t call) {
    const uint32_t region = t_.calls[call].region;
    if (region >= test_region_.size()) test_region_.resize(size_t(region) + 1, -1);
    if (test_region_[region] < 0)
      test_region_[region] = is_test_call(in_.definitions->regions, region) ? 1 : 0;
    return test_region_[region] == 1;
  }
  // Merges out_'s sorted [0, mid) and [mid, end) as std::inplace_merge (stable). A short
  // second run (a ping-pong's late receivers: ~100 after 500k late senders) goes in from its
  // last entry: each to its place after the first run's of equal call, the first run's entries
  // after it shifted in one block copy, not one move each.
  void merge_run(size_t mid, size_t end) {
    auto by_call = [](const Inst& a, const Inst& b) { return a.call < b.call; };
    const auto first = out_.begin();
    if ((end - mid) * 64 > mid) {
      std::inplace_merge(first, first + long(mid), first + long(end), by_call);
      return;
    }
    const std::vector<Inst> tail(first + long(mid), first + long(end));
    size_t hi = mid, dst = end;  // out_[0, hi) not moved yet; out_[dst, end) in place
    for (size_t i = tail.size(); i-- > 0;) {
      const auto p = std::upper_bound(first, first + long(hi), tail[i], by_call);
      dst -= size_t(first + long(hi) - p);
      std::copy_backward(p, first + long(hi), first + long(dst) + (first + long(hi) - p));
      out_[--dst] = tail[i];
      hi = size_t(p - first);
    }
  }
  // The instances kept so far end a run (take).
  void end_run() {
    if (runs_.empty() ? !out_.empty() : runs_.back() != out_.size()) runs_.push_back(out_.size());
  }
  void keep(const Inst& v) {
    if (v.causer < 0 || v.causer == in_.my_rank || t_.calls[v.call].location != 0) {
      elsewhere_ += v.amount;  // not costed: a remainder
      return;
    }
    // emplace_back: GCC inlines it here, where it kept push_back out of line (a call per
    // instance, ~29 instructions).
    out_.emplace_back(v);
  }
  // The amount, cause and family of the wait in collective `c` (synchronizing, at least two
  // ranks) into `v`; false when this rank did not wait for anyone there.
  // The wait engine::coll_ready decides (the call's data flow) and the member it waited for.
  bool collective_cause(const engine::CollRecord& c, const engine::CollSync& s, Inst& v) const {
    const engine::CallRecord& wc = t_.calls[c.complete_call];
    const double ready = engine::coll_ready(c, s);
    if (std::isnan(ready)) return false;
    v.amount = std::min(ready, wc.exit) - wc.enter;
    v.cause_time = ready;
    switch (c.kind) {
      case CollKind::kBarrier:
        v.causer = s.latest_rank;
        v.family = kDelayBarrier;
        return true;
      case CollKind::kNxN:
        v.causer = s.latest_sender_rank;
        v.family = kDelayNxN;
        return true;
      case CollKind::kOneToN:
        v.causer = world_rank_of(in_.definitions->comms, c.comm, c.root, in_.my_rank);
        v.family = kDelayLateBroadcast;
        return true;
      case CollKind::kNToOne:
        v.causer = s.latest_sender_rank;
        v.family = kDelayEarlyReduce;
        return true;
      default: return false;
    }
  }

  const DelayInput& in_;
  const engine::Timeline& t_;
  const engine::P2pMatch& m_;
  double& elsewhere_;
  std::vector<Inst> out_;
  std::vector<size_t> runs_;         // where each add_*'s instances end in out_
  std::vector<uint8_t> has_ls_;      // per call: a late-sender wait was kept
  std::vector<int8_t> test_region_;  // region id -> 1 a test call, 0 not, -1 not yet known
};

std::vector<Inst> wait_instances(const DelayInput& in, double& elsewhere) {
  InstanceCollector collect(in, elsewhere);
  collect.add_late_senders();
  collect.add_late_receivers();
  collect.add_collectives();
  collect.add_rma();
  return collect.take();
}

// What C keeps of each wait it caused, for the long-term cost once r_v is known (24 bytes:
// millions in a message-bound run; its family beside, DelayState::caused_family).
struct Caused {
  double D;
  int32_t w_rank;
  uint32_t v_ref;
  uint32_t e;        // the causing call here (its phase: the batch of the gathered propagation)
  uint32_t d_begin;  // its delay vector in the flat d list, up to the next record's d_begin
};
static_assert(sizeof(Caused) == 24, "a caused record is 24 bytes");

}  // namespace

size_t lower_bound_from(const std::vector<uint32_t>& v, uint32_t k, size_t& hint) {
  size_t lo = 0, hi = v.size();
  if (hint > v.size()) hint = v.size();
  // The common answers first: the hint itself, or the entry after it.
  if (hint == 0 || v[hint - 1] < k) {
    if (hint == v.size() || v[hint] >= k) return hint;
    if (hint + 1 == v.size() || v[hint + 1] >= k) return ++hint;
  }
  if (hint == v.size() || v[hint] >= k) {  // the answer is at or before the hint
    size_t step = 1;
    hi = hint;
    while (hi > 0 && v[hi - 1] >= k) {
      lo = hi > step ? hi - step : 0;
      if (v[lo] < k) break;
      hi = lo;
      step *= 2;
    }
    if (hi == 0 || v[hi - 1] < k) lo = hi;
  } else {  // after it
    size_t step = 1;
    lo = hint + 1;
    while (lo < v.size() && v[lo] < k) {
      const size_t next = std::min(v.size(), lo + step);
      if (next == v.size() || v[next] >= k) {
        hi = next;
        break;
      }
      lo = next + 1;
      step *= 2;
    }
    if (lo >= v.size() || v[lo] >= k) hi = lo;
  }
  hint = size_t(std::lower_bound(v.begin() + long(lo), v.begin() + long(hi), k) - v.begin());
  return hint;
}

void propagate_costs(std::vector<double>& r, const std::vector<uint32_t>& v_of,
                     const std::vector<uint32_t>& e_begin, const std::vector<CostEdge>& e_list,
                     std::vector<uint32_t>& indeg, std::vector<uint8_t>& done) {
  const uint32_t N = uint32_t(r.size());
  // Waits with no later consumer are final; a consumer's cost flows to the waits in its
  // causing interval (Kahn's order over the edges v -> u).
  // node v -> its caused records, as CSR (millions of waits: no vector per node)
  std::vector<uint32_t> first(N + 1, 0), list(v_of.size());
  for (uint32_t v : v_of)
    if (v < N) ++first[v + 1];
  for (uint32_t x = 0; x < N; ++x) first[x + 1] += first[x];
  {
    std::vector<uint32_t> fill(first.begin(), first.end() - 1);
    for (uint32_t c = 0; c < v_of.size(); ++c)
      if (v_of[c] < N) list[fill[v_of[c]]++] = c;
  }
  // Any order that takes a node once every edge into it was consumed is a topological one.
  std::vector<uint32_t> ready;
  for (uint32_t x = 0; x < N; ++x)
    if (indeg[x] == 0) ready.push_back(x);
  done.assign(N, 0);
  while (!ready.empty()) {
    const uint32_t v = ready.back();
    ready.pop_back();
    done[v] = 1;
    for (uint32_t i = first[v]; i < first[v + 1]; ++i)
      for (uint32_t x = e_begin[list[i]]; x < e_begin[list[i] + 1]; ++x) {
        const CostEdge& e = e_list[x];
        r[e.u] += double(e.coef) * r[v];
        if (--indeg[e.u] == 0) ready.push_back(e.u);
      }
  }
}

namespace {

// The metric slots the delay analysis books to.
struct DelaySlots {
  int short_term[kDelayFamilies], long_term[kDelayFamilies];
  int short_total, long_total;
  int direct, indirect, propagating, terminal;
};

DelaySlots delay_slots(engine::MetricStore& store) {
  DelaySlots s;
  static const char* kFamily[kDelayFamilies] = {"late_sender",    "late_receiver", "barrier", "nxn",
                                                "late_broadcast", "early_reduce",  "rma"};
  for (int f = 0; f < kDelayFamilies; ++f) {
    s.short_term[f] = store.slot(std::string("delay_") + kFamily[f] + "_short_term");
    s.long_term[f] = store.slot(std::string("delay_") + kFamily[f] + "_long_term");
  }
  s.short_total = store.slot("delay_cost_short_term");
  s.long_total = store.slot("delay_cost_long_term");
  s.direct = store.slot("wait_direct");
  s.indirect = store.slot("wait_indirect");
  s.propagating = store.slot("wait_propagating");
  s.terminal = store.slot("wait_terminal");
  return s;
}

// The values booked per wait (short-term costs by family and their total, the waiting side's
// four), in dense rows of their own added to the store when it goes: an add is an index check
// and a sum, not the store's slot and bounds lookups (~18 instructions, twice per wait on each
// side). Only when the store holds none of them yet (the whole run's analysis, a run's first
// window: +0 plus the same additions in the same order gives the same sums) and the rows are
// few against the additions; else every add goes to the store.
enum BookRow : int {
  kRowShortTotal = kDelayFamilies,  // rows 0 .. kDelayFamilies - 1: short-term per family
  kRowDirect,
  kRowIndirect,
  kRowPropagating,
  kRowTerminal,
  kBookRows
};
class DelayBook {
 public:
  DelayBook(engine::MetricStore& store, const DelaySlots& slot, size_t adds)
      : store_(store), n_(store.callpaths()) {
    for (int f = 0; f < kDelayFamilies; ++f) slot_[f] = slot.short_term[f];
    slot_[kRowShortTotal] = slot.short_total;
    slot_[kRowDirect] = slot.direct;
    slot_[kRowIndirect] = slot.indirect;
    slot_[kRowPropagating] = slot.propagating;
    slot_[kRowTerminal] = slot.terminal;
    bool fresh = n_ > 0 && n_ * kBookRows <= adds;
    for (int r = 0; r < kBookRows && fresh; ++r) {
      fresh = slot_[r] >= 0;
      for (size_t g = 0; g < n_ && fresh; ++g) {
        const double v = store.get(slot_[r], g);
        fresh = v == 0 && !std::signbit(v);
      }
    }
    if (fresh) {
      rows_.assign(size_t(kBookRows) * n_, 0.0);
      at_ = rows_.data();
    }
  }
  DelayBook(const DelayBook&) = delete;
  DelayBook& operator=(const DelayBook&) = delete;
  ~DelayBook() {
    if (at_ == nullptr) return;
    for (int r = 0; r < kBookRows; ++r)
      for (size_t g = 0; g < n_; ++g)
        if (at_[size_t(r) * n_ + g] != 0) store_.add(slot_[r], long(g), at_[size_t(r) * n_ + g]);
  }
  // MetricStore::add(slot of row `r`, g, v).
  void add(int r, long g, double v) {
    if (at_ == nullptr) store_.add(slot_[r], g, v);
    else if (size_t(g) < n_) at_[size_t(r) * n_ + size_t(g)] += v;
  }

 private:
  engine::MetricStore& store_;
  const size_t n_;
  int slot_[kBookRows];
  std::vector<double> rows_;  // row r's value at g: [r * n_ + g]; empty when not fresh
  double* at_ = nullptr;      // rows_.data()
};

// What the steps of compute_delay share.
struct DelayState {
  DelayState(const DelayInput& in, int P)
      : in(in), t(*in.timeline), l2g(*in.local_to_global), tv(t, l2g), P(P),
        sync(t, *in.csync, *in.definitions, in.my_rank), wait_of(t, in.waits->records) {}

  const DelayInput& in;
  const engine::Timeline& t;
  const std::vector<int>& l2g;
  const TimelineView tv;
  const int P;
  SyncIndex sync;
  // Step 1.
  std::vector<Inst> inst;
  WaitOf wait_of;                   // per call: the waiting time inside it
  std::vector<uint32_t> inst_call;  // per instance: its call (ascending); make_inst_call
  uint32_t inst_searches = 0;       // searches of the instances by call (make_inst_call)
  size_t own_lo = 0, own_hi = 0;    // where the last searches of inst_call ended (own_waits)
  std::vector<uint32_t> gsync;      // the global synchronizations (phase boundaries), ascending
  // Steps 2 and 3: time vectors (scratch, reused), and what W sent each causer.
  Vec raw, tw, tc;
  // Per causer W sent waits to, ascending: (causer, where its instances begin and end in
  // by_causer); by_causer: the instances sent, by causer, each causer's in instance order,
  // replies come in this order. Empty when it would be the identity (one causer, as in a
  // two-rank run): no array of a word per wait for it.
  struct SentRun {
    int32_t causer;
    uint32_t begin, end;
  };
  std::vector<SentRun> sent_to;
  std::vector<uint32_t> by_causer;
  // Step 3.
  std::unordered_map<uint32_t, std::vector<uint32_t>> coll_by_comm;  // comm -> coll index by instance
  std::unordered_map<uint32_t, std::vector<uint32_t>> wcoll_by_win;  // window -> its collective calls
  // Per instance, each empty while all its values are 0 (no pages for a ping-pong's waits):
  // base, the shares scale_v * a_u of the waits v whose causing interval here holds it, and
  // prop, the largest of them; indirect, its causer's reply.
  std::vector<double> base, prop, indirect;
  // The caused records, made as step 3 goes when keep_caused, else (the gathered propagation
  // at first) only counted: n_caused. Only step 4 and the long-term costs read them, and in
  // the gathered propagation nothing does unless some rank's wait receives cost (known only
  // after step 3's allreduce; a ping-pong's never does: 40 bytes a wait of fresh pages
  // for nothing). A rank's first edge proves they are needed, the allreduce that another
  // rank's are: then made again from step 2's records, kept meanwhile (step2; make_caused).
  bool keep_caused = true;
  uint32_t n_caused = 0;
  size_t caused_room = 0;  // at most this many (step 2's records)
  const std::vector<engine::Comm::Parcel>* step2 = nullptr;
  std::vector<Caused> caused;
  std::vector<uint8_t> caused_family;              // per caused record: its DelayFamily
  std::vector<std::pair<uint32_t, double>> dflat;  // delay vectors
  Vec d_one;  // while the records are only counted: the last one's delay vector
  std::vector<std::pair<uint32_t, double>> edges;  // (u, a_u / D) per caused
  // Per caused record, into edges (edge_range); empty while no record has an edge (a
  // ping-pong's: no causer waited inside a causing interval).
  std::vector<uint32_t> edge_begin;
  // Per wait record received in step 3, by sender (recv_peer[i]'s from recv_begin[i] to
  // recv_begin[i + 1], the senders ascending): the caused record made of it, or kNone
  // (caused_at). caused_of_recv is empty while every record made one, in order (the usual
  // case: record i made caused record i). The distributed propagation's r_v records name it.
  std::vector<int32_t> recv_peer;
  std::vector<uint32_t> recv_begin, caused_of_recv;
  uint32_t recv_total = 0;  // wait records received
  // Step 4.
  std::vector<double> r_caused;  // r_v of each wait this rank caused (empty: all 0)

  uint32_t sent_at(uint32_t k) const { return by_causer.empty() ? k : by_causer[k]; }
  uint32_t caused_at(uint32_t i) const { return caused_of_recv.empty() ? i : caused_of_recv[i]; }
  // Caused record c's edges, [first, second) of `edges`.
  std::pair<uint32_t, uint32_t> edge_range(size_t c) const {
    if (edge_begin.empty()) return {0, 0};
    return {edge_begin[c], edge_begin[c + 1]};
  }
  uint32_t d_end(size_t c) const {
    return c + 1 < caused.size() ? caused[c + 1].d_begin : uint32_t(dflat.size());
  }
  double base_of(size_t j) const { return j < base.size() ? base[j] : 0.0; }
  double prop_of(size_t j) const { return j < prop.size() ? prop[j] : 0.0; }
  double indirect_of(size_t j) const { return j < indirect.size() ? indirect[j] : 0.0; }
  uint32_t phase_of(uint32_t call) const {
    return uint32_t(std::lower_bound(gsync.begin(), gsync.end(), call) - gsync.begin());
  }
  long gid_of_call(uint32_t call) const {
    const int32_t node = t.calls[call].node;
    return node >= 0 && size_t(node) < l2g.size() ? long(l2g[size_t(node)]) : -1;
  }
};

// --- 1. Instances.
void find_instances(DelayState& s, DelayResult& out) {
  const engine::Timeline& t = s.t;
  double elsewhere = 0;
  s.inst = wait_instances(s.in, elsewhere);
  const std::vector<Inst>& inst = s.inst;
  out.instances = inst.size();
  out.remainder_s += elsewhere;
  out.analysed_s += elsewhere;
  double analysed = out.analysed_s;
  for (const Inst& v : inst) analysed += v.amount;
  out.analysed_s = analysed;
  // The global synchronizations (barrier / N x N over all ranks that moves data): phase
  // boundaries.
  for (uint32_t i = 0; i < t.colls.size() && i < s.in.csync->size(); ++i) {
    const engine::CollRecord& c = t.colls[i];
    const engine::CollSync& cs = (*s.in.csync)[i];
    if (cs.valid && cs.comm_size == s.P && c.complete_call != kNoCall &&
        t.calls[c.complete_call].location == 0 &&
        (c.kind == CollKind::kBarrier || c.kind == CollKind::kNxN) && engine::synchronizes(c, cs))
      s.gsync.push_back(c.complete_call);
  }
  std::sort(s.gsync.begin(), s.gsync.end());
}

// W's vector of wait `v`, as sent: its entries from 1 us on (those below say nothing about a
// delay; they would only make tiny spurious differences of at most that size), at most 255
// (the largest). The common one of b's gap alone in `one`, without a vector, else in s.tw;
// `at` where they are. Returns how many.
[[gnu::always_inline]] inline size_t wait_vector(DelayState& s, const Inst& v,
                                                 std::pair<uint32_t, double>& one,
                                                 const std::pair<uint32_t, double>*& at) {
  const uint32_t a = s.sync.before(v.causer, v.call);
  uint32_t n = 0;
  if (gap_only(s.tv, a, v.call, one, n)) {
    at = &one;
    return n != 0 && !(one.second < 1e-6) ? 1 : 0;
  }
  Vec& tw = s.tw;
  interval_vector_any(s.t, s.wait_of, s.l2g, a == kNone ? 0 : a + 1, v.call, s.raw, tw);
  // (Without a branch per entry: in a ping-pong that branch was the costliest line here.)
  size_t kept = 0;
  for (const auto& x : tw) {
    tw[kept] = x;
    kept += !(x.second < 1e-6);
  }
  tw.erase(tw.begin() + long(kept), tw.end());
  if (tw.size() > 255) {
    std::nth_element(tw.begin(), tw.begin() + 255, tw.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    tw.resize(255);
    std::sort(tw.begin(), tw.end());
  }
  at = tw.data();
  return tw.size();
}

// --- 2. W -> C: [kind u8][n u8][a varint][b zigzag varint][v_ref zigzag varint][amount f32],
//        then n x ([call path varint][seconds f32]); (a, b) = the message as P2pMatch names
//        it, or (communicator, instance) of a collective; b and v_ref as differences to the
//        previous record's to the same C (consecutive waits mostly name consecutive messages:
//        a byte each). Single precision: the costs are shares of waiting times, 1e-7 relative
//        is plenty, and the payload per message is what the analysis budget counts (and the
//        pages it fills on both sides: about 14 bytes a ping-pong's wait, not 24).
void pack_wait_vectors(DelayState& s, Bytes& flat, std::vector<std::pair<int32_t, size_t>>& runs,
                       DelayResult& out) {
  const std::vector<Inst>& inst = s.inst;
  std::pair<uint32_t, double> one;  // the vector of a wait, when one entry (wait_vector)
  // Instances by causer (stable): the buffer comes out contiguous per destination (`runs`:
  // each destination's bytes, ascending); causers outside the analysis ranks last.
  // Grouped over the P + 1 slots (engine::Grouping: a count per slot only where the instances
  // are as many, else a sort; a count per rank had each of 16,384 hosted ranks with two dozen
  // waits clear and sum 64 KiB).
  // One slot for every instance (one causer, two ranks: the identity) is seen first, without
  // the counts; by_causer is then left empty.
  auto slot_of = [&](int32_t c) { return c >= 0 && c < s.P ? size_t(c) : size_t(s.P); };
  std::vector<uint32_t>& by_causer = s.by_causer;
  by_causer.clear();
  const size_t slot0 = inst.empty() ? 0 : slot_of(inst[0].causer);
  if (std::any_of(inst.begin(), inst.end(), [&](const Inst& v) { return slot_of(v.causer) != slot0; })) {
    engine::Grouping grouping;
    grouping.group(inst.size(), s.P + 1, [&](size_t j) { return int32_t(slot_of(inst[j].causer)); });
    by_causer = std::move(grouping.order);
  }
  runs.clear();
  // Written through a pointer into room made in large steps (`room` bytes at `base`, `used`
  // the bytes written; one resize per doubling, not one per wait), cut to `used` at the end.
  // The loop keeps what it reads in locals (the run's causer, bytes and end among them): the
  // stores through a byte pointer would make the compiler read every vector's bounds again.
  size_t used = 0;
  flat.resize(inst.size() * 16);  // a wait with a one-entry vector, mostly
  unsigned char* base = flat.data();
  size_t room = flat.size();
  s.sent_to.clear();
  const uint32_t n = uint32_t(inst.size());
  const Inst* const iv = inst.data();
  const int32_t P = s.P;
  int64_t prev_b = 0, prev_v = 0;  // the previous record's b and v_ref to the same C
  int32_t run_causer = -1;         // the causer of the last run (runs.back()), -1: none yet
  size_t run_bytes = 0;
  uint32_t run_end = 0;
  auto close_run = [&] {
    if (run_causer < 0) return;
    runs.back().second = run_bytes;
    s.sent_to.back().end = run_end;
  };
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t j = s.sent_at(k);
    const Inst& v = iv[j];
    if (v.causer >= P) {  // outside the analysis ranks (inconsistent trace)
      out.remainder_s += v.amount;
      continue;
    }
    const std::pair<uint32_t, double>* ev = nullptr;
    const size_t entries = wait_vector(s, v, one, ev);
    if (v.causer != run_causer) {
      close_run();
      runs.push_back({v.causer, 0});
      s.sent_to.push_back({v.causer, k, k});
      run_causer = v.causer;
      run_bytes = 0;
      prev_b = prev_v = 0;
    }
    const size_t most = 31 + entries * 9;  // the longest varints
    if (room - used < most) {
      flat.resize(std::max(2 * room, used + most));
      base = flat.data();
      room = flat.size();
    }
    unsigned char* const at = base + used;
    Writer w{at};
    w.put<uint8_t>(v.cause_kind);
    w.put<uint8_t>(uint8_t(entries));
    w.p = put_varint(w.p, v.cause_a);
    w.p = put_varint(w.p, zigzag(int64_t(v.cause_b) - prev_b));
    w.p = put_varint(w.p, zigzag(int64_t(j) - prev_v));
    w.put<float>(float(v.amount));
    for (size_t x = 0; x < entries; ++x) {
      w.p = put_varint(w.p, ev[x].first);
      w.put<float>(float(ev[x].second));
    }
    prev_b = v.cause_b;
    prev_v = j;
    used += size_t(w.p - at);
    run_bytes += size_t(w.p - at);
    run_end = k + 1;
  }
  close_run();
  flat.resize(used);
  out.bytes_sent += flat.size();
}

// The messages exchanged with rank `w` (P2pMatch::sends_to / recvs_from), looked up once
// per rank whose waits arrive, not once per wait.
struct PeerMessages {
  PeerMessages(const engine::P2pMatch& m, int w) : to(of(m.sends_to, w)), from(of(m.recvs_from, w)) {}
  // P2pMatch::send_of(w, g, k) and recv_of(w, g, k).
  uint32_t send_of(uint32_t g, uint32_t k) const { return to.item(g, k); }
  uint32_t recv_of(uint32_t g, uint32_t k) const { return from.item(g, k); }

 private:
  using Groups = engine::P2pMatch::PeerGroups;
  struct Of {  // one peer's groups, their count taken once
    const std::vector<uint32_t>* groups;
    size_t n;
    uint32_t item(uint32_t g, uint32_t k) const {
      return g < n && k < groups[g].size() ? groups[g][k] : UINT32_MAX;
    }
  };
  static Of of(const std::vector<Groups>& v, int w) {
    const auto it = std::lower_bound(v.begin(), v.end(), w,
                                     [](const Groups& x, int p) { return x.peer < p; });
    if (it == v.end() || it->peer != w) return {nullptr, 0};
    return {it->groups.data(), it->groups.size()};
  }
  Of to, from;
};

// Step 3: the causing call here of a wait of rank w (`wm`: the messages exchanged with it)
// that names its cause (kind, a, b), and the family (what kind of wait it caused); kNoCall /
// kDelayFamilies when not found.
[[gnu::always_inline]] inline void find_cause(const DelayState& s, const PeerMessages& wm, uint8_t kind,
                                              uint32_t a, uint32_t b, uint32_t& e, int& family) {
  const TimelineView& t = s.tv;
  e = kNoCall;
  family = kDelayFamilies;
  if (kind == kCauseSend) {
    const uint32_t si = wm.send_of(a, b);
    if (si < t.sends.size()) e = t.sends[si].call;
    family = kDelayLateSender;
  } else if (kind == kCauseRecv) {
    const uint32_t ri = wm.recv_of(a, b);
    if (ri < t.recvs.size()) e = t.recvs[ri].post_call;
    family = kDelayLateReceiver;
  } else if (kind == kCauseColl) {
    auto it = s.coll_by_comm.find(a);
    if (it != s.coll_by_comm.end() && b < it->second.size()) {
      const engine::CollRecord& c = s.t.colls[it->second[b]];
      e = c.call;
      family = c.kind == CollKind::kBarrier  ? kDelayBarrier
               : c.kind == CollKind::kNxN    ? kDelayNxN
               : c.kind == CollKind::kOneToN ? kDelayLateBroadcast
               : c.kind == CollKind::kNToOne ? kDelayEarlyReduce
                                             : kDelayFamilies;
    }
  } else if (kind == kCauseCall) {
    e = a;
    family = kDelayRma;
  } else if (kind == kCauseWinColl) {
    auto it = s.wcoll_by_win.find(a);
    if (it != s.wcoll_by_win.end() && b < it->second.size()) e = it->second[b];
    family = kDelayRma;
  }
}

// One wait record of step 2 at `p` (advanced): its cause (kind, a, b), v_ref and amount, its
// vector into `tw`; b and v_ref after the previous record's from the same W (0 before the
// first). False when malformed.
[[gnu::always_inline]] inline bool read_wait_record(const unsigned char*& p, const unsigned char* end,
                                                    uint8_t& kind, uint32_t& a, uint32_t& b, uint32_t& v_ref,
                                                    double& amount, Vec& tw) {
  uint8_t n = 0;
  uint64_t a64 = 0, db = 0, dv = 0;
  float amount_f = 0;
  if (end - p >= 9 && (p[2] | p[3] | p[4]) < 0x80) {  // the usual record: its varints one byte each
    kind = p[0];
    n = p[1];
    a64 = p[2];
    db = p[3];
    dv = p[4];
    std::memcpy(&amount_f, p + 5, sizeof amount_f);
    p += 9;
  } else if (!get(p, end, kind) || !get(p, end, n) || !get_varint(p, end, a64) || !get_varint(p, end, db) ||
             !get_varint(p, end, dv) || !get(p, end, amount_f)) {
    return false;
  }
  a = uint32_t(a64);
  b = uint32_t(int64_t(b) + unzigzag(db));
  v_ref = uint32_t(int64_t(v_ref) + unzigzag(dv));
  amount = amount_f;
  tw.clear();  // mostly stays empty: W sends no entry below 1 us
  if (n > 0) tw.resize(n);
  for (uint32_t k = 0; k < n; ++k) {
    uint64_t g = 0;
    float sec = 0;
    if (!get_varint(p, end, g) || !get(p, end, sec)) return false;
    tw[k] = {uint32_t(g), double(sec)};
  }
  return true;
}

// The instances' calls in an array of their own, searched in step 3 for C's own waits in a
// causing interval: made only once kInstSearches intervals held a call (a ping-pong's end at
// the call after the synchronization but the first: no pages are filled for a search or two),
// searched in the instances themselves before.
constexpr uint32_t kInstSearches = 64;
uint32_t own_wait_at(const std::vector<Inst>& inst, uint32_t call) {
  return uint32_t(
      std::lower_bound(inst.begin(), inst.end(), call, [](const Inst& v, uint32_t k) { return v.call < k; }) -
      inst.begin());
}
void make_inst_call(DelayState& s) {
  s.inst_call.resize(s.inst.size());
  for (size_t j = 0; j < s.inst.size(); ++j) s.inst_call[j] = s.inst[j].call;
}

// C's side of a wait of rank `w` (its vector `tw`) that call `e` here caused: C's vector
// since their previous synchronization (into `tc`; `raw` scratch), its delay vector d
// appended to `d` (or, when C's interval is e's gap alone, its entry if any in `one`, n_one 1,
// without a vector), and C's own waits strictly inside the interval, [u0, u1) of s.inst.
// Inline: step 3's work per wait (make_caused's copy runs only when the records are needed).
struct CauseShape {
  double sum_d, sum_w, D;
  uint32_t u0, u1;
  uint32_t n_one;
  std::pair<uint32_t, double> one;
  bool gap;  // the interval was e's gap alone: nothing appended to d
};
// C's own waits in calls lo .. e - 1 into c (u0, u1, sum_w). Out of line: a ping-pong's
// intervals hold none.
[[gnu::noinline]] void own_waits(DelayState& s, uint32_t lo, uint32_t e, CauseShape& c) {
  if (s.inst_call.empty() && ++s.inst_searches > kInstSearches) make_inst_call(s);
  if (s.inst_call.empty()) {
    c.u1 = own_wait_at(s.inst, e);
    c.u0 = own_wait_at(s.inst, lo);
  } else {
    c.u1 = uint32_t(lower_bound_near(s.inst_call, e, s.own_hi));
    c.u0 = uint32_t(lower_bound_near(s.inst_call, lo, s.own_lo));
  }
  for (uint32_t u = c.u0; u < c.u1; ++u) c.sum_w += s.inst[u].amount;
}
[[gnu::always_inline]] inline CauseShape cause_shape(DelayState& s, int w, uint32_t e, const Vec& tw,
                                                     Vec& raw, Vec& tc, Vec& d) {
  const uint32_t from = s.sync.before(w, e);
  CauseShape c{0, 0, 0, 0, 0, 0, {}, false};
  std::pair<uint32_t, double> x;
  uint32_t n = 0;
  if (gap_only(s.tv, from, e, x, n)) {
    c.gap = true;
    // delay_vector of a one-entry tc (its search of tw, sorted by call path)
    double tw_x = 0;
    for (const auto& [g, sec] : tw)
      if (g >= x.first) {
        tw_x = g == x.first ? sec : 0.0;
        break;
      }
    if (n != 0 && x.second - tw_x > 0) {
      c.one = {x.first, x.second - tw_x};
      c.n_one = 1;
      c.sum_d = c.one.second;
    }
  } else {
    const uint32_t lo = from == kNone ? 0 : from + 1;
    interval_vector_any(s.t, s.wait_of, s.l2g, lo, e, raw, tc);
    c.sum_d = delay_vector(tc, tw, d);
    if (lo < e) own_waits(s, lo, e, c);  // (none when e follows the synchronization at once)
  }
  c.D = c.sum_d + c.sum_w;
  return c;
}

// Whether a wait record's causing call `e` (of `family`, find_cause) is on this rank's main
// thread: it makes a caused record.
bool caused_here(const DelayState& s, uint32_t e, int family) {
  return e < s.tv.calls.size() && s.tv.calls[e].location == 0 && family < kDelayFamilies;
}

// The caused records up to n (s.caused short of them: step 3 only counted them) made again
// from step 2's records, as cost_caused_waits made them: the same D and delay vectors.
[[gnu::cold]] void make_caused(DelayState& s, uint32_t n) {
  if (s.caused.size() >= n) return;
  if (s.caused.capacity() < n) {  // room as pages are touched (at most one entry a record, mostly)
    s.caused.reserve(n);
    s.caused_family.reserve(n);
    s.dflat.reserve(n);
  }
  Vec tw, raw, tc;
  for (const engine::Comm::Parcel& parcel : *s.step2) {
    if (s.caused.size() >= n) return;
    const int w = parcel.peer;
    const PeerMessages wm(*s.in.match, w);
    const unsigned char* p = parcel.bytes.data();
    const unsigned char* end = p + parcel.bytes.size();
    uint32_t b = 0, v_ref = 0;
    while (p < end && s.caused.size() < n) {
      uint8_t kind = 0;
      uint32_t a = 0, e = kNoCall;
      double amount = 0;
      int family = kDelayFamilies;
      if (!read_wait_record(p, end, kind, a, b, v_ref, amount, tw)) return;  // read before: whole
      find_cause(s, wm, kind, a, b, e, family);
      if (!caused_here(s, e, family)) continue;
      const uint32_t d_begin = uint32_t(s.dflat.size());
      const CauseShape c = cause_shape(s, w, e, tw, raw, tc, s.dflat);
      if (c.n_one != 0) s.dflat.push_back(c.one);
      s.caused.push_back({c.D, int32_t(w), v_ref, e, d_begin});
      s.caused_family.push_back(uint8_t(family));
    }
  }
}

// From here on step 3 keeps the caused records, the earlier ones made again first; the
// current one's delay vector (in s.d_one, or c's entry) follows theirs. Returns where it begins.
[[gnu::cold]] uint32_t keep_caused_from_here(DelayState& s, const CauseShape& c) {
  s.caused.reserve(s.caused_room);
  s.caused_family.reserve(s.caused_room);
  s.dflat.reserve(s.caused_room);
  make_caused(s, s.n_caused);
  s.keep_caused = true;
  const uint32_t at = uint32_t(s.dflat.size());
  s.dflat.insert(s.dflat.end(), s.d_one.begin(), s.d_one.end());
  if (c.n_one != 0) s.dflat.push_back(c.one);
  return at;
}

// A caused record with edges (C's own waits u0 .. u1 in its interval, or an earlier record
// had some): the records kept from here on, its edges (u, a_u / D), each u's base and prop.
// Returns where its delay vector begins. Out of line: a ping-pong's records have none.
[[gnu::noinline]] uint32_t add_edges(DelayState& s, const CauseShape& c, double scale, uint32_t d_begin) {
  const std::vector<Inst>& inst = s.inst;
  const double D = c.D;
  if (!s.keep_caused) d_begin = keep_caused_from_here(s, c);  // an edge: this rank's cost flows on
  if (s.edge_begin.empty()) {  // the first record with edges: every earlier one has none
    s.edge_begin.reserve(s.caused.capacity() + 1);
    s.edge_begin.assign(s.n_caused, 0);
  }
  s.edge_begin.push_back(uint32_t(s.edges.size()));
  for (uint32_t ui = c.u0; ui < c.u1; ++ui) {
    if (s.base.empty()) {  // the first wait of this rank inside a causing interval
      s.base.assign(inst.size(), 0.0);
      s.prop.assign(inst.size(), 0.0);
    }
    const double a_u = inst[ui].amount;
    s.base[ui] += scale * a_u;
    s.prop[ui] = std::max(s.prop[ui], scale * a_u);
    s.edges.push_back({ui, a_u / D});
  }
  return d_begin;
}

// Step 3 for one wait v of rank `w` (its vector in s.tw) that call `e` here caused: C's
// vector since their previous synchronization, d, D, scale; the short-term cost; the local
// part of the propagated costs. Returns the indirect share to reply.
double cost_caused_wait(DelayState& s, DelayBook& book, int w, uint32_t v_ref, double amount, uint32_t e,
                        int family, DelayResult& out) {
  // Its delay vector into the flat list, or while the records are only counted the scratch.
  Vec& dv = s.keep_caused ? s.dflat : s.d_one;
  if (!s.keep_caused) dv.clear();
  uint32_t d_begin = uint32_t(dv.size());
  const CauseShape c = cause_shape(s, w, e, s.tw, s.raw, s.tc, dv);
  const double D = c.D;
  // min(1, amount / D), without the division where it is 1 (most waits: the delay explains
  // little of them); below, amount / D < 1.
  const double scale = D > 0 ? (amount >= D ? 1.0 : amount / D) : 0.0;
  auto short_term = [&](uint32_t g, double d) {
    book.add(family, g, scale * d);
    book.add(kRowShortTotal, g, scale * d);
  };
  if (!c.gap)
    for (size_t x = d_begin, x_end = dv.size(); x < x_end; ++x) short_term(dv[x].first, dv[x].second);
  if (c.n_one != 0) {
    short_term(c.one.first, c.one.second);
    if (s.keep_caused) dv.push_back(c.one);
  }
  out.remainder_s += amount - scale * D;
  if (c.u0 != c.u1 || !s.edge_begin.empty()) d_begin = add_edges(s, c, scale, d_begin);
  ++s.n_caused;
  if (!s.keep_caused) return scale * c.sum_w;  // only counted
  // The batch of the propagation: this rank's phase at the causing call e (the same as
  // the wait's unless the message crossed a global synchronization; then its cost
  // goes to the remainder).
  s.caused.push_back({D, int32_t(w), v_ref, e, d_begin});
  s.caused_family.push_back(uint8_t(family));
  return scale * c.sum_w;
}

// The replies of step 3 to one W: a float per wait record, in order, or nothing when every
// one is 0 (W reads a missing reply as zeros). Zeros are written only once a value follows
// them: a ping-pong's replies (all 0) touch no memory.
struct ReplyWriter {
  std::vector<unsigned char>& back;
  std::vector<std::pair<int32_t, size_t>>& runs;
  size_t start = 0, zeros = 0;
  void begin() {
    start = back.size();
    zeros = 0;
  }
  void add(float x) {
    if (x == 0) {
      ++zeros;
      return;
    }
    back.insert(back.end(), zeros * 4, 0);
    zeros = 0;
    put<float>(back, x);
  }
  void end(int32_t w) {
    if (back.size() == start) return;  // all 0: no reply
    back.insert(back.end(), zeros * 4, 0);
    runs.push_back({w, back.size() - start});
  }
};

// --- 3. At C, per wait it caused (`recv`, `rcounts` from step 2): its cost, and the reply to W
//        of the indirect share, into `back` (contiguous per W, as recv is per source).
Status cost_caused_waits(DelayState& s, DelayBook& book, const std::vector<engine::Comm::Parcel>& recv,
                         std::vector<unsigned char>& back, std::vector<std::pair<int32_t, size_t>>& back_runs,
                         DelayResult& out) {
  const engine::Timeline& t = s.t;
  for (uint32_t i = 0; i < t.colls.size(); ++i) s.coll_by_comm[t.colls[i].comm].push_back(i);
  for (const engine::CollRecord& c : t.win_colls) s.wcoll_by_win[c.comm].push_back(c.call);
  s.base.clear();
  s.prop.clear();
  back_runs.clear();
  back.clear();
  size_t recv_bytes = 0;
  for (const engine::Comm::Parcel& parcel : recv) recv_bytes += parcel.bytes.size();
  const size_t records = recv_bytes / 9;  // at most: 9 bytes each without a vector
  // Room as pages are touched: vectors grown by doubling would fill twice their size.
  back.reserve(records * 4);
  s.step2 = &recv;
  s.caused_room = records;
  if (s.keep_caused) {
    s.caused.reserve(records);
    s.caused_family.reserve(records);
    s.dflat.reserve(records);
  }
  s.edges.reserve(s.inst.size());
  s.recv_peer.clear();
  s.recv_begin.clear();
  s.recv_total = 0;
  ReplyWriter reply{back, back_runs};
  for (const engine::Comm::Parcel& parcel : recv) {
    const int w = parcel.peer;
    const PeerMessages wm(*s.in.match, w);
    s.recv_peer.push_back(w);
    s.recv_begin.push_back(s.recv_total);
    reply.begin();
    const unsigned char* p = parcel.bytes.data();
    const unsigned char* end = p + parcel.bytes.size();
    uint32_t b = 0, v_ref = 0;  // the previous record's (read_wait_record)
    while (p < end) {
      uint8_t kind = 0;
      uint32_t a = 0;
      double amount = 0;
      if (!read_wait_record(p, end, kind, a, b, v_ref, amount, s.tw)) return Status::kCorrupt;
      uint32_t e = kNoCall;
      int family = kDelayFamilies;
      find_cause(s, wm, kind, a, b, e, family);
      double indirect = 0;
      const bool here = caused_here(s, e, family);
      if (!here && s.caused_of_recv.empty()) {  // the first record that makes none: the map made
        s.caused_of_recv.reserve(records);
        for (uint32_t i = 0; i < s.recv_total; ++i) s.caused_of_recv.push_back(i);
      }
      if (!s.caused_of_recv.empty()) s.caused_of_recv.push_back(here ? s.n_caused : kNone);
      ++s.recv_total;
      if (!here) out.remainder_s += amount;  // the cause is not on this rank's main thread
      else indirect = cost_caused_wait(s, book, w, v_ref, amount, e, family, out);
      reply.add(float(indirect));
    }
    reply.end(w);
  }
  s.recv_begin.push_back(s.recv_total);
  if (!s.edge_begin.empty()) s.edge_begin.push_back(uint32_t(s.edges.size()));
  return Status::kOk;
}

// The replies of each causer, in the order this rank sent it the waits.
Status read_indirect_shares(DelayState& s, const std::vector<engine::Comm::Parcel>& recv) {
  s.indirect.clear();
  auto from = recv.begin();
  for (const DelayState::SentRun& run : s.sent_to) {  // both ascending by rank
    const int32_t c = run.causer;
    if (run.begin == run.end || c >= s.P) continue;
    while (from != recv.end() && from->peer < c) ++from;
    if (from == recv.end() || from->peer != c) continue;  // no reply: every share 0
    const unsigned char* p = from->bytes.data();
    const unsigned char* end = p + from->bytes.size();
    for (uint32_t k = run.begin; k < run.end; ++k) {
      float x = 0;
      if (!get(p, end, x)) return Status::kCorrupt;
      if (x == 0) continue;
      if (s.indirect.empty()) s.indirect.assign(s.inst.size(), 0.0);
      s.indirect[s.sent_at(k)] = x;
    }
  }
  return Status::kOk;
}

// The runs of `flat` (each destination's bytes, in order) to their ranks, by the sparse
// exchange; `recv` receives a parcel per rank that sent this one bytes.
Status exchange_runs(const engine::Group& group, const unsigned char* flat,
                     const std::vector<std::pair<int32_t, size_t>>& runs,
                     std::vector<engine::Comm::Parcel>& recv) {
  std::vector<engine::Comm::Piece> pieces;
  size_t at = 0;
  for (const auto& [peer, bytes] : runs) {
    if (peer >= 0 && peer < group.size()) pieces.push_back({peer, flat + at, bytes});
    at += bytes;
  }
  return group.exchange(pieces, recv);
}

// --- 4. Backward propagation of the costs as a replay over the ranks (the default; DelayReplay):
//        every rank holds its own waits and the waits it caused; r flows from effect to cause
//        as the run's dependencies did, one 12-byte record [pos u32][r_v f64] from W to C per
//        wait v that W sent C in step 2 (pos: v's place among them, which C's caused_of_recv
//        resolves without a search):
//
//   a wait u of this rank is final when every wait v whose interval holds u told its r_v
//   final u  -->  tell u's causer r_u (a causer outside the analysis ranks: the remainder)
//   r_v in   -->  its caused record: r_caused, and r_u += r_v * a_u / D_v for its waits u
//                 (none: nobody costed v here, r_v goes to the remainder, as on rank 0)
//
// The same r as rank 0's graph (base and coefficients rounded to single precision as there),
// in the order the records arrive. On a consistent trace the graph follows time backward
// (u ends before the causing call of v begins); an edge against time (a clock error, which
// could close a cycle and make the ranks wait for each other) is cut, its share goes to the
// remainder, where rank 0 would put the cycle's. Waits for records stop at the deadline.
// Rounds: the Mailbox's point-to-point batches and its one closing exchange (finish), however
// many ranks and phases.
class DistributedPropagation {
 public:
  explicit DistributedPropagation(DelayState& s) : s_(s) {}

  Status run(const engine::Group& group, double timeout_s, DelayResult& out) {
    init(group.rank());
    const uint64_t expected = s_.recv_total;
    engine::Mailbox box(group, timeout_s);
    auto take = [&](int w, const std::vector<unsigned char>& b) { return take_batch(w, b, out); };
    for (;;) {
      CRITPATH_FORWARD_IF_ERROR(send_ready(box, out));
      if (got_ >= expected) break;
      CRITPATH_FORWARD_IF_ERROR(box.flush_all());
      int src = -1;
      std::vector<unsigned char> b;
      CRITPATH_FORWARD_IF_ERROR(box.next(src, b));
      CRITPATH_FORWARD_IF_ERROR(take(src, b));
    }
    CRITPATH_FORWARD_IF_ERROR(box.finish(take));
    out.bytes_sent += box.bytes_sent();
    out.replay_batches = box.batches_sent();
    return Status::kOk;
  }

 private:
  // r from the bases; per wait the edges into it that follow time, the others cut.
  void init(int me) {
    const size_t N = s_.inst.size();
    r_.resize(N);
    for (size_t j = 0; j < N; ++j) r_[j] = double(float(s_.base_of(j)));
    indeg_.assign(N, 0);
    cut_.assign(s_.edges.size(), 0);
    for (uint32_t c = 0; c < s_.caused.size(); ++c) {
      const Caused& cr = s_.caused[c];
      const auto [x0, x1] = s_.edge_range(c);
      for (uint32_t x = x0; x < x1; ++x) {
        const uint32_t u = s_.edges[x].first;
        // Time order: u's cause before v's (ties by (rank, index)), else the edge is cut.
        const double ku = s_.inst[u].cause_time, kv = s_.t.calls[cr.e].enter;
        const bool before = ku < kv || (ku == kv && (me < cr.w_rank || (me == cr.w_rank && u < cr.v_ref)));
        if (before) ++indeg_[u];
        else cut_[x] = 1;
      }
    }
    ready_.reserve(N);
    for (uint32_t j = 0; j < N; ++j)
      if (indeg_[j] == 0) ready_.push_back(j);
    // Each wait's place among those sent to its causer, made here: the gathered propagation
    // (the default up to kDelayGatherRanks ranks) never names a wait so.
    sent_pos_.assign(N, kNone);
    for (const DelayState::SentRun& run : s_.sent_to)
      for (uint32_t k = run.begin; k < run.end; ++k) sent_pos_[s_.sent_at(k)] = k - run.begin;
  }

  // The final waits' r_u to their causers.
  Status send_ready(engine::Mailbox& box, DelayResult& out) {
    while (!ready_.empty()) {
      const uint32_t j = ready_.back();
      ready_.pop_back();
      const int32_t c = s_.inst[j].causer;
      if (c < 0 || c >= s_.P) {  // never sent in step 2: nobody can cost it
        out.remainder_s += r_[j];
        continue;
      }
      std::vector<unsigned char>& b = box.batch(c);
      if (b.empty()) b.reserve(engine::Mailbox::kFlushBytes + 12);
      const size_t at = b.size();
      b.resize(at + 12);
      std::memcpy(b.data() + at, &sent_pos_[j], 4);
      std::memcpy(b.data() + at + 4, &r_[j], 8);
      CRITPATH_FORWARD_IF_ERROR(box.appended(c));
    }
    return Status::kOk;
  }

  // A batch of r_v records from rank w.
  Status take_batch(int w, const std::vector<unsigned char>& b, DelayResult& out) {
    if (w < 0 || w >= s_.P || b.size() % 12 != 0) return Status::kCorrupt;
    const auto i = std::lower_bound(s_.recv_peer.begin(), s_.recv_peer.end(), w) - s_.recv_peer.begin();
    if (size_t(i) >= s_.recv_peer.size() || s_.recv_peer[size_t(i)] != w) return Status::kCorrupt;
    const uint32_t first = s_.recv_begin[size_t(i)], n = s_.recv_begin[size_t(i) + 1] - first;
    for (size_t at = 0; at < b.size(); at += 12) {
      uint32_t pos = 0;
      double rv = 0;
      std::memcpy(&pos, b.data() + at, 4);
      std::memcpy(&rv, b.data() + at + 4, 8);
      if (pos >= n) return Status::kCorrupt;
      ++got_;
      const uint32_t c = s_.caused_at(first + pos);
      if (c == kNone) {  // a wait nobody costed here
        out.remainder_s += rv;
        continue;
      }
      s_.r_caused[c] = rv;
      const auto [x0, x1] = s_.edge_range(c);
      for (uint32_t x = x0; x < x1; ++x) {
        const auto& [u, coef] = s_.edges[x];
        const double share = double(float(coef)) * rv;
        if (cut_[x]) {
          out.remainder_s += share;
          continue;
        }
        r_[u] += share;
        if (--indeg_[u] == 0) ready_.push_back(u);
      }
    }
    return Status::kOk;
  }

  DelayState& s_;
  std::vector<double> r_;           // per wait of this rank: its propagated cost so far
  std::vector<uint32_t> indeg_;     // per wait: the edges into it not yet consumed
  std::vector<uint32_t> ready_;     // final waits not yet sent
  std::vector<uint8_t> cut_;        // per edge: against time
  std::vector<uint32_t> sent_pos_;  // per wait: its place among those sent to its causer
  uint64_t got_ = 0;                // r_v records taken
};

// Step 4's batches: phases grouped into at most 4096 buckets, the same on every rank.
// `nodes`: the waits of all ranks that receive cost (base > 0); with none, every r is 0 and
// the batches carry nothing: only counted.
struct DelayBuckets {
  std::vector<uint32_t> of_inst, of_caused;  // per instance / caused record (only with nodes)
  std::vector<uint64_t> size;                // instances per bucket, over all ranks
  uint64_t nodes = 0;
};

Status count_buckets(DelayState& s, const engine::Group& group, DelayBuckets& bk, DelayResult& out) {
  uint64_t totals[2] = {s.inst.size(), 0};  // instances, nodes
  for (double b : s.base) totals[1] += b > 0 ? 1 : 0;
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(totals, 2, engine::ReduceOp::kSum));
  out.graph_instances = totals[0];
  bk.nodes = totals[1];
  uint64_t q = s.gsync.size() + 1;  // phases
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(&q, 1, engine::ReduceOp::kMax));
  const uint64_t n_buckets = std::min<uint64_t>(q, 4096);
  auto bucket = [&](uint32_t phase) { return uint32_t(uint64_t(phase) * n_buckets / q); };
  bk.size.assign(n_buckets, 0);
  if (bk.nodes == 0) {
    if (s.gsync.empty()) bk.size[0] = s.inst.size();
    else
      for (const Inst& v : s.inst) ++bk.size[bucket(s.phase_of(v.call))];
  } else {
    make_caused(s, s.n_caused);  // some rank's wait receives cost: the records are read
    bk.of_inst.resize(s.inst.size());
    bk.of_caused.resize(s.caused.size());
    for (size_t j = 0; j < s.inst.size(); ++j) bk.of_inst[j] = bucket(s.phase_of(s.inst[j].call));
    for (size_t j = 0; j < s.caused.size(); ++j) bk.of_caused[j] = bucket(s.phase_of(s.caused[j].e));
    for (uint32_t b : bk.of_inst) ++bk.size[b];
  }
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(bk.size.data(), bk.size.size(), engine::ReduceOp::kSum));
  return Status::kOk;
}

uint64_t wait_key(uint64_t rank, uint32_t ref) { return (rank << 32) | ref; }

// A batch's part from this rank, buckets [lo, hi): [n_nodes u32][n_caused u32][n_edges u32]
// [ref_end u32], then per node (ascending) [its ref minus the previous one's varint (the
// first's: minus 0)][base f32], then per caused record [w varint][v_ref minus the previous
// record's, zigzag varint][n varint] and n x [u minus the previous edge's u, zigzag varint]
// [coef f32]. Consecutive records mostly differ by little: a byte or two each, not four.
// `my_caused`: the batch's caused records, in sending order.
void pack_batch(const DelayState& s, const DelayBuckets& bk, uint64_t lo, uint64_t hi,
                std::vector<unsigned char>& mine, std::vector<uint32_t>& my_caused) {
  auto in_batch = [&](uint32_t b) { return b >= lo && b < hi; };
  // Only waits that receive cost (the u's of some edge, base > 0): a wait nobody's interval
  // holds has r = 0, and the root treats a missing node so.
  uint32_t n_mine = 0, ref_end = 0, n_edges = 0;
  for (uint32_t j = 0; j < s.inst.size(); ++j)
    if (in_batch(bk.of_inst[j]) && s.base_of(j) > 0) {
      ++n_mine;
      ref_end = j + 1;
    }
  for (uint32_t j = 0; j < s.caused.size(); ++j)
    if (in_batch(bk.of_caused[j])) {
      my_caused.push_back(j);
      n_edges += s.edge_range(j).second - s.edge_range(j).first;
    }
  // At most 5 bytes a varint.
  mine.reserve(16 + size_t(n_mine) * 9 + my_caused.size() * 15 + size_t(n_edges) * 9);
  for (uint32_t v : {n_mine, uint32_t(my_caused.size()), n_edges, ref_end}) put<uint32_t>(mine, v);
  uint32_t prev = 0;
  for (uint32_t j = 0; j < s.inst.size(); ++j)
    if (in_batch(bk.of_inst[j]) && s.base_of(j) > 0) {
      put_varint(mine, j - prev);
      put<float>(mine, float(s.base[j]));
      prev = j;
    }
  int64_t prev_v = 0, prev_u = 0;
  for (uint32_t j : my_caused) {
    const Caused& c = s.caused[j];
    put_varint(mine, uint64_t(uint32_t(c.w_rank)));
    put_varint(mine, zigzag(int64_t(c.v_ref) - prev_v));
    prev_v = c.v_ref;
    const auto [x0, x1] = s.edge_range(j);
    put_varint(mine, x1 - x0);
    for (uint32_t x = x0; x < x1; ++x) {
      put_varint(mine, zigzag(int64_t(s.edges[x].first) - prev_u));
      prev_u = s.edges[x].first;
      put<float>(mine, float(s.edges[x].second));
    }
  }
}

// Rank 0's graph of one batch: a node per wait that receives cost, an edge list per caused
// record.
struct BatchGraph {
  explicit BatchGraph(int P) : refs(static_cast<size_t>(P)), first_node(static_cast<size_t>(P), 0) {}
  // (rank, instance) -> node, dense per rank: each rank's instances arrive ascending,
  // nodes in that order.
  // Nodes and edges counted in 32 bits (read_batch refuses more): a batch is at most
  // batch_limit instances, unless one phase holds more.
  std::vector<std::vector<uint32_t>> refs;
  std::vector<uint32_t> first_node;
  std::vector<double> r;
  std::vector<uint32_t> v_of, e_begin{0};  // v_of: kNone where the wait is no node here
  std::vector<CostEdge> e_list;
  std::vector<std::tuple<uint32_t, uint64_t, float>> cross;  // (v node, u key, coef)
  std::vector<uint32_t> indeg;

  uint32_t node_of(uint32_t rk, uint32_t ref) const {
    if (rk >= refs.size() || ref >= refs[rk].size()) return kNone;
    const uint32_t i = refs[rk][ref];
    return i == kNone ? kNone : first_node[rk] + i;
  }
};

// The nodes of rank `rk`'s part (pack_batch) into `g`: their base plus the cost `pending`
// carried from later batches. `p` ends past them.
Status read_nodes(BatchGraph& g, int rk, uint32_t n, uint32_t ref_end, const unsigned char*& p,
                  const unsigned char* end, std::unordered_map<uint64_t, double>& pending) {
  g.first_node[size_t(rk)] = uint32_t(g.r.size());
  std::vector<uint32_t>& idx = g.refs[size_t(rk)];
  idx.assign(ref_end, UINT32_MAX);
  uint64_t ref = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t delta = 0;
    float b0 = 0;
    if (!get_varint(p, end, delta) || !get(p, end, b0)) return Status::kCorrupt;
    ref += delta;
    if (ref >= ref_end) return Status::kCorrupt;
    idx[ref] = i;
    double carried = 0;
    if (!pending.empty()) {
      auto it = pending.find(wait_key(uint64_t(rk), uint32_t(ref)));
      if (it != pending.end()) {
        carried = it->second;
        pending.erase(it);
      }
    }
    g.r.push_back(b0 + carried);
  }
  return Status::kOk;
}

// The caused records of rank `rk`'s part, from `p` (past its nodes): the edges between the
// nodes (edges to waits of earlier batches go to g.cross).
Status read_caused(BatchGraph& g, int rk, uint32_t nc, const unsigned char* p, const unsigned char* end) {
  int64_t v_ref = 0, u = 0;
  for (uint32_t j = 0; j < nc; ++j) {
    uint64_t w = 0, dv = 0, ne = 0;
    if (!get_varint(p, end, w) || !get_varint(p, end, dv) || !get_varint(p, end, ne)) return Status::kCorrupt;
    v_ref += unzigzag(dv);
    const uint32_t v = w <= UINT32_MAX ? g.node_of(uint32_t(w), uint32_t(v_ref)) : kNone;
    g.v_of.push_back(v);
    for (uint64_t x = 0; x < ne; ++x) {
      uint64_t du = 0;
      float coef = 0;
      if (!get_varint(p, end, du) || !get(p, end, coef)) return Status::kCorrupt;
      u += unzigzag(du);
      if (v == kNone) continue;
      const uint32_t un = g.node_of(uint32_t(rk), uint32_t(u));
      if (un == kNone) {
        g.cross.emplace_back(v, wait_key(uint64_t(rk), uint32_t(u)), coef);
      } else {
        g.e_list.push_back({un, coef});
        ++g.indeg[un];
      }
    }
    g.e_begin.push_back(uint32_t(g.e_list.size()));
  }
  return Status::kOk;
}

// The root reads every rank's part of a batch (pack_batch) into `g`: every rank's nodes
// first, then the edges between them. `r_counts`: caused records per rank.
Status read_batch(BatchGraph& g, int P, const std::vector<unsigned char>& all, const std::vector<int>& lens,
                  const std::vector<int>& displs, std::unordered_map<uint64_t, double>& pending,
                  std::vector<int>& r_counts) {
  r_counts.assign(static_cast<size_t>(P), 0);
  std::vector<const unsigned char*> caused_at(static_cast<size_t>(P));
  uint64_t sums[3] = {0, 0, 0};         // nodes, caused records, edges
  for (int pass = 0; pass < 2; ++pass)  // the sizes, then the nodes
    for (int rk = 0; rk < P; ++rk) {
      const unsigned char* p = all.data() + displs[size_t(rk)];
      const unsigned char* end = p + lens[size_t(rk)];
      uint32_t h[4] = {0, 0, 0, 0};  // nodes, caused records, edges, ref_end
      for (uint32_t& x : h)
        if (!get(p, end, x)) return Status::kCorrupt;
      if (pass == 0) {
        for (int k = 0; k < 3; ++k) sums[k] += h[k];
        continue;
      }
      if (rk == 0) {
        if (sums[0] >= kNone || sums[2] >= kNone) return Status::kUnsupported;  // a graph in 32 bits
        g.r.reserve(sums[0]);
        g.indeg.assign(sums[0], 0);
        g.v_of.reserve(sums[1]);
        g.e_begin.reserve(sums[1] + 1);
        g.e_list.reserve(sums[2]);
      }
      CRITPATH_FORWARD_IF_ERROR(read_nodes(g, rk, h[0], h[3], p, end, pending));
      caused_at[size_t(rk)] = p;
      r_counts[size_t(rk)] = int(h[1]);
    }
  if (g.r.size() != sums[0]) return Status::kCorrupt;
  for (int rk = 0; rk < P; ++rk)
    CRITPATH_FORWARD_IF_ERROR(read_caused(g, rk, uint32_t(r_counts[size_t(rk)]), caused_at[size_t(rk)],
                                          all.data() + displs[size_t(rk)] + lens[size_t(rk)]));
  return Status::kOk;
}

// The root solves a batch's graph: r_v per caused record, rank after rank, into `r_all`; the
// costs that cross into earlier batches into `pending`.
void solve_batch(BatchGraph& g, std::unordered_map<uint64_t, double>& pending, std::vector<double>& r_all,
                 DelayResult& out) {
  g.indeg.resize(g.r.size(), 0);
  std::vector<uint8_t> handled(g.r.size(), 0);
  for (uint32_t v : g.v_of)
    if (v != kNone) handled[v] = 1;
  std::vector<uint8_t> done;
  propagate_costs(g.r, g.v_of, g.e_begin, g.e_list, g.indeg, done);
  // A cycle (inconsistent clocks) leaves nodes undone: their cost stops there, as does
  // the cost of a wait nobody costed.
  for (size_t x = 0; x < g.r.size(); ++x)
    if (!done[x] || !handled[x]) out.remainder_s += g.r[x];
  for (const auto& [v, u, coef] : g.cross)
    if (done[v]) pending[u] += double(coef) * g.r[v];
  r_all.reserve(g.v_of.size());
  for (uint32_t v : g.v_of) r_all.push_back(v == kNone || !done[v] ? 0.0 : g.r[v]);
}

// --- 4. Gathered (a testing aid): the backward propagation of the costs on rank 0:
//        r_u = base_u + sum over the waits v whose interval holds u of r_v * a_u / D_v, in
//        reverse topological order.
//        Phases: global synchronizations (barrier / N x N over all ranks) cut the graph, as
//        no interval reaches back past one: costs flow only to the same or an earlier
//        phase. Rank 0 solves batches of whole phases, the latest first, each of at most
//        kDelayGraphLimit instances (a larger single phase is one batch), and keeps only the
//        costs that cross into earlier batches: its memory is one batch, not the run.
//        When no wait of any rank receives cost (bk.nodes == 0: no causer waited inside a
//        causing interval, as in a ping-pong), every r is 0: the batches are only counted.
Status propagate_gathered(DelayState& s, const engine::Group& group, const DelayBuckets& bk,
                          DelayResult& out) {
  std::unordered_map<uint64_t, double> pending;  // root: costs into earlier batches
  for (uint64_t hi = bk.size.size(); hi > 0;) {
    uint64_t lo = hi - 1, n_batch = bk.size[lo];
    while (lo > 0 && n_batch + bk.size[lo - 1] <= s.in.batch_limit) n_batch += bk.size[--lo];
    ++out.batches;
    out.largest_batch = std::max(out.largest_batch, n_batch);
    if (bk.nodes == 0) {  // no cost to propagate anywhere: every r_v stays 0 (r_caused empty)
      hi = lo;
      continue;
    }
    s.r_caused.resize(s.caused.size(), 0.0);
    std::vector<unsigned char> mine;
    std::vector<uint32_t> my_caused;  // this batch's caused records, in sending order
    pack_batch(s, bk, lo, hi, mine, my_caused);
    out.bytes_sent += mine.size();
    std::vector<unsigned char> all;
    std::vector<int> lens, displs;
    CRITPATH_FORWARD_IF_ERROR(group.gather_to_root(mine.data(), mine.size(), all, lens, displs));
    mine = std::vector<unsigned char>();
    std::vector<double> r_all;  // root: r_v per caused record, rank after rank
    std::vector<int> r_counts;
    if (group.is_root()) {
      BatchGraph g(s.P);
      CRITPATH_FORWARD_IF_ERROR(read_batch(g, s.P, all, lens, displs, pending, r_counts));
      solve_batch(g, pending, r_all, out);
    }
    std::vector<double> r_mine;
    CRITPATH_FORWARD_IF_ERROR(group.scatter_from_root(r_all, r_counts, r_mine));
    if (r_mine.size() != my_caused.size()) return Status::kCorrupt;
    for (size_t i = 0; i < my_caused.size(); ++i) s.r_caused[my_caused[i]] = r_mine[i];
    hi = lo;
  }
  for (const auto& [k, cost] : pending) out.remainder_s += cost;  // reached no later batch
  return Status::kOk;
}

// --- 5. Long-term costs at C; the waiting side's classification at W.
void book_long_term(const DelayState& s, const DelaySlots& slot, engine::MetricStore& store,
                    DelayResult& out) {
  for (size_t j = 0; j < s.r_caused.size(); ++j) {
    const Caused& c = s.caused[j];
    const double rv = s.r_caused[j];
    if (!(rv > 0)) continue;
    if (!(c.D > 0)) {
      out.remainder_s += rv;
      continue;
    }
    const int family = s.caused_family[j];
    for (uint32_t x = c.d_begin, d_end = s.d_end(j); x < d_end; ++x) {
      const double v = rv * s.dflat[x].second / c.D;
      store.add(slot.long_term[family], s.dflat[x].first, v);
      store.add(slot.long_total, s.dflat[x].first, v);
    }
  }
}

void classify_waits(const DelayState& s, DelayBook& book) {
  if (s.indirect.empty() && s.prop.empty()) {  // every share 0 (a ping-pong's): no lookups
    for (const Inst& v : s.inst) {
      const long g = s.gid_of_call(v.call);
      const double a = v.amount, none = std::min(0.0, a);  // below, as min(share, a)
      if (none != 0) {
        book.add(kRowIndirect, g, none);
        book.add(kRowPropagating, g, none);
      }
      book.add(kRowDirect, g, a - none);
      book.add(kRowTerminal, g, a - none);
    }
    return;
  }
  for (size_t j = 0; j < s.inst.size(); ++j) {
    const long g = s.gid_of_call(s.inst[j].call);
    const double a = s.inst[j].amount;
    const double ind = std::min(s.indirect_of(j), a), pr = std::min(s.prop_of(j), a);
    if (ind != 0) book.add(kRowIndirect, g, ind);  // adding 0 leaves a value as it is
    book.add(kRowDirect, g, a - ind);
    if (pr != 0) book.add(kRowPropagating, g, pr);
    book.add(kRowTerminal, g, a - pr);
  }
}

}  // namespace

Status compute_delay(const DelayInput& in, const engine::Group& group, engine::MetricStore& store,
                     DelayResult& out) {
  const int P = group.size();
  out = DelayResult{};
  const DelaySlots slot = delay_slots(store);
  DelayState s(in, P);
  find_instances(s, out);

  Bytes flat;
  std::vector<std::pair<int32_t, size_t>> runs;
  std::vector<engine::Comm::Parcel> recv;
  pack_wait_vectors(s, flat, runs, out);
  CRITPATH_FORWARD_IF_ERROR(exchange_runs(group, flat.data(), runs, recv));
  flat = Bytes();

  out.distributed = in.replay == DelayReplay::kDistributed ||
                    (in.replay == DelayReplay::kAuto && P > kDelayGatherRanks);
  s.keep_caused = out.distributed;  // the gathered propagation may need none (DelayState)
  std::vector<unsigned char> back;
  size_t records = 0;  // the wait records received, at most
  for (const engine::Comm::Parcel& parcel : recv) records += parcel.bytes.size() / 9;
  DelayBook book(store, slot, 2 * (s.inst.size() + records));
  CRITPATH_FORWARD_IF_ERROR(cost_caused_waits(s, book, recv, back, runs, out));
  out.bytes_sent += back.size();
  std::vector<engine::Comm::Parcel> replies;  // recv kept: make_caused may read it again
  CRITPATH_FORWARD_IF_ERROR(exchange_runs(group, back.data(), runs, replies));
  back = std::vector<unsigned char>();
  CRITPATH_FORWARD_IF_ERROR(read_indirect_shares(s, replies));
  replies = std::vector<engine::Comm::Parcel>();

  DelayBuckets bk;
  if (!out.distributed) {
    CRITPATH_FORWARD_IF_ERROR(count_buckets(s, group, bk, out));
    out.distributed = in.replay == DelayReplay::kAuto && !bk.size.empty() &&
                      *std::max_element(bk.size.begin(), bk.size.end()) > kDelayGatherMax;
  }
  if (out.distributed) make_caused(s, s.n_caused);  // (those count_buckets did not need)
  s.step2 = nullptr;
  recv = std::vector<engine::Comm::Parcel>();
  if (out.distributed) {
    s.r_caused.assign(s.caused.size(), 0.0);
    DistributedPropagation dp(s);
    CRITPATH_FORWARD_IF_ERROR(dp.run(group, in.timeout_s, out));
  } else {
    CRITPATH_FORWARD_IF_ERROR(propagate_gathered(s, group, bk, out));
  }

  book_long_term(s, slot, store, out);
  classify_waits(s, book);
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
