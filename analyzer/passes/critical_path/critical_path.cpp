// critpath — analyzer/passes/critical_path/critical_path.cpp: the backward walk, the clip, busy intervals.
#include "analyzer/passes/critical_path/critical_path.h"

#include "analyzer/engine/gather.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace critpath::analyzer::passes {
namespace {

using engine::kNoCall;

constexpr int kTokenTag = 7301;  // on the walk's own communicator

enum TokenKind : int32_t { kToken = 1, kDone = 2 };

// The message of one hop, and of the final "done".
struct Token {
  int32_t kind = kToken;
  int32_t partial = 0;  // done: the walk was cut short
  uint64_t hops = 0;    // hops so far (done: in total)
  double time = 0;      // token: where the receiver continues backward (global seconds)
};
static_assert(sizeof(Token) == kCpTokenBytes, "one hop is 24 bytes");

}  // namespace

std::vector<WaitRecord> cp_records(const engine::Timeline& t, const WaitStates& ws,
                                   const RunBounds& b) {
  std::vector<WaitRecord> out = ws.records;
  if (t.init_call == kNoCall) return out;
  const engine::CallRecord& c = t.calls[t.init_call];
  const double end = std::min(b.last_init_enter, c.exit);
  if (!(end > c.enter)) return out;
  auto it = std::lower_bound(out.begin(), out.end(), t.init_call,
                             [](const WaitRecord& r, uint32_t call) { return r.call < call; });
  if (it == out.end() || it->call != t.init_call) {
    WaitRecord r;
    r.call = t.init_call;
    r.wait_end = c.enter;
    r.completion_begin = c.exit;
    it = out.insert(it, r);
  }
  if (end > it->wait_end) {
    it->wait_end = end;
    it->cause_rank = b.last_init_rank;
    it->cause_time = b.last_init_enter;
  }
  it->completion_begin = std::max(it->completion_begin, it->wait_end);
  return out;
}

