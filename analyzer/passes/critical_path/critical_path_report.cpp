// critpath — analyzer/passes/critical_path/critical_path_report.cpp
#include "analyzer/passes/critical_path/critical_path_report.h"

#include "analyzer/engine/metric_store.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "analyzer/passes/critical_path/critical_path.h"
#include "libtrace/clock/clock.h"
#include "libtrace/runtime/log.h"

namespace critpath::analyzer::passes {
namespace {

using engine::kNoCall;

constexpr size_t kTableRows = 40;  // rows of the summary table

// Per-rank totals gathered to rank 0 (the metrics' per-rank sums come from the store).
enum RankCol : int {
  kRcWork = 0,
  kRcHeadroom,
  kRcBusy,      // non-waiting work in the application phase
  kRcBusySpan,  // non-waiting work in the whole measured span
  kRcSegs,
  kRcImbalance,  // this rank's share of critical_path_imbalance (imbalance_metric)
  kRcCols
};

// CRITPATH_PARTITIONS: "0-5,6-7" = one partition per comma-separated item ("a" or "a-b").
// Ranks no item names form one more partition. False (with `why`) on bad syntax, ranks out
// of range or overlaps.
bool parse_partitions(const std::string& spec, int P, std::vector<int>& part_of, std::string& why) {
  part_of.assign(size_t(P), -1);
  int id = 0;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(pos, comma - pos);
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    pos = comma + 1;
    if (item.empty()) {
      why = "empty item";
      return false;
    }
    char* end = nullptr;
    const long a = std::strtol(item.c_str(), &end, 10);
    long z = a;
    if (*end == '-') z = std::strtol(end + 1, &end, 10);
    if (*end != '\0' || end == item.c_str() || a < 0 || z < a || z >= P) {
      why = "bad range '" + item + "' (ranks are 0.." + std::to_string(P - 1) + ")";
      return false;
    }
    for (long r = a; r <= z; ++r) {
      if (part_of[size_t(r)] >= 0) {
        why = "rank " + std::to_string(r) + " is in two partitions";
        return false;
      }
      part_of[size_t(r)] = id;
    }
    ++id;
    if (comma == spec.size()) break;
  }
  for (int& p : part_of)
    if (p < 0) p = id;
  return true;
}

// Partition ids renumbered 0..K-1 in the order of their first rank.
std::vector<int> normalize(const std::vector<int>& raw) {
  std::vector<int> out(raw.size());
  std::vector<std::pair<int, int>> seen;  // raw -> new
  for (size_t r = 0; r < raw.size(); ++r) {
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == raw[r]; });
    if (it == seen.end()) {
      seen.push_back({raw[r], int(seen.size())});
      it = seen.end() - 1;
    }
    out[r] = it->second;
  }
  return out;
}

std::string rank_ranges(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(ranks[i]);
    if (j > i) s += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s;
}

std::string bar(double f, int width) {
  const int n = int(std::lround(std::clamp(f, 0.0, 1.0) * width));
  return std::string(size_t(n), '#') + (n == 0 && f > 0 ? "." : "");
}

// Rank 0: the reduced figures per global call path the report formats.
struct CpFigures {
  const GlobalProfile& global;
  const std::vector<double>&cp_sum, &impact, &intra, &inter, &avg, &work_max, &cp_imb, &prof_imb;
  double cp_len = 0, span = 0, avg_par = 0;
  double walk_s = 0, avg_par_span = 0, busy_total = 0, app_cp = 0;  // critical_path_json
  int P = 0;
  uint64_t hops = 0;
  std::string path_of(long g) const {
    return g >= 0 && size_t(g) < global.callpaths.size() ? global.callpaths[size_t(g)].path : "-";
  }
};

