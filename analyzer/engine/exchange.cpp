// critpath — analyzer/engine/exchange.cpp: bulk p2p matching and collective synchronization.
#include "analyzer/engine/exchange.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "libtrace/defs/definitions.h"

namespace critpath::analyzer::engine {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using GroupKey = std::pair<uint32_t, int32_t>;  // (comm, tag)

template <typename T>
char* put_at(char* w, T v) {
  std::memcpy(w, &v, sizeof(T));
  return w + sizeof(T);
}
template <typename T>
T get(const char*& p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

// Byte buffers for the ranks this one talks to, ascending by rank.
using Outbox = std::vector<std::pair<int32_t, std::vector<char>>>;

// The sparse all-to-all of `out` (Group::exchange): `in` receives a parcel per rank that sent
// this one bytes, by ascending rank.
Status swap_bytes(const Comm& comm, const Outbox& out, std::vector<Comm::Parcel>& in, uint64_t& bytes_sent) {
  std::vector<Comm::Piece> pieces;
  pieces.reserve(out.size());
  for (const auto& [peer, b] : out) {
    pieces.push_back({peer, reinterpret_cast<const unsigned char*>(b.data()), b.size()});
    bytes_sent += b.size();
  }
  return comm.exchange(pieces, in);
}

// Per peer, record indices grouped by (comm, tag), the groups in key order; only the peers
// that occur, ascending.
using PeerGroups = std::map<int32_t, std::map<GroupKey, std::vector<uint32_t>>>;

// Appends record i to its (peer, comm, tag) group. Consecutive records mostly share their
// group, so the last group found is tried first (map nodes never move). Two passes over the
// records: count() each, reserve(), then add() each, so that every group's list is allocated
// once at its size (no regrowth: a list of millions would touch twice its pages).
class Grouper {
 public:
  explicit Grouper(PeerGroups& g) : g_(g) {}
  // Per record: inline, the maps' lookups (at a change of group) out of line.
  [[gnu::always_inline]] void count(int32_t peer, uint32_t comm, int32_t tag) {
    if (!same(peer, comm, tag) || !last_count_) last_count_ = count_of(peer, comm, tag);
    ++*last_count_;
  }
  void reserve() {
    for (const auto& [peer, groups] : counts_)
      for (const auto& [key, n] : groups) g_[peer][key].reserve(n);
  }
  [[gnu::always_inline]] void add(int32_t peer, uint32_t comm, int32_t tag, uint32_t i) {
    if (!same(peer, comm, tag) || !last_) last_ = group_of(peer, comm, tag);
    last_->push_back(i);
  }

 private:
  [[gnu::noinline]] uint32_t* count_of(int32_t peer, uint32_t comm, int32_t tag) {
    return &counts_[peer][{comm, tag}];
  }
  [[gnu::noinline]] std::vector<uint32_t>* group_of(int32_t peer, uint32_t comm, int32_t tag) {
    return &g_[peer][{comm, tag}];
  }
  // Whether (peer, comm, tag) is the previous record's group; it becomes the previous one.
  bool same(int32_t peer, uint32_t comm, int32_t tag) {
    const bool s = peer == peer_ && comm == comm_ && tag == tag_;
    peer_ = peer;
    comm_ = comm;
    tag_ = tag;
    return s;
  }
  PeerGroups& g_;
  std::map<int32_t, std::map<GroupKey, uint32_t>> counts_;  // the first pass's
  uint32_t* last_count_ = nullptr;                          // the previous record's count
  std::vector<uint32_t>* last_ = nullptr;                   // the previous record's group
  int32_t peer_ = -1;
  uint32_t comm_ = 0;
  int32_t tag_ = 0;
};

// Sender side: sends per destination, grouped by (comm, tag) in that order, in send order;
// per destination [comm u32][tag i32][n u32] and n x [send enter f64] per group, into `fwd`.
// The groups' index lists end up in out.sends_to (moved, not copied).
void pack_sends(const Timeline& t, int P, P2pMatch& out, Outbox& fwd) {
  PeerGroups by_dst;
  Grouper grouper(by_dst);
  for (const SendRecord& s : t.sends)
    if (s.peer >= 0 && s.peer < P) grouper.count(s.peer, s.comm, s.tag);
  grouper.reserve();
  for (uint32_t i = 0; i < t.sends.size(); ++i) {
    const SendRecord& s = t.sends[i];
    if (s.peer >= 0 && s.peer < P) grouper.add(s.peer, s.comm, s.tag, i);
  }
  fwd.clear();
  fwd.reserve(by_dst.size());
  out.sends_to.reserve(by_dst.size());
  for (auto& [d, groups] : by_dst) {
    size_t bytes = 0;  // the destination's buffer, in one allocation, written in place
    for (const auto& [key, idx] : groups) bytes += 12 + 8 * idx.size();
    std::vector<char>& buf = fwd.emplace_back(d, std::vector<char>(bytes)).second;
    char* w = buf.data();
    P2pMatch::PeerGroups& mine = out.sends_to.emplace_back();
    mine.peer = d;
    mine.groups.reserve(groups.size());
    uint32_t g = 0;
    for (auto& [key, idx] : groups) {
      w = put_at<uint32_t>(w, key.first);
      w = put_at<int32_t>(w, key.second);
      w = put_at<uint32_t>(w, uint32_t(idx.size()));
      for (uint32_t k = 0; k < idx.size(); ++k) {
        const SendRecord& s = t.sends[idx[k]];
        w = put_at<double>(w, s.call == kNoCall ? kNaN : t.calls[s.call].enter);
        out.group[idx[k]] = g;
        out.pos[idx[k]] = k;
      }
      mine.groups.push_back(std::move(idx));
      ++g;
    }
  }
}

// A group's receives (in posting order) where several threads receive on its source,
// communicator and tag: MPI matches each thread's receives in its posting order, but which
// thread takes which of the sender's messages is the library's choice. The sender's messages
// go out in time order, so the receive that completed first got the earliest one: the group's
// receives are merged thread by thread, each step taking the thread whose next receive
// completed first (never completed: last). A group of one thread keeps its posting order.
void order_threads_by_completion(const Timeline& t, std::vector<uint32_t>& idx) {
  auto location = [&](uint32_t i) {
    const uint32_t c = t.recvs[i].complete_call;
    return c == kNoCall ? -1 : int32_t(t.calls[c].location);
  };
  if (std::all_of(idx.begin(), idx.end(), [&](uint32_t i) { return location(i) == location(idx[0]); }))
    return;
  std::map<int32_t, std::vector<uint32_t>> by_thread;  // each in posting order
  for (uint32_t i : idx) by_thread[location(i)].push_back(i);
  auto done = [&](uint32_t i) {
    const uint32_t c = t.recvs[i].complete_call;
    return c == kNoCall ? std::numeric_limits<double>::infinity() : t.calls[c].exit;
  };
  std::vector<std::pair<const std::vector<uint32_t>*, size_t>> heads;
  for (const auto& [loc, q] : by_thread) heads.emplace_back(&q, 0);
  for (uint32_t& slot : idx) {
    auto* best = &heads[0];
    for (auto& h : heads)
      if (h.second < h.first->size() && (best->second >= best->first->size() ||
                                         done((*h.first)[h.second]) < done((*best->first)[best->second])))
        best = &h;
    slot = (*best->first)[best->second++];
  }
}

// The receives of `t` from ranks below P, grouped per source by (comm, tag), each group in
// posting order (receives of several threads: order_threads_by_completion).
PeerGroups recvs_by_source(const Timeline& t, int P) {
  PeerGroups by_src;
  Grouper grouper(by_src);
  for (const RecvRecord& r : t.recvs)
    if (r.peer >= 0 && r.peer < P) grouper.count(r.peer, r.comm, r.tag);
  grouper.reserve();
  for (uint32_t i = 0; i < t.recvs.size(); ++i) {
    const RecvRecord& r = t.recvs[i];
    if (r.peer >= 0 && r.peer < P) grouper.add(r.peer, r.comm, r.tag, i);
  }
  auto posted_before = [&](uint32_t a, uint32_t b) { return t.recvs[a].post_seq < t.recvs[b].post_seq; };
  for (auto& [src, m] : by_src)
    for (auto& [key, idx] : m)  // mostly in posting order already (blocking receives)
      if (!std::is_sorted(idx.begin(), idx.end(), posted_before))
        std::stable_sort(idx.begin(), idx.end(), posted_before);
  if (t.mpi_locations > 1)
    for (auto& [src, m] : by_src)
      for (auto& [key, idx] : m) order_threads_by_completion(t, idx);
  return by_src;
}

// Receiver side: receives per source, grouped by (comm, tag), in posting order. The k-th
// message of a group matches the k-th receive; the reply is the posting call's entry
// relative to the send's, in single precision (a difference: exact to ~1e-7 of itself).
// The replies per source into `bwd`.
void match_recvs(const Timeline& t, int P, const std::vector<Comm::Parcel>& in, P2pMatch& out, Outbox& bwd) {
  constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
  PeerGroups by_src = recvs_by_source(t, P);
  uint64_t matched_recvs = 0;
  bwd.clear();
  bwd.reserve(in.size());
  out.recvs_from.reserve(in.size());
  for (const Comm::Parcel& parcel : in) {
    const int32_t s = parcel.peer;
    const char* p = reinterpret_cast<const char*>(parcel.bytes.data());
    const char* end = p + parcel.bytes.size();
    std::vector<char>& reply = bwd.emplace_back(s, std::vector<char>(parcel.bytes.size() / 2)).second;
    char* w = reply.data();  // 4 B back per 8 B received, at most
    const auto from = by_src.find(s);
    P2pMatch::PeerGroups& groups = out.recvs_from.emplace_back();
    groups.peer = s;
    uint32_t g = 0;
    while (end - p >= 12) {
      const uint32_t comm = get<uint32_t>(p);
      const int32_t tag = get<int32_t>(p);
      const uint32_t count = get<uint32_t>(p);
      std::vector<uint32_t>* mine = nullptr;
      if (from != by_src.end()) {
        auto it = from->second.find({comm, tag});
        if (it != from->second.end()) mine = &it->second;
      }
      const size_t have = mine ? mine->size() : 0;
      uint32_t k = 0;
      for (; k < count && end - p >= 8; ++k) {
        const double t_send = get<double>(p);
        float delta = kNaNf;
        if (k < have) {
          const uint32_t ri = (*mine)[k];
          out.send_enter[ri] = t_send;
          out.send_group[ri] = g;
          out.send_pos[ri] = k;
          const RecvRecord& r = t.recvs[ri];
          if (r.post_call != kNoCall) delta = float(t.calls[r.post_call].enter - t_send);
        }
        w = put_at<float>(w, delta);
      }
      // The group's matched receives: the first min(k, have) of its list, moved (a group
      // comes once per parcel; its surplus receives stay unmatched).
      std::vector<uint32_t>& matched = groups.groups.emplace_back();
      if (mine) {
        matched = std::move(*mine);
        matched.resize(std::min<size_t>(k, have));
        matched_recvs += matched.size();
      }
      ++g;
    }
    reply.resize(size_t(w - reply.data()));
  }
  out.unmatched_recvs = t.recvs.size() - matched_recvs;
}

// Sender side again: replies come back in the order the sends went out.
void read_replies(const Timeline& t, const std::vector<Comm::Parcel>& in, P2pMatch& out) {
  uint64_t matched_sends = 0;
  auto to = out.sends_to.begin();
  for (const Comm::Parcel& parcel : in) {  // both ascending by peer
    while (to != out.sends_to.end() && to->peer < parcel.peer) ++to;
    if (to == out.sends_to.end() || to->peer != parcel.peer) continue;
    const char* p = reinterpret_cast<const char*>(parcel.bytes.data());
    const char* end = p + parcel.bytes.size();
    for (const std::vector<uint32_t>& idx : to->groups)
      for (uint32_t i : idx) {
        if (end - p < 4) break;
        const float delta = get<float>(p);
        const SendRecord& s = t.sends[i];
        if (std::isnan(delta) || s.call == kNoCall) continue;
        out.recv_post_enter[i] = t.calls[s.call].enter + double(delta);
        ++matched_sends;
      }
  }
  out.unmatched_sends = t.sends.size() - matched_sends;
}

}  // namespace

uint32_t P2pMatch::lookup(const std::vector<PeerGroups>& by_peer, int peer, uint32_t g, uint32_t k) {
  const auto it = std::lower_bound(by_peer.begin(), by_peer.end(), peer,
                                   [](const PeerGroups& a, int p) { return a.peer < p; });
  if (it == by_peer.end() || it->peer != peer || g >= it->groups.size()) return UINT32_MAX;
  const std::vector<uint32_t>& v = it->groups[g];
  return k < v.size() ? v[k] : UINT32_MAX;
}

Status exchange_p2p(const Timeline& t, const Comm& world, P2pMatch& out) {
  const int P = world.size();
  out.send_enter.assign(t.recvs.size(), kNaN);
  out.send_group.assign(t.recvs.size(), UINT32_MAX);
  out.send_pos.assign(t.recvs.size(), UINT32_MAX);
  out.recv_post_enter.assign(t.sends.size(), kNaN);
  out.group.assign(t.sends.size(), UINT32_MAX);
  out.pos.assign(t.sends.size(), UINT32_MAX);
  out.sends_to.clear();
  out.recvs_from.clear();

  Outbox fwd, bwd;
  pack_sends(t, P, out, fwd);
  std::vector<Comm::Parcel> in;
  CRITPATH_FORWARD_IF_ERROR(swap_bytes(world, fwd, in, out.bytes_sent));
  fwd.clear();
  match_recvs(t, P, in, out, bwd);
  CRITPATH_FORWARD_IF_ERROR(swap_bytes(world, bwd, in, out.bytes_sent));
  read_replies(t, in, out);
  return Status::kOk;
}

namespace {

struct DoubleInt {
  double v;
  int r;
};

// A member list standing for every world rank in rank order (0 .. P-1) without its P entries:
// the world's collectives cost no rank work sized by P.
const std::vector<int32_t>& world_members() {
  static const std::vector<int32_t> kWorld{-1};
  return kWorld;
}
bool is_world_list(const std::vector<int32_t>& m) { return m.size() == 1 && m[0] == -1; }

// `m` as world_members() when it lists every world rank in order.
const std::vector<int32_t>& canonical(const std::vector<int32_t>& m, int P) {
  if (int(m.size()) != P) return m;
  for (int i = 0; i < P; ++i)
    if (m[size_t(i)] != i) return m;
  return world_members();
}

// The instances of `colls` (over `calls`) per key (communicator or window id), grouped by
// ordered member list; `keys` lists every key this rank is a member of that may hold instances
// (instances of other keys are skipped).
Status sync_records(const std::vector<CollRecord>& colls, const std::vector<CallRecord>& calls,
                    const std::map<uint32_t, std::vector<int32_t>>& keys, const Comm& world,
                    std::vector<CollSync>& out, CollExchangeStats& stats,
                    std::vector<uint32_t>* inconsistent) {
  const int me = world.rank();
  out.assign(colls.size(), CollSync{});

  // Instances per key, in call order; keys grouped by ordered members.
  std::map<uint32_t, std::vector<uint32_t>> by_comm;
  for (uint32_t i = 0; i < colls.size(); ++i)
    if (keys.count(colls[i].comm)) by_comm[colls[i].comm].push_back(i);
  const int P = world.size();
  std::map<std::vector<int32_t>, std::vector<uint32_t>> sets;  // members -> comm ids (sorted)
  for (const auto& [comm, listed] : keys) {
    const std::vector<int32_t>& m = canonical(listed, P);
    if (is_world_list(m) ? P < 2 : m.size() < 2 || std::find(m.begin(), m.end(), me) == m.end()) continue;
    sets[m].push_back(comm);
  }

  // A global order: by smallest communicator id (ids are unique, and every member of a set
  // knows all of the set's communicators).
  std::vector<std::pair<uint32_t, const std::vector<int32_t>*>> order;
  for (const auto& [m, comms] : sets) order.push_back({comms.front(), &m});
  std::sort(order.begin(), order.end());

  for (const auto& [min_comm, members_ptr] : order) {
    const std::vector<int32_t>& members = *members_ptr;
    const std::vector<uint32_t>& comms = sets[members];
    ++stats.member_sets;
    const bool is_world = is_world_list(members);
    Comm made;
    if (!is_world) {
      const std::vector<int> ranks(members.begin(), members.end());
      CRITPATH_FORWARD_IF_ERROR(world.create_group(ranks, int(min_comm % 32000u) + 1, made));
    }
    const Comm& sub = is_world ? world : made;
    const int my_rank = sub.rank();
    const int n_members = is_world ? P : int(members.size());
    auto world_rank = [&](int r) { return is_world ? r : members[size_t(r)]; };

    // Agree on how many instances each communicator has.
    std::vector<int> counts, cmin(comms.size()), cmax(comms.size());
    for (uint32_t c : comms) counts.push_back(int(by_comm[c].size()));
    cmin = counts;
    cmax = counts;
    CRITPATH_FORWARD_IF_ERROR(sub.allreduce(cmin.data(), int(cmin.size()), MPI_INT, MPI_MIN));
    CRITPATH_FORWARD_IF_ERROR(sub.allreduce(cmax.data(), int(cmax.size()), MPI_INT, MPI_MAX));
    std::vector<uint32_t> inst;  // local coll index per vector slot
    for (size_t k = 0; k < comms.size(); ++k) {
      if (cmin[k] != cmax[k]) {
        ++stats.inconsistent_comms;
        stats.dropped += by_comm[comms[k]].size() - size_t(cmin[k]);
        if (inconsistent) inconsistent->push_back(comms[k]);
      }
      const auto& idx = by_comm[comms[k]];
      for (int j = 0; j < cmin[k]; ++j) inst.push_back(idx[size_t(j)]);
    }
    const size_t n = inst.size();
    std::vector<DoubleInt> maxloc_out(2 * n), minloc_out(n);
    std::vector<double> max_out(2 * n), scan_in(n), scan_out(n);
    auto& maxloc_in = maxloc_out;  // reduced in place
    auto& minloc_in = minloc_out;
    auto& max_in = max_out;
    for (size_t j = 0; j < n; ++j) {
      const CollRecord& c = colls[inst[j]];
      const double begin = c.call == kNoCall ? 0 : calls[c.call].enter;
      const double end = c.complete_call == kNoCall ? begin : calls[c.complete_call].exit;
      const bool root = c.root >= 0 && c.root == my_rank;
      maxloc_in[2 * j] = {begin, my_rank};
      maxloc_in[2 * j + 1] = {c.sent > 0 ? begin : -1e300, my_rank};
      minloc_in[j] = {end, my_rank};
      max_in[2 * j] = root ? begin : -1e300;
      // Without a root the slot tells whether some member sent or received nothing (max 0).
      max_in[2 * j + 1] = root ? double(c.sent) : c.root >= 0 || (c.sent > 0 && c.received > 0) ? -1.0 : 0.0;
      scan_in[j] = begin;
    }
    stats.bytes_sent += n * (sizeof(DoubleInt) * 3 + sizeof(double) * 3);
    if (n > 0) {
      CRITPATH_FORWARD_IF_ERROR(sub.allreduce(maxloc_out.data(), int(2 * n), MPI_DOUBLE_INT, MPI_MAXLOC));
      CRITPATH_FORWARD_IF_ERROR(sub.allreduce(minloc_out.data(), int(n), MPI_DOUBLE_INT, MPI_MINLOC));
      CRITPATH_FORWARD_IF_ERROR(sub.allreduce(max_out.data(), int(2 * n), MPI_DOUBLE, MPI_MAX));
      CRITPATH_FORWARD_IF_ERROR(sub.scan(scan_in.data(), scan_out.data(), int(n), MPI_DOUBLE, MPI_MAX));
    }
    for (size_t j = 0; j < n; ++j) {
      CollSync& s = out[inst[j]];
      s.valid = true;
      s.comm_size = n_members;
      s.my_comm_rank = my_rank;
      s.latest_begin = maxloc_out[2 * j].v;
      s.latest_rank = world_rank(maxloc_out[2 * j].r);
      s.latest_sender_begin = maxloc_out[2 * j + 1].v;
      s.latest_sender_rank = maxloc_out[2 * j + 1].v > -1e299 ? world_rank(maxloc_out[2 * j + 1].r) : -1;
      s.earliest_end = minloc_out[j].v;
      s.root_begin = max_out[2 * j];
      s.root_sent = max_out[2 * j + 1];
      s.dense = colls[inst[j]].root < 0 && max_out[2 * j + 1] < 0;
      s.prefix_latest = scan_out[j];
    }
  }
  return Status::kOk;
}

}  // namespace

double coll_ready(const CollRecord& c, const CollSync& s) {
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  if (!s.valid || s.comm_size < 2 || !synchronizes(c, s)) return kNone;
  switch (c.kind) {
    case CollKind::kBarrier: return s.latest_begin;
    case CollKind::kNxN:  // an Alltoallv/w: the latest sender's block to this rank may be empty
      return c.received > 0 && !c.some_block_empty ? s.latest_sender_begin : kNone;
    case CollKind::kOneToN:
      return s.my_comm_rank != c.root && c.received > 0 && s.root_sent > 0 ? s.root_begin : kNone;
    case CollKind::kNToOne: return s.my_comm_rank == c.root && c.received > 0 ? s.latest_sender_begin : kNone;
    case CollKind::kScan: return c.received > 0 ? s.prefix_latest : kNone;
    case CollKind::kOther: break;
  }
  return kNone;
}

Status sync_collectives(const Timeline& t, const defs::Definitions& definitions, const Comm& world,
                        std::vector<CollSync>& out, CollExchangeStats& stats) {
  std::map<uint32_t, std::vector<int32_t>> keys;
  for (const CollRecord& c : t.colls)
    if (!keys.count(c.comm))
      keys[c.comm] = c.comm == defs::kCommWorld
                         ? world_members()
                         : comm_members(definitions.comms, c.comm, world.size(), world.rank());
  return sync_records(t.colls, t.calls, keys, world, out, stats, nullptr);
}

Status sync_window_collectives(const Timeline& t, const defs::Definitions& definitions, const Comm& world,
                               std::vector<CollSync>& out, CollExchangeStats& stats,
                               std::vector<uint32_t>& inconsistent) {
  // Every window this rank is a member of, recorded or not: all members then agree on the
  // member sets even when one recorded no instance of a window (paused recording).
  std::map<uint32_t, std::vector<int32_t>> keys;
  for (const defs::WindowDef& w : definitions.windows.snapshot()) keys[w.id] = w.members;
  return sync_records(t.win_colls, t.calls, keys, world, out, stats, &inconsistent);
}

std::vector<int32_t> comm_members(const defs::CommTable& comms, uint32_t comm, int world_size, int me) {
  if (comm == defs::kCommWorld) {
    std::vector<int32_t> m(static_cast<size_t>(world_size));
    for (int i = 0; i < world_size; ++i) m[size_t(i)] = i;
    return m;
  }
  if (comm == defs::kCommSelf) return {me};
  defs::CommDef d;
  if (comms.find(comm, d)) return d.members;
  return {};
}

}  // namespace critpath::analyzer::engine
