// critpath — tests/unit/engine/findings_test.cpp: summary.txt's Findings on synthetic reduced
// metrics (no MPI): the costliest wait first with its causing rank, and the hint when the
// computation is one undivided main.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "analyzer/engine/metric_store.h"
#include "analyzer/report/findings.h"

using namespace critpath;
using namespace critpath::analyzer;

namespace {

engine::ReducedMetric metric(const std::string& id, std::vector<double> by_callpath,
                             std::vector<double> by_rank,
                             std::vector<std::pair<int, std::vector<double>>> per_rank = {}) {
  engine::ReducedMetric m;
  m.id = id;
  m.unit = std::string("s");  // not = "s": GCC 12 warns -Wrestrict on that (a false positive)
  m.by_callpath = std::move(by_callpath);
  m.by_rank = std::move(by_rank);
  // The statistics MetricStore::reduce gives for these rows (a short-term metric's pair with
  // an all-zero long-term metric).
  for (const auto& [g, row] : per_rank) {
    engine::CallpathStats st;
    st.callpath = g;
    st.min = *std::min_element(row.begin(), row.end());
    st.max = *std::max_element(row.begin(), row.end());
    double sum = 0, sq = 0;
    for (double v : row) sum += v, sq += v * v;
    st.mean = sum / double(row.size());
    st.stddev = std::sqrt(std::max(0.0, sq / double(row.size()) - st.mean * st.mean));
    for (size_t r = 0; r < row.size(); ++r)
      if (row[r] > 0) st.top.push_back({int(r), row[r]});
    std::stable_sort(st.top.begin(), st.top.end(), [](auto& a, auto& b) { return a.value > b.value; });
    if (st.top.size() > engine::kTopRanks) st.top.resize(engine::kTopRanks);
    if (!st.top.empty()) m.paired.push_back({g, st.top[0].rank, st.top[0].value, 0.0});
    m.stats.push_back(std::move(st));
  }
  return m;
}

GlobalCallpath callpath(const std::string& path, defs::RegionKind kind, int32_t parent) {
  GlobalCallpath c;
  c.path = path;
  c.region = path.substr(path.rfind('/') + 1);
  c.kind = kind;
  c.parent = parent;
  c.ranks = 2;
  return c;
}

}  // namespace

TEST_CASE("findings name the wait, the most affected rank and the causing rank", "[report]") {
  RunInfo run;
  run.size = 2;
  GlobalProfile p;
  p.callpaths = {callpath("main", defs::RegionKind::kArtificial, -1),
                 callpath("main/work", defs::RegionKind::kUser, 0),
                 callpath("main/MPI_Allreduce", defs::RegionKind::kMpi, 0)};
  p.callpaths[1].sum[kColExclusive] = 0.3;
  ReportInput in;
  in.run = &run;
  in.profile = &p;
  in.wall_time_s = 1.0;
  in.extra_metrics.push_back(metric("wait_nxn", {0, 0, 0.2}, {0.2, 0}, {{2, {0.2, 0.0}}}));
  in.extra_metrics.push_back(metric("delay_nxn_short_term", {0, 0.2, 0}, {0, 0.2}, {{1, {0.0, 0.2}}}));
  in.extra_metrics.push_back(metric("critical_path", {0.5, 0.2, 0.3}, {0.4, 0.6}, {{1, {0.0, 0.2}}}));
  const std::vector<Finding> f = build_findings(in);
  REQUIRE(!f.empty());
  INFO(f[0].text);
  CHECK(f[0].text.find("Ranks wait 0.200 s") == 0);
  CHECK(f[0].text.find("in main/MPI_Allreduce (Wait at N x N)") != std::string::npos);
  CHECK(f[0].text.find("rank 0 the most") != std::string::npos);
  CHECK(f[0].text.find("rank 1 causes it: its time in main/work") != std::string::npos);
  // Backed by the wait-state statistics of its pattern and, naming a cause, the delay costs.
  CHECK(f[0].section == "wait_state_stats");
  CHECK(f[0].pattern == "wait_nxn");
  CHECK(f[0].cause);
  // The critical path's finding follows, backed by the critical path.
  REQUIRE(f.size() >= 2);
  CHECK(f[1].text.find("The critical path") == 0);
  CHECK(f[1].section == "critical_path");
  CHECK(f[1].pattern.empty());
  // The computation is divided (a user region): no hint.
  for (const Finding& s : f) CHECK(s.text.find("undivided") == std::string::npos);
}

TEST_CASE("the engine's lead findings come first, backed by their notes", "[report]") {
  RunInfo run;
  run.size = 2;
  GlobalProfile p;
  p.callpaths = {callpath("main", defs::RegionKind::kArtificial, -1)};
  ReportInput in;
  in.run = &run;
  in.profile = &p;
  in.wall_time_s = 1.0;
  in.lead_findings = {"2 ranks share 1 cores on h (oversubscribed 2.0x): ..."};
  const std::vector<Finding> f = build_findings(in);
  REQUIRE(f.size() == 1);
  CHECK(f[0].text == in.lead_findings[0]);
  CHECK(f[0].section == "notes");
  CHECK_FALSE(f[0].cause);
  in.lead_findings.clear();
  const std::vector<Finding> none = build_findings(in);
  REQUIRE(none.size() == 1);
  CHECK(none[0].text == "No wait state reaches 0.5 % of the allocation.");
  CHECK(none[0].section == "wait_state_stats");
}

TEST_CASE("findings say when the computation is one undivided main", "[report]") {
  RunInfo run;
  run.size = 2;
  GlobalProfile p;
  p.callpaths = {callpath("main", defs::RegionKind::kArtificial, -1),
                 callpath("main/MPI_Barrier", defs::RegionKind::kMpi, 0)};
  ReportInput in;
  in.run = &run;
  in.profile = &p;
  in.wall_time_s = 1.0;
  in.extra_metrics.push_back(metric("computation", {1.5, 0}, {0.75, 0.75}));
  const std::vector<Finding> f = build_findings(in);
  bool hint = false;
  for (const Finding& s : f)
    if (s.text.find("one undivided block in main") != std::string::npos) hint = s.section == "callpaths";
  CHECK(hint);
}

TEST_CASE("the findings' wait states and their delay families are declared", "[report]") {
  std::vector<std::string> findings;
  for (const engine::MetricDecl& d : engine::metric_declarations()) {
    if (!d.finding) {
      CHECK(d.delay_family == nullptr);
      continue;
    }
    INFO("pattern " << d.id);
    findings.push_back(d.id);
    CHECK(std::string(d.title).size() > 0);
    if (d.delay_family) {
      CHECK(engine::find_metric(std::string("delay_") + d.delay_family + "_short_term") != nullptr);
      CHECK(engine::find_metric(std::string("delay_") + d.delay_family + "_long_term") != nullptr);
    }
  }
  // The top-level wait states of each MPI class, in declaration order; completions are not named.
  const std::vector<std::string> expected = {
      "late_sender",        "late_receiver",      "wait_barrier",        "wait_nxn",
      "late_broadcast",     "early_reduce",       "early_scan",          "wait_finalize",
      "rma_late_post",      "rma_early_transfer", "rma_early_wait",      "rma_wait_at_fence",
      "rma_wait_at_create", "rma_wait_at_free",   "rma_lock_contention", "rma_wait_for_progress"};
  CHECK(findings == expected);
}
