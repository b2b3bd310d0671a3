// critpath — tests/unit/analyzer/otf2/otf2_import_damage_test.cpp: the OTF2 import
// (analyzer/otf2/otf2_import.h) on archives the test writes itself with OTF2's writer: MPI
// ranks beside CUDA streams, communicators and windows (only MPI's enter the analysis, the rest
// counted), no MPI at all (one process's master thread), mangled region names (demangled, the
// mangled name kept), and a deterministic mutation test in place of a fuzzer over files: every
// file of the archive truncated, bit-flipped and removed, and references to undefined ids or
// ranks, each import ending in success or in a refusal of one line, never a crash (the
// sanitizer build runs this under ASan and UBSan).
#include <otf2/otf2.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "analyzer/otf2/otf2_import.h"
#include "tests/fuzz/otf2_archive_bytes.h"

// A namespace of this file's own: the unit tests build several files as one (unity build,
// tests/CMakeLists.txt), and its helpers share names with other files'.
namespace otf2_import_damage_test {

using namespace critpath;
namespace o = critpath::analyzer::otf2;
namespace fs = std::filesystem;

namespace {

// What an archive holds besides its two MPI ranks (or one process without MPI).
struct Variant {
  bool mpi = true;
  bool cuda = true;          // a CUDA stream per process, a CUDA communicator and window each
  uint32_t peer = 1;         // rank 0's MPI_Send peer (2: no such rank)
  uint64_t world_last = 1;   // MPI_COMM_WORLD's group's last member (5: no such rank)
  uint32_t win_comm = 100;   // the CUDA window's communicator (77: undefined)
  uint32_t region_bias = 0;  // added to rank 1's region references (undefined regions)
};

enum : uint32_t { kMain, kSend, kRecv, kBarrier, kMemcpy, kWork, kRegions };
const char* const kNames[kRegions] = {"main",        "MPI_Send",   "MPI_Recv",
                                      "MPI_Barrier", "cudaMemcpy", "_Z10latesenderii"};

void ok(OTF2_ErrorCode c) { REQUIRE(c == OTF2_SUCCESS); }
OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
const OTF2_FlushCallbacks kFlush = {pre_flush, nullptr};
uint64_t stream_of(int p) { return 1000 + uint64_t(p); }

void write_events(OTF2_Archive* a, const Variant& v, int processes) {
  for (int p = 0; p < processes; ++p) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, uint64_t(p));
    const uint32_t bias = p == 1 ? v.region_bias : 0;
    auto region = [&](uint32_t r, uint64_t from, uint64_t to) {
      ok(OTF2_EvtWriter_Enter(w, nullptr, from, r + bias));
      ok(OTF2_EvtWriter_Leave(w, nullptr, to, r + bias));
    };
    ok(OTF2_EvtWriter_Enter(w, nullptr, 0, kMain + bias));
    region(kWork, 10, 20 + 30 * uint64_t(p == 0));
    if (v.mpi) {
      ok(OTF2_EvtWriter_Enter(w, nullptr, 50, (p == 0 ? kSend : kRecv) + bias));
      if (p == 0) ok(OTF2_EvtWriter_MpiSend(w, nullptr, 50, v.peer, 0, 7, 64));
      if (p == 1) ok(OTF2_EvtWriter_MpiRecv(w, nullptr, 52, 0, 0, 7, 64));
      ok(OTF2_EvtWriter_Leave(w, nullptr, 52, (p == 0 ? kSend : kRecv) + bias));
      ok(OTF2_EvtWriter_Enter(w, nullptr, 60, kBarrier + bias));
      ok(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, 60));
      ok(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, 70, OTF2_COLLECTIVE_OP_BARRIER, 0,
                                         OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
      ok(OTF2_EvtWriter_Leave(w, nullptr, 70, kBarrier + bias));
    }
    if (v.cuda) {  // a memory copy: an RMA put to the process's stream on its CUDA window
      ok(OTF2_EvtWriter_Enter(w, nullptr, 80, kMemcpy + bias));
      ok(OTF2_EvtWriter_RmaPut(w, nullptr, 80, 100 + uint32_t(p), 1, 4096, 1));
      ok(OTF2_EvtWriter_RmaOpCompleteBlocking(w, nullptr, 85, 100 + uint32_t(p), 1));
      ok(OTF2_EvtWriter_Leave(w, nullptr, 85, kMemcpy + bias));
      OTF2_EvtWriter* s = OTF2_Archive_GetEvtWriter(a, stream_of(p));
      ok(OTF2_EvtWriter_Enter(s, nullptr, 85, kWork));
      ok(OTF2_EvtWriter_Leave(s, nullptr, 90, kWork));
    }
    ok(OTF2_EvtWriter_Leave(w, nullptr, 100, kMain + bias));
  }
}

