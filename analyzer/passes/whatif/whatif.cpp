// critpath — analyzer/passes/whatif/whatif.cpp: the what-if replay (see whatif.h).
#include "analyzer/passes/whatif/whatif.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "libtrace/clock/clock.h"

namespace critpath::analyzer::passes {
namespace {

constexpr double kNone = -1e300;  // "no dependency" in a ready time

std::vector<std::string> split(const std::string& s, char c) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t end = s.find(c, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

template <typename T>
void put(std::vector<unsigned char>& b, T v) {
  const size_t at = b.size();
  b.resize(at + sizeof v);
  std::memcpy(b.data() + at, &v, sizeof v);
}

template <typename T>
bool get(const std::vector<unsigned char>& b, size_t& at, T& v) {
  if (at + sizeof v > b.size()) return false;
  std::memcpy(&v, b.data() + at, sizeof v);
  at += sizeof v;
  return true;
}

// What a replay message entry is about. Point to point: (sender's group, position) of the
// message (P2pMatch). Collectives: (communicator or window id, instance ordinal on it).
enum EntryType : uint32_t {
  kP2p = 0,
  kCollIn = 1,    // a member's enter' to the coordinator / root / every member
  kCollOut = 2,   // the coordinator's result to a member
  kWinIn = 3,
  kWinOut = 4,
  kRma = 5,       // a one-sided wait's cause time to the waiter: (the waiter's wait index, 0)
};

struct Key {
  int32_t src;
  uint32_t type, a, b;
  bool operator==(const Key& o) const {
    return src == o.src && type == o.type && a == o.a && b == o.b;
  }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = uint64_t(uint32_t(k.src)) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t(k.type) << 32 | k.a) + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
    h ^= uint64_t(k.b) * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    return size_t(h);
  }
};

// Call-index lists: items[begin[k] .. begin[k + 1]) belong to call k.
struct ByCall {
  std::vector<uint32_t> begin, items;
  void build(size_t calls, const std::vector<std::pair<uint32_t, uint32_t>>& call_item) {
    begin.assign(calls + 1, 0);
    for (const auto& [c, i] : call_item) ++begin[c + 1];
    for (size_t k = 0; k < calls; ++k) begin[k + 1] += begin[k];
    items.resize(call_item.size());
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (const auto& [c, i] : call_item) items[fill[c]++] = i;
  }
};

// One collective instance as the replay sees it.
struct CollRef {
  uint32_t index;  // in Timeline::colls or ::win_colls
  bool window;
};

// The replay of one rank: its messages, inbox and lanes.
class Replay {
 public:
  Replay(const engine::Group& group, size_t lanes, double timeout_s)
      : group_(group), V_(lanes), out_(size_t(group.size())), sent_(size_t(group.size()), 0),
        got_(size_t(group.size()), 0),
        deadline_(clock::monotonic_ns() + uint64_t(std::max(1.0, timeout_s) * 1e9)) {}

  size_t lanes() const { return V_; }
  uint64_t messages() const { return messages_; }
  uint64_t bytes() const { return bytes_; }

  // Tells `dest` the lane values `v` under `key` (its src: this rank).
  Status tell(int dest, uint32_t type, uint32_t a, uint32_t b, const double* v) {
    if (dest == group_.rank()) {
      inbox_[Key{dest, type, a, b}].assign(v, v + V_);
      return Status::kOk;
    }
    if (dest < 0 || dest >= group_.size()) return Status::kInvalidArgument;
    std::vector<unsigned char>& o = out_[size_t(dest)];
    put(o, type);
    put(o, a);
    put(o, b);
    put(o, v[0]);
    // The other lanes as single-precision offsets to lane 0, only those that differ (a mask
    // says which): most hypotheses leave most of a run's times where they were.
    uint64_t mask = 0;
    for (size_t l = 1; l < V_; ++l)
      if (float(v[l] - v[0]) != 0.0f) mask |= uint64_t(1) << (l - 1);
    put(o, mask);
    for (size_t l = 1; l < V_; ++l)
      if (mask >> (l - 1) & 1) put(o, float(v[l] - v[0]));
    if (o.size() >= kFlushBytes) return flush(dest);
    return Status::kOk;
  }

