// critpath — analyzer/engine/path_walk.cpp: the critical-path walk, sequential (gather) and by
// pointer jumping (see path_walk.h).
#include "analyzer/engine/path_walk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <new>

#include "analyzer/engine/big_memory.h"
#include "analyzer/engine/gather.h"

namespace critpath::analyzer::engine {

size_t latest_before(const HopRec* h, size_t n, double t) {
  const HopRec* it = std::lower_bound(h, h + n, t, [](const HopRec& r, double v) { return r.enter < v; });
  return it == h ? kNoRecord : size_t(it - h) - 1;
}

namespace {

// arrive()'s answer once the latest record before t, i (or kNoRecord), is known. Inline: GCC
// kept it out of line, a call per query and per second hop.
[[gnu::always_inline]] inline Arrival arrival_at(const HopRec* h, size_t i, double t) {
  Arrival a;
  if (i == kNoRecord) return a;  // kBegan
  const HopRec& r = h[i];
  a.index = i;
  if (t < r.wait_end) {  // inside the wait (inconsistent trace): an empty segment, one hop
    a.kind = Arrival::kPass;
    a.next_rank = r.cause_rank;
    a.next_time = std::min(r.cause_time, t);
  } else {
    a.kind = Arrival::kFound;
    a.begin = r.wait_end;
  }
  return a;
}

}  // namespace

Arrival arrive(const HopRec* h, size_t n, double t) { return arrival_at(h, latest_before(h, n, t), t); }

std::vector<std::vector<PathSegment>> walk_serial(const std::vector<const HopRec*>& recs,
                                                  const std::vector<size_t>& counts, const PathStart& start,
                                                  uint64_t& hops, bool& partial) {
  const int P = int(recs.size());
  std::vector<std::vector<PathSegment>> per_rank(recs.size());  // descending while walking
  hops = 0;
  partial = false;
  const double first = start.first;
  int owner = start.rank;
  double T = start.time;
  auto cut = [&](double t) {
    if (t > first) per_rank[size_t(owner)].push_back({first, t});
  };
  if (owner < 0 || owner >= P) return per_rank;
  // The path only goes back in time, so each rank's search bound only moves down: a cursor
  // per rank (records at or above it entered at or after the path's time there) makes the
  // whole walk linear in the records instead of a binary search per hop.
  std::vector<size_t> cursor(counts.begin(), counts.end());
  for (;;) {
    const HopRec* h = recs[size_t(owner)];
    size_t& c = cursor[size_t(owner)];
    while (c > 0 && !(h[c - 1].enter < T)) --c;
    const size_t i = c == 0 ? kNoRecord : c - 1;
    if (i == kNoRecord) {  // the path began here
      cut(T);
      break;
    }
    const HopRec& r = h[i];
    const double we = std::min(r.wait_end, T);
    if (T > we) per_rank[size_t(owner)].push_back({we, T});
    const double nt = std::min(r.cause_time, we);  // never later: segments must not overlap
    if (++hops > start.max_hops || r.cause_rank < 0 || r.cause_rank >= P) {
      cut(std::min(T, nt));
      --hops;
      partial = true;
      break;
    }
    owner = r.cause_rank;
    T = nt;
  }
  for (auto& v : per_rank) std::reverse(v.begin(), v.end());
  return per_rank;
}

// ---- Pointer jumping -----------------------------------------------------------------------

namespace {

// arrive(), searching from `hint` on (every record below it entered before t) by galloping:
// O(log distance) instead of O(log n) when consecutive times are close. Inline: a call left in
// the loops of answer_queries and take_replies (rarely taken) made GCC keep their values in memory.
[[gnu::always_inline]] inline Arrival arrive_gallop(const HopRec* h, size_t n, double t, size_t hint) {
  size_t lo = hint, step = 1, hi = hint;
  while (hi < n && h[hi].enter < t) {
    lo = hi + 1;
    hi = hint + step;
    step *= 2;
  }
  hi = std::min(hi, n);
  const HopRec* it = std::lower_bound(h + lo, h + hi, t,
                                      [](const HopRec& r, double v) { return r.enter < v; });
  const size_t i = size_t(it - h);  // h[0 .. i) entered before t, h[i] (if any) not
  return arrival_at(h, i == 0 ? kNoRecord : i - 1, t);
}

[[gnu::always_inline]] inline Arrival arrive_from(const HopRec* h, size_t n, double t, size_t hint) {
  // The common answers first: the hint's next record (consecutive queries of a ping-pong) or
  // the hint itself.
  if (hint + 1 < n && h[hint + 1].enter < t) {
    if (hint + 2 == n || !(h[hint + 2].enter < t)) return arrival_at(h, hint + 1, t);
  } else if (hint < n && h[hint].enter < t) {
    return arrival_at(h, hint, t);
  }
  return arrive_gallop(h, n, t, hint);
}

// Step 1: "the path arrives on you at t" (a query is the time alone, 8 B). A found record's
// reply names the record and its own next hop: where its successor lies is then known to the
// rank that asked, which finds it itself when that is its own rank (the list path's returns
// after two hops without a token: a ping-pong's every record). The segment's begin (the
// record's wait end) stays with the record: step 4 names the record instead. 16 B with 32-bit
// ids.
constexpr int32_t kBeganHere = INT32_MIN;  // Reply::rank: the path began (kBegan)
// Reply::rank of a found record at least this: the record is the successor of two items or
// more (a merge), so its rank cannot make its segment from the arrival it answered, and the
// item on the path sends it (send_segments). The rank is then kMergeFlag + 1 + its cause rank
// (-1 where that is invalid); a communicator of 2^30 - 1 processes or more flags nothing.
constexpr int32_t kMergeFlag = int32_t(1) << 30;
template <typename Id>
struct Reply {
  double time = 0;                         // kFound: the record's next_time(); kPass: the next arrival time
  Id id = std::numeric_limits<Id>::max();  // kFound: the record's global id, else the end
  int32_t rank = kBeganHere;               // kFound: the record's cause_rank; kPass: where the
                                           // arrival goes on (-1: an invalid rank)
  Arrival::Kind kind() const {
    return id != std::numeric_limits<Id>::max() ? Arrival::kFound
           : rank == kBeganHere                 ? Arrival::kBegan
                                                : Arrival::kPass;
  }
};
static_assert(sizeof(Reply<uint32_t>) == 16 && sizeof(Reply<uint64_t>) == 24, "wire sizes");

// Step 4: a marked item's segment to the rank it lies on: its end and the record found there
// (the segment begins at its wait end), or none (the end: the path began, at `first`).
template <typename Id>
struct SegmentOut {
  double end = 0;
  Id succ = std::numeric_limits<Id>::max();
};
static_assert(sizeof(SegmentOut<uint32_t>) == sizeof(PathSegment) &&
                  sizeof(SegmentOut<uint64_t>) == sizeof(PathSegment),
              "a segment is received in place of the message");

// The list path's token: item `origin` of rank `origin_rank` follows its successors, one rank
// per round, until it is back on its own rank (kTravel), at a chain's last record (kRoot) or
// stopped (kFar); the last two go back to the origin.
struct Token {
  enum Kind : int32_t { kTravel = 0, kRoot = 1, kFar = 2 };
  uint32_t node = 0;      // the record the token is at: kTravel the receiver's, else node_rank's
  int32_t node_rank = 0;  // kRoot, kFar
  uint32_t origin = 0;
  int32_t origin_rank = 0;
  uint32_t dist = 0;  // hops from the origin to node
  int32_t kind = kTravel;
};
// The list path's reply on the contracted list: where a record's run leads, and how far.
struct Link {
  uint64_t id = 0;    // the chain's last record (resolved) or the next record to ask
  uint64_t dist = 0;  // hops to it
  uint32_t resolved = 0;
  uint32_t pad = 0;
};
static_assert(sizeof(Token) == 24 && sizeof(Link) == 24, "wire sizes");

// The marking's top levels (at most 2^8 requests of all ranks) go by allgather.
constexpr uint32_t kGatherMarkLevels = 8;
// Token rounds at most (those still out then go on by pointer jumping), and the rounds they
// travel before they stop at the first round in which none came back.
constexpr uint32_t kTokenHops = 16;
constexpr uint32_t kTokenTrial = 4;
constexpr uint32_t kNoItem = UINT32_MAX;
// hop2_: the item's successor is a chain's last record (a record index is below it).
constexpr uint32_t kRootHop = UINT32_MAX - 1;

// The doubling levels that cover n records: the smallest k (at most 63) with 2^k >= n.
constexpr uint32_t ceil_log2(uint64_t n) {
  uint32_t k = 0;
  while (k < 63 && (uint64_t(1) << k) < n) ++k;
  return k;
}

// A function object, not a function: the algorithms below then inline it (a function's
// pointer was a call per comparison).
constexpr auto segment_less = [](const PathSegment& a, const PathSegment& b) {
  return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
};

// Sorts segments that arrived as runs (runs[s] from source s, in source order): runs that
// are ascending already (a consistent trace) are merged pairwise, anything else is sorted.
void sort_segments(std::vector<PathSegment>& v, const std::vector<PathRun>& runs) {
  std::vector<size_t> bounds{0};
  for (const PathRun& r : runs) bounds.push_back(bounds.back() + r.count);
  if (bounds.back() != v.size()) return std::sort(v.begin(), v.end(), segment_less);
  for (size_t r = 0; r + 1 < bounds.size(); ++r)
    if (!std::is_sorted(v.begin() + long(bounds[r]), v.begin() + long(bounds[r + 1]), segment_less))
      return std::sort(v.begin(), v.end(), segment_less);
  while (bounds.size() > 2) {  // merge neighbouring runs: log2(runs) passes
    std::vector<size_t> merged{0};
    for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const size_t e = r + 2 < bounds.size() ? bounds[r + 2] : bounds[r + 1];
      if (r + 2 < bounds.size())
        std::inplace_merge(v.begin() + long(bounds[r]), v.begin() + long(bounds[r + 1]), v.begin() + long(e),
                           segment_less);
      merged.push_back(e);
    }
    bounds.swap(merged);
  }
}

// The segments received (runs[s] from source s, in source order) into `out`, ascending: one or
// two runs that ascend already (a consistent trace on up to two ranks) merged straight from
// the receive buffer, else copied and sorted by sort_segments.
void take_segments(const PathSegment* in, size_t n, const std::vector<PathRun>& runs,
                   std::vector<PathSegment>& out) {
  const size_t first = runs.empty() ? 0 : runs[0].count;
  const size_t second = runs.size() < 2 ? 0 : runs[1].count;
  if (runs.size() <= 2 && first + second == n && std::is_sorted(in, in + first, segment_less) &&
      std::is_sorted(in + first, in + n, segment_less)) {
    out.resize(n);
    std::merge(in, in + first, in + first, in + n, out.begin(), segment_less);
    return;
  }
  out.assign(in, in + n);
  sort_segments(out, runs);
}

template <typename T>
const T* as(const std::vector<unsigned char>& v) {
  return reinterpret_cast<const T*>(v.data());
}

// A send buffer used round after round: fresh memory costs a page fault per 4 KiB page at
// its first touch (about 3 us each on a virtual machine), so the rounds write into one buffer
// instead of a vector each, and it is not zeroed. Grows, and keeps its bytes, only in reserve().
// A big one (step 1's, 16 B a record) is whole 2 MiB blocks on their boundary, all of them
// huge pages where the host has them (engine/big_memory.h): the queries and replies of a
// ping-pong's 500k records faulted ~2,000 pages of 4 KiB in, one each.
class SendBuffer {
 public:
  SendBuffer() = default;
  SendBuffer(const SendBuffer&) = delete;
  SendBuffer& operator=(const SendBuffer&) = delete;
  ~SendBuffer() { release(); }
  void reserve(size_t bytes) {
    if (bytes <= cap_) return;
    release();
    constexpr size_t kHuge = size_t(2) << 20;
    const bool big = bytes >= 2 * kHuge;
    if (big) bytes = (bytes + kHuge - 1) / kHuge * kHuge;
    align_ = big ? kHuge : alignof(std::max_align_t);
    p_ = static_cast<unsigned char*>(::operator new[](bytes, std::align_val_t(align_)));
    if (big) prefer_huge_pages(p_, bytes);
    cap_ = bytes;
  }
  // Room for n elements of T (the contents undefined).
  template <typename T>
  T* get(size_t n) {
    reserve(n * sizeof(T));
    return reinterpret_cast<T*>(p_);
  }
  void release() {
    if (p_ != nullptr) ::operator delete[](p_, std::align_val_t(align_));
    p_ = nullptr;
    cap_ = 0;
  }

