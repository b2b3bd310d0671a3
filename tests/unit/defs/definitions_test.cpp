// critpath — tests/unit/defs/definitions_test.cpp: the region table's MPI semantics.
#include <catch2/catch.hpp>

#include "libtrace/defs/definitions.h"

using namespace critpath::defs;

TEST_CASE("MPI regions carry their semantics", "[defs]") {
  RegionTable t;
  MpiSemantics bcast;
  bcast.cls = MpiClass::kCollective;
  bcast.sync = MpiSync::kOneToN;
  bcast.root = MpiRoot::kSource;
  t.define_fixed(151, "MPI_Ibcast", RegionKind::kMpi, bcast);
  CHECK(t.get(151).mpi == bcast);
  CHECK(t.mpi(151) == bcast);
  CHECK(t.get(151).name == "MPI_Ibcast");

  SECTION("non-MPI and unknown regions have none") {
    const uint32_t user = t.define("compute", RegionKind::kUser);
    CHECK(t.mpi(user) == MpiSemantics{});
    CHECK(t.get(user).mpi.cls == MpiClass::kNone);
    CHECK(t.mpi(4242) == MpiSemantics{});
    CHECK(t.mpi(kRootRegion) == MpiSemantics{});
  }
  SECTION("a second definition does not change them") {
    MpiSemantics other;
    other.cls = MpiClass::kP2p;
    t.define_fixed(151, "MPI_Ibcast", RegionKind::kMpi, other);
    CHECK(t.mpi(151) == bcast);
    t.define_fixed(151, "MPI_Ibcast", RegionKind::kMpi);
    CHECK(t.mpi(151) == bcast);
  }
  SECTION("a region defined without them gets them later") {
    t.define_fixed(40, "MPI_Wait", RegionKind::kMpi);
    CHECK(t.mpi(40) == MpiSemantics{});
    MpiSemantics wait;
    wait.cls = MpiClass::kP2p;
    wait.completion = MpiCompletion::kWait;
    t.define_fixed(40, "MPI_Wait", RegionKind::kMpi, wait);
    CHECK(t.mpi(40) == wait);
  }
  SECTION("snapshots and renames keep them") {
    t.rename(151, "MPI_Ibcast", "x.c", 3);
    CHECK(t.mpi(151) == bcast);
    bool seen = false;
    for (const RegionDef& d : t.snapshot())
      if (d.id == 151) seen = d.mpi == bcast;
    CHECK(seen);
  }
}

// The MPI semantics values are stored as integers in kept traces
// (analyzer/session/trace_archive.cpp): never renumber. Checked when this file compiles; that an
// archive holds these values and reads them back, by tests/unit/analyzer/session/.
static_assert(int(MpiClass::kNone) == 0 && int(MpiClass::kP2p) == 1 && int(MpiClass::kCollective) == 2 &&
              int(MpiClass::kRma) == 3 && int(MpiClass::kManagement) == 4);
static_assert(int(MpiSync::kNone) == 0 && int(MpiSync::kBarrier) == 1 && int(MpiSync::kNxN) == 2 &&
              int(MpiSync::kOneToN) == 3 && int(MpiSync::kNToOne) == 4 && int(MpiSync::kScan) == 5 &&
              int(MpiSync::kOther) == 6);
static_assert(int(MpiRoot::kNone) == 0 && int(MpiRoot::kSource) == 1 && int(MpiRoot::kSink) == 2);
static_assert(int(MpiCompletion::kNone) == 0 && int(MpiCompletion::kWait) == 1 &&
              int(MpiCompletion::kTest) == 2);
static_assert(int(MpiLifecycle::kNone) == 0 && int(MpiLifecycle::kInit) == 1 &&
              int(MpiLifecycle::kFinalize) == 2);
