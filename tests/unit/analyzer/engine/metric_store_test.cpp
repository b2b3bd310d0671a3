// critpath — tests/unit/engine/metric_store_test.cpp: metric declarations, the store's
// reduction on a one-rank group (no MPI), and docs/metrics.md's generated table.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "analyzer/engine/group.h"
#include "analyzer/engine/metric_store.h"
#include "analyzer/passes/pass_list.h"

using namespace critpath;
using namespace critpath::analyzer;

namespace {

// In the unit tests an undeclared metric or scalar id fails the test that names it: the hook
// throws, and Catch2 reports the exception as a failure of the running test case.
struct UndeclaredId : std::logic_error {
  using std::logic_error::logic_error;
};
[[noreturn]] void fail_on_undeclared(const char* kind, const std::string& id) {
  throw UndeclaredId(std::string("undeclared ") + kind + " id " + id);
}
const engine::UndeclaredIdHook kDefaultHook = engine::set_undeclared_id_hook(fail_on_undeclared);

}  // namespace

TEST_CASE("every metric is declared once, with a definition and a declared parent", "[engine]") {
  std::set<std::string> ids;
  for (const engine::MetricDecl& d : engine::metric_declarations()) {
    INFO("metric " << d.id);
    CHECK(ids.insert(d.id).second);
    CHECK(std::string(d.definition).size() > 20);
    CHECK(std::string(d.unit).size() > 0);
    if (d.parent[0] != '\0') CHECK(engine::find_metric(d.parent) != nullptr);
  }
  CHECK(ids.count("late_sender") == 1);
  CHECK(ids.count("critical_path") == 1);
  CHECK(engine::find_metric("no_such_metric") == nullptr);
}

TEST_CASE("every scalar is declared once, with a unit and a definition", "[engine]") {
  std::set<std::string> ids;
  for (const engine::ScalarDecl& d : engine::scalar_declarations()) {
    INFO("scalar " << d.id);
    CHECK(ids.insert(d.id).second);
    CHECK(engine::find_metric(d.id) == nullptr);  // one namespace of ids for both
    CHECK(std::string(d.definition).size() > 10);
    CHECK(std::string(d.unit).size() > 0);
  }
  CHECK(ids.count("delay_bytes") == 1);
  CHECK(ids.count("analysis_windowed") == 1);
  CHECK(engine::find_scalar("no_such_scalar") == nullptr);
}

TEST_CASE("scalars keep their type and render as report.json's scalars", "[engine]") {
  engine::Scalars s;
  s.set("delay_bytes", 12.5);
  s.set("analysis_windows", size_t(3));
  s.set("analysis_windowed", false);
  s.set_object("analysis_phases", nlohmann::json{{"delay_s", 0.25}});
  s.set("analysis_windows", 4);  // again: replaces
  CHECK(s.number("delay_bytes") == 12.5);
  CHECK(s.number("rma_analysis_bytes", -1) == -1);  // declared, unset
  CHECK(
      s.json().dump() ==
      R"({"analysis_phases":{"delay_s":0.25},"analysis_windowed":false,"analysis_windows":4,"delay_bytes":12.5})");
}

TEST_CASE("an undeclared metric or scalar id fails", "[engine]") {
  engine::Scalars s;
  engine::MetricStore store(2);
  CHECK_THROWS_AS(s.set("no_such_scalar", 1.0), UndeclaredId);
  CHECK_THROWS_AS(s.number("no_such_scalar"), UndeclaredId);
  CHECK_THROWS_AS(store.slot("no_such_metric"), UndeclaredId);
  // With a hook that only counts (as the release builds' warning does), the id is dropped.
  static int reported = 0;
  reported = 0;
  const engine::UndeclaredIdHook previous = engine::set_undeclared_id_hook(
      [](const char*, const std::string&) { ++reported; });
  s.set("no_such_scalar", 1.0);
  CHECK(store.slot("no_such_metric") == engine::MetricStore::kNoMetric);
  engine::set_undeclared_id_hook(previous);
  CHECK(reported == 2);
  CHECK(s.json().empty());
  CHECK(kDefaultHook != nullptr);
}

TEST_CASE("the store reduces on a one-rank group without MPI", "[engine]") {
  const engine::Group group = engine::Group::local();
  REQUIRE(group.size() == 1);
  engine::MetricStore store(4);
  const int ls = store.slot("late_sender"), t = store.slot("time");
  REQUIRE(ls >= 0);
  REQUIRE(t >= 0);
  CHECK(store.slot("late_sender") == ls);  // declare-once
  store.add(ls, 2, 0.25);
  store.add(ls, 2, 0.5);
  store.add(t, 0, 1.0);
  store.add(t, 7, 9.0);   // out of range: ignored
  store.add(-1, 0, 9.0);  // no metric: ignored
  std::vector<engine::ReducedMetric> out;
  REQUIRE(store.reduce(group, out) == Status::kOk);
  REQUIRE(out.size() == 2);
  CHECK(out[0].id == "late_sender");
  CHECK(out[0].by_callpath[2] == Approx(0.75));
  CHECK(out[0].by_rank.size() == 1);
  CHECK(out[0].by_rank[0] == Approx(0.75));
  REQUIRE(out[0].stats.size() == 1);  // late_sender keeps statistics over the ranks
  CHECK(out[0].stats[0].callpath == 2);
  CHECK(out[0].stats[0].min == 0.75);
  CHECK(out[0].stats[0].max == 0.75);
  CHECK(out[0].stats[0].mean == 0.75);
  CHECK(out[0].stats[0].stddev == 0);
  REQUIRE(out[0].stats[0].top.size() == 1);
  CHECK(out[0].stats[0].top[0].rank == 0);
  CHECK(out[0].stats[0].top[0].value == 0.75);
  CHECK(out[0].stats_at(2) == &out[0].stats[0]);
  CHECK(out[0].stats_at(1) == nullptr);
  CHECK(out[1].id == "time");
  CHECK(out[1].by_rank[0] == Approx(1.0));
  CHECK(out[1].stats.empty());  // time does not
}

