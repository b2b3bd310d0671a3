// critpath — analyzer/passes/wait_states/wait_states_report.cpp
#include "analyzer/passes/wait_states/wait_states_report.h"

#include <algorithm>
#include <cstdio>

#include "analyzer/engine/gather.h"
#include "analyzer/engine/timeline.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer::passes {
namespace {

enum Hierarchy : int { kComputation = 0, kMpiP2p, kMpiCollective, kMpiRma, kMpiManagement, kHierCount };
constexpr const char* kHierId[kHierCount] = {"computation", "mpi_p2p", "mpi_collective", "mpi_rma",
                                             "mpi_management"};
constexpr const char* kHierDesc[kHierCount] = {
    "Exclusive time outside MPI calls (time - mpi_time)",
    "Time in point-to-point MPI calls (sends, receives, waits, tests, probes, request handling)",
    "Time in collective MPI calls (blocking and nonblocking, including their completion calls' "
    "collective share)",
    "Time in one-sided MPI calls (window creation, synchronization, RMA operations)",
    "Time in other MPI calls (MPI_Init, MPI_Finalize, communicators, groups, datatypes, ...)"};

// Fixed-size per-pattern block for the statistics gather:
// count, sum, min, max, n_worst, worst×(value, callpath, rank), n_sample, sample...
constexpr size_t kBlock = 5 + 3 * kWorstInstances + 1 + kSampleSize;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Status report_wait_states(const WaitStates& ws, const LocalProfile& local,
                          const clock::TickConverter& conv, const std::vector<int>& l2g,
                          int n_callpaths, MPI_Comm comm, const GlobalProfile& global,
                          double wall_time_s, ReportInput& in) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const size_t G = size_t(n_callpaths), M = size_t(kPatternCount) + kHierCount;

  // Dense [callpath][metric] values of this rank, and its totals.
  std::vector<double> vals(G * M, 0.0), totals(M, 0.0);
  for (size_t n = 0; n < local.nodes.size() && n < l2g.size(); ++n) {
    const size_t g = size_t(l2g[n]);
    if (g >= G) continue;
    double* v = &vals[g * M];
    if (n < ws.by_node.size())
      for (int p = 0; p < kPatternCount; ++p) v[p] += ws.by_node[n][size_t(p)];
    const defs::RegionDef def = defs::regions().get(local.nodes[n].region);
    const double excl = conv.ticks_to_seconds(local.nodes[n].exclusive_ticks);
    int h = kComputation;
    if (def.kind == defs::RegionKind::kMpi) {
      switch (engine::classify_mpi(def.name)) {
        case engine::MpiGroup::kP2p: h = kMpiP2p; break;
        case engine::MpiGroup::kCollective: h = kMpiCollective; break;
        case engine::MpiGroup::kRma: h = kMpiRma; break;
        case engine::MpiGroup::kManagement: h = kMpiManagement; break;
      }
    }
    v[kPatternCount + h] += excl;
  }
  for (size_t g = 0; g < G; ++g)
    for (size_t k = 0; k < M; ++k) totals[k] += vals[g * M + k];
  std::vector<double> sum(rank == 0 ? G * M : 0), by_rank(rank == 0 ? size_t(size) * M : 0);
  if (PMPI_Reduce(vals.data(), sum.data(), int(G * M), MPI_DOUBLE, MPI_SUM, 0, comm) != MPI_SUCCESS ||
      PMPI_Gather(totals.data(), int(M), MPI_DOUBLE, by_rank.data(), int(M), MPI_DOUBLE, 0, comm) !=
          MPI_SUCCESS)
    return Status::kMpiError;

  // Per-rank values of the patterns, sparse: (call path, pattern, value) for non-zero values.
  std::vector<double> triples;
  for (size_t g = 0; g < G; ++g)
    for (int p = 0; p < kPatternCount; ++p)
      if (vals[g * M + size_t(p)] != 0) {
        triples.push_back(double(g));
        triples.push_back(double(p));
        triples.push_back(vals[g * M + size_t(p)]);
      }
  std::vector<double> all_triples;
  std::vector<int> tcounts, tdispls;
  CRITPATH_FORWARD_IF_ERROR(
      engine::gather_to_root(triples.data(), int(triples.size()), comm, all_triples, tcounts, tdispls));

