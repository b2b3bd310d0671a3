// critpath — tests/unit/buffer/chunk_store_test.cpp
//
// Round trips through the whole buffer stage: random events -> raw 16384-slot chunks ->
// ChunkCompressor -> ChunkStore (memory, spill file, failing spill, kept trace file) ->
// TraceReader forward and backward, compared event by event with the generated sequence.
// Tag: [buffer].
#include <catch2/catch.hpp>

#include <cerrno>
#include <fstream>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "libtrace/buffer/chunk_store.h"
#include "libtrace/buffer/trace_reader.h"
#include "tests/unit/buffer/buffer_test_util.h"

using namespace critpath;
using namespace critpath::trace;
using namespace critpath::trace::testing;

namespace {

constexpr size_t kChunkSlots = 16384;

// A private scratch directory, removed (with everything in it) at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/critpath-buffer-test-XXXXXX";
    const char* p = ::mkdtemp(tmpl);
    path = p ? p : "/tmp";
  }
  ~TempDir() {
    if (path != "/tmp") std::system(("rm -rf '" + path + "'").c_str());
  }
};

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

size_t count_status(const std::vector<Status>& v, Status s) {
  return size_t(std::count(v.begin(), v.end(), s));
}

}  // namespace

TEST_CASE("2M random events round-trip through the in-memory store", "[buffer]") {
  // 123 chunks: the store keeps no per-chunk state narrower than 32 bits, so more chunks would
  // check nothing more (10M events took 60 % of the [buffer] tests' CPU time).
  const size_t n = 2000000;
  ChunkStore store;
  store.configure(uint64_t(2) << 30, "/tmp/critpath-unused-spill.bin");
  std::vector<Status> st;
  const auto seeds = fill_store(store, 2024, n, kChunkSlots, 0, &st);
  CHECK(count_status(st, Status::kOk) == st.size());

  const ChunkStoreStats s = store.stats();
  CHECK(s.chunks == seeds.size());
  CHECK(s.events == n);
  CHECK(s.chunks_spilled == 0);
  CHECK(s.bytes_in_memory == s.bytes_total);
  CHECK(s.encoded_bytes > s.bytes_total);  // random fields still compress a little
  CHECK(store.locations() == std::vector<uint16_t>{0});
  CHECK(!file_exists("/tmp/critpath-unused-spill.bin"));

  std::string first_bad;
  CHECK(verify_store(store, 0, seeds, n, kChunkSlots, first_bad) == 0);
  CHECK(first_bad == "");
}

TEST_CASE("a tiny budget spills most chunks and still decodes identically", "[buffer]") {
  TempDir dir;
  const std::string spill = dir.path + "/nested/deeper/rank0.spill";  // parents created
  const size_t n = 1500000;
  std::vector<ChunkSeed> seeds;
  {
    ChunkStore store;
    store.configure(64 * 1024, spill);
    std::vector<Status> st;
    seeds = fill_store(store, 77, n, kChunkSlots, 3, &st);
    CHECK(count_status(st, Status::kOk) == st.size());
    const ChunkStoreStats s = store.stats();
    CHECK(s.chunks_spilled > 0.9 * double(s.chunks));
    CHECK(s.bytes_in_memory <= 64 * 1024);
    CHECK(s.bytes_in_memory + s.bytes_spilled == s.bytes_total);
    CHECK(store.spill_path() == spill);
    // The spill file is unlinked as soon as it is created (nothing left behind on a crash);
    // it lives on through the store's descriptor, which the decode below reads.
    CHECK_FALSE(file_exists(spill));

    std::string first_bad;
    CHECK(verify_store(store, 3, seeds, n, kChunkSlots, first_bad) == 0);
    CHECK(first_bad == "");
  }
  CHECK(!file_exists(spill));  // the temporary spill file goes with its store
}

TEST_CASE("an unwritable spill directory keeps chunks in memory and reports once", "[buffer]") {
  const size_t n = 1000000;
  ChunkStore store;
  store.configure(32 * 1024, "/proc/critpath-nope/spill.bin");
  std::vector<Status> st;
  const auto seeds = fill_store(store, 5, n, kChunkSlots, 0, &st);
  CHECK(count_status(st, Status::kIoError) == 1);
  CHECK(count_status(st, Status::kOk) == st.size() - 1);
  const ChunkStoreStats s = store.stats();
  CHECK(s.chunks_spilled == 0);
  CHECK(s.bytes_in_memory == s.bytes_total);
  CHECK(s.events == n);
  std::string first_bad;
  CHECK(verify_store(store, 0, seeds, n, kChunkSlots, first_bad) == 0);
  CHECK(first_bad == "");
}