 private:
  unsigned char* p_ = nullptr;
  size_t cap_ = 0;
  size_t align_ = 0;
};

// The pointer-jumping walk's state on one rank: per item (records 0..n-1, the start n) the
// segment its arrival yields and its successor, J_k per level, the records on the path.
// A record's global id (type Id: 32 bits when they fit, which halves the levels' memory and
// the doubling's bytes) is its rank above `shift` bits, its local index below.
template <typename Id>
class JumpWalk {
 public:
  static constexpr Id kEnd = std::numeric_limits<Id>::max();  // J_k(x) beyond the path's beginning

  JumpWalk(const std::vector<HopRec>& mine, const PathStart& start, PathExchange& ex, PathWalkResult& out,
           int shift)
      : mine_(mine), start_(start), ex_(ex), out_(out), me_(ex.rank()), P_(ex.size()), n_(mine.size()),
        have_start_(me_ == start.rank), shift_(shift), mask_((Id(1) << shift) - 1) {
    J_.emplace_back(n_, kEnd);  // in place (J_(1, v) filled v and copied it)
    place_items();
  }

  Status find_successors(uint64_t& N, uint64_t& merges, uint64_t& active);
  Status rank_list(uint64_t N, uint64_t merges, bool& done);
  Status mark_by_flood();
  Status double_pointers(uint64_t N, uint64_t active);
  Status mark_path();
  Status mark_step(const std::vector<Id>* const* from, bool gather);
  Status send_segments(bool local);
  // Whether every merge was flagged to its predecessors (send_segments' local route holds then).
  bool merges_flagged() const { return flagged_; }
  // Frees what the successors and the list path kept (before send_segments).
  void release_lists() {
    for (std::unique_ptr<uint32_t[]>* v : {&lnext_, &lstep_, &lroot_}) v->reset();
    for (std::unique_ptr<uint64_t[]>* v : {&ldist_, &rdep_}) v->reset();
    rid_.reset();
    res_.reset();
    send_.release();
  }

 private:
  // An arrival still to resolve: item `item` arrives on rank q at t.
  struct Pending {
    uint32_t item;
    int32_t q;
    double t;
  };

  Status a2a(const void* send, const std::vector<PathRun>& runs, size_t elem, bool reply = false) {
    ++out_.rounds;
    for (const PathRun& r : runs) out_.bytes_sent += uint64_t(r.count) * elem;
    return ex_.exchange(send, runs, elem, recv_, recv_runs_, reply);
  }
  Status asum(uint64_t* v, int k) {
    ++out_.rounds;
    return ex_.allreduce_sum(v, k);
  }
  Status amin(double* v, int k) {
    ++out_.rounds;
    return ex_.allreduce_min(v, k);
  }
  // Items received by the last a2a.
  size_t received() const {
    size_t nin = 0;
    for (const PathRun& r : recv_runs_) nin += r.count;
    return nin;
  }
  Id gid(int rank, size_t i) const { return Id(Id(rank) << shift_) | Id(i); }
  uint32_t passes(size_t it) const { return passes_.empty() ? 0 : passes_[it]; }
  // One test: a negative rank, as an unsigned one, lies above any communicator's size.
  bool valid_cause(const HopRec& r) const { return uint32_t(r.cause_rank) < uint32_t(P_); }
  int32_t seg_rank(size_t it) const {
    if (passes(it) > 0) return moved_rank_[it];
    return it == n_ ? me_ : valid_cause(mine_[it]) ? mine_[it].cause_rank : me_;
  }
  double seg_end(size_t it) const {
    if (passes(it) > 0) return moved_end_[it];
    return it == n_ ? start_.time : valid_cause(mine_[it]) ? next_time(mine_[it]) : start_.first;
  }
  // Item `it` arrives on q at t after a pass.
  void move_to(size_t it, int32_t q, double t) {
    moved_rank_[it] = q;
    moved_end_[it] = t;
  }
  int owner_of(Id g) const { return int(g >> shift_); }
  size_t index_of(Id g) const { return size_t(g & mask_); }
  // Item k's first arrival (q = -1: none, an invalid cause or no start here).
  Pending first_arrival(size_t k) const {
    if (k < n_) {
      const HopRec& r = mine_[k];
      return valid_cause(r) ? Pending{uint32_t(k), r.cause_rank, next_time(r)} : Pending{uint32_t(k), -1, 0};
    }
    return have_start_ ? Pending{uint32_t(n_), int32_t(me_), start_.time} : Pending{uint32_t(n_), -1, 0};
  }
  void place_items();
  void mark_invalid();
  // Puts local record y on the path (marked_list_) unless it is none of this rank's records or
  // on it already.
  void mark(size_t y) {
    if (y < n_ && !marked_[y]) {
      marked_[y] = 1;
      marked_list_.push_back(uint32_t(y));
    }
  }
  template <typename Src>
  Status resolve_arrivals(size_t count, Src at, std::vector<uint32_t>& order);
  void answer_queries(Reply<Id>* rep);
  template <typename Src>
  void take_replies(Src at, const std::vector<uint32_t>& order, std::vector<Pending>& still);
  // Inline in take_replies' loop (GCC kept it out of line: a call per reply, its search's hint
  // and time in memory).
  [[gnu::always_inline]] inline void take_second_hop(size_t it, const Reply<Id>& r, size_t& hint,
                                                     double& prev_t);
  void break_cycle(std::vector<Pending>& pending);
  Status push_first_pairs();
  Status jump_once();
  Status close_cycle();
  void local_segments(const PathSegment* in, size_t nin);
  Status run_tokens(uint64_t N, uint64_t& far, bool& ok);
  Status send_tokens();
  void take_tokens(bool forward, uint64_t& returned);
  void take_return(size_t x, uint32_t y, uint32_t dist) {
    lnext_[x] = y;
    lstep_[x] = dist;
    if (!(y < x)) ++bad_;  // not earlier on the rank: a cycle
  }
  void local_runs();
  Status contract(uint64_t far, bool& ok);
  Status mark_by_depth();

