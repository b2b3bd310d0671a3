// critpath — analyzer/passes/wait_states/wait_states_report.cpp
#include "analyzer/passes/wait_states/wait_states_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "analyzer/engine/group.h"
#include "analyzer/engine/metric_store.h"
#include "analyzer/engine/timeline.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer::passes {

using engine::ReducedMetric;
namespace {

// The classes of MPI time, then the parts of mpi_rma (not in the sum of mpi_time).
enum Hierarchy : int {
  kComputation = 0,
  kMpiP2p,
  kMpiCollective,
  kMpiRma,
  kMpiManagement,
  kMpiRmaSync,
  kMpiRmaComm,
  kHierCount
};
constexpr const char* kHierId[kHierCount] = {"computation",    "mpi_p2p",      "mpi_collective", "mpi_rma",
                                             "mpi_management", "mpi_rma_sync", "mpi_rma_comm"};
// One pattern's statistics over every rank (rank 0): what summary.txt and report.json show.
struct PatternSummary {
  double count = 0, total = 0, min = 0, max = 0;
  std::vector<Instance> worst;  // the largest instances of all ranks, largest first
  double median = 0;            // of every rank's sample together
  double samples = 0;           // their number (= count: the median is exact)
};

// Doubles as unsigned keys in the same order (negative ones below positive ones).
uint64_t order_key(double v) {
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof u);
  return u >> 63 ? ~u : u | (uint64_t(1) << 63);
}
double from_order_key(uint64_t u) {
  u = u >> 63 ? u & ~(uint64_t(1) << 63) : ~u;
  double v = 0;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// The patterns and the MPI time hierarchy per global call path, into `store`.
void book_wait_metrics(const WaitStates& ws, const LocalProfile& local, const defs::Definitions& definitions,
                       const clock::TickConverter& conv, const std::vector<int>& l2g,
                       engine::MetricStore& store) {
  const size_t G = store.callpaths();
  int slot[int(kPatternCount) + int(kHierCount)];
  for (int p = 0; p < kPatternCount; ++p) slot[p] = store.slot(pattern_def(p).id);
  for (int h = 0; h < kHierCount; ++h) slot[kPatternCount + h] = store.slot(kHierId[h]);
  for (size_t n = 0; n < local.nodes.size() && n < l2g.size(); ++n) {
    const long g = l2g[n];
    if (g < 0 || size_t(g) >= G) continue;
    if (n < ws.by_node.size())
      for (int p = 0; p < kPatternCount; ++p) store.add(slot[p], g, ws.by_node[n][size_t(p)]);
    const defs::RegionDef def = definitions.regions.get(local.nodes[n].region);
    const double excl = conv.ticks_to_seconds(local.nodes[n].exclusive_ticks);
    int h = kComputation;
    if (def.kind == defs::RegionKind::kMpi) {
      switch (def.mpi.cls) {  // the spec's `class`
        case defs::MpiClass::kP2p: h = kMpiP2p; break;
        case defs::MpiClass::kCollective: h = kMpiCollective; break;
        case defs::MpiClass::kRma: h = kMpiRma; break;
        case defs::MpiClass::kManagement:
        case defs::MpiClass::kNone: h = kMpiManagement; break;
      }
    }
    store.add(slot[kPatternCount + h], g, excl);
    if (h == kMpiRma)
      store.add(
          slot[int(kPatternCount) + int(def.mpi.rma == defs::MpiRma::kComm ? kMpiRmaComm : kMpiRmaSync)], g,
          excl);
  }
}

// The median's radix selection (reduce_median): each round narrows every target (the k-th
// smallest of a pattern's samples over all ranks, as order keys) to the keys that agree with
// its prefix above its `top` unknown low bits, by a histogram of the next 4 of those bits.
constexpr size_t kBins = 16;
constexpr size_t kFetchKeys = 16;  // a region of at most this many keys is fetched whole

struct MedianTarget {
  int pattern;
  uint64_t want;    // the k of the k-th smallest, among the keys of the current region
  uint64_t prefix;  // the region: the keys whose bits from `top` up are prefix's
  int top;          // 0: prefix is the key
  bool small;       // the region holds at most kFetchKeys keys over all ranks
  bool in_region(uint64_t key) const { return top >= 64 || key >> top == prefix >> top; }
};

// A round's cell of one target: the histogram of the 4 (fewer at the bottom) bits below `top`
// among the region's keys, with the smallest and largest of them.
struct MedianCell {
  uint32_t hist[kBins];
  uint64_t lo, hi;
  static void merge(const MedianCell& in, MedianCell& inout) {
    for (size_t b = 0; b < kBins; ++b) inout.hist[b] += in.hist[b];
    inout.lo = std::min(inout.lo, in.lo);
    inout.hi = std::max(inout.hi, in.hi);
  }
};

// The keys of a small region, every rank's together, ascending (the region holds at most
// kFetchKeys: the merge of any ranks' lists loses none).
struct MedianKeys {
  uint64_t n;
  uint64_t key[kFetchKeys];
  static void merge(const MedianKeys& in, MedianKeys& inout) {
    MedianKeys out{};
    size_t i = 0, j = 0;
    while (out.n < kFetchKeys && (i < in.n || j < inout.n))
      out.key[out.n++] = j >= inout.n || (i < in.n && in.key[i] < inout.key[j]) ? in.key[i++]
                                                                                : inout.key[j++];
    inout = out;
  }
};

// The region [lo, hi] as a prefix: the bits above the highest one where lo and hi differ.
void narrow(MedianTarget& t, uint64_t lo, uint64_t hi) {
  t.top = lo == hi ? 0 : 64 - __builtin_clzll(lo ^ hi);
  t.prefix = t.top >= 64 ? 0 : lo >> t.top << t.top;
}

// This rank's cells of a round, in one pass over each target's keys.
void median_cells(const std::vector<std::vector<uint64_t>>& keys, const std::vector<MedianTarget>& targets,
                  std::vector<MedianCell>& cells) {
  cells.resize(targets.size());
  for (size_t t = 0; t < targets.size(); ++t) {
    const MedianTarget& g = targets[t];
    MedianCell& c = cells[t];
    std::fill(c.hist, c.hist + kBins, 0u);
    c.lo = std::numeric_limits<uint64_t>::max();
    c.hi = 0;
    const int shift = std::max(g.top - 4, 0);
    for (uint64_t key : keys[size_t(g.pattern)]) {
      if (!g.in_region(key)) continue;
      ++c.hist[(key >> shift) & 15];
      c.lo = std::min(c.lo, key);
      c.hi = std::max(c.hi, key);
    }
  }
}

// One round's outcome for a target: the bin holding its key, and the region narrowed to that
// bin's keys (within the counted keys' range).
void choose_bin(MedianTarget& g, const MedianCell& c) {
  const int shift = std::max(g.top - 4, 0);
  size_t b = 0;
  while (b + 1 < kBins && c.hist[b] <= g.want) g.want -= c.hist[b++];
  const uint64_t first = g.prefix | uint64_t(b) << shift;
  const uint64_t last = first | ((uint64_t(1) << shift) - 1);
  g.small = c.hist[b] <= kFetchKeys;
  narrow(g, std::max(c.lo, first), std::min(c.hi, last));
}

// Count and sum of every pattern over the ranks and the number of their samples: one sum of
// a fixed vector. The min and max go with reduce_worst's maximum.
Status reduce_moments(const WaitStates& ws, const engine::Group& group, std::vector<PatternSummary>& out) {
  const size_t P = size_t(kPatternCount);
  std::vector<double> sums(3 * P, 0.0);
  for (size_t p = 0; p < P; ++p) {
    const PatternStats& st = ws.stats[p];
    sums[3 * p] = double(st.count);
    sums[3 * p + 1] = st.sum;
    sums[3 * p + 2] = double(st.sample.size());  // exact: at most kSampleSize per rank
  }
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(sums.data(), sums.size(), engine::ReduceOp::kSum));
  for (size_t p = 0; p < P; ++p) {
    out[p].count = sums[3 * p];
    out[p].total = sums[3 * p + 1];
    out[p].samples = sums[3 * p + 2];
  }
  return Status::kOk;
}