// report.json critical_path: the path's figures and the parallelism histogram (the call
// paths, segments and per-rank figures are added by the caller). Rank 0.
nlohmann::json critical_path_json(const CpFigures& f, const CpLocal& acc, bool exact,
                                  const std::vector<double>& histogram, const std::string& partition_source) {
  const CpWalk& walk = acc.walk;
  const RunBounds& b = acc.b;
  const double cp_len = f.cp_len, span = f.span, walk_s = f.walk_s, avg_par = f.avg_par,
               avg_par_span = f.avg_par_span, busy_total = f.busy_total, app_cp = f.app_cp;
  const uint64_t hops = f.hops;
  nlohmann::json cpj;
  cpj["length_s"] = cp_len;
  cpj["wall_time_s"] = span;
  cpj["hops"] = hops;
  cpj["walk_mode"] = walk.gathered ? "gather" : "jump";
  cpj["walk_s"] = walk_s;
  cpj["walk_rounds"] = walk.rounds;
  cpj["walk_levels"] = walk.levels;
  cpj["walk_bytes_sent"] = walk.bytes_sent;
  cpj["partial"] = walk.partial;
  cpj["start_rank"] = b.last_finalize_rank;
  cpj["end_rank"] = b.last_init_rank;
  cpj["average_parallelism"] = avg_par;
  cpj["average_parallelism_with_init"] = avg_par_span;
  cpj["work_s"] = busy_total;
  cpj["application_phase_s"] = app_cp;
  cpj["parallelism_histogram"] = {
      {"method", exact ? "exact" : "bins"}, {"bins", exact ? 0 : kBins}, {"fraction", histogram}};
  cpj["partition_source"] = partition_source;
  return cpj;
}

// summary.txt's "Critical path" table (the call paths on the path, largest first) and its
// rows for report.json (`cp_rows`, all of them).
std::string table_section(const CpFigures& f, nlohmann::json& cp_rows) {
  const std::vector<double>&cp_sum = f.cp_sum, &impact = f.impact, &intra = f.intra, &inter = f.inter,
        &avg = f.avg, &work_max = f.work_max, &cp_imb = f.cp_imb, &prof_imb = f.prof_imb;
  const double cp_len = f.cp_len, span = f.span, avg_par = f.avg_par;
  const int P = f.P;
  const uint64_t hops = f.hops;
  const size_t G = cp_sum.size();
  auto path_of = [&](long g) { return f.path_of(g); };
  std::vector<size_t> rows;
  for (size_t g = 0; g < G; ++g)
    if (cp_sum[g] > 0 || intra[g] + inter[g] > 0) rows.push_back(g);
  std::stable_sort(rows.begin(), rows.end(), [&](size_t x, size_t y) { return cp_sum[x] > cp_sum[y]; });
  // MPI_Init/Finalize carry start-up and shutdown skew, not the application's imbalance:
  // never flagged.
  auto lifecycle = [&](size_t g) {
    const std::string p = path_of(long(g));
    for (const char* r : {"/MPI_Init", "/MPI_Init_thread", "/MPI_Finalize"}) {
      const size_t n = std::strlen(r);
      if (p.size() >= n && p.compare(p.size() - n, n, r) == 0) return true;
    }
    return false;
  };
  auto dynamic_flag = [&](size_t g) {
    return !lifecycle(g) && cp_imb[g] - prof_imb[g] > std::max({0.001, 0.05 * cp_sum[g], 0.005 * cp_len});
  };
  char buf[1024];
  std::string body;
  std::snprintf(buf, sizeof buf,
                "Critical path %.6f s = wall time %.6f s (%.2f %%); %llu hops; average parallelism %.2f\n"
                "CP: time on the critical path; Avg/Max: non-waiting time per rank (avg over all %d ranks);\n"
                "CPImb = max(CP - Avg, 0); Imb%% = CPImb / CP; Impact = all ranks' own time + imbalance\n"
                "costs (Intra: within the partition, Inter: partitions that never run it; allocation s).\n"
                "Flag D: CPImb exceeds the profile imbalance (Max - Avg) noticeably: dynamic imbalance.\n",
                cp_len, span, span > 0 ? 100.0 * cp_len / span : 0.0, (unsigned long long)hops, avg_par, P);
  body += buf;
  std::snprintf(buf, sizeof buf, "%-40s %11s %6s %11s %11s %11s %6s %11s %11s %11s %s\n", "Call path", "CP",
                "%CP", "Avg", "Max", "CPImb", "Imb%", "Impact", "Intra", "Inter", "Flag");
  body += buf;
  double rest_cp = 0;
  size_t rest_n = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const size_t g = rows[i];
    const bool dyn = dynamic_flag(g);
    cp_rows.push_back({{"path", path_of(long(g))},
                       {"critical_path_s", cp_sum[g]},
                       {"critical_path_pct", cp_len > 0 ? 100.0 * cp_sum[g] / cp_len : 0.0},
                       {"avg_s", avg[g]},
                       {"max_s", work_max[g]},
                       {"critical_path_imbalance_s", cp_imb[g]},
                       {"imbalance_pct", cp_sum[g] > 0 ? 100.0 * cp_imb[g] / cp_sum[g] : 0.0},
                       {"profile_imbalance_s", prof_imb[g]},
                       {"performance_impact_s", impact[g]},
                       {"imbalance_cost_intra_s", intra[g]},
                       {"imbalance_cost_inter_s", inter[g]},
                       {"dynamic_imbalance", dyn}});
    if (i >= kTableRows) {
      rest_cp += cp_sum[g];
      ++rest_n;
      continue;
    }
    std::snprintf(buf, sizeof buf, "%-40s %11.6f %6.2f %11.6f %11.6f %11.6f %6.2f %11.6f %11.6f %11.6f %s\n",
                  path_of(long(g)).c_str(), cp_sum[g], cp_len > 0 ? 100.0 * cp_sum[g] / cp_len : 0.0, avg[g],
                  work_max[g], cp_imb[g], cp_sum[g] > 0 ? 100.0 * cp_imb[g] / cp_sum[g] : 0.0, impact[g],
                  intra[g], inter[g], dyn ? "D" : "");
    body += buf;
  }
  if (rest_n > 0) {
    std::snprintf(buf, sizeof buf, "(%zu more call paths: %.6f s of critical path; all in report.json)\n",
                  rest_n, rest_cp);
    body += buf;
  }
  return body;
}

