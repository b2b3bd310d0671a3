// critpath — tests/unit/buffer/trace_reader_test.cpp
//
// The replay cursor: mixed next()/prev() walks across chunk boundaries and empty chunks,
// seek_begin/seek_end, and a decode error stopping the walk. Tag: [buffer].
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "libtrace/buffer/trace_reader.h"
#include "tests/unit/buffer/buffer_test_util.h"

using namespace critpath;
using namespace critpath::trace;
using namespace critpath::trace::testing;

namespace {

// Builds a store for location 2 from chunks of varying size, with empty chunks sprinkled
// in, and returns the whole expected sequence.
std::vector<Event> build(ChunkStore& store, size_t n_events, uint64_t seed) {
  RandomEventSource src(seed);
  std::mt19937_64 rng(seed);
  ChunkCompressor comp(1);
  std::vector<Event> all;
  std::vector<Slot> slots(4096 * kMaxEventSlots);
  std::vector<uint8_t> chunk;
  uint32_t seq = 0;
  while (all.size() < n_events) {
    const size_t want = rng() % 5 == 0 ? 0 : 1 + rng() % 3000;
    size_t pos = 0;
    for (size_t i = 0; i < want && all.size() < n_events; ++i) {
      const Event e = src.next();
      pos += event_to_slots(e, slots.data() + pos);
      all.push_back(e);
    }
    REQUIRE(comp.compress(slots.data(), slots.data() + pos, 2, seq++, chunk) == Status::kOk);
    REQUIRE(store.append(std::move(chunk)) == Status::kOk);
  }
  return all;
}

}  // namespace

TEST_CASE("TraceReader walks forward, backward and both mixed", "[buffer]") {
  ChunkStore store;
  const std::vector<Event> all = build(store, 200000, 31);
  TraceReader r(store, 2);
  REQUIRE(r.event_count() == all.size());

  // Random walk: the cursor sits between events; next() returns all[pos] and moves right,
  // prev() returns all[pos-1] and moves left.
  std::mt19937_64 rng(3);
  size_t pos = 0;
  uint64_t mismatches = 0, steps = 0;
  Event e;
  for (int burst = 0; burst < 4000; ++burst) {
    const bool forward = rng() % 2 == 0;
    const size_t len = 1 + rng() % (rng() % 10 == 0 ? 20000 : 50);
    for (size_t k = 0; k < len; ++k, ++steps) {
      if (forward) {
        const bool got = r.next(e);
        if (pos == all.size()) {
          mismatches += got;
          break;
        }
        mismatches += !got || !(e == all[pos]);
        ++pos;
      } else {
        const bool got = r.prev(e);
        if (pos == 0) {
          mismatches += got;
          break;
        }
        --pos;
        mismatches += !got || !(e == all[pos]);
      }
    }
    if (burst % 500 == 0) {
      // Jumps to the ends keep working mid-walk.
      if (rng() % 2) {
        r.seek_begin();
        pos = 0;
      } else {
        r.seek_end();
        pos = all.size();
      }
    }
  }
  INFO("steps " << steps);
  CHECK(mismatches == 0);
  CHECK(r.status() == Status::kOk);

  // next() then prev() yields the same event: the cursor is between events.
  r.seek_begin();
  Event a, b;
  REQUIRE(r.next(a));
  REQUIRE(r.prev(b));
  CHECK(a == b);
  CHECK(!r.prev(b));
  r.seek_end();
  REQUIRE(r.prev(a));
  REQUIRE(r.next(b));
  CHECK(a == b);
  CHECK(a == all.back());
  CHECK(!r.next(b));
}

TEST_CASE("TraceReader on an absent location is empty", "[buffer]") {
  ChunkStore store;
  build(store, 1000, 4);
  TraceReader r(store, 9);
  Event e;
  CHECK(r.event_count() == 0);
  CHECK(!r.next(e));
  r.seek_end();
  CHECK(!r.prev(e));
  CHECK(r.status() == Status::kOk);
}

TEST_CASE("TraceReader stops with kCorrupt on a damaged chunk", "[buffer]") {
  // Two valid chunks, then one whose payload is damaged after indexing: the reader
  // returns the good events and then fails cleanly.
  ChunkCompressor comp(1);
  RandomEventSource src(12);
  std::vector<Slot> slots(100 * kMaxEventSlots);
  std::vector<std::vector<uint8_t>> chunks;
  for (uint32_t seq = 0; seq < 3; ++seq) {
    size_t pos = 0;
    for (int i = 0; i < 100; ++i) pos += event_to_slots(src.next(), slots.data() + pos);
    std::vector<uint8_t> c;
    REQUIRE(comp.compress(slots.data(), slots.data() + pos, 0, seq, c) == Status::kOk);
    chunks.push_back(c);
  }
  chunks[2][kChunkHeaderSize + (chunks[2].size() - kChunkHeaderSize) / 2] ^= 0x55;  // payload
  ChunkStore store;
  for (auto& c : chunks) REQUIRE(store.append(std::move(c)) == Status::kOk);
  TraceReader r(store, 0);
  Event e;
  int n = 0;
  while (r.next(e)) ++n;
  CHECK(n == 200);
  CHECK(r.status() == Status::kCorrupt);
  CHECK(!r.prev(e));  // errors are sticky
}
