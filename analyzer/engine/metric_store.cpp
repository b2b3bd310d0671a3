// critpath — analyzer/engine/metric_store.cpp: the declarations' registry and the reduction.
#include "analyzer/engine/metric_store.h"

#include <algorithm>

#include "analyzer/engine/group.h"
#include "analyzer/passes/pass_list.h"

namespace critpath::analyzer::engine {

const std::vector<MetricDecl>& metric_declarations() {
  static const std::vector<MetricDecl> kAll = [] {
    std::vector<MetricDecl> all;
    for (const PassInfo& p : passes::pass_list())
      all.insert(all.end(), p.metrics.begin(), p.metrics.end());
    return all;
  }();
  return kAll;
}

const MetricDecl* find_metric(const std::string& id) {
  for (const MetricDecl& d : metric_declarations())
    if (id == d.id) return &d;
  return nullptr;
}

namespace {

// The depth of `d` in the parent chain (0: no parent).
int depth_of(const MetricDecl& d) {
  int depth = 0;
  const MetricDecl* cur = &d;
  while (cur && cur->parent[0] != '\0' && depth < 16) {
    cur = find_metric(cur->parent);
    ++depth;
  }
  return depth;
}

std::string escape_cell(const char* s) {
  std::string out;
  for (const char* p = s; *p; ++p) {
    if (*p == '|') out += "\\|";
    else if (*p == '\n') out += ' ';
    else out += *p;
  }
  return out;
}

}  // namespace

std::string render_metric_table() {
  std::string out;
  for (const PassInfo& p : passes::pass_list()) {
    if (p.metrics.empty()) continue;
    out += "\n### Metrics of the `" + std::string(p.name) + "` pass\n\n";
    out += "| id | unit | parent | combined over ranks | definition |\n";
    out += "|---|---|---|---|---|\n";
    for (const MetricDecl& d : p.metrics) {
      std::string indent;
      for (int i = depth_of(d); i > 0; --i) indent += "&nbsp;&nbsp;";
      out += "| " + indent + "`" + d.id + "` | " + d.unit + " | " +
             (d.parent[0] ? "`" + std::string(d.parent) + "`" : std::string("—")) + " | " +
             (d.combine == Combine::kSum ? "sum" : "max") + (d.rank_detail ? ", per rank kept" : "") +
             " | " + escape_cell(d.definition) + " |\n";
    }
  }
  return out;
}

int MetricStore::slot(const std::string& id) {
  for (size_t i = 0; i < metrics_.size(); ++i)
    if (id == metrics_[i].decl->id) return int(i);
  const MetricDecl* d = find_metric(id);
  if (d == nullptr) return kNoMetric;
  metrics_.push_back({d, std::vector<double>(callpaths_, 0.0)});
  return int(metrics_.size() - 1);
}

Status MetricStore::reduce(const Group& group, std::vector<ReducedMetric>& out) const {
  const size_t G = callpaths_, M = metrics_.size(), P = size_t(group.size());
  // Per call path: one reduction per combine kind over all slots of that kind.
  std::vector<double> sums(G * M, 0.0), totals(M, 0.0);
  for (size_t m = 0; m < M; ++m)
    for (size_t g = 0; g < G; ++g) {
      sums[m * G + g] = metrics_[m].values[g];
      totals[m] += metrics_[m].values[g];
    }
  std::vector<double> reduced_sum, reduced_max, by_rank;
  CRITPATH_FORWARD_IF_ERROR(group.reduce_to_root(sums.data(), sums.size(), ReduceOp::kSum, reduced_sum));
  bool any_max = false;
  for (const Slot& s : metrics_) any_max |= s.decl->combine == Combine::kMax;
  if (any_max)
    CRITPATH_FORWARD_IF_ERROR(group.reduce_to_root(sums.data(), sums.size(), ReduceOp::kMax, reduced_max));
  CRITPATH_FORWARD_IF_ERROR(group.gather_rows(totals.data(), M, by_rank));
  // Per (call path, rank), sparse: (slot, call path, value) for the non-zero values.
  std::vector<double> triples, all_triples;
  std::vector<int> counts, displs;
  for (size_t m = 0; m < M; ++m) {
    if (!metrics_[m].decl->rank_detail) continue;
    for (size_t g = 0; g < G; ++g)
      if (metrics_[m].values[g] != 0) {
        triples.push_back(double(m));
        triples.push_back(double(g));
        triples.push_back(metrics_[m].values[g]);
      }
  }
  CRITPATH_FORWARD_IF_ERROR(group.gather_to_root(triples.data(), triples.size(), all_triples, counts, displs));
  if (!group.is_root()) return Status::kOk;

  const size_t first = out.size();
  for (size_t m = 0; m < M; ++m) {
    const MetricDecl& d = *metrics_[m].decl;
    ReducedMetric r;
    r.id = d.id;
    r.unit = d.unit;
    r.description = d.definition;
    const std::vector<double>& src = d.combine == Combine::kMax ? reduced_max : reduced_sum;
    r.by_callpath.assign(src.begin() + long(m * G), src.begin() + long((m + 1) * G));
    r.by_rank.resize(P);
    for (size_t q = 0; q < P; ++q) r.by_rank[q] = by_rank[q * M + m];
    out.push_back(std::move(r));
  }
  // Rows of by_callpath_rank in call-path order.
  std::vector<std::vector<long>> row_of(M);
  for (size_t q = 0; q < P; ++q)
    for (int i = displs[q]; i + 2 < displs[q] + counts[q]; i += 3) {
      const size_t m = size_t(all_triples[size_t(i)]), g = size_t(all_triples[size_t(i) + 1]);
      if (m >= M || g >= G) continue;
      auto& rows = out[first + m].by_callpath_rank;
      if (row_of[m].empty()) row_of[m].assign(G, -1);
      if (row_of[m][g] < 0) {
        row_of[m][g] = long(rows.size());
        rows.push_back({int(g), std::vector<double>(P, 0.0)});
      }
      rows[size_t(row_of[m][g])].second[q] = all_triples[size_t(i) + 2];
    }
  for (size_t m = 0; m < M; ++m) {
    auto& rows = out[first + m].by_callpath_rank;
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
