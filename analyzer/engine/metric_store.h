// critpath — analyzer/engine/metric_store.h
//
// Metrics are declared once, by the pass that computes them, and everything else reads the
// declaration: the reduction over ranks, report.json (`metrics.<id>`), summary.txt and the
// generated table of docs/metrics.md (tests/unit/engine/metric_docs_test.cpp checks it).
//
//   pass:    declares MetricDecl rows (id, unit, parent, definition)   passes/<x>/*_metrics.cpp
//   pass:    books values per (metric, global call path) on its rank   MetricStore::add
//   engine:  reduces once: per call path over ranks, per-rank totals,  MetricStore::reduce
//            per (call path, rank) where the declaration asks for it
//   report:  formats the reduced metrics (ReducedMetric)               report/report.cpp
//
// This header and metric_store.cpp need no MPI except through engine::Group, so the store and
// the declarations are unit-tested without MPI.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

class Group;

// How a metric's per-call-path values of different ranks combine.
enum class Combine : uint8_t { kSum = 0, kMax = 1 };

struct MetricDecl {
  const char* id;          // stable snake_case key of report.json `metrics`
  const char* unit;        // "s", "count", "bytes"
  const char* parent;      // id of the enclosing metric in the time hierarchy, or ""
  const char* title;       // short name for tables
  const char* definition;  // the exact definition (docs/metrics.md)
  Combine combine;         // over ranks, per call path
  bool rank_detail;        // also keep the value per (call path, rank)
};

// Every declared metric, in the order of the pass list (analyzer/passes/pass_list.cpp).
const std::vector<MetricDecl>& metric_declarations();
// The declaration of `id`; nullptr when no pass declares it.
const MetricDecl* find_metric(const std::string& id);
// docs/metrics.md's generated table, from the declarations (markdown, ends with a newline).
std::string render_metric_table();

// A metric reduced over the ranks: what the formatters read (root only).
struct ReducedMetric {
  std::string id, unit, description;
  std::vector<double> by_callpath;  // [global call path], combined over ranks
  std::vector<double> by_rank;      // [rank] sum over call paths
  // [global call path] -> value per rank, for call paths with any non-zero value (rank_detail).
  std::vector<std::pair<int, std::vector<double>>> by_callpath_rank;
};

// The values one rank books, dense per (metric, global call path).
class MetricStore {
 public:
  MetricStore() = default;
  // `callpaths`: the number of global call paths (after unification).
  explicit MetricStore(size_t callpaths) : callpaths_(callpaths) {}

  // The slot of `id` (declared, or kNoMetric). Declare-once: later calls return the same slot.
  int slot(const std::string& id);
  static constexpr int kNoMetric = -1;

  // Adds `v` to metric `slot` at global call path `g` (ignored when either is out of range).
  void add(int slot, long g, double v) {
    if (slot < 0 || size_t(slot) >= metrics_.size() || g < 0 || size_t(g) >= callpaths_) return;
    metrics_[size_t(slot)].values[size_t(g)] += v;
  }
  double get(int slot, size_t g) const { return metrics_[size_t(slot)].values[g]; }
  size_t callpaths() const { return callpaths_; }

  // Collective over `group`: every rank must have the same slots in the same order (slots
  // are made by the same code on every rank). Appends one ReducedMetric per slot, in slot
  // order, to `out` on the root.
  Status reduce(const Group& group, std::vector<ReducedMetric>& out) const;

 private:
  struct Slot {
    const MetricDecl* decl = nullptr;
    std::vector<double> values;
  };
  size_t callpaths_ = 0;
  std::vector<Slot> metrics_;
};

}  // namespace critpath::analyzer::engine
