// critpath — analyzer/engine/path_walk.cpp: the critical-path walk, sequential (gather) and by
// pointer jumping (see path_walk.h).
#include "analyzer/engine/path_walk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#include "analyzer/engine/gather.h"

namespace critpath::analyzer::engine {

size_t latest_before(const HopRec* h, size_t n, double t) {
  const HopRec* it = std::lower_bound(h, h + n, t, [](const HopRec& r, double v) { return r.enter < v; });
  return it == h ? kNoRecord : size_t(it - h) - 1;
}

Arrival arrive(const HopRec* h, size_t n, double t) {
  Arrival a;
  const size_t i = latest_before(h, n, t);
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

std::vector<std::vector<PathSegment>> walk_serial(const std::vector<const HopRec*>& recs,
                                                  const std::vector<size_t>& counts,
                                                  const PathStart& start, uint64_t& hops,
                                                  bool& partial) {
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

// A record's global id: its rank in the top 24 bits, its local index below.
constexpr int kIdxBits = 40;
constexpr uint64_t kIdxMask = (uint64_t(1) << kIdxBits) - 1;
constexpr uint64_t kEnd = UINT64_MAX;  // J_k(x) beyond the path's beginning
inline uint64_t gid(int rank, size_t i) { return (uint64_t(rank) << kIdxBits) | uint64_t(i); }
inline int owner_of(uint64_t g) { return int(g >> kIdxBits); }
inline size_t index_of(uint64_t g) { return size_t(g & kIdxMask); }

// Step 1: "the path arrives on you at t" (the start's query carries is_start).
struct Query {
  double t = 0;
  uint32_t is_start = 0;
  uint32_t pad = 0;
};
struct Reply {
  int32_t kind = Arrival::kBegan;
  int32_t next_rank = -1;
  uint64_t id = kEnd;  // kFound
  double time = 0;     // kFound: the segment's begin; kPass: the next arrival time
};
static_assert(sizeof(Query) == 16 && sizeof(Reply) == 24, "wire sizes");

// Groups items by destination rank: order[] lists item positions destination by destination.
struct Buckets {
  std::vector<int> counts, offsets;
  void reset(int P) {
    counts.assign(size_t(P), 0);
    offsets.assign(size_t(P), 0);
  }
  void finish() {
    int o = 0;
    for (size_t d = 0; d < counts.size(); ++d) {
      offsets[d] = o;
      o += counts[d];
    }
  }
};

template <typename T>
const T* as(const std::vector<unsigned char>& v) {
  return reinterpret_cast<const T*>(v.data());
}

}  // namespace

Status walk_jump(const std::vector<HopRec>& mine, const PathStart& start, PathExchange& ex,
                 PathWalkResult& out) {
  const int me = ex.rank(), P = ex.size();
  const size_t n = mine.size();
  out = PathWalkResult{};
  out.method = PathWalkMethod::kJump;
  if (n > kIdxMask || P >= (1 << (64 - kIdxBits)) - 1) return Status::kInvalidArgument;

  // Per item (records 0..n-1, the start n): the segment its arrival yields, and its successor.
  const size_t items = n + 1;
  const bool have_start = me == start.rank;
  std::vector<int32_t> seg_rank(items, -1);
  std::vector<double> seg_begin(items, 0), seg_end(items, 0);
  std::vector<uint32_t> passes(items, 0);
  std::vector<uint8_t> broken(items, 0);
  std::vector<uint8_t> ended(items, 0);  // its successor is the path's beginning (J_0 = end)
  std::vector<std::vector<uint64_t>> J(1, std::vector<uint64_t>(n, kEnd));
  std::vector<uint8_t> marked(n, 0);
  std::vector<uint32_t> marked_list;

  std::vector<unsigned char> recv;
  std::vector<int> recv_counts;
  Buckets bk;
  auto a2a = [&](const void* send, const std::vector<int>& counts, size_t elem, bool known = false) {
    ++out.rounds;
    for (int c : counts) out.bytes_sent += uint64_t(c) * elem;
    return ex.alltoallv(send, counts, elem, recv, recv_counts, known);
  };
  auto asum = [&](uint64_t* v, int k) {
    ++out.rounds;
    return ex.allreduce_sum(v, k);
  };
  auto amin = [&](double* v, int k) {
    ++out.rounds;
    return ex.allreduce_min(v, k);
  };

  // --- 1. Successors: every record (and the start) arrives on its cause's rank.
  struct Pending {
    uint32_t item;
    int32_t q;
    double t;
  };
  std::vector<Pending> pending;
  pending.reserve(items);
  for (size_t i = 0; i < n; ++i) {
    const HopRec& r = mine[i];
    seg_rank[i] = r.cause_rank;
    seg_end[i] = next_time(r);
    if (r.cause_rank < 0 || r.cause_rank >= P) {
      broken[i] = ended[i] = 1;  // hop_records() never makes one
      seg_rank[i] = me;
      seg_begin[i] = seg_end[i] = start.first;
      continue;
    }
    pending.push_back({uint32_t(i), r.cause_rank, next_time(r)});
  }
  if (have_start) pending.push_back({uint32_t(n), int32_t(me), start.time});
  uint64_t N = 0;  // hop records of all ranks
  {
    std::vector<Query> q;
    std::vector<Reply> rep;
    std::vector<uint32_t> order;  // position in pending, destination by destination
    for (int round = 0;; ++round) {
      bk.reset(P);
      for (const Pending& p : pending) ++bk.counts[size_t(p.q)];
      bk.finish();
      q.resize(pending.size());
      order.resize(pending.size());
      {
        std::vector<int> fill = bk.offsets;
        for (size_t k = 0; k < pending.size(); ++k) {
          const int pos = fill[size_t(pending[k].q)]++;
          q[size_t(pos)] = {pending[k].t, pending[k].item == n ? 1u : 0u, 0};
          order[size_t(pos)] = uint32_t(k);
        }
      }
      CRITPATH_FORWARD_IF_ERROR(a2a(q.data(), bk.counts, sizeof(Query)));
      const Query* in = as<Query>(recv);
      size_t nin = 0;
      for (int c : recv_counts) nin += size_t(c);
      rep.resize(nin);
      for (size_t k = 0; k < nin; ++k) {
        const Arrival a = arrive(mine.data(), n, in[k].t);
        Reply& r = rep[k];
        r = Reply{};
        r.kind = a.kind;
        if (a.kind == Arrival::kFound) {
          r.id = gid(me, a.index);
          r.time = a.begin;
          if (in[k].is_start && !marked[a.index]) {  // the path's first record
            marked[a.index] = 1;
            marked_list.push_back(uint32_t(a.index));
          }
        } else if (a.kind == Arrival::kPass) {
          r.next_rank = a.next_rank;
          r.time = a.next_time;
        }
      }
      std::vector<int> counts_back = recv_counts;
      recv_counts = bk.counts;  // the replies come back as the queries went
      CRITPATH_FORWARD_IF_ERROR(a2a(rep.data(), counts_back, sizeof(Reply), true));
      const Reply* back = as<Reply>(recv);
      std::vector<Pending> still;
      for (size_t pos = 0; pos < order.size(); ++pos) {
        Pending p = pending[order[pos]];
        const Reply& r = back[pos];
        const size_t it = p.item;
        seg_rank[it] = p.q;
        seg_end[it] = p.t;
        if (r.kind == Arrival::kFound) {
          seg_begin[it] = r.time;
          if (it < n) J[0][it] = r.id;
        } else if (r.kind == Arrival::kPass && r.next_rank >= 0 && r.next_rank < P) {
          ++passes[it];
          p.q = r.next_rank;
          p.t = r.time;
          still.push_back(p);
        } else {  // the path began on p.q (or an invalid rank: broken)
          seg_begin[it] = start.first;
          ended[it] = 1;
          if (r.kind == Arrival::kPass) broken[it] = 1;
        }
      }
      pending.swap(still);
      if (round + 1 >= kPassRounds) {  // passed on and on: a cycle of inconsistent waits
        for (const Pending& p : pending) {
          broken[p.item] = ended[p.item] = 1;
          seg_rank[p.item] = p.q;
          seg_end[p.item] = p.t;
          seg_begin[p.item] = start.first;
        }
        pending.clear();
      }
      uint64_t red[2] = {pending.size(), round == 0 ? uint64_t(n) : 0};
      CRITPATH_FORWARD_IF_ERROR(asum(red, 2));
      if (round == 0) N = red[1];
      if (red[0] == 0) break;
    }
  }

  // --- 2. Pointer doubling until every chain has ended (or K_max levels: a cycle).
  uint32_t K_max = 0;
  while (K_max < 63 && (uint64_t(1) << K_max) < N + 2) ++K_max;
  auto active_count = [&](const std::vector<uint64_t>& j) {
    uint64_t a = 0;
    for (uint64_t y : j) a += y != kEnd;
    return a;
  };
  uint64_t active = active_count(J[0]);
  CRITPATH_FORWARD_IF_ERROR(asum(&active, 1));
  uint32_t L = 0;  // levels the marking uses: J_0 .. J_{L-1}; every chain has <= 2^L records
  {
    std::vector<uint64_t> req;
    std::vector<uint32_t> origin;
    std::vector<uint64_t> ans;
    while (active > 0 && L < K_max) {
      ++L;
      if (L == K_max) break;  // 2^K_max > N: any longer chain is a cycle
      const std::vector<uint64_t>& Jk = J.back();
      bk.reset(P);
      for (uint64_t y : Jk)
        if (y != kEnd) ++bk.counts[size_t(owner_of(y))];
      bk.finish();
      size_t nreq = 0;
      for (int c : bk.counts) nreq += size_t(c);
      req.resize(nreq);
      origin.resize(nreq);
      {
        std::vector<int> fill = bk.offsets;
        for (size_t x = 0; x < n; ++x) {
          const uint64_t y = Jk[x];
          if (y == kEnd) continue;
          const int pos = fill[size_t(owner_of(y))]++;
          req[size_t(pos)] = index_of(y);
          origin[size_t(pos)] = uint32_t(x);
        }
      }
      CRITPATH_FORWARD_IF_ERROR(a2a(req.data(), bk.counts, sizeof(uint64_t)));
      const uint64_t* in = as<uint64_t>(recv);
      size_t nin = 0;
      for (int c : recv_counts) nin += size_t(c);
      ans.resize(nin);
      for (size_t k = 0; k < nin; ++k) ans[k] = in[k] < n ? Jk[in[k]] : kEnd;
      std::vector<int> counts_back = recv_counts;
      recv_counts = bk.counts;
      CRITPATH_FORWARD_IF_ERROR(a2a(ans.data(), counts_back, sizeof(uint64_t), true));
      const uint64_t* back = as<uint64_t>(recv);
      std::vector<uint64_t> next(n, kEnd);
      for (size_t pos = 0; pos < nreq; ++pos) next[origin[pos]] = back[pos];
      J.push_back(std::move(next));
      active = active_count(J.back());
      CRITPATH_FORWARD_IF_ERROR(asum(&active, 1));
    }
  }
  out.levels = L;

  // --- 3. Marking, top-down: x at level k+1 marks J_k(x).
  {
    std::vector<uint64_t> req;
    for (uint32_t k = L; k-- > 0;) {
      const std::vector<uint64_t>& Jk = J[k];
      bk.reset(P);
      for (uint32_t x : marked_list)
        if (Jk[x] != kEnd) ++bk.counts[size_t(owner_of(Jk[x]))];
      bk.finish();
      size_t nreq = 0;
      for (int c : bk.counts) nreq += size_t(c);
      req.resize(nreq);
      std::vector<int> fill = bk.offsets;
      for (uint32_t x : marked_list)
        if (Jk[x] != kEnd) req[size_t(fill[size_t(owner_of(Jk[x]))]++)] = index_of(Jk[x]);
      CRITPATH_FORWARD_IF_ERROR(a2a(req.data(), bk.counts, sizeof(uint64_t)));
      const uint64_t* in = as<uint64_t>(recv);
      size_t nin = 0;
      for (int c : recv_counts) nin += size_t(c);
      for (size_t i = 0; i < nin; ++i)
        if (in[i] < n && !marked[in[i]]) {
          marked[in[i]] = 1;
          marked_list.push_back(uint32_t(in[i]));
        }
    }
  }
  J.clear();
  J.shrink_to_fit();

  // --- 4. Segments to their ranks; hops, ended chains, broken ends on the path.
  uint64_t red[3] = {0, 0, 0};  // hops, chains that ended (the path began), broken ends
  std::vector<PathSegment> segs;
  std::vector<int32_t> dest;
  auto add = [&](size_t it) {
    if (ended[it]) red[broken[it] ? 2 : 1] += 1;
    segs.push_back({seg_begin[it], std::max(seg_end[it], seg_begin[it])});
    dest.push_back(seg_rank[it]);
  };
  for (uint32_t x : marked_list) {
    red[0] += 1 + passes[x];  // the record's own hop, and the arrivals passed on after it
    add(x);
  }
  if (have_start) {
    red[0] += passes[n];  // the start is no hop, arrivals passed on from it are
    add(n);
  }
  {
    bk.reset(P);
    for (int32_t d : dest) ++bk.counts[size_t(d)];
    bk.finish();
    std::vector<PathSegment> send(segs.size());
    std::vector<int> fill = bk.offsets;
    for (size_t i = 0; i < segs.size(); ++i) send[size_t(fill[size_t(dest[i])]++)] = segs[i];
    CRITPATH_FORWARD_IF_ERROR(a2a(send.data(), bk.counts, sizeof(PathSegment)));
    const PathSegment* in = as<PathSegment>(recv);
    size_t nin = 0;
    for (int c : recv_counts) nin += size_t(c);
    out.segments.assign(in, in + nin);
  }
  CRITPATH_FORWARD_IF_ERROR(asum(red, 3));
  out.hops = red[0];
  out.partial = red[2] > 0 || red[1] == 0;
  if (red[1] == 0 && red[2] == 0) {
    // A cycle (inconsistent trace): the rank holding the path's earliest point keeps the rest
    // back to `first`, as the sequential walk's cut does.
    double lo = std::numeric_limits<double>::infinity();
    for (const PathSegment& s : out.segments) lo = std::min<double>(lo, s.begin);
    double v[1] = {lo};
    CRITPATH_FORWARD_IF_ERROR(amin(v, 1));
    double who[1] = {lo == v[0] && std::isfinite(lo) ? double(me) : std::numeric_limits<double>::infinity()};
    CRITPATH_FORWARD_IF_ERROR(amin(who, 1));
    if (who[0] == double(me) && v[0] > start.first) out.segments.push_back({start.first, v[0]});
  }
  out.segments.erase(std::remove_if(out.segments.begin(), out.segments.end(),
                                    [](const PathSegment& s) { return !(s.end > s.begin); }),
                     out.segments.end());
  std::sort(out.segments.begin(), out.segments.end(),
            [](const PathSegment& a, const PathSegment& b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
  return Status::kOk;
}

// ---- MPI ---------------------------------------------------------------------------------

namespace {

class CommPathExchange final : public PathExchange {
 public:
  explicit CommPathExchange(const Comm& comm) : comm_(comm) {}
  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }

  Status alltoallv(const void* send, const std::vector<int>& send_counts, size_t elem_bytes,
                   std::vector<unsigned char>& recv, std::vector<int>& recv_counts,
                   bool recv_counts_known) override {
    return comm_.alltoallv(send, send_counts, elem_bytes, recv, recv_counts, recv_counts_known);
  }
  Status allreduce_sum(uint64_t* v, int n) override {
    return comm_.allreduce(v, n, MPI_UINT64_T, MPI_SUM);
  }
  Status allreduce_min(double* v, int n) override {
    return comm_.allreduce(v, n, MPI_DOUBLE, MPI_MIN);
  }

 private:
  const Comm& comm_;
};

// Gather method: rank 0 walks every rank's hop records and sends each rank its segments.
Status walk_gathered(const std::vector<HopRec>& mine, const PathStart& start, const Comm& comm, int me,
                     int P, PathWalkResult& out) {
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
    return h.cause_rank < 0 || h.cause_rank >= P || h.cause_rank == me;
  });
  if (drop)
    std::copy_if(mine.begin(), mine.end(), std::back_inserter(kept), [&](const HopRec& h) {
      return h.cause_rank >= 0 && h.cause_rank < P && h.cause_rank != me;
    });
  const std::vector<HopRec>& recs = drop ? kept : mine;
  uint64_t n_all = recs.size();
  CRITPATH_FORWARD_IF_ERROR(comm.allreduce(&n_all, 1, MPI_UINT64_T, MPI_SUM));
  const bool gather = method == PathWalkMethod::kGather ||
                      (method == PathWalkMethod::kAuto && n_all <= kPathGatherRecords);
  Status s = Status::kOk;
  if (gather) {
    s = walk_gathered(recs, start, comm, me, P, out);
  } else {
    CommPathExchange ex(comm);
    s = walk_jump(recs, start, ex, out);
  }
  ++out.rounds;
  return s;
}

}  // namespace critpath::analyzer::engine
