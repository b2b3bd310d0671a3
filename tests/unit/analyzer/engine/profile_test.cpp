// critpath — tests/unit/analyzer/engine/profile_test.cpp: the call-path profile of a hand-written
// two-thread trace (build_profile) unified on a local engine::Comm (unify_profile: one rank, no
// MPI): the call paths, their visits, times and bytes, and the rank's totals, all known; and
// what a chunk whose stream is damaged leaves in the profile (docs/reliability.md).
#include <zstd.h>
#include <catch2/catch.hpp>

#include <vector>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/profile.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/clock/clock.h"
#include "libtrace/defs/definitions.h"
#include "tests/unit/analyzer/synthetic_trace.h"

using namespace critpath;
using namespace critpath::analyzer;
using trace::EventKind;

namespace {

constexpr uint32_t kSend = 970;

// Event `k` of `region` at `time` ticks.
trace::Event& at(test::TraceWriter& w, uint64_t time, EventKind k, uint32_t region = 0) {
  w.t = time;
  w.step = 0;
  return w.add(k, region);
}

// The events of `w` as chunk `sequence` of location 0. `damage_at` >= 0: that event's kind
// made unknown in the varint stream, which is then compressed into a valid zstd frame (a
// faulty encoder; bit rot in a stored frame fails its checksum instead).
std::vector<uint8_t> chunk_of(const test::TraceWriter& w, uint32_t sequence, long damage_at = -1) {
  std::vector<trace::Slot> slots(w.events.size() * trace::kMaxEventSlots);
  size_t pos = 0;
  for (const trace::Event& e : w.events) pos += trace::event_to_slots(e, slots.data() + pos);
  trace::ChunkHeader h;
  std::vector<uint8_t> stream;
  REQUIRE(trace::encode_slots(slots.data(), slots.data() + pos, stream, h) == Status::kOk);
  if (damage_at >= 0) stream[12 + size_t(damage_at)] = 0x7f;  // the K column follows 12 bytes
  h.sequence = sequence;
  h.encoded_size = uint32_t(stream.size());
  std::vector<uint8_t> chunk(trace::kChunkHeaderSize + ZSTD_compressBound(stream.size()));
  const size_t n = ZSTD_compress(chunk.data() + trace::kChunkHeaderSize,
                                 chunk.size() - trace::kChunkHeaderSize, stream.data(), stream.size(), 1);
  REQUIRE(!ZSTD_isError(n));
  h.payload_size = uint32_t(n);
  trace::write_header(h, chunk.data());
  chunk.resize(trace::kChunkHeaderSize + n);
  return chunk;
}

}  // namespace

TEST_CASE("profile: a damaged chunk books the events before the damage, none after", "[engine]") {
  defs::Definitions d;
  const uint32_t work = d.regions.define("work", defs::RegionKind::kFunction);
  // Three chunks of `work` calls under the root, 100 ticks each; the second chunk's third
  // event (an ENTER) is damaged.
  test::TraceWriter first, second, third;
  at(first, 1000, EventKind::kEnter, defs::kRootRegion);
  at(first, 1100, EventKind::kEnter, work);
  at(first, 1200, EventKind::kExit, work);
  at(second, 1300, EventKind::kEnter, work);
  at(second, 1400, EventKind::kExit, work);
  at(second, 1500, EventKind::kEnter, work);  // damaged
  at(second, 1600, EventKind::kExit, work);
  at(third, 1700, EventKind::kEnter, work);
  at(third, 1800, EventKind::kExit, work);
  at(third, 1900, EventKind::kExit, defs::kRootRegion);
  trace::ChunkStore store;
  REQUIRE(store.append(chunk_of(first, 0)) == Status::kOk);
  REQUIRE(store.append(chunk_of(second, 1, 2)) == Status::kOk);
  REQUIRE(store.append(chunk_of(third, 2)) == Status::kOk);

  const LocalProfile local = build_profile(store, d);
  CHECK(local.status == Status::kCorrupt);
  CHECK(local.events == 5);           // the first chunk and the second's two events before the damage
  CHECK(local.unclosed_frames == 1);  // the root, closed at the last event booked
  REQUIRE(local.nodes.size() == 2);
  CHECK(local.nodes[0].inclusive_ticks == 400);
  CHECK(local.nodes[1].visits == 2);
  CHECK(local.nodes[1].inclusive_ticks == 200);
}