void write_groups(OTF2_GlobalDefWriter* g, const Variant& v, int processes) {
  if (v.mpi) {
    const uint64_t ranks[2] = {0, 1}, world[2] = {0, v.world_last};
    ok(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 2, ranks));
    ok(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 2, world));
    ok(OTF2_GlobalDefWriter_WriteComm(g, 0, 1, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
  }
  if (!v.cuda) return;
  std::vector<uint64_t> members;  // process p's master thread is member 2p, its stream 2p + 1
  for (int p = 0; p < processes; ++p) members.insert(members.end(), {uint64_t(p), stream_of(p)});
  ok(OTF2_GlobalDefWriter_WriteGroup(g, 10, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_CUDA,
                                     OTF2_GROUP_FLAG_NONE, uint32_t(members.size()), members.data()));
  for (int p = 0; p < processes; ++p) {
    const uint64_t m[2] = {2 * uint64_t(p), 2 * uint64_t(p) + 1};
    ok(OTF2_GlobalDefWriter_WriteGroup(g, 11 + uint32_t(p), 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_CUDA,
                                       OTF2_GROUP_FLAG_NONE, 2, m));
    ok(OTF2_GlobalDefWriter_WriteComm(g, 100 + uint32_t(p), 2, 11 + uint32_t(p), OTF2_UNDEFINED_COMM,
                                      OTF2_COMM_FLAG_NONE));
    ok(OTF2_GlobalDefWriter_WriteRmaWin(g, 100 + uint32_t(p), 2, v.win_comm + uint32_t(p),
                                        OTF2_RMA_WIN_FLAG_NONE));
  }
}

void write_definitions(OTF2_Archive* a, const Variant& v, int processes) {
  ok(OTF2_Archive_OpenDefFiles(a));
  for (int p = 0; p < processes; ++p) {
    ok(OTF2_Archive_CloseDefWriter(a, OTF2_Archive_GetDefWriter(a, uint64_t(p))));
    if (v.cuda) ok(OTF2_Archive_CloseDefWriter(a, OTF2_Archive_GetDefWriter(a, stream_of(p))));
  }
  ok(OTF2_Archive_CloseDefFiles(a));
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  const char* const strings[] = {"", "MPI_COMM_WORLD", "CUDA context", "host", "Master thread", "CUDA[0]"};
  uint32_t n = 0;
  for (const char* s : strings) ok(OTF2_GlobalDefWriter_WriteString(g, n++, s));
  for (const char* s : kNames) ok(OTF2_GlobalDefWriter_WriteString(g, n++, s));
  ok(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 100, OTF2_UNDEFINED_TIMESTAMP));
  ok(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 3, 3, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
  for (int p = 0; p < processes; ++p) {
    ok(OTF2_GlobalDefWriter_WriteLocationGroup(g, uint32_t(p), 4, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                               OTF2_UNDEFINED_LOCATION_GROUP));
    ok(OTF2_GlobalDefWriter_WriteLocation(g, uint64_t(p), 4, OTF2_LOCATION_TYPE_CPU_THREAD, 10, uint32_t(p)));
    if (!v.cuda) continue;
    ok(OTF2_GlobalDefWriter_WriteLocationGroup(g, 10 + uint32_t(p), 5, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                               0, uint32_t(p)));
    ok(OTF2_GlobalDefWriter_WriteLocation(g, stream_of(p), 5, OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, 2,
                                          10 + uint32_t(p)));
  }
  for (uint32_t r = 0; r < kRegions; ++r) {
    const bool mpi = r == kSend || r == kRecv || r == kBarrier;
    if (mpi && !v.mpi) continue;
    const OTF2_RegionRole role = r == kSend || r == kRecv ? OTF2_REGION_ROLE_POINT2POINT
                                 : r == kBarrier          ? OTF2_REGION_ROLE_BARRIER
                                                          : OTF2_REGION_ROLE_FUNCTION;
    const OTF2_Paradigm paradigm = mpi            ? OTF2_PARADIGM_MPI
                                   : r == kMemcpy ? OTF2_PARADIGM_CUDA
                                                  : OTF2_PARADIGM_COMPILER;
    ok(OTF2_GlobalDefWriter_WriteRegion(g, r, 6 + r, 6 + r, 0, role, paradigm, OTF2_REGION_FLAG_NONE,
                                        OTF2_UNDEFINED_STRING, 0, 0));
  }
  write_groups(g, v, processes);
  ok(OTF2_Archive_CloseGlobalDefWriter(a, g));
}

