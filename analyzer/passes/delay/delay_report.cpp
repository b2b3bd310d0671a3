// critpath — analyzer/passes/delay/delay_report.cpp
#include "analyzer/passes/delay/delay_report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace critpath::analyzer::passes {
namespace {

const engine::ReducedMetric* find(const ReportInput& in, const char* id) {
  for (const auto& m : in.extra_metrics)
    if (m.id == id) return &m;
  return nullptr;
}

double at(const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : 0.0; }

// One grid of per-rank values over a Cartesian communicator: 1-D one row, 2-D dims[0] rows of
// dims[1] columns, 3-D and more as slices over the leading dimensions.
std::string grid(const char* title, const defs::CommDef& c, const std::vector<double>& by_rank) {
  std::string o = std::string("  ") + title + " (seconds per rank; rows: first coordinate)\n";
  const size_t nd = c.dims.size();
  const int cols = nd >= 1 ? c.dims[nd - 1] : 1, rows = nd >= 2 ? c.dims[nd - 2] : 1;
  int slices = 1;
  for (size_t i = 0; i + 2 < nd; ++i) slices *= c.dims[i];
  char buf[64];
  for (int s = 0; s < slices; ++s) {
    if (slices > 1) {
      std::snprintf(buf, sizeof buf, "  slice %d:\n", s);
      o += buf;
    }
    for (int r = 0; r < rows; ++r) {
      o += "   ";
      for (int k = 0; k < cols; ++k) {
        const size_t cart = size_t((s * rows + r) * cols + k);
        const double v = cart < c.members.size() ? at(by_rank, size_t(c.members[cart])) : 0.0;
        std::snprintf(buf, sizeof buf, " %8.3f", v);
        o += buf;
      }
      o += "\n";
    }
  }
  return o;
}

// The ten call paths whose delays cost most, with the rank that delayed most there.
std::string delaying_callpaths(const engine::ReducedMetric& st_m, const engine::ReducedMetric& lt_m,
                               const GlobalProfile& global) {
  const engine::ReducedMetric *st = &st_m, *lt = &lt_m;
  std::string o;
  char buf[512];
  std::vector<size_t> order;
  const size_t G = std::max(st->by_callpath.size(), lt->by_callpath.size());
  for (size_t g = 0; g < G; ++g)
    if (at(st->by_callpath, g) + at(lt->by_callpath, g) > 0) order.push_back(g);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return at(st->by_callpath, a) + at(lt->by_callpath, a) > at(st->by_callpath, b) + at(lt->by_callpath, b);
  });
  // The rank whose short- plus long-term cost is largest at `g` (the reduction's pair).
  auto top_rank = [&](size_t g, int& rank) {
    rank = -1;
    for (const engine::PairedTop& p : st->paired)
      if (size_t(p.callpath) == g) {
        rank = p.rank;
        return p.short_term + p.long_term;
      }
    return -1.0;
  };
  std::snprintf(buf, sizeof buf, "%-44s %12s %12s %12s  %s\n", "Delaying call path", "Short-term",
                "Long-term", "Total", "Most delaying rank (seconds)");
  o += buf;
  for (size_t i = 0; i < order.size() && i < 10; ++i) {
    const size_t g = order[i];
    int rank = -1;
    const double rv = top_rank(g, rank);
    const std::string path = g < global.callpaths.size() ? global.callpaths[g].path : "?";
    std::snprintf(buf, sizeof buf, "%-44s %12.6f %12.6f %12.6f  %d (%.6f)\n", path.c_str(),
                  at(st->by_callpath, g), at(lt->by_callpath, g),
                  at(st->by_callpath, g) + at(lt->by_callpath, g), rank, rv);
    o += buf;
  }
  if (order.empty()) o += "  (no delay caused any analysed wait state)\n";
  return o;
}

// The ten ranks whose delays cost most.
std::string delaying_ranks(const engine::ReducedMetric& st_m, const engine::ReducedMetric& lt_m) {
  const engine::ReducedMetric *st = &st_m, *lt = &lt_m;
  std::string o;
  char buf[512];
  std::vector<size_t> ranks;
  for (size_t r = 0; r < st->by_rank.size(); ++r)
    if (at(st->by_rank, r) + at(lt->by_rank, r) > 0) ranks.push_back(r);
  std::sort(ranks.begin(), ranks.end(), [&](size_t a, size_t b) {
    return at(st->by_rank, a) + at(lt->by_rank, a) > at(st->by_rank, b) + at(lt->by_rank, b);
  });
  if (!ranks.empty()) {
    std::snprintf(buf, sizeof buf, "%-10s %12s %12s %12s\n", "Rank", "Short-term", "Long-term", "Total");
    o += buf;
    for (size_t i = 0; i < ranks.size() && i < 10; ++i) {
      const size_t r = ranks[i];
      std::snprintf(buf, sizeof buf, "%-10zu %12.6f %12.6f %12.6f\n", r, at(st->by_rank, r),
                    at(lt->by_rank, r), at(st->by_rank, r) + at(lt->by_rank, r));
      o += buf;
    }
  }
  return o;
}