namespace {

// A waiting call at which the walk may leave a rank (its cause is another rank), compact:
// what the gather mode ships to rank 0.
struct HopRec {
  double enter = 0;
  double wait_end = 0;
  double cause_time = 0;
  int32_t cause_rank = -1;
  int32_t pad = 0;
};
static_assert(sizeof(HopRec) == 32, "hop records are 32 bytes");

std::vector<HopRec> hop_records(const engine::Timeline& t, const std::vector<WaitRecord>& records,
                                int me, int P) {
  std::vector<HopRec> out;
  for (const WaitRecord& r : records) {
    const double enter = t.calls[r.call].enter;
    // Without a known cause elsewhere the path stays on the rank, through the wait.
    if (r.cause_rank < 0 || r.cause_rank >= P || r.cause_rank == me || !(r.wait_end > enter)) continue;
    HopRec h;
    h.enter = enter;
    h.wait_end = r.wait_end;
    h.cause_time = r.cause_time;
    h.cause_rank = r.cause_rank;
    out.push_back(h);
  }
  return out;
}

// One step of the walk: the owner of the path at time T, with its hop records `h` (ascending
// by enter). Appends the owner's segment to `seg` and sets where the path continues.
// Returns false when the path began on this rank (its last segment reaches back to `first`).
bool step(const HopRec* h, size_t n, double T, double first, std::vector<CpSegment>& seg,
          int& next_rank, double& next_time) {
  const HopRec* it = std::lower_bound(h, h + n, T, [](const HopRec& r, double v) { return r.enter < v; });
  if (it == h) {
    if (T > first) seg.push_back({first, T, -1});
    return false;
  }
  const HopRec& r = *(it - 1);
  const double we = std::min(r.wait_end, T);
  if (T > we) seg.push_back({we, T, -1});
  next_rank = r.cause_rank;
  next_time = std::min(r.cause_time, we);  // never later: the segments must not overlap
  return true;
}

// The path stops early (hop bound, failed message): the owner keeps the rest back to `first`.
void cut(double T, double first, std::vector<CpSegment>& seg) {
  if (T > first) seg.push_back({first, T, -1});
}

// Gather mode: rank 0 walks every rank's hop records and sends each rank its segments.
Status walk_gathered(const std::vector<HopRec>& mine, const RunBounds& b, MPI_Comm comm, int me,
                     int P, CpWalk& out) {
  std::vector<HopRec> all;
  std::vector<int> counts, displs;  // in hop records
  CRITPATH_FORWARD_IF_ERROR(engine::gather_to_root(mine.data(), int(mine.size()), comm, all, counts, displs));
  std::vector<std::vector<CpSegment>> per_rank(me == 0 ? size_t(P) : 0);
  double info[2] = {0, 0};  // hops, partial
  if (me == 0) {
    int owner = b.last_finalize_rank;
    double T = b.last_finalize_enter;
    uint64_t hops = 0;
    bool partial = false;
    for (;;) {
      const HopRec* h = all.data() + displs[size_t(owner)];
      const size_t n = size_t(counts[size_t(owner)]);
      int next_rank = -1;
      double next_time = 0;
      if (!step(h, n, T, b.first_init_enter, per_rank[size_t(owner)], next_rank, next_time)) break;
      if (++hops > b.max_hops) {
        cut(std::min(T, next_time), b.first_init_enter, per_rank[size_t(owner)]);
        --hops;
        partial = true;
        break;
      }
      owner = next_rank;
      T = next_time;
    }
    info[0] = double(hops);
    info[1] = partial ? 1.0 : 0.0;
  }
  if (PMPI_Bcast(info, 2, MPI_DOUBLE, 0, comm) != MPI_SUCCESS) return Status::kMpiError;
  out.hops = uint64_t(info[0]);
  out.partial = info[1] != 0;
  // Each rank's segments, ascending: (begin, end) pairs.
  std::vector<double> flat;
  std::vector<int> scounts(counts.size()), sdispls(counts.size());
  for (int r = 0; r < int(per_rank.size()); ++r) {
    sdispls[size_t(r)] = int(flat.size());
    const auto& v = per_rank[size_t(r)];
    for (auto it = v.rbegin(); it != v.rend(); ++it) {
      flat.push_back(it->begin);
      flat.push_back(it->end);
    }
    scounts[size_t(r)] = int(flat.size()) - sdispls[size_t(r)];
  }
  int n_mine = 0;
  if (PMPI_Scatter(scounts.data(), 1, MPI_INT, &n_mine, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
    return Status::kMpiError;
  std::vector<double> segs(static_cast<size_t>(n_mine));
  if (PMPI_Scatterv(flat.data(), scounts.data(), sdispls.data(), MPI_DOUBLE, segs.data(), n_mine,
                    MPI_DOUBLE, 0, comm) != MPI_SUCCESS)
    return Status::kMpiError;
  for (size_t i = 0; i + 1 < segs.size(); i += 2) out.segments.push_back({segs[i], segs[i + 1], -1});
  return Status::kOk;
}

}  // namespace

Status walk_critical_path(const engine::Timeline& t, const std::vector<WaitRecord>& records,
                          const RunBounds& b, MPI_Comm comm, CpWalkMode mode, CpWalk& out) {
  int me = 0, P = 1;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &P);
  out = CpWalk{};
  const std::vector<HopRec> hops = hop_records(t, records, me, P);
  uint64_t n = hops.size(), n_all = 0;
  if (PMPI_Allreduce(&n, &n_all, 1, MPI_UINT64_T, MPI_SUM, comm) != MPI_SUCCESS) return Status::kMpiError;
  out.gathered = mode == CpWalkMode::kGather || (mode == CpWalkMode::kAuto && n_all <= kCpGatherRecords);
  if (out.gathered) return walk_gathered(hops, b, comm, me, P, out);

  // Token mode: the owner steps locally and sends the token on; the others wait for it.
  Status status = Status::kOk;
  std::vector<CpSegment> backward;  // appended in descending time
  auto send_done = [&](uint64_t total, bool partial) {
    Token d;
    d.kind = kDone;
    d.partial = partial ? 1 : 0;
    d.hops = total;
    for (int r = 0; r < P; ++r)
      if (r != me && PMPI_Send(&d, int(sizeof d), MPI_BYTE, r, kTokenTag, comm) != MPI_SUCCESS)
        status = Status::kMpiError;
    out.hops = total;
    out.partial = partial;
  };
  // The owner continues backward from T. Returns true when the walk ended here.
  auto own = [&](double T, uint64_t so_far) -> bool {
    int next_rank = -1;
    double next_time = 0;
    if (!step(hops.data(), hops.size(), T, b.first_init_enter, backward, next_rank, next_time)) {
      send_done(so_far, false);
      return true;
    }
    if (so_far + 1 <= b.max_hops) {  // exceeded only on an inconsistent trace
      Token tok;
      tok.hops = so_far + 1;
      tok.time = next_time;
      if (PMPI_Send(&tok, int(sizeof tok), MPI_BYTE, next_rank, kTokenTag, comm) == MPI_SUCCESS) return false;
      status = Status::kMpiError;  // keep the path here and end it, rather than hang
    }
    cut(std::min(T, next_time), b.first_init_enter, backward);
    send_done(so_far, true);
    return true;
  };

  bool done = me == b.last_finalize_rank ? own(b.last_finalize_enter, 0) : false;
  while (!done) {
    Token tok;
    MPI_Status st;
    if (PMPI_Recv(&tok, int(sizeof tok), MPI_BYTE, MPI_ANY_SOURCE, kTokenTag, comm, &st) != MPI_SUCCESS) {
      status = Status::kMpiError;
      out.partial = true;
      break;
    }
    if (tok.kind == kDone) {
      out.hops = tok.hops;
      out.partial = tok.partial != 0;
      break;
    }
    done = own(tok.time, tok.hops);
  }
  out.segments.assign(backward.rbegin(), backward.rend());
  return status;
}

namespace {

// Books the time between consecutive events of location 0 to the node on top of the stack,
// clipped to the segments; remembers per segment the node with the most time.
class ClipObserver : public ProfileObserver {
 public:
  ClipObserver(const std::function<double(uint64_t)>& to_global, std::vector<CpSegment>& segs,
               std::vector<double>& by_node, int32_t init_node)
      : to_global_(to_global), segs_(segs), by_node_(by_node), init_node_(init_node) {}