// A place of a pattern's worst instances: the instance, the rank that offered it and its place
// in that rank's own list; none() pads.
struct WorstEntry {
  double value;
  int32_t offered_by, seq, node, rank;
  static WorstEntry none() {
    return {-std::numeric_limits<double>::infinity(), std::numeric_limits<int32_t>::max(), 0, -1, -1};
  }
  // Larger values first; equal ones by the lower offering rank, then in that rank's order.
  static bool before(const WorstEntry& a, const WorstEntry& b) {
    if (a.value != b.value) return a.value > b.value;
    return a.offered_by != b.offered_by ? a.offered_by < b.offered_by : a.seq < b.seq;
  }
};

// The kWorstInstances largest instances of every pattern over all ranks, largest first (equal
// values: the lower rank first, then the rank's own order): one merge of every rank's own
// worst instances (Group::allreduce_top), then one maximum of every pattern's min (negated)
// and max.
Status reduce_worst(const WaitStates& ws, const std::vector<int>& l2g, const engine::Group& group,
                    std::vector<PatternSummary>& out) {
  constexpr double kNone = -std::numeric_limits<double>::max();
  const size_t P = size_t(kPatternCount);
  std::vector<std::array<WorstEntry, kWorstInstances>> top(P);
  std::vector<double> extremes(2 * P);
  for (size_t p = 0; p < P; ++p) {
    const PatternStats& st = ws.stats[p];
    extremes[2 * p] = st.count > 0 ? -st.min : kNone;
    extremes[2 * p + 1] = st.count > 0 ? st.max : kNone;
    top[p].fill(WorstEntry::none());
    for (size_t k = 0; k < st.worst.size() && k < kWorstInstances; ++k) {
      const Instance& w = st.worst[k];
      const int32_t node = w.node >= 0 && size_t(w.node) < l2g.size() ? int32_t(l2g[size_t(w.node)]) : -1;
      top[p][k] = {w.value, int32_t(group.rank()), int32_t(k), node, w.rank};
    }
  }
  CRITPATH_FORWARD_IF_ERROR(group.allreduce_top(top.data(), top.size()));
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(extremes.data(), extremes.size(), engine::ReduceOp::kMax));
  for (size_t p = 0; p < P; ++p) {
    out[p].min = out[p].count > 0 ? -extremes[2 * p] : 0;
    out[p].max = out[p].count > 0 ? extremes[2 * p + 1] : 0;
    for (const WorstEntry& e : top[p]) {
      if (e.offered_by == std::numeric_limits<int32_t>::max()) break;
      out[p].worst.push_back({e.value, e.node, e.rank});
    }
  }
  return Status::kOk;
}