  const std::vector<HopRec>& mine_;
  const PathStart& start_;
  PathExchange& ex_;
  PathWalkResult& out_;
  const int me_, P_;
  const size_t n_;
  const bool have_start_;
  const int shift_;
  const Id mask_;
  // Per item: its segment's rank and end are the item's first arrival's (its cause rank and
  // next_time, the start's rank and time, or this rank and `first` for an invalid cause),
  // unless the arrival was passed on (passes_, moved_rank_, moved_end_: allocated at the first
  // arrival passed on, an inconsistent trace's). It begins at its successor's wait end (J_0,
  // start_j0_), or at `first` where the path began.
  std::vector<uint32_t> passes_;
  std::vector<int32_t> moved_rank_;
  std::vector<double> moved_end_;
  // The per-item arrays below (arrival_, hop2_ and the flags, 17 B an item) in one block of
  // whole 2 MiB blocks (SendBuffer): as vectors of their own, a ping-pong's 500k records
  // faulted ~1,400 pages of 4 KiB in, one each.
  SendBuffer items_;
  uint8_t* broken_ = nullptr;
  uint8_t* ended_ = nullptr;  // its successor is the path's beginning (J_0 = end)
  std::vector<std::vector<Id>> J_;
  std::vector<std::vector<Id>> C_;  // C_k = J_{k-1} ∘ J_k (k >= 1, where the doubling made J_{k+1})
  uint8_t* marked_ = nullptr;
  std::vector<uint32_t> marked_list_;
  std::vector<unsigned char> recv_;
  SendBuffer send_;  // what a round sends, where it is built in place
  std::vector<PathRun> recv_runs_;
  Grouping grp_;
  // The doubling's messages: the pair (record `at` here, its level-k predecessor `other`), or
  // `other` = J_{k+1}(record `at` here) and `second` = C_k(it).
  struct Push {
    enum Kind : uint32_t { kPair = 0, kSuccessor = 1 };
    uint32_t at;
    uint32_t kind;
    Id other;
    Id second;
  };
  std::vector<Push> pairs_, push_;  // the pairs held here; a round's messages (reused level after level)
  uint64_t last_active_ = 0;        // jump_once's count of records with a successor at the new level
  uint8_t* indeg_ = nullptr;        // items whose successor a record is (up to 2)
  uint8_t* to_merge_ = nullptr;     // per item: its successor is a merge (flagged in step 1's reply)
  bool flagged_ = false;            // step 1 took one round: every reply told its merges
  bool first_round_ = false;        // step 1's first round: its replies flag merges
  double* arrival_ = nullptr;       // per record: when the (last) item whose successor it is arrived
  uint64_t merges_ = 0;             // records that became a second item's successor (this round)
  Id start_j0_ = kEnd;              // the start's successor
  uint64_t start_found_ = 0;        // its global id + 1 in the round it was found, else 0
  uint64_t found_ = 0;              // records whose successor was found (this round)
  // Per item whose successor lies on another rank and continues on this one: the record it
  // continues at (the list path's return after two hops), kRootHop where the successor's
  // chain ends, kNoItem otherwise (a token finds out).
  uint32_t* hop2_ = nullptr;
  // The list path, per item: its first return to this rank (lnext_, kNoItem: none) and the
  // hops to it; the run's first item (lroot_) and the hops to it; per run's first item, where
  // its chain ends (rid_ a record, kEnd none; resolved) or the next record to ask (not), hops.
  // n_ + 1 items each, not zeroed when made (run_tokens and local_runs write every item's).
  std::unique_ptr<uint32_t[]> lnext_, lstep_, lroot_;
  std::unique_ptr<uint64_t[]> ldist_, rdep_;
  std::unique_ptr<Id[]> rid_;
  std::unique_ptr<uint8_t[]> res_;
  uint64_t bad_ = 0, far_ = 0;  // returns not earlier on the rank; tokens stopped
  std::vector<Token> tok_out_, tok_send_;
  std::vector<int32_t> tok_dest_;
};

// The per-item arrays in items_: arrival_ (n_ doubles) first, then hop2_ (n_ + 1, kNoItem),
// then the flags (n_ + 1 bytes each), zeroed.
template <typename Id>
void JumpWalk<Id>::place_items() {
  const size_t items = n_ + 1;
  unsigned char* p = items_.get<unsigned char>(n_ * sizeof(double) + items * (sizeof(uint32_t) + 5));
  arrival_ = reinterpret_cast<double*>(p);
  std::fill(arrival_, arrival_ + n_, 0.0);
  hop2_ = reinterpret_cast<uint32_t*>(p + n_ * sizeof(double));
  std::fill(hop2_, hop2_ + items, kNoItem);
  uint8_t* flags = reinterpret_cast<uint8_t*>(hop2_ + items);
  std::fill(flags, flags + 5 * items, uint8_t(0));
  for (uint8_t** f : {&broken_, &ended_, &marked_, &indeg_, &to_merge_}) {
    *f = flags;
    flags += items;
  }
}

// --- 1. Successors: every record (and the start) arrives on its cause's rank.
// Records with an invalid cause end their chains, broken (hop_records() never makes one).
template <typename Id>
void JumpWalk<Id>::mark_invalid() {
  for (size_t i = 0; i < n_; ++i)
    if (!valid_cause(mine_[i])) broken_[i] = ended_[i] = 1;
}

// Rounds of queries until no arrival is passed on; N: the hop records of all ranks.
// merges: the records that are more than one item's successor (all ranks); active: the
// records with a successor (all ranks: the doubling's first count, without a round).
template <typename Id>
Status JumpWalk<Id>::find_successors(uint64_t& N, uint64_t& merges, uint64_t& active) {
  mark_invalid();
  // The first round asks for every item's first arrival (read from the records, no list of
  // them); later rounds for the arrivals passed on (`pending`).
  std::vector<Pending> pending, still;
  std::vector<uint32_t> order;  // items (then positions in pending), destination by destination
  // The first round's queries (8 B) and replies (16 or 24 B) in buffers sized for them once.
  send_.reserve((n_ + 1) * sizeof(Reply<Id>));
  reserve_big(recv_, (n_ + 1) * sizeof(Reply<Id>));
  merges = active = 0;
  uint64_t first = 0;  // the path's first record's global id + 1 (found on the start's rank)
  for (int round = 0;; ++round) {
    still.clear();
    first_round_ = round == 0 && P_ < kMergeFlag - 1;
    if (round == 0) {
      auto at = [&](size_t k) { return first_arrival(k); };
      CRITPATH_FORWARD_IF_ERROR(resolve_arrivals(n_ + 1, at, order));
      take_replies(at, order, still);
    } else {
      auto at = [&](size_t k) { return pending[k]; };
      CRITPATH_FORWARD_IF_ERROR(resolve_arrivals(pending.size(), at, order));
      take_replies(at, order, still);
    }
    pending.swap(still);
    if (round + 1 >= kPassRounds) break_cycle(pending);
    uint64_t red[5] = {pending.size(), round == 0 ? uint64_t(n_) : 0, merges_, start_found_, found_};
    merges_ = start_found_ = found_ = 0;
    CRITPATH_FORWARD_IF_ERROR(asum(red, 5));
    if (round == 0) N = red[1];
    merges += red[2];
    first += red[3];
    active += red[4];
    if (red[0] == 0) {
      flagged_ = first_round_;
      break;
    }
  }
  // Their memory back to the heap, for the next step's arrays (no fresh pages there).
  send_.release();
  std::vector<unsigned char>().swap(recv_);
  if (first != 0 && owner_of(Id(first - 1)) == me_) mark(index_of(Id(first - 1)));
  return Status::kOk;
}

// One round: each pending arrival asks its rank; the replies land in recv_, in `order`.
template <typename Id>
template <typename Src>
Status JumpWalk<Id>::resolve_arrivals(size_t count, Src at, std::vector<uint32_t>& order) {
  grp_.group(count, P_, [&](size_t k) { return at(k).q; });
  order.swap(grp_.order);
  double* q = send_.get<double>(order.size());
  for (size_t pos = 0; pos < order.size(); ++pos) q[pos] = at(order[pos]).t;
  CRITPATH_FORWARD_IF_ERROR(a2a(q, grp_.runs, sizeof(double)));
  // The replies in the same buffer (the queries are sent).
  Reply<Id>* rep = send_.get<Reply<Id>>(received());
  answer_queries(rep);
  // Back to the sources, ascending: the replies arrive as the queries went.
  const std::vector<PathRun> back = recv_runs_;
  return a2a(rep, back, sizeof(Reply<Id>), true);
}

// Where each query received arrives among this rank's records. A source's queries come in
// its records' order, so their times mostly ascend: each search starts from the previous
// answer (galloping), a full binary search only when the time went back.
template <typename Id>
void JumpWalk<Id>::answer_queries(Reply<Id>* rep) {
  const double* in = as<double>(recv_);
  const size_t nin = received();
  size_t hint = 0;  // records below it entered before the previous query's time
  double prev_t = -std::numeric_limits<double>::infinity();
  // The members through locals: the byte-wide stores (indeg_) may alias anything for the
  // compiler, which then loaded every member again per query.
  const HopRec* const h = mine_.data();
  const size_t n = n_;
  uint8_t* const indeg = indeg_;
  double* const arrival = arrival_;
  const Id me = gid(me_, 0);
  const int32_t P = P_;
  uint64_t merges = 0;
  for (size_t k = 0; k < nin; ++k) {
    const double t = in[k];
    if (!(t >= prev_t)) hint = 0;
    prev_t = t;
    const Arrival a = arrive_from(h, n, t, hint);
    if (a.index != kNoRecord) hint = a.index;
    Reply<Id> r{};
    if (a.kind == Arrival::kFound) {
      if (indeg[a.index] < 2 && ++indeg[a.index] == 2) ++merges;
      arrival[a.index] = t;
      const HopRec& x = h[a.index];
      r.id = Id(me | Id(a.index));
      r.time = next_time(x);
      r.rank = uint32_t(x.cause_rank) < uint32_t(P) ? x.cause_rank : -1;  // valid_cause
    } else if (a.kind == Arrival::kPass) {
      r.rank = a.next_rank >= 0 && a.next_rank < P ? a.next_rank : -1;
      r.time = a.next_time;
    }
    rep[k] = r;
  }
  merges_ += merges;
  if (!first_round_ || merges_ == 0) return;
  // Every query of the round is in: the replies that found a merge say so.
  for (size_t k = 0; k < nin; ++k)
    if (rep[k].kind() == Arrival::kFound && indeg[index_of(rep[k].id)] >= 2) rep[k].rank += kMergeFlag + 1;
}

// The replies: found (the segment and J_0), passed on (pending again), or the path began.
template <typename Id>
template <typename Src>
void JumpWalk<Id>::take_replies(Src at, const std::vector<uint32_t>& order, std::vector<Pending>& still) {
  const Reply<Id>* back = as<Reply<Id>>(recv_);
  size_t hint = 0;  // take_second_hop's search, as answer_queries'
  double prev_t = -std::numeric_limits<double>::infinity();
  auto passed_on = [&](const Reply<Id>& r) {
    return r.kind() == Arrival::kPass && r.rank >= 0 && r.rank < P_;
  };
  // All but the arrivals passed on, in a loop with no call in it (a push_back's growth there
  // made GCC keep the loop's values in memory), the arrays through locals; those passed on (an
  // inconsistent trace's, few) in a second loop, in the same order.
  Id* const j0 = J_[0].data();
  uint8_t *const merge = to_merge_, *const ended = ended_, *const broken = broken_;
  const bool moved = !passes_.empty();
  uint64_t found = 0;
  size_t npass = 0;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const Pending p = at(order[pos]);
    Reply<Id> r = back[pos];
    if (passed_on(r)) {
      ++npass;
      continue;
    }
    const size_t it = p.item;
    const Arrival::Kind kind = r.kind();
    if (kind == Arrival::kFound && r.rank >= kMergeFlag) {
      r.rank -= kMergeFlag + 1;
      merge[it] = 1;
    }
    if (moved && passes_[it] > 0) move_to(it, p.q, p.t);
    if (kind == Arrival::kFound) {
      (it < n_ ? j0[it] : start_j0_) = r.id;
      if (it < n_) ++found;
      if (it == n_) start_found_ = uint64_t(r.id) + 1;
      if (p.q != me_) take_second_hop(it, r, hint, prev_t);
    } else {  // the path began on p.q (or an invalid rank: broken)
      ended[it] = 1;
      if (kind == Arrival::kPass) broken[it] = 1;
    }
  }
  found_ += found;
  for (size_t pos = 0; npass > 0 && pos < order.size(); ++pos) {
    Pending p = at(order[pos]);
    const Reply<Id>& r = back[pos];
    if (!passed_on(r)) continue;
    const size_t it = p.item;
    if (passes(it) > 0) move_to(it, p.q, p.t);
    if (passes_.empty()) {
      passes_.assign(n_ + 1, 0);
      moved_rank_.assign(n_ + 1, -1);
      moved_end_.assign(n_ + 1, 0);
    }
    ++passes_[it];
    p.q = r.rank;
    p.t = r.time;
    still.push_back(p);
  }
}