// Writes the archive into `dir` (fresh); returns its anchor file.
std::string write_archive(const std::string& dir, const Variant& v) {
  fs::remove_all(dir);
  const int processes = v.mpi ? 2 : 1;
  OTF2_Archive* a = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1 << 20, 4 << 20,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  REQUIRE(a != nullptr);
  ok(OTF2_Archive_SetFlushCallbacks(a, &kFlush, nullptr));
  ok(OTF2_Archive_SetSerialCollectiveCallbacks(a));
  ok(OTF2_Archive_OpenEvtFiles(a));
  write_events(a, v, processes);
  ok(OTF2_Archive_CloseEvtFiles(a));
  write_definitions(a, v, processes);
  ok(OTF2_Archive_Close(a));
  return dir + "/traces.otf2";
}

// An import of every rank, as critpath-analyze --otf2 on one process does it.
struct Imported {
  bool ok = false;
  std::string error;
  int ranks = 0;
  bool without_mpi = false;
  o::Skipped skipped;
  std::vector<std::string> notes;
  std::map<std::string, std::string> mangled;
  std::vector<std::string> region_names;  // rank 0's
};

Imported import(const std::string& anchor) {
  Imported out;
  o::ArchiveReader r;
  if (r.open(anchor, out.error) != Status::kOk) return out;
  out.ranks = r.ranks();
  out.without_mpi = r.without_mpi();
  if (r.select(0, out.ranks, out.error) != Status::kOk) return out;
  out.skipped = r.skipped_locations();
  for (int rank = 0; rank < out.ranks; ++rank) {
    trace::ChunkStore chunks;
    defs::Definitions definitions;
    analyzer::LocationTrace location;
    if (r.load(rank, chunks, definitions, location, out.skipped, out.error) != Status::kOk) return out;
    if (rank == 0) {
      out.notes = location.notes;
      out.mangled = location.run.mangled_names;
      for (const defs::RegionDef& d : definitions.regions.snapshot()) out.region_names.push_back(d.name);
    }
  }
  out.ok = true;
  return out;
}

std::string scratch(const std::string& name) {
  return (fs::temp_directory_path() / ("critpath-otf2-" + std::to_string(getpid()) + "-" + name)).string();
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Imports the archive of `v` (written into a scratch directory `name`, removed after):
// `processes` ranks, each with a CUDA communicator and window (counted, not analysed).
Imported import_intact(const Variant& v, const char* name, int processes) {
  const std::string dir = scratch(name);
  Imported got = import(write_archive(dir, v));
  fs::remove_all(dir);
  INFO(got.error);
  REQUIRE(got.ok);
  CHECK(got.ranks == processes);
  CHECK(got.without_mpi == !v.mpi);
  CHECK(got.skipped.accelerator_locations == uint64_t(processes));
  CHECK(got.skipped.other_comms == uint64_t(processes));
  CHECK(got.skipped.other_windows == uint64_t(processes));
  CHECK(got.skipped.other_records == 2 * uint64_t(processes));  // a put and its completion each
  return got;
}

}  // namespace

TEST_CASE("only MPI's ranks, communicators and windows enter; CUDA's are counted", "[otf2_import]") {
  const Imported got = import_intact(Variant{}, "cuda", 2);
  // Mangled names demangled, the mangled one kept by display name.
  CHECK(has(got.region_names, "latesender(int, int)"));
  CHECK_FALSE(has(got.region_names, "_Z10latesenderii"));
  CHECK(got.mangled.at("latesender(int, int)") == "_Z10latesenderii");
  CHECK(got.mangled.count("main") == 0);
}

TEST_CASE("an archive without MPI is its one process's master thread", "[otf2_import]") {
  Variant v;
  v.mpi = false;
  const Imported got = import_intact(v, "nompi", 1);
  REQUIRE(got.notes.size() == 1);
  CHECK(got.notes[0].find("holds no MPI") != std::string::npos);
}

TEST_CASE("references to undefined ids or to no rank are refused in one line", "[otf2_import]") {
  struct Case {
    const char* what;
    Variant v;
    const char* says;
  };
  std::vector<Case> cases(3);
  cases[0] = {"MPI_COMM_WORLD's member 5 of 2", {}, "which is not an MPI rank"};
  cases[0].v.world_last = 5;
  cases[1] = {"a window over an undefined communicator", {}, "which is not defined"};
  cases[1].v.win_comm = 77;
  cases[2] = {"events naming undefined regions", {}, "which is not defined"};
  cases[2].v.region_bias = 50;
  for (const Case& c : cases) {
    INFO(c.what);
    const std::string dir = scratch("ref");
    const Imported got = import(write_archive(dir, c.v));
    INFO(got.error);
    CHECK_FALSE(got.ok);
    CHECK(got.error.find(c.says) != std::string::npos);
    CHECK(got.error.find('\n') == std::string::npos);
    fs::remove_all(dir);
  }
}

