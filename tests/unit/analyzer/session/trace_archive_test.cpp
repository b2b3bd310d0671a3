// critpath — tests/unit/analyzer/session/trace_archive_test.cpp: a kept trace's definitions file
// (trace/rank-<r>.json, analyzer/session/trace_archive.h) stores the regions' MPI semantics as
// the stable integers of libtrace/defs/definitions.h and loads them back unchanged.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/engine/run_info.h"
#include "analyzer/session/trace_archive.h"
#include "libtrace/defs/definitions.h"

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