TEST_CASE("without a spill file, memory past the budget is capped: then appends are refused", "[buffer]") {
  ChunkStore store;
  store.configure(32 * 1024, "", 256 * 1024);  // no spill file: in memory up to 256 KiB
  std::vector<Status> st;
  fill_store(store, 6, 1000000, kChunkSlots, 0, &st);
  const ChunkStoreStats s = store.stats();
  CHECK(count_status(st, Status::kNoMemory) > 0);
  CHECK(count_status(st, Status::kIoError) == 0);
  CHECK(s.bytes_in_memory <= 256 * 1024);
  CHECK(s.bytes_in_memory > 200 * 1024);
  CHECK(s.chunks_spilled == 0);
  CHECK(store.spill_errno() == 0);
}

TEST_CASE("probe_spill tells an unusable spill directory without creating anything", "[buffer]") {
  TempDir dir;
  CHECK(ChunkStore::probe_spill(dir.path + "/a/b/spill.bin") == 0);
  CHECK(!file_exists(dir.path + "/a"));  // nothing created
  const std::string file = dir.path + "/plain";
  { std::ofstream(file) << "x"; }
  CHECK(ChunkStore::probe_spill(file + "/spill.bin") == ENOTDIR);
  CHECK(ChunkStore::probe_spill("/proc/sys/critpath/spill.bin") != 0);
}

TEST_CASE("a spill file that fills up mid-run keeps the rest in memory", "[buffer]") {
  // RLIMIT_FSIZE makes writes past the limit fail with EFBIG (SIGXFSZ ignored): the first
  // chunks land in the file, the write that crosses the limit fails, and everything after
  // stays in memory. Both halves must read back.
  TempDir dir;
  const size_t n = 600000;
  struct rlimit old;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  struct sigaction ign = {}, old_act = {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ign, &old_act);
  ChunkStore store;
  store.configure(16 * 1024, dir.path + "/spill.bin");
  std::vector<Status> st;
  struct rlimit lim = old;
  lim.rlim_cur = 600 * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
  const auto seeds = fill_store(store, 99, n, kChunkSlots, 1, &st);
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::sigaction(SIGXFSZ, &old_act, nullptr);

  CHECK(count_status(st, Status::kIoError) == 1);
  const ChunkStoreStats s = store.stats();
  CHECK(s.chunks_spilled > 0);
  CHECK(s.chunks_spilled < s.chunks);
  CHECK(s.bytes_spilled <= 600 * 1024);
  std::string first_bad;
  CHECK(verify_store(store, 1, seeds, n, kChunkSlots, first_bad) == 0);
  CHECK(first_bad == "");
}

TEST_CASE("write_file then open_file gives an identical trace", "[buffer]") {
  TempDir dir;
  const std::string kept = dir.path + "/out/trace.cpt";
  const size_t n0 = 700000, n1 = 300000;
  std::vector<ChunkSeed> seeds0, seeds1;
  ChunkStoreStats written;
  {
    ChunkStore store;
    store.configure(256 * 1024, dir.path + "/spill.bin");  // part memory, part spill
    seeds1 = fill_store(store, 11, n1, kChunkSlots, 1);
    seeds0 = fill_store(store, 10, n0, kChunkSlots, 0);
    written = store.stats();
    CHECK(written.chunks_spilled > 0);
    CHECK(written.chunks_spilled < written.chunks);
    REQUIRE(store.write_file(kept) == Status::kOk);
    CHECK(store.write_file(dir.path + "/spill.bin") == Status::kInvalidArgument);
  }
  struct stat st;
  REQUIRE(::stat(kept.c_str(), &st) == 0);
  CHECK(uint64_t(st.st_size) == written.bytes_total);

  ChunkStore loaded;
  REQUIRE(loaded.open_file(kept) == Status::kOk);
  const ChunkStoreStats s = loaded.stats();
  CHECK(s.chunks == written.chunks);
  CHECK(s.events == n0 + n1);
  CHECK(s.encoded_bytes == written.encoded_bytes);
  CHECK(loaded.locations() == std::vector<uint16_t>{0, 1});
  // The file is in (location, sequence) order.
  for (size_t i = 0; i + 1 < loaded.size(); ++i) {
    const ChunkHeader& a = loaded.ref(i).header;
    const ChunkHeader& b = loaded.ref(i + 1).header;
    CHECK((a.location < b.location || (a.location == b.location && a.sequence + 1 == b.sequence)));
  }
  std::string first_bad;
  CHECK(verify_store(loaded, 0, seeds0, n0, kChunkSlots, first_bad) == 0);
  CHECK(verify_store(loaded, 1, seeds1, n1, kChunkSlots, first_bad) == 0);
  CHECK(first_bad == "");
  CHECK(loaded.open_file(kept) == Status::kInvalidArgument);  // only into an empty store
  CHECK(file_exists(kept));  // a kept trace is never removed by the store reading it
}