// Item `it`'s successor (found on another rank, reply r) ends its chain (an invalid cause), or
// continues on this rank: where it arrives here is that successor's successor, as the
// successor's own query found it (the same search), unless passed on (a token finds out).
template <typename Id>
void JumpWalk<Id>::take_second_hop(size_t it, const Reply<Id>& r, size_t& hint, double& prev_t) {
  if (r.rank < 0 || r.rank >= P_) {
    hop2_[it] = kRootHop;
    return;
  }
  if (r.rank != me_) return;
  if (!(r.time >= prev_t)) hint = 0;
  prev_t = r.time;
  const Arrival a = arrive_from(mine_.data(), n_, r.time, hint);
  if (a.index != kNoRecord) hint = a.index;
  if (a.kind == Arrival::kFound) hop2_[it] = uint32_t(a.index);
  else if (a.kind == Arrival::kBegan) hop2_[it] = kRootHop;
}

// Passed on and on: a cycle of inconsistent waits.
template <typename Id>
void JumpWalk<Id>::break_cycle(std::vector<Pending>& pending) {
  for (const Pending& p : pending) {
    broken_[p.item] = ended_[p.item] = 1;
    move_to(p.item, p.q, p.t);  // passed on (pending after the first round)
  }
  pending.clear();
}

// --- The list path. Where no record is the successor of two items, the successors form
// chains (lists), and x is on the path exactly when it is on the start's chain before the
// start: the same last record (root) and fewer hops to it. Roots and hops come from
//   a. tokens: each item's token follows its chain, one hop per round, until it is back on
//      the item's rank (its first return there: a record entered earlier), at the chain's
//      last record, or stopped (after kTokenTrial rounds, at the first round without returns
//      or at half the doubling's levels);
//   b. a local pass: the returns make each rank's items runs, resolved in index order;
//   c. pointer jumping on the runs' first items whose token was stopped (few: bench_chain's
//      ring has one per rank), asking for the run of the record the token stopped at;
//   d. one allreduce naming the start's root and hops: each rank marks its records.
// A return not earlier on the rank, or runs still unresolved after the doubling's bound, is a
// cycle (an inconsistent trace): `done` stays false and the doubling over all records runs.
template <typename Id>
Status JumpWalk<Id>::rank_list(uint64_t N, uint64_t merges, bool& done) {
  done = false;
  const size_t items = n_ + 1;
  // Every item's set by run_tokens' first loop (filled here first, they cost a byte-wise
  // write of 21 B per item more).
  for (std::unique_ptr<uint32_t[]>* v : {&lnext_, &lstep_}) v->reset(new uint32_t[items]);
  res_.reset(new uint8_t[items]);
  rid_.reset(new Id[items]);
  rdep_.reset(new uint64_t[items]);
  uint64_t far = 0;
  bool ok = false;
  CRITPATH_FORWARD_IF_ERROR(run_tokens(N, far, ok));
  if (merges > 0) {  // a forest: the flood, while every run ends by a return or at a root
    if (far > 0) return Status::kOk;
    CRITPATH_FORWARD_IF_ERROR(mark_by_flood());
    done = true;
    return Status::kOk;
  }
  if (!ok) return Status::kOk;
  local_runs();
  if (far > 0) {
    CRITPATH_FORWARD_IF_ERROR(contract(far, ok));
    if (!ok) return Status::kOk;
  }
  CRITPATH_FORWARD_IF_ERROR(mark_by_depth());
  done = true;
  return Status::kOk;
}

