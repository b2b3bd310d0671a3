// critpath — tests/fuzz/fuzz_otf2_import.cpp: libFuzzer target for the OTF2 importer
// (analyzer/otf2/otf2_import.h, critpath-analyze --otf2).
//
// One input is one archive: its files packed one after another (otf2_archive_bytes.h), so that
// the fuzzer truncates, bit-flips, drops and duplicates whole files and the definitions and
// events inside them (references to undefined ids, locations without their event file). The
// files are written into a directory of this process's own (under /dev/shm when there is one:
// no disk traffic), emptied for every input, and imported as critpath-analyze --otf2 does on one
// process: open(), select() of every rank, load() of each. Every archive must import or be
// refused with one line saying why; a crash, a sanitizer report, a hang or an allocation past
// libFuzzer's limit is a finding. libotf2 is not instrumented (its own reads of damaged sizes
// are caught by ASan's allocator: run_fuzz.sh).
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "analyzer/otf2/otf2_import.h"
#include "tests/fuzz/otf2_archive_bytes.h"

using namespace critpath;

namespace {

std::string g_dir;  // this process's archive directory

void remove_dir() {
  std::error_code ec;
  std::filesystem::remove_all(g_dir, ec);
}

const std::string& archive_dir() {
  if (g_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp && *tmp ? tmp : "/tmp";
    g_dir = base + "/critpath-fuzz-otf2-" + std::to_string(getpid());
    std::atexit(remove_dir);
  }
  return g_dir;
}

// A refusal says why, in one line.
void check_refusal(const std::string& error) {
  if (error.empty() || error.find('\n') != std::string::npos) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = archive_dir();
  fuzz::unpack_archive(data, size, dir);
  analyzer::otf2::ArchiveReader reader;
  std::string error;
  if (reader.open(dir + "/traces.otf2", error) != Status::kOk) {
    check_refusal(error);
    return 0;
  }
  const int ranks = reader.ranks();
  if (ranks <= 0) __builtin_trap();  // open() refuses an archive without a rank
  if (reader.select(0, ranks, error) != Status::kOk) {
    check_refusal(error);
    return 0;
  }
  analyzer::otf2::Skipped skipped = reader.skipped_locations();
  for (int rank = 0; rank < ranks; ++rank) {
    trace::ChunkStore chunks;
    defs::Definitions definitions;
    analyzer::LocationTrace location;
    if (reader.load(rank, chunks, definitions, location, skipped, error) != Status::kOk) {
      check_refusal(error);
      return 0;
    }
  }
  (void)skipped.describe();
  return 0;
}