TEST_CASE("open_file rejects missing and damaged trace files", "[buffer]") {
  TempDir dir;
  const std::string kept = dir.path + "/trace.cpt";
  {
    ChunkStore store;
    fill_store(store, 3, 100000, 4096, 0);
    REQUIRE(store.write_file(kept) == Status::kOk);
  }
  ChunkStore none;
  CHECK(none.open_file(dir.path + "/missing.cpt") == Status::kIoError);

  struct stat st;
  REQUIRE(::stat(kept.c_str(), &st) == 0);
  REQUIRE(::truncate(kept.c_str(), st.st_size - 10) == 0);
  ChunkStore truncated;
  CHECK(truncated.open_file(kept) == Status::kCorrupt);
  CHECK(truncated.size() > 0);  // the valid prefix stays indexed
  std::vector<uint8_t> buf;
  CHECK(truncated.read(truncated.size() - 1, buf) == Status::kOk);
  CHECK(truncated.read(truncated.size(), buf) == Status::kInvalidArgument);

  REQUIRE(::truncate(kept.c_str(), 0) == 0);
  ChunkStore empty;
  CHECK(empty.open_file(kept) == Status::kOk);
  CHECK(empty.size() == 0);
  TraceReader r(empty, 0);
  Event e;
  CHECK(!r.next(e));
  CHECK(!r.prev(e));
  CHECK(r.status() == Status::kOk);
}

TEST_CASE("chunks_of orders by sequence whatever the append order", "[buffer]") {
  std::vector<RawChunk> raws;
  ChunkStore scratch;
  const auto seeds = fill_store(scratch, 8, 200000, 2048, 4, nullptr, &raws);
  ChunkCompressor comp(1);
  std::vector<size_t> order(raws.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(1));
  ChunkStore store;
  std::vector<uint8_t> chunk;
  for (size_t i : order) {
    REQUIRE(comp.compress(raws[i].slots.data(), raws[i].slots.data() + raws[i].slots.size(), 4, uint32_t(i),
                          chunk) == Status::kOk);
    REQUIRE(store.append(std::move(chunk)) == Status::kOk);
  }
  const std::vector<size_t> idx = store.chunks_of(4);
  REQUIRE(idx.size() == raws.size());
  for (size_t k = 0; k < idx.size(); ++k) CHECK(store.ref(idx[k]).header.sequence == k);
  CHECK(store.chunks_of(5).empty());
  std::string first_bad;
  CHECK(verify_store(store, 4, seeds, 200000, 2048, first_bad) == 0);
  CHECK(first_bad == "");

  std::vector<uint8_t> junk = {1, 2, 3};
  CHECK(store.append(std::move(junk)) == Status::kCorrupt);
  CHECK(store.size() == raws.size());
}

TEST_CASE("concurrent appends from several threads", "[buffer][tsan]") {
  TempDir dir;
  ChunkStore store;
  store.configure(128 * 1024, dir.path + "/spill.bin");
  const size_t n = 300000;
  std::vector<std::vector<ChunkSeed>> seeds(4);
  std::vector<std::thread> threads;
  for (uint16_t loc = 0; loc < 4; ++loc)
    threads.emplace_back([&, loc] { seeds[loc] = fill_store(store, 500 + loc, n, 4096, loc); });
  for (auto& t : threads) t.join();
  CHECK(store.stats().events == 4 * n);
  CHECK(store.stats().chunks_spilled > 0);
  for (uint16_t loc = 0; loc < 4; ++loc) {
    std::string first_bad;
    CHECK(verify_store(store, loc, seeds[loc], n, 4096, first_bad) == 0);
    CHECK(first_bad == "");
  }
}