// The median of every pattern's samples, all ranks' together (as if gathered and sorted): the
// (n-1)/2-th and n/2-th smallest of the n samples (one target when n is odd), found by a radix
// selection over their order keys. A target's region starts as the keys between the
// pattern's min and max (reduce_worst); each round merges the targets' histograms of their
// next 4 bits (Group::allreduce_merge, 80 bytes a target, only patterns with samples) and
// narrows each target to its key's bin and that bin's range of keys. It ends once every
// target's key is known (a region of one key value), or with one merge of the regions' keys
// once each holds at most kFetchKeys: about log16(n / kFetchKeys) + 1 rounds.
// `out` holds the number of samples, the min and the max over all ranks already.
Status reduce_median(const std::vector<std::vector<uint64_t>>& keys, const engine::Group& group,
                     std::vector<PatternSummary>& out) {
  std::vector<MedianTarget> targets;
  for (int p = 0; p < int(kPatternCount); ++p) {
    const uint64_t n = uint64_t(out[size_t(p)].samples);
    if (n == 0) continue;
    // The samples lie in [min, max]; a step beyond each end keeps -0.0 and 0.0 inside.
    const double inf = std::numeric_limits<double>::infinity();
    MedianTarget g{p, 0, 0, 64, n <= kFetchKeys};
    narrow(g, order_key(std::nextafter(out[size_t(p)].min, -inf)),
           order_key(std::nextafter(out[size_t(p)].max, inf)));
    g.want = (n - 1) / 2;
    targets.push_back(g);
    if (n % 2 == 0) {
      g.want = n / 2;
      targets.push_back(g);
    }
  }
  std::vector<MedianCell> cells;
  const auto open = [](const MedianTarget& g) { return g.top > 0; };
  while (!std::all_of(targets.begin(), targets.end(),
                      [](const MedianTarget& g) { return g.top == 0 || g.small; })) {
    median_cells(keys, targets, cells);
    CRITPATH_FORWARD_IF_ERROR(group.allreduce_merge(cells.data(), cells.size()));
    for (size_t t = 0; t < targets.size(); ++t)
      if (open(targets[t])) choose_bin(targets[t], cells[t]);
  }
  if (std::any_of(targets.begin(), targets.end(), open)) {
    std::vector<MedianKeys> fetched(targets.size(), MedianKeys{});
    for (size_t t = 0; t < targets.size(); ++t) {
      MedianKeys& f = fetched[t];
      if (open(targets[t]))
        for (uint64_t key : keys[size_t(targets[t].pattern)])
          if (targets[t].in_region(key) && f.n < kFetchKeys) f.key[f.n++] = key;
      std::sort(f.key, f.key + f.n);
    }
    CRITPATH_FORWARD_IF_ERROR(group.allreduce_merge(fetched.data(), fetched.size()));
    for (size_t t = 0; t < targets.size(); ++t)
      if (open(targets[t]) && targets[t].want < fetched[t].n)
        targets[t].prefix = fetched[t].key[targets[t].want];
  }
  for (size_t t = 0; t < targets.size(); ++t) {
    const MedianTarget& g = targets[t];
    const bool pair = t + 1 < targets.size() && targets[t + 1].pattern == g.pattern;
    const double lo = from_order_key(g.prefix), hi = pair ? from_order_key(targets[t + 1].prefix) : lo;
    out[size_t(g.pattern)].median = 0.5 * (lo + hi);
    t += pair ? 1 : 0;
  }
  return Status::kOk;
}