// summary.txt's "Parallelism" section: the average and the histogram of working ranks.
std::string parallelism_section(double avg_par, double busy_total, double app_cp, double avg_par_span,
                                bool exact, const std::vector<double>& histogram, int P) {
  char buf[1024];
  std::string hist;
  std::snprintf(buf, sizeof buf,
                "Average parallelism %.3f = non-waiting work %.6f s (all ranks) / critical path %.6f s,\n"
                "both after the first MPI_Init exit (from the first MPI_Init entry: %.3f)\n"
                "Fraction of that time during which k ranks do non-waiting work (%s):\n",
                avg_par, busy_total, app_cp, avg_par_span, exact ? "exact" : "4096 bins");
  hist += buf;
  const int groups = P + 1 <= 33 ? P + 1 : 32;  // rows: one per k, or 32 ranges of k
  for (int i = 0; i < groups; ++i) {
    const int lo = int(int64_t(i) * (P + 1) / groups), hi = int(int64_t(i + 1) * (P + 1) / groups) - 1;
    double f = 0;
    for (int k = lo; k <= hi; ++k) f += histogram[size_t(k)];
    std::string label = lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
    std::snprintf(buf, sizeof buf, "%9s %7.4f %s\n", label.c_str(), f, bar(f, 50).c_str());
    hist += buf;
  }
  return hist;
}

// The process partitions (MPI_APPNUM, or CRITPATH_PARTITIONS as rank 0 reads it), the group of
// this rank's partition, and (rank 0) every rank's executable.
struct Partitions {
  // [rank], on rank 0 (part_of on every rank when there are several partitions); part_of:
  // 0..K-1 in the order of first ranks.
  std::vector<int> appnums, part_of;
  std::string source;               // rank 0: "MPI_APPNUM" or "CRITPATH_PARTITIONS"
  std::vector<std::string> exe_of;  // rank 0: [rank]
  // The group of this rank's partition: the whole group when there is one partition (no
  // MPI_Comm_split: at 256 oversubscribed ranks its polling was ~34 of a rank's ~300 context
  // switches in the analysis), else `own`; nullptr when the split failed.
  const engine::Group* group = nullptr;
  engine::Group own;
};