  // The lane values `src` told this rank under the key, waiting for them if need be.
  Status need(int src, uint32_t type, uint32_t a, uint32_t b, double* v) {
    const Key k{src, type, a, b};
    // Flushed before every dependency, found or not: the messages (and their count in the
    // report) are the same whatever the timing.
    CRITPATH_FORWARD_IF_ERROR(flush_all());
    for (;;) {
      auto it = inbox_.find(k);
      if (it != inbox_.end()) {
        std::copy(it->second.begin(), it->second.end(), v);
        inbox_.erase(it);
        return Status::kOk;
      }
      if (src == group_.rank()) return Status::kInvalidArgument;  // never told: inconsistent
      CRITPATH_FORWARD_IF_ERROR(receive_one());
    }
  }

  Status flush_all() {
    for (size_t d = 0; d < out_.size(); ++d)
      if (!out_[d].empty()) CRITPATH_FORWARD_IF_ERROR(flush(int(d)));
    return Status::kOk;
  }

  // After the last call: every message sent to this rank received, every post delivered.
  Status finish(const engine::Group& group) {
    CRITPATH_FORWARD_IF_ERROR(flush_all());
    std::vector<int> counts(sent_.size(), int(sizeof(uint64_t)));
    std::vector<unsigned char> recv;
    std::vector<int> recv_counts;
    CRITPATH_FORWARD_IF_ERROR(group.alltoallv(sent_.data(), counts, recv, recv_counts));
    for (size_t s = 0; s < sent_.size(); ++s) {
      uint64_t expected = 0;
      if (recv.size() >= (s + 1) * sizeof expected)
        std::memcpy(&expected, recv.data() + s * sizeof expected, sizeof expected);
      while (got_[s] < expected) CRITPATH_FORWARD_IF_ERROR(receive_one());
    }
    return group_.complete_posts(remaining());
  }

 private:
  static constexpr size_t kFlushBytes = 32768;

  double remaining() const {
    const uint64_t now = clock::monotonic_ns();
    return now >= deadline_ ? 0.0 : double(deadline_ - now) * 1e-9;
  }

  Status flush(int dest) {
    std::vector<unsigned char>& o = out_[size_t(dest)];
    bytes_ += o.size();
    ++messages_;
    ++sent_[size_t(dest)];
    const Status s = group_.post(dest, std::move(o));
    o.clear();
    return s;
  }

  Status receive_one() {
    int src = -1;
    std::vector<unsigned char> in;
    if (remaining() <= 0) return Status::kMpiError;
    CRITPATH_FORWARD_IF_ERROR(group_.receive(src, in, remaining()));
    if (src < 0 || size_t(src) >= got_.size()) return Status::kMpiError;
    ++got_[size_t(src)];
    size_t at = 0;
    while (at < in.size()) {
      Key k{src, 0, 0, 0};
      double v0 = 0;
      if (!get(in, at, k.type) || !get(in, at, k.a) || !get(in, at, k.b) || !get(in, at, v0))
        return Status::kCorrupt;
      uint64_t mask = 0;
      if (!get(in, at, mask)) return Status::kCorrupt;
      std::vector<double>& v = inbox_[k];
      v.assign(V_, v0);
      for (size_t l = 1; l < V_; ++l) {
        if (!(mask >> (l - 1) & 1)) continue;
        float d = 0;
        if (!get(in, at, d)) return Status::kCorrupt;
        v[l] = v0 + double(d);
      }
    }
    return Status::kOk;
  }

  const engine::Group& group_;
  size_t V_;
  std::vector<std::vector<unsigned char>> out_;  // per destination, not yet posted
  std::vector<uint64_t> sent_, got_;             // messages per peer
  std::unordered_map<Key, std::vector<double>, KeyHash> inbox_;
  uint64_t deadline_;
  uint64_t messages_ = 0, bytes_ = 0;
};

// Overlap of [a, z] with the ascending, disjoint `segs`, from index `from` on (advanced).
double overlap(const std::vector<CpSegment>& segs, size_t& from, double a, double z) {
  while (from < segs.size() && segs[from].end <= a) ++from;
  double o = 0;
  for (size_t i = from; i < segs.size() && segs[i].begin < z; ++i)
    o += std::max(0.0, std::min(z, segs[i].end) - std::max(a, segs[i].begin));
  return o;
}

}  // namespace