// a. Token rounds until no token is out; N: all ranks' records; far: the tokens stopped (all
// ranks); ok: no cycle.
template <typename Id>
Status JumpWalk<Id>::run_tokens(uint64_t N, uint64_t& far, bool& ok) {
  tok_out_.clear();
  tok_dest_.clear();
  const size_t items = have_start_ ? n_ + 1 : n_;
  // The items that need no token first, in a loop with no call in it and the arrays through
  // locals (the tokens' push_back made GCC keep the loop's values in memory); the tokens, few
  // where most items came back after two hops (a ping-pong: none), in a second loop.
  const Id* const j0 = J_[0].data();
  const uint32_t* const hop2 = hop2_;
  uint32_t *const lnext = lnext_.get(), *const lstep = lstep_.get();
  uint8_t* const res = res_.get();
  Id* const rid = rid_.get();
  uint64_t* const rdep = rdep_.get();
  auto succ = [&](size_t x) { return x < n_ ? j0[x] : start_j0_; };
  auto needs_token = [&](size_t x, Id j) {
    return j != kEnd && owner_of(j) != me_ && hop2[x] != kRootHop && hop2[x] == kNoItem;
  };
  uint64_t bad = 0;
  size_t tokens = 0;
  auto ret = [&](size_t x, uint32_t y, uint32_t dist) {  // take_return's, counted locally
    lnext[x] = y;
    lstep[x] = dist;
    bad += !(y < x);  // not earlier on the rank: a cycle
  };
  for (size_t x = 0; x < items; ++x) {
    lnext[x] = kNoItem;
    lstep[x] = 0;
    res[x] = 0;
    rid[x] = kEnd;
    rdep[x] = 0;
    const Id j = succ(x);
    if (j == kEnd) {  // the chain's last record (or the start, where the path began)
      res[x] = 1;
      rid[x] = x < n_ ? gid(me_, x) : kEnd;
    } else if (owner_of(j) == me_) {  // passed on back to this rank
      ret(x, uint32_t(index_of(j)), 1);
    } else if (hop2[x] == kRootHop) {  // the successor ends its chain
      res[x] = 1;
      rid[x] = j;
      rdep[x] = 1;
    } else if (hop2[x] != kNoItem) {  // back after two hops (take_replies found it)
      ret(x, hop2[x], 2);
    } else {
      ++tokens;
    }
  }
  bad_ += bad;
  if (!have_start_) {  // no start here: item n_ is nobody's
    lnext[n_] = kNoItem;
    lstep[n_] = 0;
    res[n_] = 1;
    rid[n_] = kEnd;
    rdep[n_] = 0;
  }
  for (size_t x = 0; tokens > 0 && x < items; ++x) {
    const Id j = succ(x);
    if (!needs_token(x, j)) continue;
    Token t;
    t.node = uint32_t(index_of(j));
    t.origin = uint32_t(x);
    t.origin_rank = me_;
    t.dist = 1;
    tok_out_.push_back(t);
    tok_dest_.push_back(int32_t(owner_of(j)));
  }
  // Tokens travel for a trial of kTokenTrial rounds, then while they come back, up to half
  // the doubling's levels (log2 N) or kTokenHops.
  const uint32_t cap = std::clamp<uint32_t>(ceil_log2(N) / 2, kTokenTrial, kTokenHops);
  bool forward = true;
  for (uint32_t round = 1;; ++round) {
    CRITPATH_FORWARD_IF_ERROR(send_tokens());
    uint64_t back = 0;
    take_tokens(forward, back);
    uint64_t red[4] = {tok_out_.size(), back, bad_, far_};
    CRITPATH_FORWARD_IF_ERROR(asum(red, 4));
    if (red[0] == 0) {
      ok = red[2] == 0;
      far = red[3];
      return Status::kOk;
    }
    forward = round < kTokenTrial || (red[1] > 0 && round < cap);
  }
}

// The tokens out, grouped by destination rank (one round).
template <typename Id>
Status JumpWalk<Id>::send_tokens() {
  grp_.group(tok_out_.size(), P_, [&](size_t i) { return tok_dest_[i]; });
  tok_send_.resize(grp_.order.size());
  for (size_t pos = 0; pos < tok_send_.size(); ++pos) tok_send_[pos] = tok_out_[grp_.order[pos]];
  return a2a(tok_send_.data(), grp_.runs, sizeof(Token));
}

// The tokens received: a return or an answer for one of this rank's items is taken, any other
// goes on (forward), or back to its origin; `returned` counts the returns.
template <typename Id>
void JumpWalk<Id>::take_tokens(bool forward, uint64_t& returned) {
  const Token* in = as<Token>(recv_);
  const size_t nin = received();
  tok_out_.clear();
  tok_dest_.clear();
  for (size_t k = 0; k < nin; ++k) {
    Token t = in[k];
    if (t.origin_rank == me_ && t.origin > n_) continue;  // not this walk's
    if (t.kind != Token::kTravel && t.origin_rank == me_) {
      rid_[t.origin] = gid(t.node_rank, t.node);
      rdep_[t.origin] = t.dist;
      if (t.kind == Token::kRoot) res_[t.origin] = 1;
      else ++far_;
      continue;
    }
    if (t.origin_rank == me_) {
      take_return(t.origin, t.node, t.dist);
      ++returned;
      continue;
    }
    const Id j = t.node < n_ ? J_[0][t.node] : kEnd;
    if (j != kEnd && forward) {
      t.node = uint32_t(index_of(j));
      ++t.dist;
      tok_out_.push_back(t);
      tok_dest_.push_back(int32_t(owner_of(j)));
      continue;
    }
    t.kind = j == kEnd ? Token::kRoot : Token::kFar;
    t.node_rank = me_;
    tok_out_.push_back(t);
    tok_dest_.push_back(t.origin_rank);
  }
}

// b. Each item's run: its first return's run (earlier, so already known), or its own.
template <typename Id>
void JumpWalk<Id>::local_runs() {
  const size_t items = n_ + 1;
  lroot_.reset(new uint32_t[items]);
  ldist_.reset(new uint64_t[items]);
  for (size_t x = 0; x < items; ++x) {
    const uint32_t y = lnext_[x];
    if (y == kNoItem) {
      lroot_[x] = uint32_t(x);
      ldist_[x] = 0;
    } else {
      lroot_[x] = lroot_[y];
      ldist_[x] = lstep_[x] + ldist_[y];
    }
  }
}

// c. Pointer jumping on the runs whose token stopped: each asks the rank of the record it
// points at for that record's run's pointer (and hops), until every chain's root is known.
template <typename Id>
Status JumpWalk<Id>::contract(uint64_t far, bool& ok) {
  ok = false;
  const uint32_t K = ceil_log2(far + 2);  // levels enough for any chain of the `far` runs (more: a cycle)
  std::vector<uint32_t> open, order, req;
  for (size_t u = 0; u <= n_; ++u)
    if (lnext_[u] == kNoItem && !res_[u]) open.push_back(uint32_t(u));
  std::vector<Link> links;
  for (uint32_t level = 0; level <= K; ++level) {
    grp_.group(open.size(), P_, [&](size_t i) { return int32_t(owner_of(rid_[open[i]])); });
    order.swap(grp_.order);
    req.resize(order.size());
    for (size_t pos = 0; pos < req.size(); ++pos) req[pos] = uint32_t(index_of(rid_[open[order[pos]]]));
    CRITPATH_FORWARD_IF_ERROR(a2a(req.data(), grp_.runs, sizeof(uint32_t)));
    const uint32_t* in = as<uint32_t>(recv_);
    links.resize(received());
    for (size_t k = 0; k < links.size(); ++k) {
      const uint32_t z = in[k];
      if (z >= n_) {  // not a record: a chain that ends nowhere
        links[k] = Link{uint64_t(kEnd), 0, 1, 0};
        continue;
      }
      const uint32_t r = lroot_[z];
      links[k] = Link{uint64_t(rid_[r]), rdep_[r] + ldist_[z], res_[r], 0};
    }
    const std::vector<PathRun> sources = recv_runs_;
    CRITPATH_FORWARD_IF_ERROR(a2a(links.data(), sources, sizeof(Link), true));
    const Link* back = as<Link>(recv_);
    for (size_t pos = 0; pos < order.size(); ++pos) {
      const uint32_t u = open[order[pos]];
      rid_[u] = Id(back[pos].id);
      rdep_[u] += back[pos].dist;
      res_[u] = back[pos].resolved ? 1 : 0;
    }
    open.erase(std::remove_if(open.begin(), open.end(), [&](uint32_t u) { return res_[u] != 0; }),
               open.end());
    uint64_t active = open.size();
    CRITPATH_FORWARD_IF_ERROR(asum(&active, 1));
    out_.levels = level + 1;
    if (active == 0) {
      ok = true;
      return Status::kOk;
    }
  }
  return Status::kOk;
}

// d. The start's root and hops to everyone; the records of its chain before it are the path.
template <typename Id>
Status JumpWalk<Id>::mark_by_depth() {
  uint64_t v[3] = {0, 0, 0};  // the start has a root; the root; the start's hops to it
  if (have_start_) {
    const uint32_t r = lroot_[n_];
    if (res_[r] && rid_[r] != kEnd) {
      v[0] = 1;
      v[1] = uint64_t(rid_[r]);
      v[2] = rdep_[r] + ldist_[n_];
    }
  }
  CRITPATH_FORWARD_IF_ERROR(asum(v, 3));
  if (v[0] == 0) return Status::kOk;
  for (size_t x = 0; x < n_; ++x) {
    const uint32_t r = lroot_[x];
    if (res_[r] && uint64_t(rid_[r]) == v[1] && rdep_[r] + ldist_[x] < v[2]) marked_[x] = 1;
  }
  return Status::kOk;
}

