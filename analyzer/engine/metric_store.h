// critpath — analyzer/engine/metric_store.h
//
// Metrics and scalars are declared once, by the pass that computes them (the engine's and the
// report's own scalars in engine_scalar_decls()), and everything else reads the declaration:
// the reduction over ranks, report.json (`metrics.<id>`, `scalars.<id>`), summary.txt and the
// generated tables of docs/metrics.md (tests/unit/engine/metric_store_test.cpp checks them).
// One registry holds them all: the profile columns (MetricDecl::column), the hardware counters
// (`papi_<event>`), the store's metrics and the scalars.
//
//   pass:    declares MetricDecl and ScalarDecl rows                   passes/<x>/*_metrics.cpp
//   pass:    books values per (metric, global call path) on its rank   MetricStore::add
//            and sets its scalars (rank 0)                             Scalars::set
//   engine:  reduces once: per call path over ranks, per-rank totals,  MetricStore::reduce
//            statistics over the ranks per call path where the
//            declaration asks for it (rank_detail; the full call path x
//            rank matrix goes to its own file, report/rank_matrix.h)
//   report:  formats the reduced metrics (ReducedMetric), scalars      report/report.cpp
//
// An id nobody declared is a programming error: the store and Scalars report it through
// undeclared_id() (debug builds and the unit tests fail; release builds warn once and drop it).
//
// This header and metric_store.cpp need no MPI except through engine::Group, so the store, the
// scalars and the declarations are unit-tested without MPI.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "analyzer/engine/json_box.h"
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
  bool rank_detail;        // also statistics over ranks per call path, and the matrix file
  // The profile column (engine/profile.h kCol*) report.json reads the metric from; -1: the
  // metric store books it.
  int column = -1;
  // Wait-state patterns: named by summary.txt's findings (the waits of one kind that ranks
  // suffer, not the completion time after them).
  bool finding = false;
  // Wait-state patterns the delay analysis costs: its family, whose causes are the metrics
  // delay_<family>_short_term and delay_<family>_long_term; nullptr: not costed.
  const char* delay_family = nullptr;
};

// A wait-state pattern's declaration marked as a finding, costed by the delay analysis as
// `delay_family` (nullptr: not costed).
inline MetricDecl as_finding(MetricDecl d, const char* delay_family) {
  d.finding = true;
  d.delay_family = delay_family;
  return d;
}

// The id of the hardware-counter metrics' declaration: report.json names each counter's
// metric papi_<event> with <event> replaced (CRITPATH_PAPI_EVENTS).
inline constexpr const char* kPapiMetricId = "papi_<event>";

// A figure of the whole run (report.json `scalars.<id>`): a number, a flag, a string or an
// object of numbers. Set once, on rank 0 (engine::Scalars).
struct ScalarDecl {
  const char* id;          // stable snake_case key of report.json `scalars`
  const char* unit;        // "s", "count", "bytes", "B", "%", "bool", "0/1", "rank"
  const char* definition;  // the exact definition (docs/metrics.md)
};

// The call-path profile's metrics (the engine's own, engine/profile_metrics.cpp).
std::vector<MetricDecl> profile_metric_decls();
// Every declared metric: the profile's, then the passes' in the order of the pass list (analyzer/passes/pass_list.cpp).
const std::vector<MetricDecl>& metric_declarations();
// The declaration of `id`; nullptr when no pass declares it.
const MetricDecl* find_metric(const std::string& id);
// The engine's and the report's own scalars (run, trace, clocks, analysis; metric_store.cpp).
const std::vector<ScalarDecl>& engine_scalar_decls();
// Every declared scalar: the engine's, then the passes' in pass-list order.
const std::vector<ScalarDecl>& scalar_declarations();
// The declaration of scalar `id`; nullptr when nobody declares it.
const ScalarDecl* find_scalar(const std::string& id);
// docs/metrics.md's generated tables, from the declarations (markdown, ends with a newline).
std::string render_metric_table();
std::string render_scalar_table();

// Called when code names an undeclared metric or scalar id (`kind`: "metric" or "scalar"); the
// value is dropped. The default aborts in debug builds (CRITPATH_DEBUG_CHECKS, or no NDEBUG)
// and warns once per id on stderr in release builds. Tests install a hook that fails them.
using UndeclaredIdHook = void (*)(const char* kind, const std::string& id);
// Installs `hook` (nullptr: the default); returns the previous one.
UndeclaredIdHook set_undeclared_id_hook(UndeclaredIdHook hook);
void undeclared_id(const char* kind, const std::string& id);

// The scalars of one report (rank 0): typed values under declared ids, rendered as
// report.json's `scalars` object. Setting an id again replaces its value.
class Scalars {
 public:
  // Numbers keep their type: integers print as integers, doubles as doubles, bools as bools.
  template <class T>
  requires std::is_arithmetic_v<T>
  void set(const std::string& id, T v) {
    if constexpr (std::is_same_v<T, bool>) put_bool(id, v);
    else if constexpr (std::is_floating_point_v<T>) put_double(id, double(v));
    else if constexpr (std::is_signed_v<T>) put_int(id, int64_t(v));
    else put_uint(id, uint64_t(v));
  }
  void set(const std::string& id, const std::string& v);
  void set(const std::string& id, const char* v) { set(id, std::string(v)); }
  // An object of numbers (analysis_phases, analysis_cpu_s, ...).
  void set_object(const std::string& id, nlohmann::json v);
  // A JSON value goes through set_object: set() would convert it to a string.
  void set(const std::string& id, const nlohmann::json& v) = delete;