TEST_CASE("the store's statistics and pairs on one rank, and its own rows", "[engine]") {
  const engine::Group group = engine::Group::local();
  engine::MetricStore store(3);
  const int st = store.slot("delay_cost_short_term"), lt = store.slot("delay_cost_long_term"),
            ls = store.slot("late_sender");
  store.add(st, 0, 0.5);
  store.add(lt, 0, 0.25);
  store.add(lt, 1, 2.0);   // a pair where only the long-term cost is positive
  store.add(ls, 2, -1.0);  // negative: in min/mean, never in top
  std::vector<engine::ReducedMetric> out;
  std::vector<engine::RankDetail> mine;
  REQUIRE(store.reduce(group, out, &mine) == Status::kOk);
  REQUIRE(out.size() == 3);
  REQUIRE(out[0].paired.size() == 2);
  CHECK(out[0].paired[0].callpath == 0);
  CHECK(out[0].paired[0].rank == 0);
  CHECK(out[0].paired[0].short_term == 0.5);
  CHECK(out[0].paired[0].long_term == 0.25);
  CHECK(out[0].paired[1].callpath == 1);
  CHECK(out[0].paired[1].long_term == 2.0);
  CHECK(out[1].paired.empty());
  REQUIRE(out[2].stats.size() == 1);
  CHECK(out[2].stats[0].min == -1.0);
  CHECK(out[2].stats[0].max == -1.0);
  CHECK(out[2].stats[0].top.empty());
  REQUIRE(mine.size() == 3);  // every rank_detail slot, in slot order
  CHECK(mine[1].id == std::string("delay_cost_long_term"));
  CHECK(mine[1].values == std::vector<double>{0.25, 2.0, 0.0});
}

TEST_CASE("a one-rank group's collectives are local copies", "[engine]") {
  const engine::Group group = engine::Group::local();
  double v[2] = {1.5, -2};
  CHECK(group.allreduce(v, 2, engine::ReduceOp::kMax) == Status::kOk);
  CHECK(v[0] == 1.5);
  std::pair<double, int> loc{3.0, 0};
  CHECK(group.allreduce_maxloc(&loc, 1) == Status::kOk);
  CHECK(loc.second == 0);
  std::vector<int> counts, displs;
  std::vector<double> all;
  const double mine[3] = {1, 2, 3};
  CHECK(group.gather_to_root(mine, 3, all, counts, displs) == Status::kOk);
  CHECK(all == std::vector<double>{1, 2, 3});
  CHECK(counts == std::vector<int>{3});
  CHECK(displs == std::vector<int>{0});
  std::vector<int> ints;
  CHECK(group.allgather(7, ints) == Status::kOk);
  CHECK(ints == std::vector<int>{7});
  engine::Group sub;
  CHECK(group.split(1, sub) == Status::kOk);
  CHECK(sub.size() == 1);
}

// docs/metrics.md holds each generated table between two markers; CRITPATH_UPDATE_DOCS=1
// rewrites it.
static void check_generated_docs(const std::string& begin, const std::string& end,
                                 const std::string& wanted) {
  const std::string path = std::string(CRITPATH_SOURCE_DIR) + "/docs/metrics.md";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const size_t a = doc.find(begin), b = doc.find(end);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  const std::string current = doc.substr(a + begin.size(), b - a - begin.size());
  if (current != wanted && std::getenv("CRITPATH_UPDATE_DOCS") != nullptr) {
    doc.replace(a + begin.size(), b - a - begin.size(), wanted);
    std::ofstream(path) << doc;
    SUCCEED("docs/metrics.md rewritten");
    return;
  }
  INFO("docs/metrics.md is stale: run CRITPATH_UPDATE_DOCS=1 build/tests/critpath_unit_tests '[engine]'");
  CHECK(current == wanted);
}

TEST_CASE("docs/metrics.md's metric tables are generated from the declarations", "[engine]") {
  check_generated_docs("<!-- BEGIN GENERATED METRIC TABLES: analyzer/passes/*/*_metrics.cpp -->\n",
                       "<!-- END GENERATED METRIC TABLES -->", engine::render_metric_table() + "\n");
}

TEST_CASE("docs/metrics.md's scalar table is generated from the declarations", "[engine]") {
  check_generated_docs(
      "<!-- BEGIN GENERATED SCALAR TABLE: engine/metric_store.cpp, passes/*/*_metrics.cpp -->\n",
      "<!-- END GENERATED SCALAR TABLE -->", engine::render_scalar_table() + "\n");
}
