// critpath — tests/unit/engine/metric_store_test.cpp: metric declarations, the store's
// reduction on a one-rank group (no MPI), and docs/metrics.md's generated table.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "analyzer/engine/group.h"
#include "analyzer/engine/metric_store.h"
#include "analyzer/passes/pass_list.h"

using namespace critpath;
using namespace critpath::analyzer;

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

TEST_CASE("the store reduces on a one-rank group without MPI", "[engine]") {
  const engine::Group group = engine::Group::local();
  REQUIRE(group.size() == 1);
  engine::MetricStore store(4);
  const int ls = store.slot("late_sender"), t = store.slot("time");
  REQUIRE(ls >= 0);
  REQUIRE(t >= 0);
  CHECK(store.slot("late_sender") == ls);  // declare-once
  CHECK(store.slot("undeclared") == engine::MetricStore::kNoMetric);
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
  REQUIRE(out[0].by_callpath_rank.size() == 1);  // late_sender keeps per-rank detail
  CHECK(out[0].by_callpath_rank[0].first == 2);
  CHECK(out[1].id == "time");
  CHECK(out[1].by_rank[0] == Approx(1.0));
  CHECK(out[1].by_callpath_rank.empty());  // time does not
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

// docs/metrics.md holds the table between two markers; CRITPATH_UPDATE_DOCS=1 rewrites it.
TEST_CASE("docs/metrics.md's metric tables are generated from the declarations", "[engine]") {
  const std::string path = std::string(CRITPATH_SOURCE_DIR) + "/docs/metrics.md";
  const std::string begin = "<!-- BEGIN GENERATED METRIC TABLES: analyzer/passes/*/*_metrics.cpp -->\n";
  const std::string end = "<!-- END GENERATED METRIC TABLES -->";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const size_t a = doc.find(begin), b = doc.find(end);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  const std::string current = doc.substr(a + begin.size(), b - a - begin.size());
  const std::string wanted = engine::render_metric_table() + "\n";
  if (current != wanted && std::getenv("CRITPATH_UPDATE_DOCS") != nullptr) {
    doc.replace(a + begin.size(), b - a - begin.size(), wanted);
    std::ofstream(path) << doc;
    SUCCEED("docs/metrics.md rewritten");
    return;
  }
  INFO("docs/metrics.md is stale: run CRITPATH_UPDATE_DOCS=1 build/tests/critpath_unit_tests '[engine]'");
  CHECK(current == wanted);
}
