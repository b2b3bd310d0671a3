// critpath — tests/unit/wrappers/golden_test.cpp: pins the wrapper generator's output.
//
// The generated wrappers of a few representative functions (one per important recipe) must
// equal tests/unit/wrappers/golden/<fn>.cpp.txt, and docs/mpi-coverage.md must equal the
// generated coverage document. After an intended change to the spec, a template or the
// generator, refresh them and review the diff:
//   python3 pmpi_wrappers/gen/gen_wrappers.py --update-golden tests/unit/wrappers/golden
//       MPI_Send MPI_Irecv MPI_Waitall MPI_Allreduce MPI_Ibcast MPI_Rget_accumulate
//       MPI_Win_create      (one command line)
//   python3 pmpi_wrappers/gen/gen_wrappers.py --docs docs/mpi-coverage.md
#include <catch2/catch.hpp>

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "pmpi_wrappers/generated_regions.h"

namespace {

#if defined(CRITPATH_WRAPPERS_GENERATED_DIR) && defined(CRITPATH_SOURCE_DIR)
std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string generated_block(const std::string& all, const std::string& fn) {
  const std::string begin = "// ---- begin " + fn + " ----";
  const std::string end = "// ---- end " + fn + " ----";
  const size_t i = all.find(begin);
  const size_t j = all.find(end);
  if (i == std::string::npos || j == std::string::npos) return "";
  return all.substr(i, j + end.size() - i) + "\n";
}
#endif

}  // namespace

TEST_CASE("generated wrappers match the golden files", "[wrappers]") {
#if defined(CRITPATH_WRAPPERS_GENERATED_DIR) && defined(CRITPATH_SOURCE_DIR)
  const std::string all = slurp(std::string(CRITPATH_WRAPPERS_GENERATED_DIR) +
                                "/pmpi_wrappers/mpi_wrappers.cpp");
  REQUIRE_FALSE(all.empty());
  for (const char* fn : {"MPI_Send", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Ibcast",
                         "MPI_Rget_accumulate", "MPI_Win_create"}) {
    INFO("function " << fn << " (refresh: gen_wrappers.py --update-golden, see this file)");
    const std::string golden = slurp(std::string(CRITPATH_SOURCE_DIR) + "/tests/unit/wrappers/golden/" + fn +
                                     ".cpp.txt");
    REQUIRE_FALSE(golden.empty());
    CHECK(generated_block(all, fn) == golden);
  }
#else
  WARN("generated-file paths not configured; golden comparison skipped");
#endif
}

TEST_CASE("docs/mpi-coverage.md is the generated one", "[wrappers]") {
#if defined(CRITPATH_WRAPPERS_GENERATED_DIR) && defined(CRITPATH_SOURCE_DIR)
  const std::string generated = slurp(std::string(CRITPATH_WRAPPERS_GENERATED_DIR) + "/mpi-coverage.md");
  const std::string docs = slurp(std::string(CRITPATH_SOURCE_DIR) + "/docs/mpi-coverage.md");
  REQUIRE_FALSE(generated.empty());
  INFO("refresh: python3 pmpi_wrappers/gen/gen_wrappers.py --docs docs/mpi-coverage.md");
  CHECK(docs == generated);
#else
  WARN("generated-file paths not configured; docs comparison skipped");
#endif
}

TEST_CASE("MPI region ids are stable", "[wrappers]") {
  // Region ids are part of the trace format: they may be added, never changed.
  using namespace critpath::pmpi::region;
  static_assert(kMPI_Init == 1 && kMPI_Init_thread == 2 && kMPI_Finalize == 3);
  static_assert(kMPI_Pcontrol == 4);
  static_assert(kMPI_Send == 10 && kMPI_Recv == 14 && kMPI_Sendrecv == 15);
  static_assert(kMPI_Isend == 20 && kMPI_Irecv == 24);
  static_assert(kMPI_Send_init == 30 && kMPI_Start == 35 && kMPI_Startall == 36);
  static_assert(kMPI_Wait == 40 && kMPI_Waitall == 41 && kMPI_Test == 44);
  static_assert(kMPI_Probe == 50);
  static_assert(kMPI_Barrier == 100 && kMPI_Bcast == 101 && kMPI_Allreduce == 112);
  static_assert(kMPI_Abort == 5 && kMPI_Ibarrier == 150 && kMPI_Neighbor_allgather == 200);
  static_assert(kMPI_Intercomm_create == 308 && kMPI_Cart_create == 400);
  static_assert(kMPI_Win_create == 500 && kMPI_Put == 530 && kMPI_Rget_accumulate == 539);
  static_assert(kMPI_Comm_dup == 300 && kMPI_Comm_split == 301 && kMPI_Comm_free == 302);
  uint32_t last = 0;
  for (const auto& r : critpath::pmpi::generated_regions()) {
    CHECK(r.id > last);  // sorted, unique
    CHECK(r.id <= 999);
    CHECK(std::string(r.name).rfind("MPI_", 0) == 0);
    last = r.id;
  }
}