// Every pattern's statistics over the ranks, on every rank: collectives of fixed size, nothing
// gathered per rank (one sum, one merge of the worst instances and one maximum, then the median's up to
// 15 sums and one more).
Status reduce_pattern_stats(const WaitStates& ws, const std::vector<int>& l2g, const engine::Group& group,
                            std::vector<PatternSummary>& out) {
  out.assign(size_t(kPatternCount), PatternSummary{});
  std::vector<std::vector<uint64_t>> keys(static_cast<size_t>(kPatternCount));  // the median's order keys
  for (size_t p = 0; p < keys.size(); ++p)
    for (double v : ws.stats[p].sample) keys[p].push_back(order_key(v));
  CRITPATH_FORWARD_IF_ERROR(reduce_moments(ws, group, out));
  CRITPATH_FORWARD_IF_ERROR(reduce_worst(ws, l2g, group, out));
  return reduce_median(keys, group, out);
}

// "Wait states": pattern, seconds, % of allocation, top call path, most affected rank.
// `metric`: the reduced patterns, in WaitPattern order.
void waits_section(const ReducedMetric* metric, size_t G, double alloc, double threshold_pct,
                   const std::function<std::string(int)>& path_of, ReportInput& in) {
  char buf[512];
  std::string body;
  std::snprintf(buf, sizeof buf, "%-28s %12s %9s  %-40s %s\n", "Pattern", "Seconds", "%Alloc",
                "Top call path (seconds)", "Most affected rank (seconds)");
  body += buf;
  int hidden = 0;
  const double threshold = threshold_pct / 100.0;
  for (int p = 0; p < kPatternCount; ++p) {
    const ReducedMetric& em = metric[p];
    double total = 0;
    size_t top = 0;
    for (size_t g = 0; g < G; ++g) {
      total += em.by_callpath[g];
      if (em.by_callpath[g] > em.by_callpath[top]) top = g;
    }
    // No waiting, or less than CRITPATH_REPORT_THRESHOLD of the allocation: not shown.
    if (!(total > 0) || total < threshold * alloc) {
      ++hidden;
      continue;
    }
    size_t worst_rank = 0;
    for (size_t r = 0; r < em.by_rank.size(); ++r)
      if (em.by_rank[r] > em.by_rank[worst_rank]) worst_rank = r;
    std::string top_text = total > 0 ? path_of(int(top)) : "-";
    char tb[64];
    std::snprintf(tb, sizeof tb, " (%.6f)", total > 0 ? em.by_callpath[top] : 0.0);
    if (total > 0) top_text += tb;
    char rb[64] = "-";
    if (total > 0) std::snprintf(rb, sizeof rb, "%zu (%.6f)", worst_rank, em.by_rank[worst_rank]);
    std::snprintf(buf, sizeof buf, "%-28s %12.6f %9.3f  %-40s %s\n", pattern_def(p).title, total,
                  alloc > 0 ? 100.0 * total / alloc : 0.0, top_text.c_str(), rb);
    body += buf;
  }
  if (hidden > 0) {
    std::snprintf(buf, sizeof buf,
                  "(%d patterns below CRITPATH_REPORT_THRESHOLD = %g %% of the allocation not shown; "
                  "all in report.json)\n",
                  hidden, threshold_pct);
    body += buf;
  }
  in.sections.push_back({"Wait states (seconds; % of allocation = ranks x wall time)", body});
}