  void on_event(const trace::Event& e, int32_t node) override {
    const double t = to_global_(e.time);
    if (started_) {
      add(cur_node_, cur_t_, t);
    } else {
      add(init_node_, -std::numeric_limits<double>::infinity(), t);
      started_ = true;
    }
    cur_node_ = node;
    cur_t_ = t;
  }

  void finish() { close_segment(); }

 private:
  void add(int32_t node, double a, double b) {
    if (!(b > a)) return;
    while (next_ < segs_.size() && segs_[next_].end <= a) ++next_;
    for (size_t j = next_; j < segs_.size() && segs_[j].begin < b; ++j) {
      const double piece = std::min(b, segs_[j].end) - std::max(a, segs_[j].begin);
      if (!(piece > 0) || node < 0 || size_t(node) >= by_node_.size()) continue;
      by_node_[size_t(node)] += piece;
      if (j != open_) {
        close_segment();
        open_ = j;
      }
      acc_[node] += piece;
    }
  }
  void close_segment() {
    if (open_ >= segs_.size()) return;
    double best = -1;
    for (const auto& [n, v] : acc_)
      if (v > best || (v == best && n < segs_[open_].node)) {
        best = v;
        segs_[open_].node = n;
      }
    acc_.clear();
    open_ = SIZE_MAX;
  }

  const std::function<double(uint64_t)>& to_global_;
  std::vector<CpSegment>& segs_;
  std::vector<double>& by_node_;
  int32_t init_node_;
  bool started_ = false;
  int32_t cur_node_ = -1;
  double cur_t_ = 0;
  size_t next_ = 0;
  size_t open_ = SIZE_MAX;
  std::unordered_map<int32_t, double> acc_;
};

}  // namespace

std::vector<double> clip_to_segments(const trace::ChunkStore& store,
                                     const std::function<double(uint64_t)>& to_global,
                                     std::vector<CpSegment>& segments, size_t nodes,
                                     int32_t init_node) {
  std::vector<double> by_node(nodes, 0.0);
  if (segments.empty()) return by_node;
  ClipObserver obs(to_global, segments, by_node, init_node);
  (void)build_profile(store, &obs);  // same trace, same node ids as the first pass
  obs.finish();
  return by_node;
}

std::vector<std::pair<double, double>> busy_intervals(const engine::Timeline& t,
                                                      const std::vector<WaitRecord>& records,
                                                      double init_enter, double finalize_enter) {
  std::vector<std::pair<double, double>> waits;
  for (const WaitRecord& r : records) {
    const engine::CallRecord& c = t.calls[r.call];
    if (r.wait_end > c.enter) waits.push_back({c.enter, r.wait_end});
    if (c.exit > r.completion_begin) waits.push_back({r.completion_begin, c.exit});
  }
  std::sort(waits.begin(), waits.end());
  std::vector<std::pair<double, double>> busy;
  double cur = init_enter;
  for (const auto& [a, z] : waits) {
    const double lo = std::max(a, init_enter), hi = std::min(z, finalize_enter);
    if (!(hi > lo)) continue;
    if (lo > cur) busy.push_back({cur, lo});
    cur = std::max(cur, hi);
  }
  if (finalize_enter > cur) busy.push_back({cur, finalize_enter});
  return busy;
}

}  // namespace critpath::analyzer::passes