// d'. Where chains merge (a forest) hops do not tell the path: marking floods from the start
// instead. A record on the path puts its first return there (a local step) and its successor
// (one round to its rank); with every token back or at a root within kTokenHops, the flood
// reaches every record of the path within kTokenHops + 1 rounds. The marked records are closed
// under returns on every rank, so a successor that is its predecessor's successor's first
// return (x = lnext(p) two hops after p, J_0(x) on J_0(p)'s rank) is marked with J_0(p) and
// not asked for: a ping-pong's flood asks once per run, not once per record.
template <typename Id>
Status JumpWalk<Id>::mark_by_flood() {
  std::fill(marked_, marked_ + n_, uint8_t(0));
  // The records marked whose successors are still to follow: a stack with room for each record
  // once (a record enters it when first marked), so that close()'s walk along the returns has
  // no call in it (a push_back's growth there made GCC keep its values in memory), and the
  // arrays through locals.
  std::unique_ptr<uint32_t[]> work(new uint32_t[n_ + 1]);
  size_t nwork = 0;
  std::vector<uint32_t> req;
  std::vector<int32_t> dest;
  const Id* const j0 = J_[0].data();
  const uint32_t *const lnext = lnext_.get(), *const lstep = lstep_.get();
  uint8_t* const marked = marked_;
  auto covered = [&](uint32_t p, uint32_t x) __attribute__((always_inline)) {  // J_0(x) is lnext(J_0(p))
    const Id a = j0[p], b = j0[x];
    return lstep[p] == 2 && a != kEnd && b != kEnd && owner_of(a) != me_ && owner_of(a) == owner_of(b);
  };
  // x and its returns, while new; inline (GCC kept it out of line: a call per record marked).
  auto close = [&](uint32_t x) __attribute__((always_inline)) {
    for (uint32_t p = kNoItem; x < n_ && !marked[x]; p = x, x = lnext[x]) {
      marked[x] = 1;
      if (p == kNoItem || !covered(p, x)) work[nwork++] = x;
    }
  };
  auto follow = [&](Id j) __attribute__((always_inline)) {
    if (j == kEnd) return;
    if (owner_of(j) == me_) return close(uint32_t(index_of(j)));
    req.push_back(uint32_t(index_of(j)));
    dest.push_back(int32_t(owner_of(j)));
  };
  if (have_start_) {
    if (lnext_[n_] != kNoItem) close(lnext_[n_]);
    follow(start_j0_);
  }
  std::vector<uint32_t> send;
  for (;;) {
    while (nwork > 0) follow(j0[work[--nwork]]);
    grp_.group(req.size(), P_, [&](size_t i) { return dest[i]; });
    send.resize(grp_.order.size());
    for (size_t pos = 0; pos < send.size(); ++pos) send[pos] = req[grp_.order[pos]];
    uint64_t out = send.size();
    CRITPATH_FORWARD_IF_ERROR(asum(&out, 1));
    if (out == 0) return Status::kOk;
    req.clear();
    dest.clear();
    CRITPATH_FORWARD_IF_ERROR(a2a(send.data(), grp_.runs, sizeof(uint32_t)));
    const uint32_t* in = as<uint32_t>(recv_);
    const size_t nin = received();
    for (size_t k = 0; k < nin; ++k) close(in[k]);
  }
}

// --- 2. Pointer doubling until every chain has ended (or K_max levels: a cycle). Pushed, not
// pulled: the rank of y = J_k(x) holds the pair (y, x) of x's level-k predecessors and sends
// J_{k+1}(x) = J_k(y) = z to x's rank and the pair (z, x) to z's rank, one round a level
// (asking J_k(x)'s rank and hearing its answer took two). The pairs of level 0 go to the
// successors' ranks in one round first: K levels cost K + 1 rounds instead of 2 K.
template <typename Id>
Status JumpWalk<Id>::double_pointers(uint64_t N, uint64_t active) {
  const uint32_t K_max = ceil_log2(N + 2);
  uint32_t L = 0;  // levels the marking uses: J_0 .. J_{L-1}; every chain has <= 2^L records
  while (active > 0 && L < K_max) {
    ++L;
    if (L == K_max) break;  // 2^K_max > N: any longer chain is a cycle
    if (L == 1) CRITPATH_FORWARD_IF_ERROR(push_first_pairs());
    CRITPATH_FORWARD_IF_ERROR(jump_once());
    active = last_active_;
    CRITPATH_FORWARD_IF_ERROR(asum(&active, 1));
  }
  out_.levels = L;
  std::vector<Push>().swap(pairs_);
  std::vector<Push>().swap(push_);
  return Status::kOk;
}

// The level-0 pairs: each record x with a successor y = J_0(x) tells y's rank (y, x).
template <typename Id>
Status JumpWalk<Id>::push_first_pairs() {
  const std::vector<Id>& J0 = J_[0];
  grp_.group(n_, P_, [&](size_t x) { return J0[x] != kEnd ? int32_t(owner_of(J0[x])) : int32_t(-1); });
  push_.resize(grp_.order.size());
  for (size_t pos = 0; pos < push_.size(); ++pos) {
    const uint32_t x = grp_.order[pos];
    push_[pos] = Push{uint32_t(index_of(J0[x])), Push::kPair, gid(me_, x), kEnd};
  }
  CRITPATH_FORWARD_IF_ERROR(a2a(push_.data(), grp_.runs, sizeof(Push)));
  const size_t nin = received();
  pairs_.resize(nin);
  if (nin > 0) std::memcpy(pairs_.data(), recv_.data(), nin * sizeof(Push));
  return Status::kOk;
}

// J_{k+1} from the level-k pairs (y, x) held here: J_{k+1}(x) = J_k(y) to x's rank, and the
// pair (J_k(y), x) of level k + 1 to J_k(y)'s rank (nothing where J_k(y) is the end: J_{k+1}(x)
// stays the end). From level 1 on the successor's message also carries C_k(x) = J_{k-1}(y),
// so that the marking takes two levels a round.
template <typename Id>
Status JumpWalk<Id>::jump_once() {
  const size_t level = J_.size() - 1;
  const std::vector<Id>& Jk = J_.back();
  const std::vector<Id>* below = level >= 1 ? &J_[level - 1] : nullptr;
  auto target = [&](size_t i) {  // message i: the successor to x (even), the pair to z (odd)
    const Push& p = pairs_[i / 2];
    if (p.at >= n_) return int32_t(-1);
    const Id z = Jk[p.at];
    if (i % 2 == 0) return z != kEnd || (below && (*below)[p.at] != kEnd) ? int32_t(owner_of(p.other)) : -1;
    return z != kEnd ? int32_t(owner_of(z)) : int32_t(-1);
  };
  grp_.group(2 * pairs_.size(), P_, target);
  push_.resize(grp_.order.size());
  for (size_t pos = 0; pos < push_.size(); ++pos) {
    const uint32_t i = grp_.order[pos];
    const Push& p = pairs_[i / 2];
    const Id z = Jk[p.at];
    push_[pos] = i % 2 == 0
                     ? Push{uint32_t(index_of(p.other)), Push::kSuccessor, z, below ? (*below)[p.at] : kEnd}
                     : Push{uint32_t(index_of(z)), Push::kPair, p.other, kEnd};
  }
  CRITPATH_FORWARD_IF_ERROR(a2a(push_.data(), grp_.runs, sizeof(Push)));
  const size_t nin = received();
  std::vector<Id> next(n_, kEnd);
  if (below) {
    C_.resize(level + 1);
    C_[level].assign(n_, kEnd);
  }
  uint64_t active = 0;  // records whose J_{k+1} is not the end
  pairs_.clear();
  for (size_t k = 0; k < nin; ++k) {
    Push m;
    std::memcpy(&m, recv_.data() + k * sizeof m, sizeof m);
    if (m.at >= n_) continue;  // not a record: not this walk's
    if (m.kind == Push::kPair) {
      pairs_.push_back(m);
      continue;
    }
    next[m.at] = m.other;
    active += m.other != kEnd;
    if (below) C_[level][m.at] = m.second;
  }
  last_active_ = active;
  J_.push_back(std::move(next));
  return Status::kOk;
}

// --- 3. Marking, top-down: x at level k+1 marks J_k(x); where the doubling brought C_k, two
// levels a round: x marks J_k(x), J_{k-1}(x) and J_{k-1}(J_k(x)) = C_k(x).
template <typename Id>
Status JumpWalk<Id>::mark_path() {
  for (uint32_t k = out_.levels; k-- > 0;) {
    const bool two = k >= 1 && k < C_.size();  // alike on every rank (C_[k] empty without records)
    const std::vector<Id>* from[3] = {&J_[k], two ? &J_[k - 1] : nullptr, two ? &C_[k] : nullptr};
    // At most 2^(levels - 1 - k) marked records of all ranks ask at level k (one, the path's
    // first, before the top level): while those are few every rank gets all requests, one
    // collective instead of a sparse all-to-all (each a synchronizing round: in situ, where
    // ranks outnumber cores, it costs a few times a collective's CPU).
    CRITPATH_FORWARD_IF_ERROR(mark_step(from, out_.levels - 1 - k <= kGatherMarkLevels));
    if (two) --k;
  }
  J_.resize(1);  // J_0 names each segment's begin (send_segments)
  J_.shrink_to_fit();
  std::vector<std::vector<Id>>().swap(C_);
  return Status::kOk;
}