// Collective over `group`.
Status find_partitions(const CriticalPathInput& in, const engine::Group& group, Partitions& out) {
  const RunInfo& run = *in.run;
  const int me = group.rank(), P = group.size();
  Status status = Status::kOk;
  auto mpi_ok = [&](Status rc) {
    if (rc != Status::kOk) status = rc;
    return rc == Status::kOk;
  };
  // Rank 0 gathers the MPI_APPNUMs and decides (ranks of different executables may see
  // different environments); the others learn their partition, P entries only when there are
  // several.
  std::vector<int> counts, displs;
  mpi_ok(group.gather_to_root(&run.appnum, 1, out.appnums, counts, displs));
  std::vector<int>& part_of = out.part_of;
  std::string& part_source = out.source;
  part_source = "MPI_APPNUM";
  int several = 0;
  if (me == 0) {
    if (out.appnums.size() != size_t(P)) out.appnums.assign(size_t(P), 0);
    part_of = out.appnums;
    const std::string& spec = in.partitions;
    if (!spec.empty()) {
      std::string why;
      std::vector<int> parsed;
      if (parse_partitions(spec, P, parsed, why)) {
        part_of = parsed;
        part_source = "CRITPATH_PARTITIONS";
      } else {
        part_source = "MPI_APPNUM (CRITPATH_PARTITIONS invalid)";
        log::warn("CRITPATH_PARTITIONS='%s': %s; partitioning by MPI_APPNUM instead", spec.c_str(),
                  why.c_str());
      }
    }
    part_of = normalize(part_of);
    several = std::any_of(part_of.begin(), part_of.end(), [](int p) { return p != 0; }) ? 1 : 0;
  }
  mpi_ok(group.broadcast(&several, 1));
  if (several) {
    part_of.resize(size_t(P));
    mpi_ok(group.broadcast(part_of.data(), part_of.size()));
  }
  if (!several) out.group = &group;
  else if (mpi_ok(group.split(part_of[size_t(me)], out.own))) out.group = &out.own;
  // Executable names, for the partitions' names.
  {
    std::vector<char> all;
    std::vector<int> lens, displs;
    if (group.gather_to_root(run.executable.data(), run.executable.size(), all, lens, displs) != Status::kOk)
      status = Status::kMpiError;
    if (me == 0)
      for (int r = 0; r < P; ++r)
        out.exe_of.emplace_back(all.data() + displs[size_t(r)], size_t(lens[size_t(r)]));
  }
  return status;
}

// Global call path of local node `node`; -1 when it has none.
long global_id(const std::vector<int>& l2g, size_t G, int32_t node) {
  if (node < 0 || size_t(node) >= l2g.size()) return -1;
  const long g = l2g[size_t(node)];
  return g >= 0 && size_t(g) < G ? g : -1;
}

// This rank's CP time and non-waiting work per global call path, and which it visited.
struct LocalWork {
  std::vector<double> cp, work;
  std::vector<int> visited;
  double work_total = 0;
};

LocalWork local_work(const CriticalPathInput& in, const CpLocal& acc, size_t G) {
  const RunInfo& run = *in.run;
  const LocalProfile& local = *in.local;
  const std::vector<int>& l2g = *in.local_to_global;
  LocalWork lw;
  lw.cp.assign(G, 0.0);
  lw.work.assign(G, 0.0);
  lw.visited.assign(G, 0);
  std::vector<double>& cp = lw.cp;
  std::vector<int>& visited = lw.visited;
  std::vector<double> waits(G, 0.0), excl(G, 0.0);
  for (size_t n = 0; n < local.nodes.size(); ++n) {
    const long g = global_id(l2g, G, int32_t(n));
    if (g < 0) continue;
    if (n < acc.cp_node.size()) cp[size_t(g)] += acc.cp_node[n];
    if (n < acc.wait_node.size()) waits[size_t(g)] += acc.wait_node[n];
    excl[size_t(g)] += run.conv.ticks_to_seconds(local.nodes[n].exclusive_ticks);
    if (local.nodes[n].visits > 0) visited[size_t(g)] = 1;
  }
  for (size_t g = 0; g < G; ++g) {
    lw.work[g] = std::max(excl[g] - waits[g], 0.0);
    lw.work_total += lw.work[g];
  }
  return lw;
}

// Every rank's longest segments (at most kMaxSegments each) on rank 0: (begin, end, global
// call path) triples per rank.
struct GatheredSegments {
  std::vector<double> all;
  std::vector<int> counts, displs;
};

Status gather_segments(const std::vector<CpSegment>& segments, const std::vector<int>& l2g, size_t G,
                       const engine::Group& group, GatheredSegments& out) {
  std::vector<CpSegment> s = segments;
  if (s.size() > kMaxSegments) {
    std::nth_element(
        s.begin(), s.begin() + long(kMaxSegments), s.end(),
        [](const CpSegment& x, const CpSegment& y) { return x.end - x.begin > y.end - y.begin; });
    s.resize(kMaxSegments);
  }
  std::vector<double> flat;
  for (const CpSegment& x : s) {
    flat.push_back(x.begin);
    flat.push_back(x.end);
    flat.push_back(double(global_id(l2g, G, x.node)));
  }
  return group.gather_to_root(flat.data(), flat.size(), out.all, out.counts, out.displs);
}

