// critpath — tests/unit/runtime/recorder_test.cpp
//
// The record API end to end without MPI: hot-path writes from several threads -> raw chunks
// -> compressor thread -> ChunkStore (with spilling) -> TraceReader, and the user region API.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "critpath.h"
#include "libtrace/buffer/trace_reader.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/recorder_control.h"
#include "libtrace/runtime/session.h"

using namespace critpath;
using trace::EventKind;

namespace {

// The recorder is process-wide and starts once, so every test in this file shares one run:
// the first test starts it, and the round-trip test (which stops it) runs last by name.
void ensure_started() {
  static bool started = false;
  if (started) return;
  runtime::RecorderOptions o;
  o.chunk_bytes = 4096;         // tiny chunks: many hand-offs
  o.memory_budget = 64 * 1024;  // tiny budget: most chunks spill
  o.spill_path = "/tmp/critpath-unit-recorder." + std::to_string(getpid()) + ".spill";
  o.compress_thread = true;
  REQUIRE(runtime::recorder_start(o) == Status::kOk);
  runtime::g_phase.store(uint8_t(runtime::Phase::kRecording));
  started = true;
}

// Runs on several threads at once: no Catch assertion here (Catch's are not thread-safe);
// returns false when the thread cannot record, for the main thread to check.
bool record_pattern(uint32_t base_region, int iterations) {
  runtime::ThreadState* t = runtime::ready_state();
  if (t == nullptr) return false;
  for (int i = 0; i < iterations; ++i) {
    runtime::record_enter(*t, base_region);
    runtime::record_p2p(*t, EventKind::kIsend, 0, i % 7, i, uint64_t(i) * 8, uint64_t(i + 1));
    runtime::record_coll_begin(*t);
    runtime::record_coll_end(*t, EventKind::kCollEnd, 7, 0, 0, 8, 16, 0);
    runtime::record_exit(*t, base_region);
  }
  return true;
}

}  // namespace

TEST_CASE("recorder: threads record in order, chunks spill, nothing lost", "[runtime][tsan]") {
  ensure_started();
  constexpr int kIters = 20000;
  std::vector<std::thread> threads;
  std::atomic<int> could_not_record{0};
  for (int k = 0; k < 3; ++k)
    threads.emplace_back([k, &could_not_record] {
      if (!record_pattern(2000 + uint32_t(k), kIters)) ++could_not_record;
    });
  for (auto& th : threads) th.join();  // thread exit hands partial chunks off (key destructor)
  CHECK(could_not_record == 0);
  REQUIRE(record_pattern(1999, kIters));  // this thread too

  runtime::g_phase.store(uint8_t(runtime::Phase::kFinalizing));
  runtime::recorder_stop();
  const trace::ChunkStore& store = runtime::chunk_store();
  REQUIRE(store.locations().size() == 4);
  CHECK(store.stats().chunks_spilled > 0);

  for (uint16_t loc : store.locations()) {
    trace::TraceReader r(store, loc);
    trace::Event e;
    r.seek_begin();
    uint64_t n = 0, last = 0;
    uint32_t region = 0;
    while (r.next(e)) {
      REQUIRE(e.time >= last);  // the TSC never goes backward within a thread
      last = e.time;
      const int i = int(n / 5);
      switch (n % 5) {
        case 0:
          REQUIRE(e.kind == EventKind::kEnter);
          if (n == 0) region = e.region;
          REQUIRE(e.region == region);
          break;
        case 1:
          REQUIRE(e.kind == EventKind::kIsend);
          REQUIRE(e.peer == i % 7);
          REQUIRE(e.tag == i);
          REQUIRE(e.bytes == uint64_t(i) * 8);
          REQUIRE(e.request == uint64_t(i + 1));
          break;
        case 2: REQUIRE(e.kind == EventKind::kCollBegin); break;
        case 3:
          REQUIRE(e.kind == EventKind::kCollEnd);
          REQUIRE(e.region == 7);
          REQUIRE(e.bytes_received == 16);
          break;
        case 4: REQUIRE(e.kind == EventKind::kExit); break;
      }
      ++n;
    }
    REQUIRE(r.status() == Status::kOk);
    REQUIRE(n == uint64_t(kIters) * 5);
    CHECK((region >= 1999 && region <= 2002));
  }
}

