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

#include <fstream>
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
  const std::string all =
      slurp(std::string(CRITPATH_WRAPPERS_GENERATED_DIR) + "/pmpi_wrappers/mpi_wrappers.cpp");
  REQUIRE_FALSE(all.empty());
  for (const char* fn : {"MPI_Send", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Ibcast",
                         "MPI_Rget_accumulate", "MPI_Win_create"}) {
    INFO("function " << fn << " (refresh: gen_wrappers.py --update-golden, see this file)");
    const std::string golden =
        slurp(std::string(CRITPATH_SOURCE_DIR) + "/tests/unit/wrappers/golden/" + fn + ".cpp.txt");
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