// One marking round: every marked record asks for its pointers in `from` (up to three arrays)
// to be marked, by allgather (`gather`) or a sparse all-to-all.
template <typename Id>
Status JumpWalk<Id>::mark_step(const std::vector<Id>* const* from, bool gather) {
  std::vector<Id> req;  // global ids
  for (uint32_t x : marked_list_)
    for (int a = 0; a < 3; ++a)
      if (from[a] != nullptr && (*from[a])[x] != kEnd) req.push_back((*from[a])[x]);
  if (gather) {
    ++out_.rounds;
    out_.bytes_sent += req.size() * sizeof(Id);
    CRITPATH_FORWARD_IF_ERROR(ex_.allgather(req.data(), uint32_t(req.size()), sizeof(Id), recv_));
    const Id* in = as<Id>(recv_);
    const size_t nin = recv_.size() / sizeof(Id);
    for (size_t i = 0; i < nin; ++i)
      if (owner_of(in[i]) == me_) mark(index_of(in[i]));
    return Status::kOk;
  }
  grp_.group(req.size(), P_, [&](size_t i) { return int32_t(owner_of(req[i])); });
  std::vector<Id> send(grp_.order.size());
  for (size_t pos = 0; pos < send.size(); ++pos) send[pos] = Id(index_of(req[grp_.order[pos]]));
  CRITPATH_FORWARD_IF_ERROR(a2a(send.data(), grp_.runs, sizeof(Id)));
  const Id* in = as<Id>(recv_);
  const size_t nin = received();
  for (size_t i = 0; i < nin; ++i) mark(size_t(in[i]));
  return Status::kOk;
}

// --- 4. Segments to their ranks; hops, ended chains, broken ends on the path. A marked
// item's segment lies on the rank of its successor y, [y's wait end, the item's arrival]
// (`first` where the path began). With `local` (no record is two items' successor, or step 1's
// replies flagged each merge to its predecessors) a marked record that is no merge has one
// predecessor, on the path too, so y's rank makes y's segment from the arrival it answered
// (arrival_): only the chains' ends and the merges' segments travel, not a segment per record
// (a ping-pong's few merges, receives that did not wait, cost a few segments, not all).
template <typename Id>
Status JumpWalk<Id>::send_segments(bool local) {
  // The marked items whose segments travel (local: few; the start, where it is here, last), in
  // item order: on a consistent trace each destination then gets its segments ascending. The
  // flags and counts through locals (sent's growth, out of line, made GCC load each member
  // again per item).
  std::vector<uint32_t> sent;
  const uint8_t *const marked = marked_, *const ended = ended_, *const broken = broken_,
                       *const merge = to_merge_;
  const uint32_t* const passed = passes_.empty() ? nullptr : passes_.data();
  uint64_t hops = 0, began = 0, broke = 0;  // chains that ended (the path began), broken ends
  for (size_t it = 0; it <= n_; ++it) {
    if (it < n_ ? !marked[it] : !have_start_) continue;
    // A record's own hop (the start is none), and the arrivals passed on after it.
    hops += (passed != nullptr ? passed[it] : 0) + (it < n_ ? 1 : 0);
    if (ended[it]) ++(broken[it] ? broke : began);
    if (!local || ended[it] || merge[it]) sent.push_back(uint32_t(it));
  }
  uint64_t red[3] = {hops, began, broke};
  grp_.group(sent.size(), P_, [&](size_t k) { return seg_rank(sent[k]); });
  const size_t nout = grp_.order.size();
  SegmentOut<Id>* send = send_.get<SegmentOut<Id>>(nout);
  for (size_t pos = 0; pos < nout; ++pos) {
    const size_t it = sent[grp_.order[pos]];
    SegmentOut<Id>& m = send[pos];
    m = SegmentOut<Id>{};
    m.end = seg_end(it);
    if (!ended_[it]) m.succ = it < n_ ? J_[0][it] : start_j0_;
  }
  CRITPATH_FORWARD_IF_ERROR(a2a(send, grp_.runs, sizeof(SegmentOut<Id>)));
  send_.release();  // its memory for the segments below
  // Each segment in place of its message: begun at the record's wait end, or at `first`.
  const size_t nin = received();
  for (size_t k = 0; k < nin; ++k) {
    SegmentOut<Id> m;
    std::memcpy(&m, recv_.data() + k * sizeof m, sizeof m);
    const size_t y = index_of(m.succ);
    const double begin = m.succ != kEnd && y < n_ ? mine_[y].wait_end : start_.first;
    const PathSegment g{begin, std::max(m.end, begin)};
    std::memcpy(recv_.data() + k * sizeof g, &g, sizeof g);
  }
  if (local) {
    local_segments(as<PathSegment>(recv_), nin);
  } else {
    take_segments(as<PathSegment>(recv_), nin, recv_runs_, out_.segments);
  }
  CRITPATH_FORWARD_IF_ERROR(asum(red, 3));
  out_.hops = red[0];
  out_.partial = red[2] > 0 || red[1] == 0;
  const bool cycle = red[1] == 0 && red[2] == 0;
  if (cycle) CRITPATH_FORWARD_IF_ERROR(close_cycle());
  if (!local || cycle)  // local_segments left the empty ones out
    out_.segments.erase(std::remove_if(out_.segments.begin(), out_.segments.end(),
                                       [](const PathSegment& s) { return !(s.end > s.begin); }),
                        out_.segments.end());
  // Ascending already (take_segments and local_segments sort), but for close_cycle's segment.
  if (cycle && !std::is_sorted(out_.segments.begin(), out_.segments.end(), segment_less))
    std::sort(out_.segments.begin(), out_.segments.end(), segment_less);
  return Status::kOk;
}

// The local segments: each marked record's, from the arrival it answered, in record order
// (ascending on a consistent trace), and the `nin` received (the chains' ends: few), merged
// in as the own ones are made, empty ones left out. Written by index into room for all (a
// push_back per segment checked the capacity, and an inplace_merge moved every segment once
// more for the few received). Own segments out of order (an inconsistent trace): all sorted.
template <typename Id>
void JumpWalk<Id>::local_segments(const PathSegment* in, size_t nin) {
  std::vector<PathSegment>& out = out_.segments;
  std::vector<PathSegment> got(in, in + nin);
  if (!std::is_sorted(got.begin(), got.end(), segment_less)) std::sort(got.begin(), got.end(), segment_less);
  out.resize(n_ + nin);
  PathSegment* const o = out.data();
  size_t m = 0, r = 0;
  bool sorted = true;
  PathSegment prev{-std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  const HopRec* const h = mine_.data();
  const uint8_t *const marked = marked_, *const indeg = indeg_;
  const double* const arrival = arrival_;
  double next_begin = nin > 0 ? got[0].begin : std::numeric_limits<double>::infinity();
  for (size_t y = 0; y < n_; ++y) {
    if (!marked[y] || indeg[y] >= 2) continue;  // a merge's segment is received
    const double begin = h[y].wait_end;
    const PathSegment g{begin, std::max(arrival[y], begin)};
    if (segment_less(g, prev)) sorted = false;
    prev = g;
    if (!(g.end > g.begin)) continue;
    // The next received one's begin (+inf: none) rules out most records in one comparison.
    if (sorted && next_begin <= g.begin) {
      for (; r < nin && segment_less(got[r], g); ++r)
        if (got[r].end > got[r].begin) o[m++] = got[r];
      next_begin = r < nin ? got[r].begin : std::numeric_limits<double>::infinity();
    }
    o[m++] = g;
  }
  for (; r < nin; ++r)
    if (got[r].end > got[r].begin) o[m++] = got[r];
  out.resize(m);
  if (!sorted) std::sort(out.begin(), out.end(), segment_less);
}

// A cycle (inconsistent trace): the rank holding the path's earliest point keeps the rest
// back to `first`, as the sequential walk's cut does.
template <typename Id>
Status JumpWalk<Id>::close_cycle() {
  double lo = std::numeric_limits<double>::infinity();
  for (const PathSegment& s : out_.segments) lo = std::min<double>(lo, s.begin);
  double v[1] = {lo};
  CRITPATH_FORWARD_IF_ERROR(amin(v, 1));
  double who[1] = {lo == v[0] && std::isfinite(lo) ? double(me_) : std::numeric_limits<double>::infinity()};
  CRITPATH_FORWARD_IF_ERROR(amin(who, 1));
  if (who[0] == double(me_) && v[0] > start_.first) out_.segments.push_back({start_.first, v[0]});
  return Status::kOk;
}

template <typename Id>
Status walk_with(const std::vector<HopRec>& mine, const PathStart& start, PathExchange& ex,
                 PathWalkResult& out, int shift, ListPath lists) {
  JumpWalk<Id> walk(mine, start, ex, out, shift);
  uint64_t N = 0, merges = 0, active = 0;  // hop records of all ranks; records two items lead
                                           // to; records with a successor
  CRITPATH_FORWARD_IF_ERROR(walk.find_successors(N, merges, active));
  const bool pays = N >= kListMinRecords &&
                    (merges == 0 || (merges <= N / kListMergeShare && ex.size() <= kListMaxRanks));
  if (lists == ListPath::kAlways || (lists == ListPath::kAuto && pays)) {
    bool done = false;
    CRITPATH_FORWARD_IF_ERROR(walk.rank_list(N, merges, done));
    out.listed = done;
    walk.release_lists();
    if (done) return walk.send_segments(merges == 0 || walk.merges_flagged());
  }
  CRITPATH_FORWARD_IF_ERROR(walk.double_pointers(N, active));
  CRITPATH_FORWARD_IF_ERROR(walk.mark_path());
  walk.release_lists();
  return walk.send_segments(merges == 0 || walk.merges_flagged());
}

}  // namespace

