// critpath — analyzer/passes/critical_path/critical_path_window.cpp: one window of the
// critical-path analysis (critical_path.h critical_path_window): the walk, the clip, the busy
// intervals and the parallelism histogram, added to the rank's CpLocal.
#include <algorithm>
#include <cmath>

#include "analyzer/passes/critical_path/critical_path.h"
#include "libtrace/clock/clock.h"

namespace critpath::analyzer::passes {
namespace {

using engine::kNoCall;

// Records a failed group operation in `status`; true when `rc` is kOk.
bool mpi_ok(Status rc, Status& status) {
  if (rc != Status::kOk) status = rc;
  return rc == Status::kOk;
}

// Fractions of [t0, t1] during which exactly k ranks work, from all ranks' busy intervals.
std::vector<double> sweep_histogram(const std::vector<double>& iv, int P, double t0, double t1) {
  std::vector<std::pair<double, int>> ev;
  ev.reserve(iv.size());
  for (size_t i = 0; i + 1 < iv.size(); i += 2) {
    const double a = std::max(iv[i], t0), z = std::min(iv[i + 1], t1);
    if (!(z > a)) continue;
    ev.push_back({a, +1});
    ev.push_back({z, -1});
  }
  std::sort(ev.begin(), ev.end());
  std::vector<double> h(size_t(P) + 1, 0.0);
  int k = 0;
  double at = t0;
  for (const auto& [t, d] : ev) {
    if (t > at) h[size_t(std::clamp(k, 0, P))] += t - at;
    at = std::max(at, t);
    k += d;
  }
  if (t1 > at) h[size_t(std::clamp(k, 0, P))] += t1 - at;
  const double span = t1 - t0;
  if (span > 0)
    for (double& v : h) v /= span;
  return h;
}

// Adds each busy interval's share of every bin of [r0, r1] (kBins of them) it overlaps to
// `bins`. Out of line: inlined into critical_path_window, its values shared the registers with
// the whole function's (half the loop's instructions were loads and stores of them).
[[gnu::noinline]] void bin_busy(const std::vector<std::pair<double, double>>& busy, double r0, double r1,
                                double* bins) {
  const double width = (r1 - r0) / kBins;
  if (!(width > 0)) return;
  for (const auto& [a0, z0] : busy) {
    const double a = std::max(a0, r0), z = std::min(z0, r1);
    if (!(z > a)) continue;
    int i = std::clamp(int((a - r0) / width), 0, kBins - 1);
    for (; i < kBins; ++i) {
      const double blo = r0 + i * width, bhi = blo + width;
      if (blo >= z) break;
      bins[size_t(i)] += (std::min(z, bhi) - std::max(a, blo)) / width;
    }
  }
}

// Step 1a, first window: the run bounds, from MPI_Init and MPI_Finalize.
Status run_bounds(const CpWindowInput& in, const engine::Group& group, CpLocal& acc) {
  const RunInfo& run = *in.run;
  const engine::Timeline& t = *in.timeline;
  const int me = group.rank();
  Status status = Status::kOk;
  acc.my_init = in.to_global(run.init_enter_ticks);
  acc.my_fin = in.to_global(run.finalize_enter_ticks);
  const double my_init_exit = t.init_call != kNoCall ? t.calls[t.init_call].exit : acc.my_init;
  // One round: the first entry and exit are maxima of their negatives (their ranks unused).
  std::pair<double, int> loc[4] = {
      {acc.my_fin, me}, {acc.my_init, me}, {-acc.my_init, me}, {-my_init_exit, me}};
  mpi_ok(group.allreduce_maxloc(loc, 4), status);
  RunBounds& b = acc.b;
  b.last_finalize_enter = loc[0].first;
  b.last_finalize_rank = loc[0].second;
  b.last_init_enter = loc[1].first;
  b.last_init_rank = loc[1].second;
  b.first_init_enter = -loc[2].first;
  b.first_init_exit = -loc[3].first;
  // Parallelism covers the application phase: from the first MPI_Init exit (before it, all
  // ranks run MPI's start-up together) to the last MPI_Finalize entry.
  acc.t0 = std::max(b.first_init_exit, b.first_init_enter);
  acc.t1 = b.last_finalize_enter;
  acc.prev_cut_time = b.first_init_enter;
  acc.prev_exit = acc.my_init;
  return status;
}

// Step 1b: the walk, from the window's end (the run's: the last MPI_Finalize entry; a cut's:
// its last arrival) back to its beginning (the first MPI_Init entry; the previous cut's last
// arrival). Its figures are added to `acc.walk`; its segments are left in `walk`.
// `nrec`: all ranks' wait records + 1 (the gather method's bound; 0 for the others).
Status walk_window(const CpWindowInput& in, const engine::Group& group, const CpRecords& records,
                   uint64_t nrec, CpLocal& acc, CpWalk& walk) {
  const int me = group.rank(), P = group.size();
  Status status = Status::kOk;
  RunBounds wb = acc.b;
  wb.max_hops = nrec + uint64_t(P) + 2;
  wb.first_init_enter = acc.prev_cut_time;
  if (!in.last) {
    wb.last_finalize_rank = in.cut_rank;
    wb.last_finalize_enter = in.cut_time;
    if (in.cut_rank < 0 || in.cut_rank >= P) {  // the cut's instance was not synchronized
      wb.last_finalize_rank = 0;                // (not on a consistent trace): no path here
      wb.last_finalize_enter = acc.prev_cut_time;
      acc.walk.partial = true;
    }
  }
  const uint64_t t_walk = clock::monotonic_ns();
  const Status ws = walk_critical_path(*in.timeline, records, wb, group, in.walk_mode, walk);
  acc.walk_s += double(clock::monotonic_ns() - t_walk) * 1e-9;
  if (ws != Status::kOk) status = ws;
  acc.walk.hops += walk.hops;
  acc.walk.partial = acc.walk.partial || walk.partial;
  acc.walk.gathered = acc.windows == 0 ? walk.gathered : acc.walk.gathered && walk.gathered;
  acc.walk.levels = std::max(acc.walk.levels, walk.levels);
  acc.walk.rounds += walk.rounds;
  acc.walk.bytes_sent += walk.bytes_sent;
  // The whole run's walk hops at C_{k-1} from the rank that owns the path after it to L_{k-1}:
  // here that path began at T_{k-1} on its owner.
  if (!in.first && me != acc.prev_cut_rank)
    for (const CpSegment& s : walk.segments)
      if (s.begin == wb.first_init_enter) {
        ++acc.hop_adjust;
        break;
      }
  return status;
}

// Step 2: the clip: CP time per local node (from the gap profile). Before the window's first
// event: MPI_Init's node, or the cut's.
void clip_window(const CpWindowInput& in, CpWalk& walk, CpLocal& acc) {
  const engine::Timeline& t = *in.timeline;
  const int32_t init_node = in.first ? (t.init_call != kNoCall ? t.calls[t.init_call].node : 0)
                                     : acc.prev_node;
  const std::vector<double> cp_node = clip_by_gaps(t, walk.segments, in.nodes, init_node);
  if (acc.cp_node.size() < cp_node.size()) acc.cp_node.resize(cp_node.size(), 0.0);
  for (size_t n = 0; n < cp_node.size(); ++n) acc.cp_node[n] += cp_node[n];
  if (acc.wait_node.size() < in.nodes) acc.wait_node.resize(in.nodes, 0.0);  // busy_window adds to it
  for (const CpSegment& s : walk.segments) acc.seg_len += s.end - s.begin;
  acc.segments += walk.segments.size();
  if (in.first && in.last) {
    acc.walk.segments = std::move(walk.segments);
  } else {  // window by window: the longest ones only (the report keeps no more)
    acc.walk.segments.insert(acc.walk.segments.end(), walk.segments.begin(), walk.segments.end());
    if (acc.walk.segments.size() > kMaxSegments) {
      std::nth_element(
          acc.walk.segments.begin(), acc.walk.segments.begin() + long(kMaxSegments), acc.walk.segments.end(),
          [](const CpSegment& x, const CpSegment& y) { return x.end - x.begin > y.end - y.begin; });
      acc.walk.segments.resize(kMaxSegments);
    }
  }
}

// The window's share [r0, r1] of the application phase, and its non-waiting work in it.
struct WindowBusy {
  double r0 = 0, r1 = 0;
  std::vector<std::pair<double, double>> busy;
};

// Step 3: busy intervals: the rank's span in this window, [its exit of C_{k-1} (or its
// MPI_Init entry) = `lo`, its exit of C_k (or its MPI_Finalize entry) = `hi`], minus its waits;
// and the waiting time per node (the walk's records), in the same pass.
WindowBusy busy_window(const CpWindowInput& in, int P, const CpRecords& records, double lo, double hi,
                       CpLocal& acc) {
  const engine::Timeline& t = *in.timeline;
  WindowBusy w;
  const double t0 = acc.t0;
  std::vector<std::pair<double, double>>& busy = w.busy;
  busy = std::move(acc.carry);  // past T_{k-1}
  acc.carry.clear();
  // Kept in the intervals' own vector when nothing was carried (the whole run: 16 B per
  // interval, no second array), else appended.
  std::vector<std::pair<double, double>> iv = busy_intervals(t, records, lo, hi, &acc.wait_node);
  const bool in_place = busy.empty();
  if (!in_place) busy.reserve(busy.size() + iv.size());
  // The sums in locals (as acc's fields, doubles like the intervals, GCC stored them back per
  // interval) and the intervals through a pointer; the same sums in the same order.
  double busy_span = acc.busy_span, busy_app = acc.busy;
  std::pair<double, double>* const v = iv.data();
  const size_t n = iv.size();
  size_t kept = 0;
  // Each interval's sums, and whether it (its part past t0) is kept. In place, the loop has no
  // call in it (a push_back's growth made GCC keep its values in memory).
  auto take = [&](size_t i) __attribute__((always_inline)) {
    const auto [a, z] = v[i];
    busy_span += z - a;
    if (!(z > t0)) return false;
    busy_app += z - std::max(a, t0);
    v[i] = {std::max(a, t0), z};
    return true;
  };
  if (in_place) {
    for (size_t i = 0; i < n; ++i)
      if (take(i)) v[kept++] = v[i];
  } else {
    for (size_t i = 0; i < n; ++i)
      if (take(i)) busy.push_back(v[i]);
  }
  acc.busy_span = busy_span;
  acc.busy = busy_app;
  if (in_place) {
    iv.resize(kept);
    busy = std::move(iv);
  }
  // The window's share of the application phase is [T_{k-1}, T_k]: what lies past T_k (a
  // rank's time in C_k after the last arrival) belongs to the next window's.
  const bool cut_ok = in.last || (in.cut_rank >= 0 && in.cut_rank < P);
  w.r0 = in.first ? t0 : acc.prev_cut_time;
  w.r1 = in.last ? acc.t1 : cut_ok ? in.cut_time : w.r0;
  const double r1 = w.r1;
  if (!in.last) {
    std::vector<std::pair<double, double>> kept;
    for (const auto& [a, z] : busy) {
      if (z > r1) {
        acc.carry.push_back({std::max(a, r1), z});
        if (r1 > a) kept.push_back({a, r1});
      } else {
        kept.push_back({a, z});
      }
    }
    busy = std::move(kept);
  }

  return w;
}

// Step 4: parallelism over [r0, r1]: busy intervals of all ranks, merged exactly when few,
// else binned; rank 0 adds the window's histogram to `acc`.
Status parallelism_window(const CpWindowInput& in, const engine::Group& group, const WindowBusy& w,
                          CpLocal& acc) {
  const int me = group.rank(), P = group.size();
  const double r0 = w.r0, r1 = w.r1;
  const std::vector<std::pair<double, double>>& busy = w.busy;
  Status status = Status::kOk;
  uint64_t n_busy_all = busy.size();
  mpi_ok(group.allreduce(&n_busy_all, 1, engine::ReduceOp::kSum), status);
  const bool exact = n_busy_all <= kExactIntervals;
  std::vector<double> histogram;  // rank 0: fraction of [r0, r1] per k = 0..P
  if (exact) {
    std::vector<double> mine, all;
    std::vector<int> counts, displs;
    for (const auto& [a, z] : busy) {
      mine.push_back(a);
      mine.push_back(z);
    }
    if (group.gather_to_root(mine.data(), mine.size(), all, counts, displs) != Status::kOk)
      status = Status::kMpiError;
    if (me == 0) histogram = sweep_histogram(all, P, r0, r1);
  } else {
    // Each rank's busy fraction per bin; summed, a bin's total s is split between
    // floor(s) and floor(s)+1 ranks so that the mean stays exact.
    std::vector<double> bins(kBins, 0.0), bins_sum;
    bin_busy(busy, r0, r1, bins.data());
    mpi_ok(group.reduce_to_root(bins.data(), bins.size(), engine::ReduceOp::kSum, bins_sum), status);
    if (me == 0) {
      histogram.assign(size_t(P) + 1, 0.0);
      for (double s : bins_sum) {
        s = std::clamp(s, 0.0, double(P));
        const int k = std::min(int(s), P);
        const double f = s - k;
        histogram[size_t(k)] += (1 - f) / kBins;
        if (k < P) histogram[size_t(k) + 1] += f / kBins;
      }
    }
  }
  acc.hist_exact = acc.hist_exact && exact;
  if (me == 0) {
    if (in.first && in.last) {
      acc.histogram = std::move(histogram);
      acc.hist_len = r1 - r0;
    } else if (r1 > r0 && histogram.size() == size_t(P) + 1) {
      acc.histogram.resize(size_t(P) + 1, 0.0);
      for (size_t k = 0; k < histogram.size(); ++k) acc.histogram[k] += histogram[k] * (r1 - r0);
      acc.hist_len += r1 - r0;
    }
  }

  return status;
}

}  // namespace

Status critical_path_window(const CpWindowInput& in, const engine::Group& group, CpLocal& acc) {
  const uint64_t t_begin = clock::monotonic_ns();
  const engine::Timeline& t = *in.timeline;
  const int P = group.size();
  // --- 1. Run bounds (in the first window) and the walk.
  Status status = in.first ? run_bounds(in, group, acc) : Status::kOk;
  // The walk's hop bound (RunBounds::max_hops) only bounds the gather method's sequential
  // walk: a round for it only there (every rank has the same mode).
  uint64_t nrec = 0;
  if (in.walk_mode == CpWalkMode::kGather) {
    nrec = in.waits->records.size() + 1;
    mpi_ok(group.allreduce(&nrec, 1, engine::ReduceOp::kSum), status);
  }
  if (status != Status::kOk) return status;
  const CpRecords records = cp_records(t, *in.waits, acc.b);
  CpWalk walk;
  mpi_ok(walk_window(in, group, records, nrec, acc, walk), status);
  // --- 2. The clip.
  clip_window(in, walk, acc);
  // --- 3. Busy intervals.
  const double lo = in.first ? acc.my_init : acc.prev_exit;
  const double hi = in.last ? acc.my_fin : (t.calls.empty() ? lo : t.calls.back().exit);
  const WindowBusy w = busy_window(in, P, records, lo, hi, acc);
  // --- 4. Parallelism.
  mpi_ok(parallelism_window(in, group, w, acc), status);

  if (!in.last && in.cut_rank >= 0 && in.cut_rank < P) {
    acc.prev_cut_time = in.cut_time;
    acc.prev_cut_rank = in.cut_rank;
  }
  acc.prev_exit = hi;
  if (!t.calls.empty()) acc.prev_node = t.calls.back().node;
  ++acc.windows;
  acc.analysis_s += double(clock::monotonic_ns() - t_begin) * 1e-9;
  return status;
}

}  // namespace critpath::analyzer::passes