TEST_CASE("MPI region semantics come from the spec", "[wrappers]") {
  using namespace critpath::defs;
  std::map<std::string, MpiSemantics> sem;
  for (const auto& r : critpath::pmpi::generated_regions()) {
    CHECK(r.mpi.cls != MpiClass::kNone);  // every entry has a class
    sem[r.name] = r.mpi;
  }
  auto is = [&](const char* fn, MpiClass c, MpiSync s, MpiRoot root = MpiRoot::kNone) {
    INFO(fn);
    REQUIRE(sem.count(fn));
    CHECK(sem[fn].cls == c);
    CHECK(sem[fn].sync == s);
    CHECK(sem[fn].root == root);
  };
  is("MPI_Send", MpiClass::kP2p, MpiSync::kNone);
  is("MPI_Barrier", MpiClass::kCollective, MpiSync::kBarrier);
  is("MPI_Allreduce", MpiClass::kCollective, MpiSync::kNxN);
  is("MPI_Neighbor_alltoallw", MpiClass::kCollective, MpiSync::kNxN);
  is("MPI_Bcast", MpiClass::kCollective, MpiSync::kOneToN, MpiRoot::kSource);
  is("MPI_Scatterv", MpiClass::kCollective, MpiSync::kOneToN, MpiRoot::kSource);
  is("MPI_Reduce", MpiClass::kCollective, MpiSync::kNToOne, MpiRoot::kSink);
  is("MPI_Gatherv", MpiClass::kCollective, MpiSync::kNToOne, MpiRoot::kSink);
  is("MPI_Exscan", MpiClass::kCollective, MpiSync::kScan);
  is("MPI_Reduce_local", MpiClass::kCollective, MpiSync::kNone);
  is("MPI_Comm_split", MpiClass::kManagement, MpiSync::kOther);
  is("MPI_Group_incl", MpiClass::kManagement, MpiSync::kNone);
  is("MPI_Win_fence", MpiClass::kRma, MpiSync::kOther);
  is("MPI_Put", MpiClass::kRma, MpiSync::kNone);
  // A nonblocking collective has its blocking twin's semantics (waited for at completion).
  int twins = 0;
  for (const auto& [name, s] : sem) {
    if (name.rfind("MPI_I", 0) != 0) continue;
    std::string twin = "MPI_" + name.substr(5);
    twin[4] = char(std::toupper(static_cast<unsigned char>(twin[4])));
    if (!sem.count(twin) || sem[twin].cls != MpiClass::kCollective) continue;
    INFO(name << " vs " << twin);
    CHECK(s == sem[twin]);
    ++twins;
  }
  CHECK(twins == 22);  // Ibarrier .. Iexscan (17) and Ineighbor_* (5)
  // Completion and life cycle.
  for (const char* fn : {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome"})
    CHECK(sem[fn].completion == MpiCompletion::kWait);
  for (const char* fn : {"MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"})
    CHECK(sem[fn].completion == MpiCompletion::kTest);
  int completions = 0, inits = 0, finalizes = 0;
  for (const auto& [name, s] : sem) {
    completions += s.completion != MpiCompletion::kNone;
    inits += s.lifecycle == MpiLifecycle::kInit;
    finalizes += s.lifecycle == MpiLifecycle::kFinalize;
  }
  CHECK(completions == 8);
  CHECK(inits == 2);
  CHECK(finalizes == 1);
  CHECK(sem["MPI_Init_thread"].lifecycle == MpiLifecycle::kInit);
  CHECK(sem["MPI_Finalize"].lifecycle == MpiLifecycle::kFinalize);
}
