// critpath — tests/unit/analyzer/session/trace_archive_test.cpp: a kept trace's definitions file
// (trace/rank-<r>.json, analyzer/session/trace_archive.h) stores the regions' MPI semantics as
// the stable integers of libtrace/defs/definitions.h and loads them back unchanged; the MPI
// regions exactly as the spec defines them are left out (format 3) and come back from the spec.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/engine/run_info.h"
#include "analyzer/session/trace_archive.h"
#include "libtrace/defs/definitions.h"
#include "pmpi_wrappers/generated_regions.h"

using namespace critpath;
using namespace critpath::analyzer;

TEST_CASE("kept traces store the MPI semantics as their stable values", "[session]") {
  char tmpl[] = "/tmp/critpath-archive-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;

  defs::Definitions d;
  defs::MpiSemantics ireduce;  // every field away from its zero value
  ireduce.cls = defs::MpiClass::kCollective;
  ireduce.sync = defs::MpiSync::kNToOne;
  ireduce.root = defs::MpiRoot::kSink;
  ireduce.completion = defs::MpiCompletion::kTest;
  ireduce.lifecycle = defs::MpiLifecycle::kFinalize;
  ireduce.rma = defs::MpiRma::kFence;
  d.regions.define_fixed(150, "MPI_Ireduce", defs::RegionKind::kMpi, ireduce);
  RunInfo run;
  run.rank = 3;
  run.size = 4;
  REQUIRE(save_archive(run, d, {}, dir) == Status::kOk);

  // [class, sync, root, completion, lifecycle, rma]: the values kept traces are read with.
  std::ifstream f(dir + "/rank-3.json");
  REQUIRE(f.good());
  const nlohmann::json j = nlohmann::json::parse(f);
  nlohmann::json stored;
  for (const nlohmann::json& r : j.at("regions"))
    if (r.at("id") == 150) stored = r.at("mpi");
  CHECK(stored == nlohmann::json({2, 4, 2, 2, 2, 4}));

  RunInfo back;
  defs::Definitions loaded;
  std::vector<std::string> notes;
  REQUIRE(load_archive(dir, 3, back, loaded, notes) == Status::kOk);
  CHECK(loaded.regions.mpi(150) == ireduce);
  CHECK(loaded.regions.get(150).name == "MPI_Ireduce");
  std::system(("rm -rf -- '" + dir + "'").c_str());
}

TEST_CASE("kept traces leave out the MPI regions the spec defines as they are", "[session]") {
  char tmpl[] = "/tmp/critpath-archive-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const pmpi::GeneratedRegion* send = nullptr;
  for (const pmpi::GeneratedRegion& r : pmpi::generated_regions())
    if (std::string(r.name) == "MPI_Send") send = &r;
  REQUIRE(send != nullptr);

  defs::Definitions d;
  d.regions.define_fixed(send->id, send->name, defs::RegionKind::kMpi, send->mpi);  // as the spec
  defs::MpiSemantics other = send->mpi;
  other.sync = defs::MpiSync::kBarrier;  // not as the spec: written out
  const pmpi::GeneratedRegion& first = pmpi::generated_regions()[0];
  d.regions.define_fixed(first.id, first.name, defs::RegionKind::kMpi, other);
  d.regions.define_fixed(1001, "solve", defs::RegionKind::kUser);
  RunInfo run;
  run.rank = 0;
  REQUIRE(save_archive(run, d, {}, dir) == Status::kOk);

  std::ifstream f(dir + "/rank-0.json");
  REQUIRE(f.good());
  nlohmann::json j = nlohmann::json::parse(f);
  CHECK(j.at("format") == "critpath-archive/3");
  CHECK(j.at("regions_from_spec") == true);
  std::vector<uint32_t> listed;
  for (const nlohmann::json& r : j.at("regions")) listed.push_back(r.at("id"));
  std::sort(listed.begin(), listed.end());
  CHECK(listed == std::vector<uint32_t>{first.id, defs::kRootRegion, 1001});

  RunInfo back;
  defs::Definitions loaded;
  std::vector<std::string> notes;
  REQUIRE(load_archive(dir, 0, back, loaded, notes) == Status::kOk);
  CHECK(loaded.regions.get(send->id).name == "MPI_Send");
  CHECK(loaded.regions.mpi(send->id) == send->mpi);
  CHECK(loaded.regions.mpi(first.id) == other);
  CHECK(loaded.regions.get(1001).name == "solve");

  // A format 2 archive lists every region and is read as it is.
  j["format"] = "critpath-archive/2";
  j.erase("regions_from_spec");
  std::ofstream(dir + "/rank-0.json") << j.dump();
  defs::Definitions old;
  REQUIRE(load_archive(dir, 0, back, old, notes) == Status::kOk);
  CHECK(old.regions.get(send->id).name != "MPI_Send");  // not listed, not defined
  CHECK(old.regions.mpi(first.id) == other);
  std::system(("rm -rf -- '" + dir + "'").c_str());
}