// Maps over the Cartesian topologies (at most four): waiting time, short- and long-term
// delay cost per rank; each topology also goes to report.json `topologies`.
std::string topology_maps(const defs::Definitions& definitions, const engine::ReducedMetric* wd,
                          const engine::ReducedMetric* wi, const engine::ReducedMetric& st_m,
                          const engine::ReducedMetric& lt_m, nlohmann::json& extra_json) {
  const engine::ReducedMetric *st = &st_m, *lt = &lt_m;
  std::string o;
  char buf[512];
  // Maps over the Cartesian topologies ([Böhme2010] Fig. 5 in text).
  std::vector<double> waiting;
  if (wd && wi)
    for (size_t r = 0; r < std::max(wd->by_rank.size(), wi->by_rank.size()); ++r)
      waiting.push_back(at(wd->by_rank, r) + at(wi->by_rank, r));
  std::set<std::pair<std::vector<int32_t>, std::vector<int32_t>>> seen;
  std::vector<defs::CommDef> comms = definitions.comms.snapshot();
  std::sort(comms.begin(), comms.end(),
            [](const defs::CommDef& a, const defs::CommDef& b) { return a.id < b.id; });
  int maps = 0;
  for (const defs::CommDef& c : comms) {
    if (c.dims.empty() || c.members.size() < 2 || maps >= 4) continue;
    if (!seen.insert({c.dims, c.members}).second) continue;
    ++maps;
    std::string dims;
    for (size_t i = 0; i < c.dims.size(); ++i) dims += (i ? "x" : "") + std::to_string(c.dims[i]);
    std::snprintf(buf, sizeof buf, "Cartesian topology %s (%s, %zu ranks):\n", dims.c_str(),
                  c.created_by.c_str(), c.members.size());
    o += buf;
    extra_json["topologies"].push_back(
        {{"created_by", c.created_by}, {"dims", c.dims}, {"members", c.members}});
    o += grid("waiting time", c, waiting);
    o += grid("short-term delay cost", c, st->by_rank);
    o += grid("long-term delay cost", c, lt->by_rank);
  }
  return o;
}

}  // namespace

Status report_delay(const DelayResult& res, const engine::MetricStore& store, const engine::Group& group,
                    const defs::Definitions& definitions, const GlobalProfile& global, ReportInput& in) {
  std::vector<double> sums = {res.analysed_s, res.remainder_s, double(res.bytes_sent), double(res.instances)};
  CRITPATH_FORWARD_IF_ERROR(store.reduce(group, in.extra_metrics, &in.rank_detail, &sums));
  if (!group.is_root()) return Status::kOk;
  in.scalars.set("delay_analysed_s", sums[0]);
  in.scalars.set("delay_remainder_s", sums[1]);
  in.scalars.set("delay_bytes", sums[2]);
  in.scalars.set("delay_wait_instances", sums[3]);
  in.scalars.set("delay_propagation_batches", res.batches);
  in.scalars.set("delay_largest_batch", res.largest_batch);
  in.scalars.set("delay_distributed", res.distributed ? 1 : 0);
  if (res.largest_batch > kDelayGraphLimit) {
    char note[200];
    std::snprintf(note, sizeof note,
                  "delay analysis: one phase between global synchronizations holds %llu wait "
                  "instances (more than %llu): rank 0 held them at once (~60 B each)",
                  static_cast<unsigned long long>(res.largest_batch),
                  static_cast<unsigned long long>(kDelayGraphLimit));
    in.notes.push_back(note);
  }
  const engine::ReducedMetric* st = find(in, "delay_cost_short_term");
  const engine::ReducedMetric* lt = find(in, "delay_cost_long_term");
  if (!st || !lt) return Status::kOk;
  double st_total = 0, lt_total = 0;
  for (double v : st->by_rank) st_total += v;
  for (double v : lt->by_rank) lt_total += v;

  std::string o;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Waiting time analysed %.6f s = short-term cost %.6f s + long-term cost %.6f s + "
                "unexplained %.6f s\n",
                sums[0], st_total, lt_total, sums[1]);
  o += buf;
  o += "Short-term: the waits a delay caused directly; long-term: the waits those waits caused "
       "in turn.\n";
  o += delaying_callpaths(*st, *lt, global);
  o += delaying_ranks(*st, *lt);
  o += topology_maps(definitions, find(in, "wait_direct"), find(in, "wait_indirect"), *st, *lt,
                     *in.extra_json);
  in.sections.push_back({"Root causes of waiting time", o});
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
