// critpath — analyzer/engine/exchange.cpp: bulk p2p matching and collective synchronization.
#include "analyzer/engine/exchange.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

#include "libtrace/defs/definitions.h"

namespace critpath::analyzer::engine {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr uint32_t kNone = UINT32_MAX;

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

// The (peer, comm, tag) groups of one side's records, numbered in the order they first occur
// (slots). Consecutive records mostly share their group, so the previous record's slot is
// tried first, the hash table at a change of group only.
class Slots {
 public:
  struct Key {
    int32_t peer;
    uint32_t comm;
    int32_t tag;
    bool operator==(const Key& o) const { return peer == o.peer && comm == o.comm && tag == o.tag; }
    bool operator<(const Key& o) const {
      return peer != o.peer ? peer < o.peer : comm != o.comm ? comm < o.comm : tag < o.tag;
    }
  };
  // The slot of (peer, comm, tag), made at its first record; counts the record.
  [[gnu::always_inline]] uint32_t add(int32_t peer, uint32_t comm, int32_t tag) {
    const Key k{peer, comm, tag};
    if (!(k == last_key_) || last_ == kNone) {
      last_key_ = k;
      last_ = slot_of(k);
    }
    ++count[last_];
    return last_;
  }
  // The slot of (peer, comm, tag); kNone when no record has it.
  uint32_t find(int32_t peer, uint32_t comm, int32_t tag) const {
    const auto it = index_.find(Key{peer, comm, tag});
    return it == index_.end() ? kNone : it->second;
  }
  // The slots in (peer, comm, tag) order.
  std::vector<uint32_t> sorted() const {
    std::vector<uint32_t> order(keys.size());
    for (uint32_t s = 0; s < order.size(); ++s) order[s] = s;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    return order;
  }
  std::vector<Key> keys;        // per slot
  std::vector<uint32_t> count;  // records per slot

 private:
  struct Hash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()((uint64_t(uint32_t(k.peer)) << 32 | k.comm) * 0x9E3779B97F4A7C15ull ^
                                   uint32_t(k.tag));
    }
  };
  [[gnu::noinline]] uint32_t slot_of(const Key& k) {
    const auto [it, made] = index_.emplace(k, uint32_t(keys.size()));
    if (made) {
      keys.push_back(k);
      count.push_back(0);
    }
    return it->second;
  }
  std::unordered_map<Key, uint32_t, Hash> index_;
  Key last_key_{-1, 0, 0};
  uint32_t last_ = kNone;
};

