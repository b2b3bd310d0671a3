// critpath — tests/unit/analyzer/otf2/otf2_support_test.cpp: the OTF2 mapping of critpath's regions
// and collectives (analyzer/otf2/otf2_support.h) and the import's skip note, without an archive.
#include <catch2/catch.hpp>

#include <string>

#include "analyzer/otf2/otf2_import.h"
#include "analyzer/otf2/otf2_support.h"
#include "pmpi_wrappers/generated_regions.h"

using namespace critpath;
namespace o = critpath::analyzer::otf2;

namespace {

defs::RegionDef mpi_region(const pmpi::GeneratedRegion& g) {
  defs::RegionDef d;
  d.id = g.id;
  d.name = g.name;
  d.kind = defs::RegionKind::kMpi;
  d.mpi = g.mpi;
  return d;
}

}  // namespace

TEST_CASE("every MPI function of the spec gets paradigm MPI and a role that keeps its class", "[otf2]") {
  for (const pmpi::GeneratedRegion& g : pmpi::generated_regions()) {
    INFO(g.name);
    const o::RegionStyle s = o::region_style(mpi_region(g));
    CHECK(s.paradigm == OTF2_PARADIGM_MPI);
    CHECK(o::region_kind(s.paradigm, s.role) == defs::RegionKind::kMpi);
    // What an unknown function of that role is taken for: the same class and pattern, except
    // that communicator constructors (management, synchronizing) read back as collectives.
    const defs::MpiSemantics back = o::semantics_from_role(s.role);
    if (g.mpi.cls == defs::MpiClass::kManagement && g.mpi.sync == defs::MpiSync::kOther) {
      CHECK(back.cls == defs::MpiClass::kCollective);
    } else {
      CHECK(back.cls == g.mpi.cls);
    }
    if (g.mpi.cls == defs::MpiClass::kCollective && g.mpi.sync != defs::MpiSync::kScan &&
        g.mpi.sync != defs::MpiSync::kNone)  // scans and MPI_Reduce_local: COLL_OTHER
      CHECK(back.sync == g.mpi.sync);
  }
}

TEST_CASE("collective operations are found by name, nonblocking twins included", "[otf2]") {
  CHECK(o::collective_op("MPI_Barrier") == OTF2_COLLECTIVE_OP_BARRIER);
  CHECK(o::collective_op("MPI_Iallreduce") == OTF2_COLLECTIVE_OP_ALLREDUCE);
  CHECK(o::collective_op("MPI_Ibcast") == OTF2_COLLECTIVE_OP_BCAST);
  CHECK(o::collective_op("MPI_Reduce_scatter_block") == OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK);
  CHECK(o::collective_op("MPI_Ineighbor_alltoallv") == OTF2_COLLECTIVE_OP_ALLTOALLV);
  CHECK(o::collective_op("MPI_Exscan") == OTF2_COLLECTIVE_OP_EXSCAN);
  CHECK(o::collective_op("MPI_Comm_split") == OTF2_COLLECTIVE_OP_CREATE_HANDLE);
  CHECK(o::collective_op("MPI_Cart_create") == OTF2_COLLECTIVE_OP_CREATE_HANDLE);
  CHECK(o::collective_op("MPI_Comm_free") == OTF2_COLLECTIVE_OP_DESTROY_HANDLE);
  CHECK(o::collective_op("MPI_Win_allocate") == OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE);
  CHECK(o::collective_op("MPI_Win_create") == OTF2_COLLECTIVE_OP_CREATE_HANDLE);
  CHECK(o::collective_op("MPI_Something_new") == OTF2_COLLECTIVE_OP_BARRIER);
  // No collective of the spec with a pattern falls back to BARRIER unless it is one.
  for (const pmpi::GeneratedRegion& g : pmpi::generated_regions()) {
    if (g.mpi.cls != defs::MpiClass::kCollective || g.mpi.sync == defs::MpiSync::kOther ||
        g.mpi.sync == defs::MpiSync::kNone)
      continue;
    INFO(g.name);
    CHECK((o::collective_op(g.name) == OTF2_COLLECTIVE_OP_BARRIER) ==
          (g.mpi.sync == defs::MpiSync::kBarrier));
  }
}

TEST_CASE("regions other than MPI calls keep their kind through their OTF2 style", "[otf2]") {
  for (defs::RegionKind k :
       {defs::RegionKind::kUser, defs::RegionKind::kFunction, defs::RegionKind::kArtificial}) {
    defs::RegionDef d;
    d.kind = k;
    const o::RegionStyle s = o::region_style(d);
    CHECK(o::region_kind(s.paradigm, s.role) == k);
  }
  defs::RegionDef site;
  site.kind = defs::RegionKind::kCallsite;
  CHECK(o::region_style(site).role ==
        OTF2_REGION_ROLE_CODE);  // read back as a call site only from critpath's archives
  CHECK(o::region_kind(OTF2_PARADIGM_OPENMP, OTF2_REGION_ROLE_PARALLEL) == defs::RegionKind::kUser);
  CHECK(o::region_kind(OTF2_PARADIGM_MEASUREMENT_SYSTEM, OTF2_REGION_ROLE_FUNCTION) ==
        defs::RegionKind::kUser);
}

TEST_CASE("locations are numbered as Score-P numbers them", "[otf2]") {
  CHECK(o::location_id(0, 0) == 0);
  CHECK(o::location_id(7, 0) == 7);
  CHECK(o::location_id(3, 2) == ((uint64_t(2) << 32) | 3));
}

TEST_CASE("the import's note says what it skipped, and nothing when it skipped nothing", "[otf2]") {
  o::Skipped s;
  CHECK(s.empty());
  CHECK(s.describe().empty());
  s.io_events = 3;
  s.thread_locations = 2;
  CHECK_FALSE(s.empty());
  const std::string note = s.describe();
  CHECK(note.rfind("otf2: skipped what critpath does not analyse: ", 0) == 0);
  CHECK(note.find("2 thread locations") != std::string::npos);
  CHECK(note.find("3 I/O records") != std::string::npos);
  uint64_t a[o::Skipped::kFields];
  s.to_array(a);
  o::Skipped t;
  t.from_array(a);
  CHECK(t.describe() == note);
}