// Step 4, local: books this rank's critical_path, performance_impact and imbalance costs per
// call path into `store`. `gcp`: every rank's CP time per call path; `occurs`: whether the
// rank's partition visited it. Returns the headroom (CP length - own work).
double book_costs(const LocalWork& lw, const std::vector<double>& gcp, const std::vector<int>& occurs,
                  double cp_len, engine::MetricStore& store) {
  const std::vector<double>&cp = lw.cp, &work = lw.work;
  const size_t G = cp.size();
  const double headroom = std::max(cp_len - lw.work_total, 0.0);
  std::vector<double> excess(G, 0.0);
  double excess_sum = 0;
  for (size_t g = 0; g < G; ++g) {
    excess[g] = std::max(gcp[g] - work[g], 0.0);
    excess_sum += excess[g];
  }
  const double alpha = excess_sum > 0 ? headroom / excess_sum : 0.0;
  const int m_cp = store.slot("critical_path"), m_impact = store.slot("performance_impact"),
            m_intra = store.slot("imbalance_cost_intra"), m_inter = store.slot("imbalance_cost_inter");
  for (size_t g = 0; g < G; ++g) {
    const double cost = alpha * excess[g];
    store.add(m_cp, long(g), cp[g]);
    store.add(m_impact, long(g), work[g] + cost);
    store.add(occurs[g] ? m_intra : m_inter, long(g), cost);
  }
  return headroom;
}

// critical_path_imbalance, derived on rank 0: by call path from the reduced sums; by rank
// each rank's share (imbalance_share, gathered in kRcImbalance).
engine::ReducedMetric imbalance_metric(const std::vector<double>& cp_imb, const std::vector<double>& rc_all,
                                       int P) {
  engine::ReducedMetric imb;
  const engine::MetricDecl* d = engine::find_metric("critical_path_imbalance");
  imb.id = "critical_path_imbalance";
  imb.unit = d != nullptr ? d->unit : "s";
  imb.description = d != nullptr ? d->definition : "";
  imb.by_callpath = cp_imb;
  imb.by_rank.assign(size_t(P), 0.0);
  for (int r = 0; r < P; ++r) imb.by_rank[size_t(r)] = rc_all[size_t(r) * kRcCols + kRcImbalance];
  return imb;
}

// report.json run.partitions: one row per partition (its first rank's executable as name).
nlohmann::json partition_rows(const Partitions& parts, const std::string& executable, int P) {
  const std::vector<int>& part_of = parts.part_of;
  nlohmann::json part_rows = nlohmann::json::array();
  int n_parts = 0;
  for (int p : part_of) n_parts = std::max(n_parts, p + 1);
  for (int p = 0; p < n_parts; ++p) {
    std::vector<int> ranks;
    for (int r = 0; r < P; ++r)
      if (part_of[size_t(r)] == p) ranks.push_back(r);
    if (ranks.empty()) continue;
    part_rows.push_back({{"name", parts.exe_of.empty() ? executable : parts.exe_of[size_t(ranks.front())]},
                         {"first_rank", ranks.front()},
                         {"ranks", int(ranks.size())},
                         {"rank_list", ranks},
                         {"appnum", parts.appnums[size_t(ranks.front())]}});
  }
  return part_rows;
}

// report.json critical_path.segments: the longest segments of all ranks, by start time
// (seconds since `origin`, the first MPI_Init entry).
nlohmann::json segments_json(const GatheredSegments& in, const std::vector<double>& rc_all, int P,
                             double origin, const CpFigures& f) {
  const std::vector<double>& seg_all = in.all;
  const std::vector<int>&seg_counts = in.counts, &seg_displs = in.displs;
  nlohmann::json segs = nlohmann::json::array();
  struct Seg {
    double b, e;
    long g;
    int r;
  };
  std::vector<Seg> all_segs;
  double segs_total = 0;
  for (int r = 0; r < P; ++r) {
    segs_total += rc_all[size_t(r) * kRcCols + kRcSegs];
    for (int i = seg_displs[size_t(r)]; i + 2 < seg_displs[size_t(r)] + seg_counts[size_t(r)]; i += 3)
      all_segs.push_back({seg_all[size_t(i)], seg_all[size_t(i) + 1], long(seg_all[size_t(i) + 2]), r});
  }
  if (all_segs.size() > kMaxSegments) {
    std::nth_element(all_segs.begin(), all_segs.begin() + long(kMaxSegments), all_segs.end(),
                     [](const Seg& x, const Seg& y) { return x.e - x.b > y.e - y.b; });
    all_segs.resize(kMaxSegments);
  }
  std::sort(all_segs.begin(), all_segs.end(), [](const Seg& x, const Seg& y) { return x.b < y.b; });
  // Each entry built in place (an initializer list copies every value twice: a tenth of the
  // analysis of a ping-pong's rank 0, with its 10,000 segments).
  nlohmann::json::array_t& list = segs.get_ref<nlohmann::json::array_t&>();
  list.reserve(all_segs.size());
  for (const Seg& s : all_segs) {
    nlohmann::json::object_t o;
    o.emplace("rank", s.r);
    o.emplace("begin_s", s.b - origin);
    o.emplace("end_s", s.e - origin);
    o.emplace("callpath", f.path_of(s.g));
    list.emplace_back(std::move(o));
  }
  return {{"total", segs_total},
          {"kept", all_segs.size()},
          {"truncated", double(all_segs.size()) < segs_total},
          {"list", std::move(segs)}};
}

}  // namespace

