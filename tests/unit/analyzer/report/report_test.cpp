// critpath — tests/unit/analyzer/report/report_test.cpp: report.json of a small hand-made
// ReportInput (two ranks, three call paths, a pass's metric, a pass's JSON), written by
// write_reports into a fresh directory and parsed back: every figure where the schema puts it.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/engine/profile.h"
#include "analyzer/engine/run_info.h"
#include "analyzer/report/report.h"

using namespace critpath;
using namespace critpath::analyzer;

namespace {

// A call path of the two-rank profile below: `sum` and `max` of its exclusive time.
GlobalCallpath callpath(const char* path, const char* region, defs::RegionKind kind, int32_t parent,
                        double sum_excl, double max_excl, double visits) {
  GlobalCallpath c;
  c.path = path;
  c.region = region;
  c.kind = kind;
  c.parent = parent;
  c.ranks = 2;
  c.sum[kColExclusive] = sum_excl;
  c.max[kColExclusive] = max_excl;
  c.min[kColExclusive] = sum_excl - max_excl;
  c.sum[kColInclusive] = sum_excl;
  c.sum[kColVisits] = visits;
  return c;
}

// A fresh output directory for write_reports.
std::string fresh_dir() {
  char tmpl[] = "/tmp/critpath-report-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

}  // namespace

TEST_CASE("report.json: a small input rendered, parsed back", "[report]") {
  const std::string dir = fresh_dir();

  RunInfo run;
  run.size = 2;
  run.executable = "app";
  run.args = {"-n", "3"};
  run.output_dir = dir;
  run.mpi_library = "MPICH test";
  GlobalProfile p;
  using K = defs::RegionKind;
  p.callpaths.push_back(callpath("main", "main", K::kArtificial, -1, 1.0, 0.75, 2));
  p.callpaths.push_back(callpath("main/solve", "solve", K::kFunction, 0, 3.0, 2.0, 4));
  p.callpaths.push_back(callpath("main/solve/MPI_Send", "MPI_Send", K::kMpi, 1, 0.5, 0.25, 6));
  p.callpaths[2].sum[kColBytesSent] = 4096;
  p.by_rank = {std::vector<double>(kColCount, 0.0), std::vector<double>(kColCount, 0.0)};
  p.by_rank[0][kColExclusive] = 2.0;
  p.by_rank[1][kColExclusive] = 2.5;

  ReportInput in;
  in.run = &run;
  in.profile = &p;
  in.rank_stats.assign(2, std::vector<double>(kStatCount, 0.0));
  in.rank_stats[0][kStatEvents] = 1000;
  in.rank_stats[1][kStatEvents] = 3000;
  in.rank_stats[0][kStatCompressedBytes] = 2000;
  in.rank_stats[1][kStatCompressedBytes] = 6000;
  in.rank_stats[1][kStatPartial] = 1;
  in.rank_stats[0][kStatOverheadSeconds] = 0.5;
  in.rank_stats[1][kStatOverheadSeconds] = 0.25;
  in.notes = {"rank 1: a note"};
  in.wall_time_s = 10;
  in.analysis_s = 0.5;
  ExtraMetric m;
  m.id = "late_sender";
  m.unit = "s";
  m.description = "test";
  m.by_callpath = {0, 0, 0.375};
  m.by_rank = {0.125, 0.25};
  in.extra_metrics.push_back(m);
  (*in.extra_json)["scalars"] = {{"late_sender_count", 3}};
  (*in.extra_json)["critical_path"] = {{"length_s", 9.5}};

  REQUIRE(write_reports(in) == Status::kOk);
  std::ifstream f(dir + "/report.json");
  REQUIRE(f.good());
  const nlohmann::json j = nlohmann::json::parse(f);

  CHECK(j["schema"] == "critpath-report/2");
  CHECK(j["run"]["executable"] == "app");
  CHECK(j["run"]["ranks"] == 2);
  CHECK(j["run"]["args"] == nlohmann::json({"-n", "3"}));
  CHECK(j["run"]["mpi_library"] == "MPICH test");
  CHECK(j["run"]["critpath_version"].is_string());

  const nlohmann::json& cps = j["callpaths"];
  REQUIRE(cps.size() == 3);
  CHECK(cps[1]["path"] == "main/solve");
  CHECK(cps[1]["parent"] == 0);
  CHECK(cps[0]["parent"].is_null());
  CHECK(cps[2]["kind"] == defs::to_string(defs::RegionKind::kMpi));
  CHECK(cps[1]["exclusive_s"]["sum"] == 3.0);
  CHECK(cps[1]["exclusive_s"]["avg"] == 1.5);  // over the 2 ranks that visited it
  CHECK(cps[1]["exclusive_s"]["max"] == 2.0);
  CHECK(cps[1]["exclusive_s"]["min"] == 1.0);

  const nlohmann::json& time = j["metrics"]["time"];
  CHECK(time["total"] == 4.5);
  CHECK(time["by_callpath"]["main/solve/MPI_Send"] == 0.5);
  CHECK(time["by_rank"] == nlohmann::json({2.0, 2.5}));
  CHECK(j["metrics"]["visits"]["total"] == 12);
  CHECK(j["metrics"]["bytes_sent"]["by_callpath"]["main/solve/MPI_Send"] == 4096);
  const nlohmann::json& ls = j["metrics"]["late_sender"];
  CHECK(ls["unit"] == "s");
  CHECK(ls["total"] == 0.375);
  CHECK(ls["by_callpath"]["main/solve/MPI_Send"] == 0.375);
  CHECK(ls["by_rank"] == nlohmann::json({0.125, 0.25}));

  const nlohmann::json& s = j["scalars"];
  CHECK(s["events"] == 4000);
  CHECK(s["trace_compressed_bytes"] == 8000);
  CHECK(s["trace_bytes_per_event"] == 2.0);
  CHECK(s["overhead_max_rank_s"] == 0.5);
  CHECK(s["partial_ranks"] == 1);
  CHECK(s["analysis_pct_of_wall"] == 5.0);
  CHECK(s["late_sender_count"] == 3);            // a pass's scalar, merged into "scalars"
  CHECK(j["critical_path"]["length_s"] == 9.5);  // a pass's own key, added

  REQUIRE(j["ranks"].size() == 2);
  CHECK(j["ranks"][1]["events"] == 3000);
  CHECK(j["ranks"][1]["partial"] == true);
  CHECK(j["ranks"][0]["partial"] == false);
  CHECK(j["notes"] == nlohmann::json({"rank 1: a note"}));

  std::ifstream summary(dir + "/summary.txt");
  CHECK(summary.good());
  std::system(("rm -rf -- '" + dir + "'").c_str());
}

TEST_CASE("reports of an imported run: unknown facts read unknown or are left out", "[report][header]") {
  // What an OTF2 archive may lack: the program name, the MPI library, the start time, the
  // timer's description, the recording costs.
  RunInfo run;
  run.imported_from = "OTF2 archive";
  run.output_dir = fresh_dir();
  const std::string& dir = run.output_dir;
  run.size = 2;
  GlobalProfile p;
  p.callpaths.push_back(callpath("main", "main", defs::RegionKind::kArtificial, -1, 1.0, 0.75, 2));
  p.by_rank = {std::vector<double>(kColCount, 0.0), std::vector<double>(kColCount, 0.0)};
  ReportInput in;
  in.run = &run;
  in.profile = &p;
  in.rank_stats.assign(2, std::vector<double>(kStatCount, 0.0));
  in.wall_time_s = 1;
  in.lead_findings = {"A lead finding."};
  in.notes = {"its note"};
  in.write_html = true;
  REQUIRE(write_reports(in) == Status::kOk);

  std::ifstream sf(dir + "/summary.txt");
  std::string summary, line;
  std::vector<std::string> findings;
  bool in_findings = false;
  while (std::getline(sf, line)) {
    summary += line + "\n";
    INFO(line);
    // No header field empty, no unknown printed as a zero.
    if (line.rfind("@ ", 0) == 0) CHECK(line.back() != ':');
    if (line.rfind("@ ", 0) == 0) CHECK(line.find(":  ") == std::string::npos);
    if (line.rfind("@---", 0) == 0) in_findings = line.find("Findings") != std::string::npos;
    else if (in_findings && !line.empty()) findings.push_back(line);
  }
  CHECK(summary.find("@ Command         : unknown\n") != std::string::npos);
  CHECK(summary.find("@ MPI library     : unknown\n") != std::string::npos);
  CHECK(summary.find("@ Start (UTC)     : unknown\n") != std::string::npos);
  CHECK(summary.find("@ Timer           : unknown\n") != std::string::npos);
  CHECK(summary.find("@ Overhead        : unknown (OTF2 archive: not recorded by critpath)\n") !=
        std::string::npos);
  CHECK(summary.find("@ Trace           : 0 events, 0 B compressed, 0 B spilled to disk\n") !=
        std::string::npos);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0] == " 1. A lead finding.");

  std::ifstream jf(dir + "/report.json");
  const nlohmann::json j = nlohmann::json::parse(jf);
  CHECK_FALSE(j["run"].contains("start_utc"));  // left out, not ""
  CHECK(j["run"]["imported_from"] == "OTF2 archive");
  // The same findings, in the same order, each with what backs it.
  REQUIRE(j["findings"].size() == 1);
  CHECK(j["findings"][0]["text"] == "A lead finding.");
  CHECK(j["findings"][0]["section"] == "notes");

  std::ifstream hf(dir + "/report.html");
  const std::string html((std::istreambuf_iterator<char>(hf)), std::istreambuf_iterator<char>());
  CHECK(html.find("Findings are in summary.txt") == std::string::npos);
  CHECK(html.find("<li id=\"finding-1\" value=\"1\"><span class=\"finding-text\">A lead finding.</span> "
                  "<a class=\"backing\" href=\"#notes\">") != std::string::npos);
  CHECK(html.find("<ul class=\"notes\" id=\"notes\">") != std::string::npos);
  CHECK(html.find("<h2 id=\"wait-states\">") != std::string::npos);
  // The findings come before every other section.
  CHECK(html.find("<ol class=\"findings\">") < html.find("<h2 id=\"critical-path\">"));
  CHECK(html.find("Started (UTC)") == std::string::npos);  // no empty row
  CHECK(html.find("<dt>Command</dt>") == std::string::npos);
  std::system(("rm -rf -- '" + dir + "'").c_str());
}
