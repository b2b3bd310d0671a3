// critpath — analyzer/passes/wait_states/wait_states_report.cpp
#include "analyzer/passes/wait_states/wait_states_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

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
// Fixed-size per-pattern block for the statistics gather:
// count, sum, min, max, n_worst, worst×(value, callpath, rank), n_sample, sample...
constexpr size_t kBlock = 5 + 3 * kWorstInstances + 1 + kSampleSize;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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

// This rank's statistics of every pattern, one fixed block each (kBlock).
std::vector<double> stat_blocks(const WaitStates& ws, const std::vector<int>& l2g) {
  std::vector<double> blocks(size_t(kPatternCount) * kBlock, 0.0);
  for (int p = 0; p < kPatternCount; ++p) {
    const PatternStats& st = ws.stats[size_t(p)];
    double* b = &blocks[size_t(p) * kBlock];
    b[0] = double(st.count);
    b[1] = st.sum;
    b[2] = st.min;
    b[3] = st.max;
    b[4] = double(st.worst.size());
    for (size_t i = 0; i < st.worst.size(); ++i) {
      const Instance& w = st.worst[i];
      b[5 + 3 * i] = w.value;
      b[6 + 3 * i] = w.node >= 0 && size_t(w.node) < l2g.size() ? double(l2g[size_t(w.node)]) : -1.0;
      b[7 + 3 * i] = double(w.rank);
    }
    b[5 + 3 * kWorstInstances] = double(st.sample.size());
    std::copy(st.sample.begin(), st.sample.end(), b + 6 + 3 * kWorstInstances);
  }
  return blocks;
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

// Statistics (trace.stat-like) over every rank's blocks: summary.txt's sections and report.json
// `wait_state_stats`.
void statistics_sections(const std::vector<double>& all_blocks, int size,
                         const std::function<std::string(int)>& path_of, ReportInput& in) {
  char buf[512];
  nlohmann::json stats = nlohmann::json::object();
  std::string st_text;
  std::snprintf(buf, sizeof buf, "%-28s %10s %12s %12s %12s %12s %12s\n", "Pattern", "Count", "Mean",
                "Median", "Min", "Max", "Sum");
  st_text += buf;
  std::string worst_text;
  for (int p = 0; p < kPatternCount; ++p) {
    double count = 0, total = 0, mn = 0, mx = 0;
    bool any = false;
    std::vector<Instance> worst;
    std::vector<double> sample;
    for (int r = 0; r < size; ++r) {
      const double* b = &all_blocks[(size_t(r) * kPatternCount + size_t(p)) * kBlock];
      if (b[0] <= 0) continue;
      mn = any ? std::min(mn, b[2]) : b[2];
      mx = any ? std::max(mx, b[3]) : b[3];
      any = true;
      count += b[0];
      total += b[1];
      for (int i = 0; i < int(b[4]); ++i)
        worst.push_back({b[5 + 3 * i], int32_t(b[6 + 3 * i]), int32_t(b[7 + 3 * i])});
      const size_t ns = size_t(b[5 + 3 * kWorstInstances]);
      sample.insert(sample.end(), b + 6 + 3 * kWorstInstances, b + 6 + 3 * kWorstInstances + ns);
    }
    std::stable_sort(worst.begin(), worst.end(),
                     [](const Instance& a, const Instance& b) { return a.value > b.value; });
    if (worst.size() > kWorstInstances) worst.resize(kWorstInstances);
    const double med = median(sample);
    nlohmann::json pj;
    pj["count"] = count;
    pj["sum"] = total;
    pj["mean"] = count > 0 ? total / count : 0.0;
    pj["median"] = med;
    pj["median_exact"] = sample.size() == size_t(count);
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
  in.extra_json["wait_state_stats"] = std::move(stats);
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

  // Statistics: one fixed block per pattern.
  const std::vector<double> blocks = stat_blocks(ws, l2g);
  std::vector<double> all_blocks;
  CRITPATH_FORWARD_IF_ERROR(group.gather_rows(blocks.data(), blocks.size(), all_blocks));
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
  statistics_sections(all_blocks, size, path_of, in);
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