// Rank 0: per call path the average non-waiting work over all ranks, the critical-path
// imbalance max(CP - avg, 0) and the profile imbalance max(max - avg, 0).
void derive_imbalance(const std::vector<double>& cp_sum, const std::vector<double>& work_sum,
                      const std::vector<double>& work_max, int P, std::vector<double>& avg,
                      std::vector<double>& cp_imb, std::vector<double>& prof_imb) {
  const size_t G = cp_sum.size();
  avg.assign(G, 0.0);
  cp_imb.assign(G, 0.0);
  prof_imb.assign(G, 0.0);
  for (size_t g = 0; g < G; ++g) {
    avg[g] = work_sum[g] / P;
    cp_imb[g] = std::max(cp_sum[g] - avg[g], 0.0);
    prof_imb[g] = std::max(work_max[g] - avg[g], 0.0);
  }
}

// Column `col` (RankCol) of the gathered per-rank totals.
std::vector<double> rank_column(const std::vector<double>& rc_all, int P, int col) {
  std::vector<double> v(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) v[size_t(r)] = rc_all[size_t(r) * kRcCols + size_t(col)];
  return v;
}

// The "Critical path" section's partitions line.
std::string partitions_line(const nlohmann::json& part_rows, const std::string& source) {
  std::string part_text;
  for (const auto& pj : part_rows)
    part_text += (part_text.empty() ? "" : ", ") + pj["name"].get<std::string>() + " [" +
                 rank_ranges(pj["rank_list"].get<std::vector<int>>()) + "]";
  return "Partitions (" + source + "): " + part_text + "\n";
}

// summary.txt's "@ Critical path" header line.
std::string header_line(const CpFigures& f, bool gathered, double analysis_s) {
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      "@ Critical path   : %.6f s (%.2f %% of wall time), %llu hops (%s); average parallelism %.2f; "
      "%.3f s analysis (walk %.3f s)",
      f.cp_len, f.span > 0 ? 100.0 * f.cp_len / f.span : 0.0, (unsigned long long)f.hops,
      gathered ? "walked on rank 0" : "pointer jumping", f.avg_par, analysis_s, f.walk_s);
  return buf;
}

// Step 5, rank 0: the parallelism histogram of the whole run (critical_path_window's, per
// window weighted by its length), P + 1 fractions.
std::vector<double> parallelism_histogram(const CpLocal& acc, int me, int P) {
  std::vector<double> histogram = acc.histogram;
  if (acc.windows > 1 && acc.hist_len > 0)
    for (double& f : histogram) f /= acc.hist_len;
  if (me == 0 && histogram.size() != size_t(P) + 1) histogram.assign(size_t(P) + 1, 0.0);
  return histogram;
}

// This rank's share of critical_path_imbalance: per call path the imbalance spread over the
// ranks in proportion to their critical_path time there, summed over the call paths.
double imbalance_share(const std::vector<double>& cp, const std::vector<double>& cp_sum,
                       const std::vector<double>& work_sum, const std::vector<double>& work_max, int P) {
  std::vector<double> avg, cp_imb, prof_imb;
  derive_imbalance(cp_sum, work_sum, work_max, P, avg, cp_imb, prof_imb);
  double share = 0;
  for (size_t g = 0; g < cp.size(); ++g)
    if (cp_sum[g] > 0 && cp[g] != 0) share += cp_imb[g] * cp[g] / cp_sum[g];
  return share;
}