  // Statistics: one fixed block per pattern.
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
  std::vector<double> all_blocks(rank == 0 ? blocks.size() * size_t(size) : 0);
  if (PMPI_Gather(blocks.data(), int(blocks.size()), MPI_DOUBLE, all_blocks.data(),
                  int(blocks.size()), MPI_DOUBLE, 0, comm) != MPI_SUCCESS)
    return Status::kMpiError;
  if (rank != 0) return Status::kOk;

  // --- Rank 0: metrics.
  for (size_t k = 0; k < M; ++k) {
    ExtraMetric em;
    if (k < size_t(kPatternCount)) {
      em.id = pattern_def(int(k)).id;
      em.description = pattern_def(int(k)).description;
    } else {
      em.id = kHierId[k - kPatternCount];
      em.description = kHierDesc[k - kPatternCount];
    }
    em.unit = "s";
    em.by_callpath.resize(G);
    for (size_t g = 0; g < G; ++g) em.by_callpath[g] = sum[g * M + k];
    em.by_rank.resize(size_t(size));
    for (int r = 0; r < size; ++r) em.by_rank[size_t(r)] = by_rank[size_t(r) * M + k];
    in.extra_metrics.push_back(std::move(em));
  }
  for (int r = 0; r < size; ++r)
    for (int i = tdispls[size_t(r)]; i + 2 < tdispls[size_t(r)] + tcounts[size_t(r)]; i += 3) {
      const int g = int(all_triples[size_t(i)]), p = int(all_triples[size_t(i) + 1]);
      auto& list = in.extra_metrics[size_t(p)].by_callpath_rank;
      auto it = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.first == g; });
      if (it == list.end()) {
        list.push_back({g, std::vector<double>(size_t(size), 0.0)});
        it = list.end() - 1;
      }
      it->second[size_t(r)] = all_triples[size_t(i) + 2];
    }
  const double alloc = wall_time_s * double(size);
  auto path_of = [&](int g) -> std::string {
    return g >= 0 && size_t(g) < global.callpaths.size() ? global.callpaths[size_t(g)].path : "?";
  };
  char buf[512];

  // --- "Wait states": pattern, seconds, % of allocation, top call path, most affected rank.
  std::string body;
  std::snprintf(buf, sizeof buf, "%-28s %12s %9s  %-40s %s\n", "Pattern", "Seconds", "%Alloc",
                "Top call path (seconds)", "Most affected rank (seconds)");
  body += buf;
  for (int p = 0; p < kPatternCount; ++p) {
    const ExtraMetric& em = in.extra_metrics[size_t(p)];
    double total = 0;
    size_t top = 0;
    for (size_t g = 0; g < G; ++g) {
      total += em.by_callpath[g];
      if (em.by_callpath[g] > em.by_callpath[top]) top = g;
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
  in.sections.push_back({"Wait states (seconds; % of allocation = ranks x wall time)", body});

  // --- Time hierarchy.
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
  std::vector<double> htot(kHierCount, 0.0);
  for (int h = 0; h < kHierCount; ++h) {
    for (size_t g = 0; g < G; ++g) htot[size_t(h)] += sum[g * M + size_t(kPatternCount + h)];
    if (h != kComputation) mpi_total += htot[size_t(h)];
  }
  hline("time", time_total);
  hline("  computation", htot[kComputation]);
  hline("  mpi_time", mpi_total);
  for (int h = kMpiP2p; h < kHierCount; ++h) hline((std::string("    ") + kHierId[h]).c_str(), htot[size_t(h)]);
  in.sections.push_back({"Time hierarchy (seconds, all ranks)", hier});

  // --- Statistics (trace.stat-like).
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
    for (const Instance& w : worst) wj.push_back({{"callpath", path_of(w.node)}, {"rank", w.rank}, {"time", w.value}});
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
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