  // The number under `id`; `fallback` when unset or not a number.
  double number(const std::string& id, double fallback = 0) const;
  bool has(const std::string& id) const;
  // report.json's `scalars` object.
  const nlohmann::json& json() const { return *values_; }

 private:
  void put_bool(const std::string& id, bool v);
  void put_double(const std::string& id, double v);
  void put_int(const std::string& id, int64_t v);
  void put_uint(const std::string& id, uint64_t v);
  void put(const std::string& id, nlohmann::json v);
  JsonBox values_;
};

// How many ranks CallpathStats::top names.
inline constexpr size_t kTopRanks = 5;

// One rank's value.
struct RankValue {
  int rank = -1;
  double value = 0;
};

// A rank_detail metric at one call path, over all P ranks (ranks that booked nothing count as
// 0): min, max, mean = sum / P, the population standard deviation sqrt(max(0, sumsq / P -
// mean^2)), and `top`, the ranks with the kTopRanks largest positive values, largest first,
// ties to the lower rank.
struct CallpathStats {
  int callpath = -1;  // global call path
  double min = 0, max = 0, mean = 0, stddev = 0;
  std::vector<RankValue> top;
};

// For a short-term metric <x>_short_term whose <x>_long_term is in the same store (the delay
// costs): at one call path, the rank whose short- plus long-term value is largest (positive;
// ties to the lower rank) and its two values.
struct PairedTop {
  int callpath = -1;
  int rank = -1;
  double short_term = 0, long_term = 0;
};

// A metric's value at one (call path, rank).
struct CellValue {
  int callpath = -1;
  int rank = -1;
  double value = 0;
};

// A metric reduced over the ranks: what the formatters read (root only).
struct ReducedMetric {
  std::string id, unit, description;
  std::vector<double> by_callpath;  // [global call path], combined over ranks
  std::vector<double> by_rank;      // [rank] sum over call paths
  // rank_detail: per call path with any non-zero value, in call-path order.
  std::vector<CallpathStats> stats;
  // <x>_short_term with <x>_long_term in the same store: per call path where some rank's short-
  // plus long-term value is positive, in call-path order.
  std::vector<PairedTop> paired;
  // Values at single (call path, rank) cells the report asked for after the reduction
  // (report/rank_matrix.h look_up_cells).
  std::vector<CellValue> cells;
  // The statistics at call path `g`; nullptr when every rank's value there is 0.
  const CallpathStats* stats_at(size_t g) const;
};

// One rank's own values of a rank_detail metric (every rank), for the call-path x rank matrix
// file (report/rank_matrix.h).
struct RankDetail {
  std::string id;
  std::vector<double> values;  // [global call path]
};

// The values one rank books, dense per (metric, global call path).
class MetricStore {
 public:
  MetricStore() = default;
  // `callpaths`: the number of global call paths (after unification).
  explicit MetricStore(size_t callpaths) : callpaths_(callpaths) {}

  // The slot of `id`; an undeclared id is reported (undeclared_id) and gives kNoMetric.
  // Declare-once: later calls return the same slot.
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
  // order, to `out` on the root; with `mine`, appends this rank's values of every rank_detail
  // slot to it on every rank. A constant number of collectives whatever the number of
  // metrics, call paths and ranks (at most 4); the root receives the per-rank
  // totals (8 bytes per rank and slot with a non-zero value) and blocks of slots x call paths.
  // With `root_sums`: those values too, summed over the ranks into it on the root; with
  // `all_max`, their maximum over the ranks into it on every rank (riding in the reduction's
  // sums and maximum: no round of their own).
  Status reduce(const Group& group, std::vector<ReducedMetric>& out, std::vector<RankDetail>* mine = nullptr,
                std::vector<double>* root_sums = nullptr, std::vector<double>* all_max = nullptr) const;
  // What reduce() gives when every rank's every value is 0 and all ranks know it (an earlier
  // collective told them): the same results, without a collective.
  void reduce_zero(const Group& group, std::vector<ReducedMetric>& out,
                   std::vector<RankDetail>* mine = nullptr) const;

 private:
  // The slots' declarations, in slot order.
  std::vector<const MetricDecl*> declarations() const;
  // With `mine`: appends this rank's values of the slots `detail` (rank_detail ones) to it.
  void append_mine(const std::vector<size_t>& detail, std::vector<RankDetail>* mine) const;
  struct Slot {
    const MetricDecl* decl = nullptr;
    std::vector<double> values;
  };
  size_t callpaths_ = 0;
  std::vector<Slot> metrics_;
};

}  // namespace critpath::analyzer::engine