// Step 4's collectives and their results (rank 0 holds the reduced ones).
struct CpReduced {
  double cp_len = 0;                           // every rank: the path's length
  std::vector<engine::ReducedMetric> metrics;  // the store's four slots, in slot order
  std::vector<double> work_sum, work_max;      // non-waiting work per call path over the ranks
  std::vector<double> rc_all;                  // [rank][RankCol]
};

// Collective over `group`: sums every rank's CP time per call path and the path's length,
// books the imbalance costs (book_costs) and reduces them with the per-rank totals.
Status reduce_costs(const LocalWork& lw, const CpLocal& acc, const engine::Group& group, Partitions& parts,
                    size_t G, CpReduced& out, std::vector<engine::RankDetail>* rank_detail) {
  const std::vector<double>&cp = lw.cp, &work = lw.work;
  const std::vector<int>& visited = lw.visited;
  const double work_total = lw.work_total;
  Status status = Status::kOk;
  auto mpi_ok = [&](Status rc) {
    if (rc != Status::kOk) status = rc;
    return rc == Status::kOk;
  };
  // Summed over ranks in one reduction: every rank's CP time per call path, the path's length
  // and the non-waiting work per call path.
  std::vector<double> sums(cp);
  sums.push_back(acc.seg_len);
  sums.insert(sums.end(), work.begin(), work.end());
  mpi_ok(group.allreduce(sums.data(), sums.size(), engine::ReduceOp::kSum));
  const std::vector<double> gcp(sums.begin(), sums.begin() + long(G));
  double& cp_len = out.cp_len;
  cp_len = sums[G];
  out.work_sum.assign(sums.begin() + long(G) + 1, sums.end());
  std::vector<int> occurs(G, 0);
  if (parts.group) {
    occurs = visited;
    mpi_ok(parts.group->allreduce(occurs.data(), G, engine::ReduceOp::kMax));
  }
  // The pass's metrics (critical_path_metrics.cpp) booked per call path into the store, which
  // reduces them once; critical_path_imbalance is derived on the root from the reduced ones.
  engine::MetricStore store{G};
  const double headroom = book_costs(lw, gcp, occurs, cp_len, store);
  std::vector<double> rc(kRcCols, 0.0);
  rc[kRcWork] = work_total;
  rc[kRcHeadroom] = headroom;
  rc[kRcSegs] = double(acc.segments);
  rc[kRcBusySpan] = acc.busy_span;
  rc[kRcBusy] = acc.busy;
  out.work_max = work;  // its maximum over the ranks rides in the store's
  mpi_ok(store.reduce(group, out.metrics, rank_detail, nullptr, &out.work_max));
  rc[kRcImbalance] = imbalance_share(cp, gcp, out.work_sum, out.work_max, group.size());
  mpi_ok(group.gather_rows(rc.data(), kRcCols, out.rc_all));
  return status;
}