bool parse_whatif(const std::string& text, std::vector<Hypothesis>& out, std::string& error) {
  for (const std::string& raw : split(text, ';')) {
    const std::string item = trim(raw);
    if (item.empty()) continue;
    const std::vector<std::string> f = split(item, ':');
    Hypothesis h;
    h.spec = item;
    const std::string word = trim(f[0]);
    if ((word == "balance" || word == "zero") && f.size() == 2) {
      h.kind = word == "balance" ? LaneKind::kBalance : LaneKind::kZero;
      h.factor = word == "zero" ? 0.0 : 1.0;
      h.callpath = trim(f[1]);
    } else if (word == "scale" && f.size() == 3) {
      h.kind = LaneKind::kScale;
      const std::string num = trim(f[1]);
      char* end = nullptr;
      h.factor = std::strtod(num.c_str(), &end);
      if (num.empty() || end == nullptr || *end != '\0' || !std::isfinite(h.factor) || h.factor < 0) {
        error = "'" + item + "': the factor must be a number >= 0";
        return false;
      }
      h.callpath = trim(f[2]);
    } else {
      error = "'" + item + "': expected balance:NAME, zero:NAME or scale:FACTOR:NAME";
      return false;
    }
    if (h.callpath.empty()) {
      error = "'" + item + "': no call path named";
      return false;
    }
    out.push_back(std::move(h));
  }
  return true;
}

std::vector<unsigned char> encode_lanes(const std::vector<Hypothesis>& lanes) {
  std::vector<unsigned char> b;
  put(b, uint32_t(lanes.size()));
  for (const Hypothesis& h : lanes) {
    put(b, uint8_t(h.kind));
    put(b, h.factor);
    put(b, uint32_t(h.callpaths.size()));
    for (int g : h.callpaths) put(b, int32_t(g));
  }
  return b;
}

bool decode_lanes(const std::vector<unsigned char>& b, std::vector<Hypothesis>& lanes) {
  size_t at = 0;
  uint32_t n = 0;
  if (!get(b, at, n) || n > (1u << 16)) return false;
  lanes.assign(n, Hypothesis{});
  for (Hypothesis& h : lanes) {
    uint8_t kind = 0;
    uint32_t m = 0;
    if (!get(b, at, kind) || kind > uint8_t(LaneKind::kSlack) || !get(b, at, h.factor) || !get(b, at, m) ||
        m > b.size())
      return false;
    h.kind = LaneKind(kind);
    h.callpaths.resize(m);
    for (int& g : h.callpaths) {
      int32_t v = 0;
      if (!get(b, at, v)) return false;
      g = v;
    }
  }
  return at == b.size();
}