// "Time hierarchy": time, computation, the classes of MPI time (`htot`, all ranks).
void hierarchy_section(const std::vector<double>& htot, const GlobalProfile& global, ReportInput& in) {
  char buf[512];
  std::string hier;
  double time_total = 0;
  for (const auto& cp : global.callpaths) time_total += cp.sum[kColExclusive];
  std::snprintf(buf, sizeof buf, "%-20s %14s %8s\n", "Metric", "Seconds", "%Time");
  hier += buf;
  auto hline = [&](const char* name, double v) {
    std::snprintf(buf, sizeof buf, "%-20s %14.6f %8.2f\n", name, v,
                  time_total > 0 ? 100.0 * v / time_total : 0.0);
    hier += buf;
  };
  double mpi_total = 0;
  for (int h = kMpiP2p; h <= kMpiManagement; ++h) mpi_total += htot[size_t(h)];
  hline("time", time_total);
  hline("  computation", htot[kComputation]);
  hline("  mpi_time", mpi_total);
  for (int h = kMpiP2p; h <= kMpiManagement; ++h) {
    hline((std::string("    ") + kHierId[h]).c_str(), htot[size_t(h)]);
    if (h == kMpiRma && htot[kMpiRma] > 0)
      for (int sub : {kMpiRmaSync, kMpiRmaComm})
        hline((std::string("      ") + kHierId[sub]).c_str(), htot[size_t(sub)]);
  }
  in.sections.push_back({"Time hierarchy (seconds, all ranks)", hier});
}