// Sender side, in two sequential passes over the sends: the first numbers each send within
// its (destination, comm, tag) slot (out.pos) and keeps its call's entry in
// out.recv_post_enter (until the replies come: read_replies), the second, with the slots
// ordered, writes out.group, out.sends_to and the bytes for every destination into one
// buffer `fwd` (not zeroed first: every byte is written), cut by destination (`pieces`): per
// group in (comm, tag) order [comm u32][tag i32][n u32] and n x [send enter f64].
void pack_sends(const Timeline& t, int P, P2pMatch& out, std::unique_ptr<char[]>& fwd,
                std::vector<Comm::Piece>& pieces) {
  const size_t n = t.sends.size();
  Slots slots;
  // Sized at once and written by index (a push_back each was a capacity check and a store of
  // the end, three per send).
  out.group.resize(n);  // the slot until the second pass
  out.pos.resize(n);
  out.recv_post_enter.resize(n);
  uint32_t* const group = out.group.data();
  uint32_t* const pos = out.pos.data();
  double* const post_enter = out.recv_post_enter.data();
  for (size_t i = 0; i < n; ++i) {
    const SendRecord& s = t.sends[i];
    const bool valid = s.peer >= 0 && s.peer < P;
    const uint32_t slot = valid ? slots.add(s.peer, s.comm, s.tag) : kNone;
    group[i] = slot;
    pos[i] = valid ? slots.count[slot] - 1 : kNone;
    post_enter[i] = valid && s.call != kNoCall ? t.calls[s.call].enter : kNaN;
  }
  // Per slot: its destination (in out.sends_to), its group ordinal there, its list, where its
  // bytes go.
  const std::vector<uint32_t> order = slots.sorted();
  std::vector<uint32_t> dest(order.size()), ordinal(order.size());
  std::vector<std::vector<uint32_t>*> list(order.size());
  std::vector<size_t> at(order.size());
  size_t bytes = 0;
  for (const uint32_t slot : order) bytes += 12 + 8 * size_t(slots.count[slot]);
  fwd = std::make_unique_for_overwrite<char[]>(bytes);
  char* w = fwd.get();
  for (size_t j = 0; j < order.size(); ++j) {
    const uint32_t slot = order[j];
    const Slots::Key& k = slots.keys[slot];
    if (j == 0 || k.peer != slots.keys[order[j - 1]].peer) {
      out.sends_to.emplace_back().peer = k.peer;
      pieces.push_back({k.peer, reinterpret_cast<const unsigned char*>(w), 0});
    }
    std::vector<std::vector<uint32_t>>& groups = out.sends_to.back().groups;
    dest[slot] = uint32_t(out.sends_to.size() - 1);
    ordinal[slot] = uint32_t(groups.size());
    groups.emplace_back(slots.count[slot]);
    w = put_at<uint32_t>(w, k.comm);
    w = put_at<int32_t>(w, k.tag);
    w = put_at<uint32_t>(w, slots.count[slot]);
    at[slot] = size_t(w - fwd.get());
    w += 8 * size_t(slots.count[slot]);
    pieces.back().bytes = size_t(reinterpret_cast<const unsigned char*>(w) - pieces.back().data);
  }
  for (const uint32_t slot : order)  // (the lists no longer move)
    list[slot] = &out.sends_to[dest[slot]].groups[ordinal[slot]];
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t slot = out.group[i];
    if (slot == kNone) continue;
    const uint32_t k = out.pos[i];
    (*list[slot])[k] = i;
    std::memcpy(fwd.get() + at[slot] + 8 * size_t(k), &out.recv_post_enter[i], 8);
    out.group[i] = ordinal[slot];
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

// Receiver side: the receives from ranks below P per (source, comm, tag) slot, each list in
// posting order (receives of several threads: order_threads_by_completion). Two sequential
// passes: the first keeps each receive's slot in out.send_group and its posting call's entry
// in out.send_enter (until match_recvs puts the sender's figures there), the second fills the
// lists.
struct RecvSlots {
  Slots slots;
  std::vector<std::vector<uint32_t>> list;  // per slot
};
void group_recvs(const Timeline& t, int P, P2pMatch& out, RecvSlots& rs) {
  const size_t n = t.recvs.size();
  out.send_enter.resize(n);  // sized at once and written by index, as in pack_sends
  out.send_group.resize(n);
  out.send_pos.assign(n, kNone);
  double* const send_enter = out.send_enter.data();
  uint32_t* const send_group = out.send_group.data();
  std::vector<uint64_t> last_seq;  // per slot, to see whether its list needs sorting
  std::vector<uint8_t> unsorted;
  for (size_t i = 0; i < n; ++i) {
    const RecvRecord& r = t.recvs[i];
    const bool valid = r.peer >= 0 && r.peer < P;
    const uint32_t slot = valid ? rs.slots.add(r.peer, r.comm, r.tag) : kNone;
    send_group[i] = slot;
    send_enter[i] = valid && r.post_call != kNoCall ? t.calls[r.post_call].enter : kNaN;
    if (!valid) continue;
    if (slot == last_seq.size()) {
      last_seq.push_back(r.post_seq);
      unsorted.push_back(0);
    } else if (r.post_seq < last_seq[slot]) {
      unsorted[slot] = 1;  // mostly in posting order already (blocking receives)
    } else {
      last_seq[slot] = r.post_seq;
    }
  }
  rs.list.resize(rs.slots.keys.size());
  for (size_t s = 0; s < rs.list.size(); ++s) rs.list[s].reserve(rs.slots.count[s]);
  for (uint32_t i = 0; i < n; ++i)
    if (out.send_group[i] != kNone) rs.list[out.send_group[i]].push_back(i);
  auto posted_before = [&](uint32_t a, uint32_t b) { return t.recvs[a].post_seq < t.recvs[b].post_seq; };
  for (size_t s = 0; s < rs.list.size(); ++s) {
    if (unsorted[s]) std::stable_sort(rs.list[s].begin(), rs.list[s].end(), posted_before);
    if (t.mpi_locations > 1) order_threads_by_completion(t, rs.list[s]);
  }
}

// A receive left unmatched: NaN / kNone, as if never named.
void unmatch(P2pMatch& out, uint32_t ri) {
  out.send_enter[ri] = kNaN;
  out.send_group[ri] = kNone;
  out.send_pos[ri] = kNone;
}

// Receiver side: the k-th message of a group matches the k-th receive of its slot; the reply
// is the posting call's entry relative to the send's, in single precision (a difference:
// exact to ~1e-7 of itself), 4 B per message received, written over the parcel's own bytes
// (it never overtakes them) and named by `replies`.
void match_recvs(const Timeline& t, std::vector<Comm::Parcel>& in, RecvSlots& rs, P2pMatch& out,
                 std::vector<Comm::Piece>& replies) {
  constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
  uint64_t matched_recvs = 0;
  std::vector<uint8_t> taken(rs.list.size(), 0);
  out.recvs_from.reserve(in.size());
  for (Comm::Parcel& parcel : in) {
    const int32_t s = parcel.peer;
    char* const start = reinterpret_cast<char*>(parcel.bytes.data());
    const char* p = start;
    const char* end = p + parcel.bytes.size();
    char* w = start;
    P2pMatch::PeerGroups& groups = out.recvs_from.emplace_back();
    groups.peer = s;
    uint32_t g = 0;
    while (end - p >= 12) {
      const uint32_t comm = get<uint32_t>(p);
      const int32_t tag = get<int32_t>(p);
      const uint32_t count = get<uint32_t>(p);
      const uint32_t slot = rs.slots.find(s, comm, tag);
      std::vector<uint32_t>* mine = slot != kNone && !taken[slot] ? &rs.list[slot] : nullptr;
      const size_t have = mine ? mine->size() : 0;
      uint32_t k = 0;
      for (; k < count && end - p >= 8; ++k) {
        const double t_send = get<double>(p);
        float delta = kNaNf;
        if (k < have) {
          const uint32_t ri = (*mine)[k];
          const double post = out.send_enter[ri];  // group_recvs kept it there
          out.send_enter[ri] = t_send;
          out.send_group[ri] = g;
          out.send_pos[ri] = k;
          if (!std::isnan(post)) delta = float(post - t_send);
        }
        w = put_at<float>(w, delta);
      }
      // The group's matched receives: the first min(k, have) of its list, moved (a group
      // comes once per parcel; its surplus receives stay unmatched).
      std::vector<uint32_t>& matched = groups.groups.emplace_back();
      if (mine) {
        taken[slot] = 1;
        for (size_t j = k; j < have; ++j) unmatch(out, (*mine)[j]);
        matched = std::move(*mine);
        matched.resize(std::min<size_t>(k, have));
        matched_recvs += matched.size();
      }
      ++g;
    }
    replies.push_back({s, reinterpret_cast<const unsigned char*>(start), size_t(w - start)});
  }
  for (size_t slot = 0; slot < rs.list.size(); ++slot)  // no sender named them
    if (!taken[slot])
      for (uint32_t ri : rs.list[slot]) unmatch(out, ri);
  out.unmatched_recvs = t.recvs.size() - matched_recvs;
}

// Sender side again: replies come back in the order the sends went out; a send without one
// (its destination had no receive for it) is unmatched, NaN.
void read_replies(const std::vector<Comm::Parcel>& in, P2pMatch& out) {
  uint64_t matched_sends = 0;
  auto parcel = in.begin();
  for (const P2pMatch::PeerGroups& to : out.sends_to) {  // both ascending by peer
    while (parcel != in.end() && parcel->peer < to.peer) ++parcel;
    const bool replied = parcel != in.end() && parcel->peer == to.peer;
    const char* p = replied ? reinterpret_cast<const char*>(parcel->bytes.data()) : nullptr;
    const char* end = replied ? p + parcel->bytes.size() : nullptr;
    for (const std::vector<uint32_t>& idx : to.groups)
      for (uint32_t i : idx) {
        double& v = out.recv_post_enter[i];  // the send's own entry so far (NaN: none)
        const float delta = end - p >= 4 ? get<float>(p) : std::numeric_limits<float>::quiet_NaN();
        v = std::isnan(delta) ? kNaN : v + double(delta);
        matched_sends += !std::isnan(v);
      }
  }
  out.unmatched_sends = out.recv_post_enter.size() - matched_sends;
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
  out = P2pMatch{};
  // Forward: the sends' entries; the reply to each byte parcel comes back 4 B per message, so
  // its size is known to both sides (Comm::exchange's `expect`: no round to agree on it).
  std::unique_ptr<char[]> fwd;
  std::vector<Comm::Piece> pieces, expect;
  pack_sends(t, P, out, fwd, pieces);
  for (const Comm::Piece& piece : pieces) {
    out.bytes_sent += piece.bytes;
    size_t messages = 0;
    for (const std::vector<uint32_t>& g : out.sends_to[expect.size()].groups) messages += g.size();
    expect.push_back({piece.peer, nullptr, 4 * messages});
  }
  std::vector<Comm::Parcel> in;
  CRITPATH_FORWARD_IF_ERROR(world.exchange(pieces, in));
  fwd.reset();  // its memory serves what follows
  pieces.clear();
  RecvSlots rs;
  group_recvs(t, P, out, rs);
  match_recvs(t, in, rs, out, pieces);
  for (const Comm::Piece& piece : pieces) out.bytes_sent += piece.bytes;
  std::vector<Comm::Parcel> back;
  CRITPATH_FORWARD_IF_ERROR(world.exchange(pieces, back, &expect));
  read_replies(back, out);
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

    // Agree on how many instances each communicator has: one maximum of the counts and their
    // negations (the minimum).
    std::vector<int> range;
    for (uint32_t c : comms) range.push_back(int(by_comm[c].size()));
    for (uint32_t c : comms) range.push_back(-int(by_comm[c].size()));
    CRITPATH_FORWARD_IF_ERROR(sub.allreduce(range.data(), int(range.size()), MPI_INT, MPI_MAX));
    const int* cmax = range.data();
    std::vector<int> cmin(comms.size());
    for (size_t k = 0; k < comms.size(); ++k) cmin[k] = -range[comms.size() + k];
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
    // One MAXLOC: per instance the latest begin, the latest sender's begin and, negated, the
    // earliest end (a MINLOC's value: the rank is not read).
    std::vector<DoubleInt> maxloc_out(3 * n);
    std::vector<double> max_out(2 * n), scan_in(n), scan_out(n);
    auto& maxloc_in = maxloc_out;  // reduced in place
    auto& max_in = max_out;
    for (size_t j = 0; j < n; ++j) {
      const CollRecord& c = colls[inst[j]];
      const double begin = c.call == kNoCall ? 0 : calls[c.call].enter;
      const double end = c.complete_call == kNoCall ? begin : calls[c.complete_call].exit;
      const bool root = c.root >= 0 && c.root == my_rank;
      maxloc_in[2 * j] = {begin, my_rank};
      maxloc_in[2 * j + 1] = {c.sent > 0 ? begin : -1e300, my_rank};
      maxloc_in[2 * n + j] = {-end, my_rank};
      max_in[2 * j] = root ? begin : -1e300;
      // Without a root the slot tells whether some member sent or received nothing (max 0).
      max_in[2 * j + 1] = root ? double(c.sent) : c.root >= 0 || (c.sent > 0 && c.received > 0) ? -1.0 : 0.0;
      scan_in[j] = begin;
    }
    stats.bytes_sent += n * (sizeof(DoubleInt) * 3 + sizeof(double) * 3);
    if (n > 0) {
      CRITPATH_FORWARD_IF_ERROR(sub.allreduce(maxloc_out.data(), int(3 * n), MPI_DOUBLE_INT, MPI_MAXLOC));
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
      s.earliest_end = -maxloc_out[2 * n + j].v;
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