Status simulate(const WhatIfInput& in, const std::vector<Hypothesis>& lanes,
                const engine::Group& group, WhatIfResult& out) {
  const engine::Timeline& t = *in.timeline;
  const engine::P2pMatch& match = *in.match;
  const std::vector<engine::CollSync>& csync = *in.csync;
  const size_t V = lanes.size();
  const int me = group.rank(), P = group.size();
  const uint64_t t0 = clock::monotonic_ns();
  out = WhatIfResult{};
  out.ranks = P;
  if (V == 0) return Status::kOk;
  if (V > kMaxLanes) return Status::kInvalidArgument;  // rank 0 keeps to it (whatif_report)

  // The model follows the main thread: with other threads calling MPI it does not apply.
  int threads = t.mpi_locations > 1 ? 1 : 0;
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(&threads, 1, engine::ReduceOp::kMax));
  if (threads) {
    out.failure = "threads other than the main one call MPI (the model replays the main thread)";
    return Status::kOk;
  }

  // --- Location 0's calls: [0, n0), in call order; the replay runs to MPI_Finalize's entry.
  size_t n0 = 0;
  while (n0 < t.calls.size() && t.calls[n0].location == 0) ++n0;
  const size_t init = t.init_call != engine::kNoCall && t.init_call < n0 ? t.init_call : 0;
  const size_t fin = t.finalize_call != engine::kNoCall && t.finalize_call < n0 ? t.finalize_call
                     : n0 > 0                                                  ? n0 - 1
                                                                               : 0;
  const bool have_gaps = t.gap_begin.size() == t.calls.size() + 1;

  // --- Factors per lane and local call-path node.
  const std::vector<int>& l2g = *in.local_to_global;
  const size_t N = l2g.size();
  std::vector<double> fac(V * N, 1.0);
  std::vector<uint8_t> hit(V * N, 0);
  for (size_t l = 0; l < V; ++l) {
    if (lanes[l].callpaths.empty()) continue;
    std::vector<int> ids = lanes[l].callpaths;
    std::sort(ids.begin(), ids.end());
    for (size_t n = 0; n < N; ++n)
      if (std::binary_search(ids.begin(), ids.end(), l2g[n])) hit[l * N + n] = 1;
  }
  // Balance: this rank's time in the lane's call paths, and the mean over ranks with any.
  std::vector<double> mine(V, 0.0), useful(2, 0.0);
  for (size_t k = init + 1; have_gaps && k <= fin && k < n0; ++k) {
    for (uint32_t e = t.gap_begin[k]; e < t.gap_begin[k + 1]; ++e) {
      const engine::GapEntry& g = t.gaps[e];
      if (g.node < 0 || size_t(g.node) >= N) continue;
      for (size_t l = 0; l < V; ++l)
        if (hit[l * N + size_t(g.node)]) mine[l] += g.seconds;
    }
    useful[0] += std::max(0.0, t.calls[k].enter - t.calls[k - 1].exit);
  }
  {
    std::vector<double> sums(2 * V, 0.0);
    for (size_t l = 0; l < V; ++l) {
      sums[l] = mine[l];
      sums[V + l] = mine[l] > 0 ? 1.0 : 0.0;
    }
    CRITPATH_FORWARD_IF_ERROR(group.allreduce(sums.data(), sums.size(), engine::ReduceOp::kSum));
    for (size_t l = 0; l < V; ++l) {
      double f = 1.0;
      switch (lanes[l].kind) {
        case LaneKind::kBalance:
          f = mine[l] > 0 && sums[V + l] > 0 ? (sums[l] / sums[V + l]) / mine[l] : 1.0;
          break;
        case LaneKind::kZero:
        case LaneKind::kSlack:
          f = 0.0;
          break;
        case LaneKind::kScale:
          f = lanes[l].factor;
          break;
        default:
          break;
      }
      for (size_t n = 0; n < N; ++n)
        if (hit[l * N + n]) fac[l * N + n] = f;
    }
  }
  bool any_slack = false;
  for (const Hypothesis& h : lanes) any_slack |= h.kind == LaneKind::kSlack;

  // --- What each call posts and completes.
  ByCall sends_at, recvs_at, posts_at, completes_at;
  std::vector<CollRef> colls;
  {
    std::vector<std::pair<uint32_t, uint32_t>> s, r, p, c;
    for (uint32_t i = 0; i < t.sends.size(); ++i)
      if (t.sends[i].call < n0 && i < match.group.size() && match.group[i] != UINT32_MAX)
        s.push_back({t.sends[i].call, i});
    for (uint32_t i = 0; i < t.recvs.size(); ++i)
      if (t.recvs[i].complete_call < n0 && i < match.send_group.size() &&
          match.send_group[i] != UINT32_MAX)
        r.push_back({t.recvs[i].complete_call, i});
    auto add_colls = [&](const std::vector<engine::CollRecord>& recs,
                         const std::vector<engine::CollSync>* sync, bool window) {
      for (uint32_t i = 0; sync && i < recs.size() && i < sync->size(); ++i) {
        const engine::CollSync& cs = (*sync)[i];
        const engine::CollKind kind = window ? engine::CollKind::kBarrier : recs[i].kind;
        if (!cs.valid || kind == engine::CollKind::kOther || !engine::synchronizes(kind, cs)) continue;
        if (recs[i].call >= n0 || recs[i].complete_call >= n0) continue;
        const uint32_t ref = uint32_t(colls.size());
        colls.push_back({i, window});
        p.push_back({recs[i].call, ref});
        c.push_back({recs[i].complete_call, ref});
      }
    };
    add_colls(t.colls, &csync, false);
    add_colls(t.win_colls, in.wsync, true);
    sends_at.build(n0, s);
    recvs_at.build(n0, r);
    posts_at.build(n0, p);
    completes_at.build(n0, c);
  }
  // Instance ordinals per communicator / window (the order sync_collectives numbers them in)
  // and the members' world ranks.
  std::vector<uint32_t> ordinal(colls.size(), 0);
  std::map<std::pair<bool, uint32_t>, std::vector<int32_t>> members;
  {
    std::map<std::pair<bool, uint32_t>, uint32_t> next;
    std::vector<std::pair<uint32_t, uint32_t>> order;  // (record index, ref), per kind
    std::vector<uint32_t> ref_of_coll(t.colls.size(), UINT32_MAX), ref_of_win(t.win_colls.size(), UINT32_MAX);
    for (uint32_t ref = 0; ref < colls.size(); ++ref)
      (colls[ref].window ? ref_of_win : ref_of_coll)[colls[ref].index] = ref;
    // Every record counts towards its key's ordinal, replayed or not.
    for (int w = 0; w < 2; ++w) {
      const auto& recs = w ? t.win_colls : t.colls;
      const auto& ref_of = w ? ref_of_win : ref_of_coll;
      for (uint32_t i = 0; i < recs.size(); ++i) {
        const std::pair<bool, uint32_t> key{w == 1, recs[i].comm};
        const uint32_t o = next[key]++;
        if (ref_of[i] != UINT32_MAX) ordinal[ref_of[i]] = o;
      }
    }
    std::map<uint32_t, std::vector<int32_t>> windows;
    for (const defs::WindowDef& w : in.definitions->windows.snapshot()) windows[w.id] = w.members;
    for (const CollRef& c : colls) {
      const engine::CollRecord& rec = c.window ? t.win_colls[c.index] : t.colls[c.index];
      const std::pair<bool, uint32_t> key{c.window, rec.comm};
      if (members.count(key)) continue;
      members[key] = c.window ? windows[rec.comm]
                              : engine::comm_members(in.definitions->comms, rec.comm, P, me);
    }
  }

  // --- One-sided waits (the RMA pass's): the waiter asks each causer for its cause's time,
  // named by the waiter's own wait index; the causer tells it when it replays the call.
  struct RmaAsk {
    uint32_t call;   // the causer's call
    uint32_t key;    // the waiter's wait index
    double time;     // the cause's measured time (enter or exit of `call`)
  };
  struct RmaTell {
    int32_t waiter;
    uint32_t key;
    bool at_exit;
    double time;  // measured: for causes the replay does not move
  };
  std::vector<std::pair<uint32_t, uint32_t>> rma_need;  // (waiting call, wait index)
  std::map<uint32_t, std::vector<RmaTell>> rma_tell;    // causer's call -> whom to tell
  std::vector<RmaTell> rma_tell_now;                    // causes outside the replayed calls
  const std::vector<RmaWait> no_rma;
  const std::vector<RmaWait>& rw = in.rma_waits ? *in.rma_waits : no_rma;
  {
    std::vector<std::vector<RmaAsk>> asks(static_cast<size_t>(P));
    for (uint32_t i = 0; i < rw.size(); ++i) {
      const RmaWait& w = rw[i];
      if (w.window_coll || w.causer < 0 || w.causer >= P || w.causer == me || w.call >= n0 ||
          w.cause_call == engine::kNoCall)
        continue;
      asks[size_t(w.causer)].push_back({w.cause_call, i, w.cause_time});
      rma_need.push_back({w.call, i});
    }
    std::vector<unsigned char> send, recv;
    std::vector<int> counts(size_t(P), 0), recv_counts;
    for (int d = 0; d < P; ++d) {
      counts[size_t(d)] = int(asks[size_t(d)].size() * sizeof(RmaAsk));
      const auto* b = reinterpret_cast<const unsigned char*>(asks[size_t(d)].data());
      send.insert(send.end(), b, b + counts[size_t(d)]);
    }
    CRITPATH_FORWARD_IF_ERROR(group.alltoallv(send.data(), counts, recv, recv_counts));
    size_t at = 0;
    for (int src = 0; src < P; ++src) {
      const size_t n = size_t(recv_counts[size_t(src)]) / sizeof(RmaAsk);
      for (size_t j = 0; j < n; ++j) {
        RmaAsk a;
        std::memcpy(&a, recv.data() + at + j * sizeof a, sizeof a);
        const bool replayed = a.call < n0 && a.call < fin && a.call > init;
        const bool at_exit = replayed && std::fabs(a.time - t.calls[a.call].exit) <
                                             std::fabs(a.time - t.calls[a.call].enter);
        (replayed ? rma_tell[a.call] : rma_tell_now).push_back({src, a.key, at_exit, a.time});
      }
      at += size_t(recv_counts[size_t(src)]);
    }
    std::sort(rma_need.begin(), rma_need.end());
  }
  ByCall rma_need_at;
  {
    std::vector<std::pair<uint32_t, uint32_t>> v(rma_need.begin(), rma_need.end());
    rma_need_at.build(n0, v);
  }

  // --- The replay.
  Replay rp(group, V, in.timeout_s);
  std::vector<double> cur(V), enter(V), ready(V), v(V), fin_time(V), wait(V, 0.0);
  std::vector<double> posted(colls.size() * V, 0.0);  // a member's enter' at the post
  double wait_m = 0, fin_m = 0, clamped = 0;
  size_t seg_from = 0;
  const std::vector<CpSegment> no_segments;
  const std::vector<CpSegment>& segs = in.cp_segments ? *in.cp_segments : no_segments;
  Status status = Status::kOk;
  for (const RmaTell& x : rma_tell_now) {  // causes the replay does not move: as measured
    const std::vector<double> at(V, x.time);
    if (status == Status::kOk) status = rp.tell(x.waiter, kRma, x.key, 0, at.data());
  }

  auto coll_of = [&](uint32_t ref, const engine::CollRecord*& rec, const engine::CollSync*& cs,
                     engine::CollKind& kind, const std::vector<int32_t>*& mem) {
    const CollRef& c = colls[ref];
    rec = c.window ? &t.win_colls[c.index] : &t.colls[c.index];
    cs = c.window ? &(*in.wsync)[c.index] : &csync[c.index];
    kind = c.window ? engine::CollKind::kBarrier : rec->kind;
    mem = &members[{c.window, rec->comm}];
  };

  for (size_t k = 0; k < n0 && k <= fin && status == Status::kOk; ++k) {
    const engine::CallRecord& call = t.calls[k];
    // Entry: measured up to MPI_Init, then the previous exit' plus the modified gap.
    if (k <= init) {
      std::fill(enter.begin(), enter.end(), call.enter);
    } else {
      const double gap = call.enter - t.calls[k - 1].exit;
      double frac = 1.0;
      if (any_slack) {
        const double o = overlap(segs, seg_from, t.calls[k - 1].exit, call.enter);
        frac = gap > 0 ? std::min(1.0, o / gap) : 0.0;
      }
      for (size_t l = 0; l < V; ++l) enter[l] = gap;
      if (have_gaps)
        for (uint32_t e = t.gap_begin[k]; e < t.gap_begin[k + 1]; ++e) {
          const engine::GapEntry& g = t.gaps[e];
          if (g.node < 0 || size_t(g.node) >= N) continue;
          for (size_t l = 0; l < V; ++l) {
            if (!hit[l * N + size_t(g.node)]) continue;
            const double f = fac[l * N + size_t(g.node)];
            enter[l] += g.seconds * (f - 1.0) * (lanes[l].kind == LaneKind::kSlack ? frac : 1.0);
          }
        }
      for (size_t l = 0; l < V; ++l) enter[l] = cur[l] + std::max(0.0, enter[l]);
    }
    if (k == fin) {
      fin_time = enter;
      fin_m = call.enter;
      break;
    }
    // Posts: messages sent, collective contributions.
    for (uint32_t i = sends_at.begin[k]; i < sends_at.begin[k + 1] && status == Status::kOk; ++i) {
      const uint32_t s = sends_at.items[i];
      status = rp.tell(t.sends[s].peer, kP2p, match.group[s], match.pos[s], enter.data());
    }
    auto tell_rma = [&](bool at_exit, const std::vector<double>& when) {
      const auto it = rma_tell.find(uint32_t(k));
      if (it == rma_tell.end()) return;
      for (const RmaTell& x : it->second)
        if (x.at_exit == at_exit && status == Status::kOk)
          status = rp.tell(x.waiter, kRma, x.key, 0, when.data());
    };
    tell_rma(false, enter);
    for (uint32_t i = posts_at.begin[k]; i < posts_at.begin[k + 1] && status == Status::kOk; ++i) {
      const uint32_t ref = posts_at.items[i];
      const engine::CollRecord* rec;
      const engine::CollSync* cs;
      engine::CollKind kind;
      const std::vector<int32_t>* mem;
      coll_of(ref, rec, cs, kind, mem);
      std::copy(enter.begin(), enter.end(), posted.begin() + ref * V);
      const uint32_t type = colls[ref].window ? kWinIn : kCollIn;
      const int n = int(mem->size()), my = cs->my_comm_rank, root = rec->root;
      if (n != cs->comm_size || my < 0 || my >= n) continue;
      const bool blocking = rec->call == rec->complete_call;
      auto tell = [&](int m) {
        if (status == Status::kOk) status = rp.tell((*mem)[size_t(m)], type, rec->comm, ordinal[ref], enter.data());
      };
      if (kind == engine::CollKind::kOneToN) {
        if (my == root)
          for (int m = 0; m < n; ++m)
            if (m != my) tell(m);
      } else if (kind == engine::CollKind::kNToOne) {
        if (my != root && root >= 0 && root < n) tell(root);
      } else if (blocking) {
        if (my != 0) tell(0);  // the coordinator
      } else {
        for (int m = 0; m < n; ++m)
          if (m != my && (kind != engine::CollKind::kScan || m > my)) tell(m);
      }
    }
    // Completions: what the call waits for.
    std::fill(ready.begin(), ready.end(), kNone);
    double ready_m = kNone;
    auto take = [&](const std::vector<double>& x) {
      for (size_t l = 0; l < V; ++l) ready[l] = std::max(ready[l], x[l]);
    };
    for (uint32_t i = recvs_at.begin[k]; i < recvs_at.begin[k + 1] && status == Status::kOk; ++i) {
      const uint32_t r = recvs_at.items[i];
      status = rp.need(t.recvs[r].peer, kP2p, match.send_group[r], match.send_pos[r], v.data());
      take(v);
      ready_m = std::max(ready_m, match.send_enter[r]);
    }
    for (uint32_t i = completes_at.begin[k]; i < completes_at.begin[k + 1] && status == Status::kOk; ++i) {
      const uint32_t ref = completes_at.items[i];
      const engine::CollRecord* rec;
      const engine::CollSync* cs;
      engine::CollKind kind;
      const std::vector<int32_t>* mem;
      coll_of(ref, rec, cs, kind, mem);
      const uint32_t in_type = colls[ref].window ? kWinIn : kCollIn;
      const uint32_t out_type = colls[ref].window ? kWinOut : kCollOut;
      const int n = int(mem->size()), my = cs->my_comm_rank, root = rec->root;
      if (n != cs->comm_size || my < 0 || my >= n) continue;
      const bool blocking = rec->call == rec->complete_call;
      const uint32_t a = rec->comm, b = ordinal[ref];
      std::vector<double> own(posted.begin() + ref * V, posted.begin() + (ref + 1) * V);
      auto need = [&](int m) {
        if (status == Status::kOk) status = rp.need((*mem)[size_t(m)], in_type, a, b, v.data());
        return status == Status::kOk;
      };
      if (kind == engine::CollKind::kOneToN) {
        if (my != root && root >= 0 && root < n && need(root)) {
          take(v);
          ready_m = std::max(ready_m, cs->root_begin);
        }
      } else if (kind == engine::CollKind::kNToOne) {
        if (my == root) {
          take(own);
          for (int m = 0; m < n; ++m)
            if (m != my && need(m)) take(v);
          ready_m = std::max(ready_m, cs->latest_begin);
        }
      } else if (blocking && my != 0) {
        if (status == Status::kOk) status = rp.need((*mem)[0], out_type, a, b, v.data());
        take(v);
        ready_m = std::max(ready_m, kind == engine::CollKind::kScan ? cs->prefix_latest : cs->latest_begin);
      } else if (blocking) {
        // The coordinator: every member's enter', the result to each.
        std::vector<double> acc = own;
        for (int m = 1; m < n && status == Status::kOk; ++m) {
          if (!need(m)) break;
          for (size_t l = 0; l < V; ++l) acc[l] = std::max(acc[l], v[l]);
          if (kind == engine::CollKind::kScan)
            status = rp.tell((*mem)[size_t(m)], out_type, a, b, acc.data());
        }
        for (int m = 1; m < n && status == Status::kOk && kind != engine::CollKind::kScan; ++m)
          status = rp.tell((*mem)[size_t(m)], out_type, a, b, acc.data());
        take(kind == engine::CollKind::kScan ? own : acc);
        ready_m = std::max(ready_m, kind == engine::CollKind::kScan ? cs->prefix_latest : cs->latest_begin);
        if (status == Status::kOk) status = rp.flush_all();  // the members are waiting for it
      } else {
        take(own);
        for (int m = 0; m < n && status == Status::kOk; ++m)
          if (m != my && (kind != engine::CollKind::kScan || m < my) && need(m)) take(v);
        ready_m = std::max(ready_m, kind == engine::CollKind::kScan ? cs->prefix_latest : cs->latest_begin);
      }
    }
    for (uint32_t i = rma_need_at.begin[k]; i < rma_need_at.begin[k + 1] && status == Status::kOk; ++i) {
      const uint32_t w = rma_need_at.items[i];
      // A cause after the call's exit did not hold it up (a Win_complete that returned before
      // the late post): no dependency.
      if (rw[w].cause_time > call.exit + 1e-6) continue;
      status = rp.need(rw[w].causer, kRma, w, 0, v.data());
      take(v);
      ready_m = std::max(ready_m, rw[w].cause_time);
    }
    // Exit: after the entry and what it waited for, plus what the call cost beyond waiting.
    const double cost = std::max(0.0, call.exit - std::max(call.enter, ready_m));
    if (call.exit + 1e-6 < ready_m) ++clamped;  // ended before what it waited for
    if (k <= init) {
      std::fill(cur.begin(), cur.end(), call.exit);
      continue;
    }
    for (size_t l = 0; l < V; ++l) {
      const double start = std::max(enter[l], ready[l]);
      if (ready[l] > kNone) wait[l] += std::max(0.0, ready[l] - enter[l]);
      cur[l] = start + (lanes[l].kind == LaneKind::kIdealNetwork ? 0.0 : cost);
    }
    tell_rma(true, cur);
    if (ready_m > kNone) wait_m += std::max(0.0, ready_m - call.enter);
  }
  if (status == Status::kOk && (fin >= n0 || n0 == 0)) fin_time = cur;
  // Every rank ends its replay the same way, also after a failure (its deadline passed).
  const Status fs = rp.finish(group);
  if (status == Status::kOk) status = fs;

  int ok = status == Status::kOk ? 1 : 0;
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(&ok, 1, engine::ReduceOp::kMin));
  if (!ok) {
    out.failure = "the replay did not complete within " + std::to_string(int(in.timeout_s)) +
                  " s or met an inconsistent trace";
    return Status::kOk;
  }
  // --- Reductions.
  std::vector<double> mx(V + 2), sum(V + 5);
  for (size_t l = 0; l < V; ++l) {
    mx[l] = fin_time[l];
    sum[l] = wait[l];
  }
  mx[V] = fin_m;
  mx[V + 1] = useful[0];
  sum[V] = wait_m;
  sum[V + 1] = useful[0];
  sum[V + 2] = double(rp.messages());
  sum[V + 3] = double(rp.bytes());
  sum[V + 4] = clamped;
  double secs = double(clock::monotonic_ns() - t0) * 1e-9;
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(mx.data(), mx.size(), engine::ReduceOp::kMax));
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(sum.data(), sum.size(), engine::ReduceOp::kSum));
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(&secs, 1, engine::ReduceOp::kMax));
  out.ok = true;
  for (size_t l = 0; l < V; ++l) {
    out.span.push_back(mx[l] - in.first_init_enter);
    out.pop_span.push_back(mx[l] - in.earliest_init_exit);
    out.wait.push_back(sum[l]);
  }
  out.measured_span = mx[V] - in.first_init_enter;
  out.measured_pop_span = mx[V] - in.earliest_init_exit;
  out.measured_wait = sum[V];
  out.useful_max = mx[V + 1];
  out.useful_sum = sum[V + 1];
  out.messages = uint64_t(sum[V + 2]);
  out.bytes_sent = uint64_t(sum[V + 3]);
  out.clamped = uint64_t(sum[V + 4]);
  out.seconds = secs;
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