// Statistics (trace.stat-like) of the patterns over the ranks: summary.txt's sections and
// report.json `wait_state_stats`.
void statistics_sections(const std::vector<PatternSummary>& summaries,
                         const std::function<std::string(int)>& path_of, ReportInput& in) {
  char buf[512];
  nlohmann::json stats = nlohmann::json::object();
  std::string st_text;
  std::snprintf(buf, sizeof buf, "%-28s %10s %12s %12s %12s %12s %12s\n", "Pattern", "Count", "Mean",
                "Median", "Min", "Max", "Sum");
  st_text += buf;
  std::string worst_text;
  for (int p = 0; p < kPatternCount; ++p) {
    const PatternSummary& su = summaries[size_t(p)];
    const double count = su.count, total = su.total, mn = su.min, mx = su.max;
    const std::vector<Instance>& worst = su.worst;
    const double med = su.median;
    nlohmann::json pj;
    pj["count"] = count;
    pj["sum"] = total;
    pj["mean"] = count > 0 ? total / count : 0.0;
    pj["median"] = med;
    pj["median_exact"] = su.samples == count;
    pj["min"] = mn;
    pj["max"] = mx;
    nlohmann::json wj = nlohmann::json::array();
    for (const Instance& w : worst)
      wj.push_back({{"callpath", path_of(w.node)}, {"rank", w.rank}, {"time", w.value}});
    pj["worst"] = std::move(wj);
    stats[pattern_def(p).id] = std::move(pj);
    if (count <= 0) continue;
    std::snprintf(buf, sizeof buf, "%-28s %10.0f %12.6f %12.6f %12.6f %12.6f %12.6f\n", pattern_def(p).title,
                  count, total / count, med, mn, mx, total);
    st_text += buf;
    for (const Instance& w : worst) {
      std::snprintf(buf, sizeof buf, "  %-26s rank %-6d %12.6f  %s\n", pattern_def(p).id, w.rank, w.value,
                    path_of(w.node).c_str());
      worst_text += buf;
    }
  }
  in.sections.push_back({"Wait-state statistics (seconds per instance)", st_text});
  if (!worst_text.empty()) in.sections.push_back({"Worst wait-state instances (5 per pattern)", worst_text});
  (*in.extra_json)["wait_state_stats"] = std::move(stats);
}

}  // namespace

Status report_wait_states(const WaitStates& ws, const LocalProfile& local,
                          const defs::Definitions& definitions, const clock::TickConverter& conv,
                          const std::vector<int>& l2g, int n_callpaths, const engine::Group& group,
                          const GlobalProfile& global, double wall_time_s, double threshold_pct,
                          ReportInput& in) {
  const int size = group.size();
  const size_t G = size_t(n_callpaths);

  // The patterns and the MPI time hierarchy per global call path, into the metric store.
  engine::MetricStore store(G);
  book_wait_metrics(ws, local, definitions, conv, l2g, store);
  const size_t base = in.extra_metrics.size();  // the patterns, then the hierarchy
  CRITPATH_FORWARD_IF_ERROR(store.reduce(group, in.extra_metrics, &in.rank_detail));

  // Statistics: reduced per pattern, a fixed number of collectives of fixed size.
  std::vector<PatternSummary> summaries;
  CRITPATH_FORWARD_IF_ERROR(reduce_pattern_stats(ws, l2g, group, summaries));
  if (!group.is_root()) return Status::kOk;
  const ReducedMetric* metric = &in.extra_metrics[base];
  std::vector<double> htot(kHierCount, 0.0);
  for (int h = 0; h < kHierCount; ++h)
    for (size_t g = 0; g < G; ++g) htot[size_t(h)] += metric[kPatternCount + h].by_callpath[g];

  const auto path_of = [&](int g) -> std::string {
    return g >= 0 && size_t(g) < global.callpaths.size() ? global.callpaths[size_t(g)].path : "?";
  };
  waits_section(metric, G, wall_time_s * double(size), threshold_pct, path_of, in);
  hierarchy_section(htot, global, in);
  statistics_sections(summaries, path_of, in);
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