Status analyze_critical_path(const CriticalPathInput& in, const CpLocal& acc, const engine::Group& group,
                             ReportInput& rep) {
  const uint64_t t_begin = clock::monotonic_ns();
  const std::vector<int>& l2g = *in.local_to_global;
  const int me = group.rank(), P = group.size();
  const size_t G = size_t(std::max(in.n_callpaths, 0));
  Status status = Status::kOk;
  auto mpi_ok = [&](Status rc) {
    if (rc != Status::kOk) status = rc;
    return rc == Status::kOk;
  };
  const RunBounds& b = acc.b;
  const CpWalk& walk = acc.walk;
  uint64_t hops = acc.hop_adjust;  // the hops at the cuts, summed over the ranks, plus the walks'
  mpi_ok(group.allreduce(&hops, 1, engine::ReduceOp::kSum));
  hops += walk.hops;

  // --- 2. Partitions: MPI_APPNUM, or CRITPATH_PARTITIONS.
  Partitions parts;
  mpi_ok(find_partitions(in, group, parts));

  // --- 3. CP time and waiting time per global call path.
  const LocalWork lw = local_work(in, acc, G);

  // --- 4. Imbalance costs: headroom h = CP length − own work, spread over the call paths
  //        where this rank did less than the critical path did (excess δ), scaled to h.
  CpReduced red;
  mpi_ok(reduce_costs(lw, acc, group, parts, G, red, &rep.rank_detail));
  const double cp_len = red.cp_len;
  const std::vector<engine::ReducedMetric>& reduced = red.metrics;
  const std::vector<double>&work_sum = red.work_sum, &work_max = red.work_max, &rc_all = red.rc_all;
  const double t0 = acc.t0, t1 = acc.t1;

  // --- 5. Parallelism (critical_path_window): rank 0's histogram, per window weighted by
  //        its length.
  const bool exact = acc.hist_exact;
  const std::vector<double> histogram = parallelism_histogram(acc, me, P);

  // --- 6. Segments for the timeline export: the longest ones, size-capped.
  GatheredSegments segs_in;
  if (gather_segments(walk.segments, l2g, G, group, segs_in) != Status::kOk) status = Status::kMpiError;
  if (me != 0 || status != Status::kOk) return status;

  // --- 7. Rank 0: metrics, sections, JSON.
  const GlobalProfile& global = *in.global;
  const double span = t1 - b.first_init_enter;
  const double app_span = t1 - t0;
  if (reduced.size() != 4) return Status::kCorrupt;  // the four slots above, in that order
  const std::vector<double>&cp_sum = reduced[0].by_callpath, &impact = reduced[1].by_callpath,
        &intra = reduced[2].by_callpath, &inter = reduced[3].by_callpath;
  std::vector<double> cp_imb, prof_imb, avg;
  derive_imbalance(cp_sum, work_sum, work_max, P, avg, cp_imb, prof_imb);
  // critical_path_imbalance, derived: by call path from the reduced sums; by rank spread in
  // proportion to each rank's critical_path share of the call path.
  engine::ReducedMetric imb = imbalance_metric(cp_imb, rc_all, P);
  // In the declarations' order: critical_path, critical_path_imbalance, then the others.
  rep.extra_metrics.push_back(reduced[0]);
  rep.extra_metrics.push_back(std::move(imb));
  for (size_t m = 1; m < reduced.size(); ++m) rep.extra_metrics.push_back(reduced[m]);

  double busy_total = 0, busy_span_total = 0;
  for (double v : rank_column(rc_all, P, kRcBusy)) busy_total += v;
  for (double v : rank_column(rc_all, P, kRcBusySpan)) busy_span_total += v;
  // The critical path's length within the application phase is the phase's length (the
  // path tiles the span).
  const double app_cp = std::min(app_span, cp_len);
  const double avg_par = app_cp > 0 ? busy_total / app_cp : 0.0;
  const double avg_par_span = cp_len > 0 ? busy_span_total / cp_len : 0.0;
  const double analysis_s = acc.analysis_s + double(clock::monotonic_ns() - t_begin) * 1e-9;

  nlohmann::json part_rows = partition_rows(parts, in.run->executable, P);
  const CpFigures f{global, cp_sum, impact,  intra,      inter,        avg,        work_max, cp_imb, prof_imb,
                    cp_len, span,   avg_par, acc.walk_s, avg_par_span, busy_total, app_cp,   P,      hops};
  nlohmann::json cp_rows = nlohmann::json::array();
  std::string body = table_section(f, cp_rows);
  body += partitions_line(part_rows, parts.source);
  if (walk.partial) body += "The walk was cut short (inconsistent trace): the path is partial.\n";
  rep.sections.push_back({"Critical path (seconds)", body});
  rep.sections.push_back(
      {"Parallelism (ranks doing non-waiting work)",
       parallelism_section(avg_par, busy_total, app_cp, avg_par_span, exact, histogram, P)});

  rep.header_lines.push_back(header_line(f, walk.gathered, analysis_s));
  if (walk.partial)
    rep.notes.push_back("rank 0: the critical-path walk was cut short; its results are partial");

  // JSON.
  nlohmann::json cpj = critical_path_json(f, acc, exact, histogram, parts.source);
  cpj["callpaths"] = std::move(cp_rows);
  cpj["segments"] = segments_json(segs_in, rc_all, P, b.first_init_enter, f);
  cpj["headroom_by_rank_s"] = rank_column(rc_all, P, kRcHeadroom);
  cpj["work_by_rank_s"] = rank_column(rc_all, P, kRcBusySpan);
  (*rep.extra_json)["critical_path"] = std::move(cpj);
  rep.scalars.set("critical_path_length_s", cp_len);
  rep.scalars.set("critical_path_hops", hops);
  rep.scalars.set("average_parallelism", avg_par);
  (*rep.extra_json)["run"]["partitions"] = std::move(part_rows);
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