TEST_CASE("profile: a two-thread trace unified on one rank", "[engine]") {
  defs::Definitions d;
  test::define_mpi(d, kSend, "MPI_Send", defs::MpiClass::kP2p);
  const uint32_t work = d.regions.define("work", defs::RegionKind::kFunction);

  // The main thread: the root from 1000 to 3000 ticks; `work` twice (500 ticks each), the
  // first with an MPI_Send of 100 ticks and 64 bytes.
  test::TraceWriter main_thread;
  at(main_thread, 1000, EventKind::kEnter, defs::kRootRegion);
  at(main_thread, 1100, EventKind::kEnter, work);
  at(main_thread, 1200, EventKind::kEnter, kSend);
  at(main_thread, 1210, EventKind::kSend).bytes = 64;
  at(main_thread, 1300, EventKind::kExit, kSend);
  at(main_thread, 1600, EventKind::kExit, work);
  at(main_thread, 2000, EventKind::kEnter, work);
  at(main_thread, 2500, EventKind::kExit, work);
  at(main_thread, 3000, EventKind::kExit, defs::kRootRegion);
  // A worker thread: `work` from 1500 to 1900, under a root of its own that spans it.
  test::TraceWriter worker;
  at(worker, 1500, EventKind::kEnter, work);
  at(worker, 1900, EventKind::kExit, work);
  trace::ChunkStore store;
  main_thread.store(store, 0);
  worker.store(store, 1);

  const LocalProfile local = build_profile(store, d);
  CHECK(local.status == Status::kOk);
  CHECK(local.locations == 2);
  CHECK(local.unmatched_exits == 0);
  CHECK(local.unclosed_frames == 0);
  REQUIRE(local.nodes.size() == 3);  // the worker's `work` merged into the main thread's

  const clock::TickConverter ns;  // 1 tick = 1 ns
  const engine::Comm one;
  GlobalProfile g;
  std::vector<int> l2g;
  REQUIRE(unify_profile(local, d, ns, one, g, &l2g) == Status::kOk);
  CHECK(l2g == std::vector<int>{0, 1, 2});
  REQUIRE(g.callpaths.size() == 3);
  const GlobalCallpath& root = g.callpaths[0];
  const GlobalCallpath& w = g.callpaths[1];
  const GlobalCallpath& send = g.callpaths[2];
  CHECK(root.path == "main");
  CHECK(root.parent == -1);
  CHECK(w.path == "main/work");
  CHECK(w.parent == 0);
  CHECK(w.kind == defs::RegionKind::kFunction);
  CHECK(send.path == "main/work/MPI_Send");
  CHECK(send.region == "MPI_Send");
  CHECK(send.kind == defs::RegionKind::kMpi);

  CHECK(root.sum[kColVisits] == 1);
  CHECK(w.sum[kColVisits] == 3);
  CHECK(send.sum[kColVisits] == 1);
  // The root: the main thread's 2000 ticks and the worker's 400.
  CHECK(root.sum[kColInclusive] == Approx(2400e-9));
  CHECK(root.sum[kColExclusive] == Approx(1000e-9));
  CHECK(w.sum[kColInclusive] == Approx(1400e-9));
  CHECK(w.sum[kColExclusive] == Approx(1300e-9));
  CHECK(send.sum[kColExclusive] == Approx(100e-9));
  CHECK(send.sum[kColMpi] == Approx(100e-9));
  CHECK(w.sum[kColMpi] == 0);
  CHECK(send.sum[kColBytesSent] == 64);
  for (const GlobalCallpath& c : g.callpaths) {  // one rank: min = max = sum
    CHECK(c.ranks == 1);
    for (int col = 0; col < kColCount; ++col) {
      CHECK(c.min[col] == c.sum[col]);
      CHECK(c.max[col] == c.sum[col]);
    }
  }
  REQUIRE(g.by_rank.size() == 1);
  CHECK(g.by_rank[0][kColVisits] == 5);
  CHECK(g.by_rank[0][kColInclusive] == Approx(2400e-9));  // the root's inclusive time
  CHECK(g.by_rank[0][kColExclusive] == Approx(2400e-9));  // every node's exclusive time
  CHECK(g.by_rank[0][kColMpi] == Approx(100e-9));
  CHECK(g.by_rank[0][kColBytesSent] == 64);
  CHECK(g.counter_names.empty());
}