Status PathExchange::allgather(const void* send, uint32_t count, size_t elem_bytes,
                               std::vector<unsigned char>& all) {
  const auto* p = static_cast<const unsigned char*>(send);
  std::vector<unsigned char> copies;
  std::vector<PathRun> runs, from;
  for (int r = 0; r < size() && count > 0; ++r) {
    runs.push_back({r, count});
    copies.insert(copies.end(), p, p + size_t(count) * elem_bytes);
  }
  return exchange(copies.data(), runs, elem_bytes, all, from, false);
}

Status walk_jump(const std::vector<HopRec>& mine, const PathStart& start, PathExchange& ex,
                 PathWalkResult& out, ListPath lists) {
  const int P = ex.size();
  out = PathWalkResult{};
  out.method = PathWalkMethod::kJump;
  // Global ids: the rank above `shift` bits, room below for the most records of any rank and
  // one more (the all-ones id is the end, never a record's).
  double most = -double(mine.size());
  ++out.rounds;
  CRITPATH_FORWARD_IF_ERROR(ex.allreduce_min(&most, 1));
  int shift = 0, rank_bits = 0;
  while (shift < 63 && double(uint64_t(1) << shift) <= -most) ++shift;
  while (rank_bits < 31 && (int64_t(1) << rank_bits) < P) ++rank_bits;
  if (mine.size() >= UINT32_MAX) return Status::kInvalidArgument;  // items are 32-bit indices
  if (shift + rank_bits <= 32 && shift < 32) return walk_with<uint32_t>(mine, start, ex, out, shift, lists);
  if (shift + rank_bits <= 64) return walk_with<uint64_t>(mine, start, ex, out, shift, lists);
  return Status::kInvalidArgument;
}

// ---- MPI ---------------------------------------------------------------------------------

namespace {

class CommPathExchange final : public PathExchange {
 public:
  explicit CommPathExchange(const Comm& comm) : comm_(comm) {}
  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }

  Status exchange(const void* send, const std::vector<PathRun>& send_runs, size_t elem_bytes,
                  std::vector<unsigned char>& recv, std::vector<PathRun>& recv_runs, bool reply) override {
    if (comm_.native_handle() != MPI_COMM_NULL)
      return native(send, send_runs, elem_bytes, recv, recv_runs, reply);
    const auto* p = static_cast<const unsigned char*>(send);
    pieces_.clear();
    for (const PathRun& r : send_runs) {
      pieces_.push_back({r.peer, p, size_t(r.count) * elem_bytes});
      p += size_t(r.count) * elem_bytes;
    }
    CRITPATH_FORWARD_IF_ERROR(comm_.exchange(pieces_, parcels_));
    size_t total = 0;
    for (const Comm::Parcel& in : parcels_) total += in.bytes.size();
    recv.resize(total);
    recv_runs.clear();
    size_t at = 0;
    for (const Comm::Parcel& in : parcels_) {
      if (in.bytes.size() % elem_bytes != 0 || in.bytes.size() / elem_bytes > UINT32_MAX)
        return Status::kMpiError;  // a partial element: not this walk's
      std::memcpy(recv.data() + at, in.bytes.data(), in.bytes.size());
      at += in.bytes.size();
      recv_runs.push_back({int32_t(in.peer), uint32_t(in.bytes.size() / elem_bytes)});
    }
    return Status::kOk;
  }
  Status allgather(const void* send, uint32_t count, size_t elem_bytes,
                   std::vector<unsigned char>& all) override {
    return comm_.allgatherv(send, int(count), elem_bytes, all);
  }
  Status allreduce_sum(uint64_t* v, int n) override { return comm_.allreduce(v, n, MPI_UINT64_T, MPI_SUM); }
  Status allreduce_min(double* v, int n) override { return comm_.allreduce(v, n, MPI_DOUBLE, MPI_MIN); }

 private:
  // One rank per process: MPI_Alltoallv straight from and into the walk's buffers (counts per
  // rank, as MPI's own; a reply's counts are the previous round's, not exchanged again).
  Status native(const void* send, const std::vector<PathRun>& send_runs, size_t elem_bytes,
                std::vector<unsigned char>& recv, std::vector<PathRun>& recv_runs, bool reply) {
    const size_t P = size_t(comm_.size());
    counts_.assign(P, 0);
    for (const PathRun& r : send_runs) counts_[size_t(r.peer)] = int(r.count);
    if (reply) {
      recv_counts_.assign(P, 0);
      for (const PathRun& r : sent_) recv_counts_[size_t(r.peer)] = int(r.count);
    }
    CRITPATH_FORWARD_IF_ERROR(comm_.alltoallv(send, counts_, elem_bytes, recv, recv_counts_, reply));
    recv_runs.clear();
    for (size_t s = 0; s < P; ++s)
      if (recv_counts_[s] > 0) recv_runs.push_back({int32_t(s), uint32_t(recv_counts_[s])});
    sent_ = send_runs;
    return Status::kOk;
  }

  const Comm& comm_;
  std::vector<Comm::Piece> pieces_;
  std::vector<Comm::Parcel> parcels_;
  std::vector<int> counts_, recv_counts_;
  std::vector<PathRun> sent_;  // the previous round's runs (a reply's receive counts)
};

// Gather method: rank 0 walks every rank's hop records and sends each rank its segments.
Status walk_gathered(const std::vector<HopRec>& mine, const PathStart& start, const Comm& comm, int me, int P,
                     PathWalkResult& out) {
  out.method = PathWalkMethod::kGather;
  std::vector<HopRec> all;
  std::vector<int> counts, displs;  // in hop records
  CRITPATH_FORWARD_IF_ERROR(gather_to_root(mine.data(), int(mine.size()), comm, all, counts, displs));
  out.rounds += 2;
  out.bytes_sent += mine.size() * sizeof(HopRec);
  std::vector<std::vector<PathSegment>> per_rank;
  double info[2] = {0, 0};  // hops, partial
  if (me == 0) {
    std::vector<const HopRec*> recs(static_cast<size_t>(P));
    std::vector<size_t> ns(static_cast<size_t>(P));
    for (int r = 0; r < P; ++r) {
      recs[size_t(r)] = all.data() + displs[size_t(r)];
      ns[size_t(r)] = size_t(counts[size_t(r)]);
    }
    uint64_t hops = 0;
    bool partial = false;
    per_rank = walk_serial(recs, ns, start, hops, partial);
    info[0] = double(hops);
    info[1] = partial ? 1.0 : 0.0;
  }
  CRITPATH_FORWARD_IF_ERROR(comm.bcast(info, sizeof info, 0));
  out.hops = uint64_t(info[0]);
  out.partial = info[1] != 0;
  // Each rank's segments, ascending: (begin, end) pairs.
  std::vector<double> flat;
  std::vector<int> scounts(per_rank.size()), sdispls(per_rank.size());
  for (size_t r = 0; r < per_rank.size(); ++r) {
    sdispls[r] = int(flat.size());
    for (const PathSegment& s : per_rank[r]) {
      flat.push_back(s.begin);
      flat.push_back(s.end);
    }
    scounts[r] = int(flat.size()) - sdispls[r];
  }
  std::vector<unsigned char> seg_bytes;
  CRITPATH_FORWARD_IF_ERROR(comm.scatterv(flat.data(), scounts, sizeof(double), 0, seg_bytes));
  std::vector<double> segs(seg_bytes.size() / sizeof(double));
  if (!segs.empty()) std::memcpy(segs.data(), seg_bytes.data(), segs.size() * sizeof(double));
  out.rounds += 3;
  if (me == 0) out.bytes_sent += flat.size() * sizeof(double);
  for (size_t i = 0; i + 1 < segs.size(); i += 2) out.segments.push_back({segs[i], segs[i + 1]});
  return Status::kOk;
}

}  // namespace

Status walk_path(const std::vector<HopRec>& mine, const PathStart& start, const Comm& comm,
                 PathWalkMethod method, PathWalkResult& out) {
  const int me = comm.rank(), P = comm.size();
  out = PathWalkResult{};
  // A cause on this rank itself or outside comm is no hop: the path stays, through the wait.
  std::vector<HopRec> kept;
  const bool drop = std::any_of(mine.begin(), mine.end(), [&](const HopRec& h) {
    return uint32_t(h.cause_rank) >= uint32_t(P) || h.cause_rank == me;  // negative: above P
  });
  if (drop)
    std::copy_if(mine.begin(), mine.end(), std::back_inserter(kept), [&](const HopRec& h) {
      return h.cause_rank >= 0 && h.cause_rank < P && h.cause_rank != me;
    });
  const std::vector<HopRec>& recs = drop ? kept : mine;
  Status s = Status::kOk;
  if (method == PathWalkMethod::kGather) {
    s = walk_gathered(recs, start, comm, me, P, out);
  } else {
    CommPathExchange ex(comm);
    s = walk_jump(recs, start, ex, out);
  }
  return s;
}

}  // namespace critpath::analyzer::engine