TEST_CASE("recorder: nothing is recorded outside the recording phase", "[runtime][tsan]") {
  const uint8_t saved = runtime::g_phase.load();
  runtime::g_phase.store(uint8_t(runtime::Phase::kPaused));
  CHECK(runtime::ready_state() == nullptr);
  critpath_enter(5000);  // harmless no-op
  critpath_exit(5000);
  runtime::g_phase.store(uint8_t(runtime::Phase::kDisabled));
  CHECK(runtime::ready_state() == nullptr);
  runtime::g_phase.store(saved);
}

TEST_CASE("user API: region_define is idempotent, thread-safe and cached", "[defs][tsan]") {
  const unsigned a = critpath_region_define("solver");
  CHECK(a >= defs::kFirstDynamicRegion);
  CHECK(critpath_region_define("solver") == a);
  std::string copy = "solver";  // a different pointer with the same name
  CHECK(critpath_region_define(copy.c_str()) == a);
  CHECK(critpath_region_define("") == 0);
  CHECK(critpath_region_define(nullptr) == 0);
  std::vector<unsigned> ids(8);
  std::vector<std::thread> ts;
  for (int k = 0; k < 8; ++k)
    ts.emplace_back([k, &ids] {
      for (int i = 0; i < 1000; ++i) ids[size_t(k)] = critpath_region_define("contended");
    });
  for (auto& t : ts) t.join();
  for (unsigned id : ids) CHECK(id == ids[0]);
  CHECK(defs::regions().get(a).name == "solver");
  CHECK(defs::regions().get(defs::kRootRegion).name == "main");
  // A user region called "main" is not the artificial root.
  CHECK(critpath_region_define("main") != defs::kRootRegion);
}

TEST_CASE("defs: communicator table", "[defs]") {
  defs::CommDef d;
  d.id = 42;
  d.members = {3, 1, 2};
  d.created_by = "MPI_Comm_split";
  defs::comms().define(d);
  defs::CommDef out;
  REQUIRE(defs::comms().find(42, out));
  CHECK(out.members == std::vector<int32_t>{3, 1, 2});
  defs::comms().mark_freed(42);
  REQUIRE(defs::comms().find(42, out));
  CHECK(out.freed);
  CHECK_FALSE(defs::comms().find(43, out));
}

TEST_CASE("session phases: only the documented transitions apply", "[runtime][tsan]") {
  using runtime::Phase;
  const uint8_t saved = runtime::g_phase.load();
  const bool saved_tsc = runtime::g_use_tsc;
  runtime::g_phase.store(uint8_t(Phase::kPreInit));
  CHECK_FALSE(runtime::pause_recording());
  CHECK_FALSE(runtime::resume_recording());
  CHECK(runtime::use_tsc_timer(saved_tsc));  // the timer is chosen before recording only
  CHECK(runtime::start_recording());
  CHECK(runtime::current_phase() == Phase::kRecording);
  CHECK_FALSE(runtime::use_tsc_timer(!saved_tsc));
  CHECK(runtime::g_use_tsc == saved_tsc);
  CHECK_FALSE(runtime::start_recording());
  CHECK(runtime::pause_recording());
  CHECK(runtime::current_phase() == Phase::kPaused);
  CHECK_FALSE(runtime::pause_recording());
  Phase was = Phase::kDone;
  CHECK(runtime::finish_recording(was));  // the last events are recorded even when paused
  CHECK(was == Phase::kPaused);
  CHECK(runtime::current_phase() == Phase::kRecording);
  CHECK(runtime::enter_finalizing());
  CHECK_FALSE(runtime::finish_recording(was));
  CHECK_FALSE(runtime::resume_recording());
  CHECK(runtime::end_session());
  CHECK(runtime::current_phase() == Phase::kDone);
  CHECK_FALSE(runtime::start_recording());
  CHECK_FALSE(runtime::enter_finalizing());
  // Disabled stays disabled, whatever comes.
  runtime::disable_measurement();
  CHECK_FALSE(runtime::start_recording());
  CHECK_FALSE(runtime::resume_recording());
  CHECK_FALSE(runtime::enter_finalizing());
  CHECK_FALSE(runtime::end_session());
  CHECK(runtime::current_phase() == Phase::kDisabled);
  runtime::g_phase.store(saved);
}
