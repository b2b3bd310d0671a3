// critpath — analyzer/report/findings.cpp (see findings.h)
#include "analyzer/report/findings.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyzer/engine/metric_store.h"

namespace critpath::analyzer {
namespace {

const engine::ReducedMetric* metric(const ReportInput& in, const std::string& id) {
  for (const auto& m : in.extra_metrics)
    if (m.id == id) return &m;
  return nullptr;
}

double at(const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : 0.0; }

// The rank with the largest positive value of `m` at call path `g` (-1 when none; ties to
// the lower rank) and that value: the first of the statistics' top ranks.
int largest(const engine::ReducedMetric* m, size_t g, double& value) {
  value = 0;
  const engine::CallpathStats* st = m ? m->stats_at(g) : nullptr;
  if (!st || st->top.empty()) return -1;
  value = st->top[0].value;
  return st->top[0].rank;
}

// The value of `m` at (call path `g`, `rank`): from the statistics' top ranks or the cells
// looked up for the report (report/rank_matrix.h look_up_cells); 0 when neither has it.
double cell_value(const engine::ReducedMetric* m, size_t g, int rank) {
  const engine::CallpathStats* st = m ? m->stats_at(g) : nullptr;
  if (st)
    for (const engine::RankValue& rv : st->top)
      if (rv.rank == rank) return rv.value;
  if (m)
    for (const engine::CellValue& c : m->cells)
      if (size_t(c.callpath) == g && c.rank == rank) return c.value;
  return 0.0;
}

std::string path_of(const ReportInput& in, size_t g) {
  return g < in.profile->callpaths.size() ? in.profile->callpaths[g].path : "?";
}

bool is_lifecycle(const std::string& path) {
  auto ends = [&](const char* s) {
    const std::string t(s);
    return path.size() >= t.size() && path.compare(path.size() - t.size(), t.size(), t) == 0;
  };
  return ends("MPI_Init") || ends("MPI_Init_thread") || ends("MPI_Finalize");
}

// The wait-state patterns the findings name, in declaration order: the declarations marked
// as findings (engine::as_finding, passes/wait_states and passes/rma *_metrics.cpp).
std::vector<const engine::MetricDecl*> finding_patterns() {
  std::vector<const engine::MetricDecl*> out;
  for (const engine::MetricDecl& d : engine::metric_declarations())
    if (d.finding) out.push_back(&d);
  return out;
}

// The (call path, rank) causing most of a family's waits: short- and long-term cost. Over
// the call paths where some rank's short-term cost is non-zero, the one whose top (short- plus
// long-term) rank causes most; the first such call path on ties.
struct Cause {
  long g = -1;
  int rank = -1;
  double short_term = 0, long_term = 0;
};
Cause top_cause(const ReportInput& in, const char* family) {
  Cause best;
  const auto* st = metric(in, std::string("delay_") + family + "_short_term");
  if (!st) return best;
  for (const engine::PairedTop& p : st->paired) {
    if (!st->stats_at(size_t(p.callpath))) continue;
    if (p.short_term + p.long_term > best.short_term + best.long_term)
      best = {p.callpath, p.rank, p.short_term, p.long_term};
  }
  return best;
}

double allocation(const ReportInput& in) { return double(in.run->size) * in.wall_time_s; }

// A wait-state pattern at the top of its MPI class (its parent is mpi_p2p, mpi_collective,
// mpi_rma, mpi_rma_sync, mpi_rma_comm or mpi_management): the patterns that sum to the waiting time without overlap.
bool is_wait_pattern(const std::string& id) {
  const engine::MetricDecl* d = engine::find_metric(id);
  if (!d || !d->parent) return false;
  const std::string parent = d->parent;
  return parent == "mpi_p2p" || parent == "mpi_collective" || parent == "mpi_rma" ||
         parent == "mpi_rma_sync" || parent == "mpi_rma_comm" || parent == "mpi_management";
}

// Wait states by call path from max(CRITPATH_REPORT_THRESHOLD, 0.5) % of the allocation on,
// each with its cost (the sort key), the most affected rank and the causing rank.
std::vector<std::pair<double, Finding>> wait_findings(const ReportInput& in) {
  std::vector<std::pair<double, Finding>> found;
  const double alloc = allocation(in);
  const int P = in.run->size;
  char buf[1024];
  const auto* cp = metric(in, "critical_path");
  const double min_share = std::max(0.005, in.report_threshold_pct / 100.0);
  for (const engine::MetricDecl* pat : finding_patterns()) {
    const auto* m = metric(in, pat->id);
    if (!m) continue;
    const Cause cause = pat->delay_family ? top_cause(in, pat->delay_family) : Cause{};
    for (size_t g = 0; g < m->by_callpath.size(); ++g) {
      const double w = m->by_callpath[g];
      if (!(w > 0.001) || !(w > min_share * alloc)) continue;  // 1 ms and the threshold
      double worst_v = 0;
      const int worst = largest(m, g, worst_v);
      std::string s;
      bool caused = false;
      std::snprintf(buf, sizeof buf, "Ranks wait %.3f s (%.1f %% of allocation) in %s (%s)", w,
                    alloc > 0 ? 100.0 * w / alloc : 0.0, path_of(in, g).c_str(), pat->title);
      s = buf;
      if (worst >= 0) {
        std::snprintf(buf, sizeof buf, ", rank %d the most (%.3f s)", worst, worst_v);
        s += buf;
      }
      // A cause worth naming: at least 1 ms and a twentieth of the waiting it explains.
      if (cause.rank >= 0 && cause.short_term + cause.long_term >= std::max(0.001, 0.05 * w)) {
        caused = true;
        const std::string cpath = path_of(in, size_t(cause.g));
        std::snprintf(buf, sizeof buf,
                      "; rank %d causes it: its time in %s delayed the others (%.3f s of waits "
                      "directly, %.3f s through the waits those caused)",
                      cause.rank, cpath.c_str(), cause.short_term, cause.long_term);
        s += buf;
        const double on_path = cell_value(cp, size_t(cause.g), cause.rank);
        const auto& callpaths = in.profile->callpaths;
        const double mean = size_t(cause.g) < callpaths.size() && P > 0
                                ? callpaths[size_t(cause.g)].sum[kColExclusive] / P
                                : 0.0;
        if (on_path > 0.001) {
          std::snprintf(buf, sizeof buf, "; %.3f s of the critical path run through it there", on_path);
          s += buf;
          if (mean > 0) {
            std::snprintf(buf, sizeof buf, " (the mean time per rank in that call path is %.3f s)", mean);
            s += buf;
          }
        }
      } else if (std::string(pat->id) == "wait_finalize") {
        const double* last = nullptr;
        int last_rank = -1;
        for (size_t r = 0; r < m->by_rank.size(); ++r)
          if (!last || m->by_rank[r] < *last) {
            last = &m->by_rank[r];
            last_rank = int(r);
          }
        if (last_rank >= 0) {
          std::snprintf(buf, sizeof buf, "; rank %d arrives last", last_rank);
          s += buf;
        }
      }
      found.push_back({w, Finding{s + ".", "wait_state_stats", pat->id, caused}});
    }
  }
  return found;
}

// The critical path's largest call path (start-up and shutdown left out); "" when none.
std::string critical_path_finding(const ReportInput& in) {
  const auto* cp = metric(in, "critical_path");
  if (!cp) return "";
  char buf[1024];
  double total = 0;
  long best = -1;
  for (size_t g = 0; g < cp->by_callpath.size(); ++g) {
    total += cp->by_callpath[g];
    if (is_lifecycle(path_of(in, g))) continue;
    if (best < 0 || cp->by_callpath[g] > cp->by_callpath[size_t(best)]) best = long(g);
  }
  if (best >= 0 && total > 0 && cp->by_callpath[size_t(best)] > 0) {
    const double v = cp->by_callpath[size_t(best)];
    double most = 0;
    const int r_most = largest(cp, size_t(best), most);
    std::snprintf(buf, sizeof buf, "The critical path (%.3f s) runs %.1f %% through %s (%.3f s)", total,
                  100.0 * v / total, path_of(in, size_t(best)).c_str(), v);
    std::string s = buf;
    if (r_most >= 0) {
      std::snprintf(buf, sizeof buf, ", most of it on rank %d (%.3f s)", r_most, most);
      s += buf;
    }
    const auto* imb = metric(in, "critical_path_imbalance");
    if (imb && at(imb->by_callpath, size_t(best)) > 0.001) {
      std::snprintf(buf, sizeof buf, "; balancing it would shorten the path by up to %.3f s",
                    at(imb->by_callpath, size_t(best)));
      s += buf;
    }
    return s + ".";
  }
  return "";
}

// What the simulation predicts for the best balancing hypothesis (analyzer/passes/whatif); ""
// when no hypothesis saves 1 %.
std::string whatif_finding(const ReportInput& in) {
  if (!in.extra_json->contains("whatif") || !(*in.extra_json)["whatif"].is_array()) return "";
  char buf[1024];
  const nlohmann::json* best = nullptr;
  for (const auto& e : (*in.extra_json)["whatif"])
    if (e.value("hypothesis", "").rfind("balance:", 0) == 0 && e.value("saving_pct", 0.0) >= 1.0 &&
        (!best || e.value("saving_s", 0.0) > best->value("saving_s", 0.0)))
      best = &e;
  if (best) {
    const std::string path = best->value("callpath", "");
    std::snprintf(buf, sizeof buf,
                  "Simulated: balancing %s over the ranks would save %.3f s (%.1f %% of the run)",
                  path.c_str(), best->value("saving_s", 0.0), best->value("saving_pct", 0.0));
    std::string s = buf;
    const auto* lz = metric(in, "logical_zeroing");
    const auto* sl = metric(in, "slack");
    for (size_t g = 0; lz && sl && g < in.profile->callpaths.size(); ++g)
      if (in.profile->callpaths[g].path == path && at(lz->by_callpath, g) > 0) {
        std::snprintf(buf, sizeof buf,
                      "; making it faster saves at least %.3f s (slack), %.3f s if "
                      "it took no time",
                      at(sl->by_callpath, g), at(lz->by_callpath, g));
        s += buf;
      }
    return s + " (What if).";
  }
  return "";
}

// No functions or regions: the computation is one block in main; "" otherwise.
std::string undivided_main_finding(const ReportInput& in) {
  const double alloc = allocation(in);
  char buf[1024];
  bool divided = false;
  for (const GlobalCallpath& c : in.profile->callpaths)
    if (c.kind == defs::RegionKind::kFunction || c.kind == defs::RegionKind::kUser) divided = true;
  const auto* comp = metric(in, "computation");
  double comp_s = 0;
  if (comp)
    for (double v : comp->by_rank) comp_s += v;
  if (!divided && alloc > 0 && comp_s > 0.1 * alloc) {
    std::snprintf(buf, sizeof buf,
                  "Computation (%.3f s, %.1f %% of allocation) is one undivided block in main: "
                  "build with critpath-cc/-cxx/-f90 (compiler instrumentation) or mark regions "
                  "with CRITPATH_REGION_BEGIN/END (include/critpath.h) to see where it goes.",
                  comp_s, 100.0 * comp_s / alloc);
    return buf;
  }
  return "";
}

}  // namespace

std::vector<Finding> build_findings(const ReportInput& in, size_t max) {
  std::vector<std::pair<double, Finding>> found = wait_findings(in);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Finding> out;
  for (const std::string& s : in.lead_findings) out.push_back({s, "notes", "", false});
  for (const auto& [cost, f] : found)
    if (out.size() + 2 < max) out.push_back(f);
  const std::pair<std::string, const char*> tail[] = {{critical_path_finding(in), "critical_path"},
                                                      {whatif_finding(in), "whatif"},
                                                      {undivided_main_finding(in), "callpaths"}};
  for (const auto& [text, section] : tail)
    if (!text.empty()) out.push_back({text, section, "", false});
  if (out.empty())
    out.push_back({"No wait state reaches 0.5 % of the allocation.", "wait_state_stats", "", false});
  if (out.size() > max) out.resize(max);
  return out;
}

std::string where_time_goes(const ReportInput& in) {
  const double alloc = allocation(in);
  double comp = 0, mpi = 0, waiting = 0;
  for (const auto& m : in.extra_metrics) {
    double total = 0;
    for (double v : m.by_rank) total += v;
    if (m.id == "computation") comp = total;
    if (m.id == "mpi_p2p" || m.id == "mpi_collective" || m.id == "mpi_rma" || m.id == "mpi_management")
      mpi += total;
    if (is_wait_pattern(m.id)) waiting += total;
  }
  char buf[256];
  std::string o;
  auto pct = [&](double v) { return alloc > 0 ? 100.0 * v / alloc : 0.0; };
  std::snprintf(buf, sizeof buf, "Allocation %.6f s = %d ranks x %.6f s wall time\n", alloc, in.run->size,
                in.wall_time_s);
  o += buf;
  std::snprintf(buf, sizeof buf, "  %-24s %14.6f s %7.2f %%\n", "Computation", comp, pct(comp));
  o += buf;
  std::snprintf(buf, sizeof buf, "  %-24s %14.6f s %7.2f %%\n", "MPI", mpi, pct(mpi));
  o += buf;
  std::snprintf(buf, sizeof buf, "  %-24s %14.6f s %7.2f %%\n", "  waiting (wait states)", waiting,
                pct(waiting));
  o += buf;
  std::snprintf(buf, sizeof buf, "  %-24s %14.6f s %7.2f %%\n", "  other MPI time",
                std::max(0.0, mpi - waiting), pct(std::max(0.0, mpi - waiting)));
  o += buf;
  return o;
}

std::string rank_causes_table(const ReportInput& in, size_t max_rows) {
  const GlobalProfile& p = *in.profile;
  const size_t P = p.by_rank.size();
  std::vector<double> waiting(P, 0.0);
  for (const auto& m : in.extra_metrics) {
    if (is_wait_pattern(m.id))
      for (size_t r = 0; r < P; ++r) waiting[r] += at(m.by_rank, r);
  }
  const auto* st = metric(in, "delay_cost_short_term");
  const auto* lt = metric(in, "delay_cost_long_term");
  const auto* cp = metric(in, "critical_path");
  std::vector<size_t> order(P);
  for (size_t r = 0; r < P; ++r) order[r] = r;
  auto weight = [&](size_t r) {
    return waiting[r] + (st ? at(st->by_rank, r) : 0.0) + (lt ? at(lt->by_rank, r) : 0.0);
  };
  if (P > max_rows) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weight(a) > weight(b); });
    order.resize(max_rows);
    std::sort(order.begin(), order.end());
  }
  std::string o;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%6s %12s %12s %12s %12s %12s %12s\n", "Rank", "Time", "MPI", "Waiting",
                "CausedShort", "CausedLong", "CritPath");
  o += buf;
  for (size_t r : order) {
    std::snprintf(buf, sizeof buf, "%6zu %12.6f %12.6f %12.6f %12.6f %12.6f %12.6f\n", r,
                  p.by_rank[r][kColInclusive], p.by_rank[r][kColMpi], waiting[r],
                  st ? at(st->by_rank, r) : 0.0, lt ? at(lt->by_rank, r) : 0.0,
                  cp ? at(cp->by_rank, r) : 0.0);
    o += buf;
  }
  if (P > order.size()) {
    std::snprintf(buf, sizeof buf,
                  "(%zu more ranks that suffer and cause less are not shown; all in "
                  "report.json)\n",
                  P - order.size());
    o += buf;
  }
  return o;
}

}  // namespace critpath::analyzer