TEST_CASE("a send to no member (MPI_ERR_RANK under MPI_ERRORS_RETURN) is imported as recorded",
          "[otf2_import]") {
  Variant v;
  v.peer = 2;  // rank 2 of 2
  const std::string dir = scratch("badpeer");
  const Imported got = import(write_archive(dir, v));
  INFO(got.error);
  CHECK(got.ok);
  fs::remove_all(dir);
}

TEST_CASE("every file of an archive truncated, bit-flipped or removed: success or one line",
          "[otf2_import]") {
  const std::string pristine = scratch("pristine"), work = scratch("damaged");
  write_archive(pristine, Variant{});
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(pristine))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), pristine).string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 10);  // anchor, global definitions, 4 locations' .evt and .def
  int damaged = 0, refused = 0;
  for (const std::string& f : files) {
    const auto size = size_t(fs::file_size(pristine + "/" + f));
    // Kinds: 0 removed, 1..4 truncated to 0, 1/3, 2/3, size - 1 bytes; then 24 bit flips.
    for (int kind = 0; kind < 29; ++kind) {
      fs::remove_all(work);
      fs::copy(pristine, work, fs::copy_options::recursive);
      const std::string path = work + "/" + f;
      if (kind == 0) {
        fs::remove(path);
      } else if (kind <= 4) {
        const size_t keep[4] = {0, size / 3, 2 * size / 3, size ? size - 1 : 0};
        fs::resize_file(path, keep[kind - 1]);
      } else {
        if (size == 0) continue;
        std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
        const size_t at = (size_t(kind) * 2654435761u) % size;
        io.seekg(std::streamoff(at));
        char b = 0;
        io.read(&b, 1);
        b = char(b ^ (1 << (kind % 8)));
        io.seekp(std::streamoff(at));
        io.write(&b, 1);
      }
      INFO(f << " damage " << kind);
      const Imported got = import(work + "/traces.otf2");
      ++damaged;
      if (!got.ok) {
        ++refused;
        CHECK_FALSE(got.error.empty());
        CHECK(got.error.find('\n') == std::string::npos);
      }
    }
  }
  CHECK(damaged > 250);
  CHECK(refused > 0);
  fs::remove_all(work);
  fs::remove_all(pristine);
}

// The seeds of the importer's fuzz target (tests/fuzz/fuzz_otf2_import.cpp): this file's
// archives packed into one byte string each (tests/fuzz/otf2_archive_bytes.h). Each kept seed
// must unpack to an archive that imports; CRITPATH_UPDATE_FUZZ_SEEDS=1 writes them anew.
TEST_CASE("the importer's fuzz seeds unpack to archives that import", "[otf2_import]") {
  struct Seed {
    const char* name;
    Variant v;
  };
  std::vector<Seed> seeds(3);
  seeds[0] = {"mpi-cuda", {}};
  seeds[1] = {"mpi", {}};
  seeds[1].v.cuda = false;
  seeds[2] = {"no-mpi", {}};
  seeds[2].v.mpi = false;
  const std::string corpus = std::string(CRITPATH_SOURCE_DIR) + "/tests/fuzz/corpus/otf2_import/";
  const std::string dir = scratch("seed");
  for (const Seed& s : seeds) {
    INFO(s.name);
    if (std::getenv("CRITPATH_UPDATE_FUZZ_SEEDS") != nullptr) {
      write_archive(dir, s.v);
      std::ofstream(corpus + s.name, std::ios::binary) << fuzz::pack_archive(dir);
    }
    std::ifstream in(corpus + s.name, std::ios::binary);
    REQUIRE(in);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const int locations = (s.v.mpi ? 2 : 1) * (s.v.cuda ? 2 : 1);  // a .def and an .evt each
    CHECK(fuzz::unpack_archive(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), dir) ==
          2 + 2 * locations);
    const Imported got = import(dir + "/traces.otf2");
    INFO(got.error);
    CHECK(got.ok);
    CHECK(got.without_mpi == !s.v.mpi);
  }
  fs::remove_all(dir);
}

}  // namespace otf2_import_damage_test
