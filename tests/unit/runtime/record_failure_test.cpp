// critpath — tests/unit/runtime/record_failure_test.cpp
//
// The recording path never throws (docs/reliability.md): an allocation failure injected on a
// cold path (runtime/alloc_fault.h) stops the thread concerned (or, for the chunk store, the
// rank), prints exactly one `critpath:` line, leaves one report note and a RecorderStats
// counter, and keeps everything stored before the failure decodable. The thread that failed
// keeps writing records through the ThreadState it holds, as a wrapper would, without a crash.
//
// Each test runs its own recorder (recorder_reset_for_testing) and records only on threads
// it starts, so it neither depends on nor disturbs recorder_test.cpp's shared run.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "critpath.h"
#include "libtrace/buffer/trace_reader.h"
#include "libtrace/runtime/alloc_fault.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/recorder_control.h"

using namespace critpath;
using runtime::AllocSite;
using trace::EventKind;

namespace {

constexpr int kEventsPerIteration = 5;

// A fresh recorder for one test; the previous one (if any) is stopped and destroyed.
class FreshRecorder {
 public:
  explicit FreshRecorder(bool compress_thread) : saved_phase_(runtime::g_phase.load()) {
    runtime::debug_fail_allocations_after(0);
    runtime::recorder_reset_for_testing();
    log::reset_for_testing();
    runtime::RecorderOptions o;
    o.chunk_bytes = 4096;  // 256 slots: a hand-off every ~27 iterations
    o.memory_budget = 1ull << 30;
    o.spill_path = "/tmp/critpath-unit-recfail." + std::to_string(getpid()) + ".spill";
    o.compress_thread = compress_thread;
    REQUIRE(runtime::recorder_start(o) == Status::kOk);
    runtime::g_phase.store(uint8_t(runtime::Phase::kRecording));
  }
  ~FreshRecorder() {
    runtime::debug_fail_allocations_after(0);
    runtime::g_phase.store(uint8_t(runtime::Phase::kFinalizing));
    runtime::recorder_reset_for_testing();
    runtime::g_phase.store(saved_phase_);
  }
  void stop() {
    runtime::g_phase.store(uint8_t(runtime::Phase::kFinalizing));
    runtime::recorder_stop();
  }

 private:
  uint8_t saved_phase_;
};

// Redirects fd 2 into a file for the scope; text() restores it and returns what was written.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    path_ = "/tmp/critpath-unit-recfail." + std::to_string(getpid()) + ".stderr";
    fd_ = ::open(path_.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0600);
    REQUIRE(fd_ >= 0);
    saved_ = ::dup(2);
    ::dup2(fd_, 2);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    std::string out;
    char buf[4096];
    ssize_t n;
    off_t off = 0;
    while ((n = ::pread(fd_, buf, sizeof buf, off)) > 0) {
      out.append(buf, size_t(n));
      off += n;
    }
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
    ::unlink(path_.c_str());
  }
  std::string path_;
  int fd_ = -1;
  int saved_ = -1;
};

std::vector<std::string> critpath_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    if (line.rfind("critpath: ", 0) == 0) lines.push_back(line);
    pos = nl + 1;
  }
  return lines;
}

// One iteration of the recorder_test pattern: ENTER, ISEND, COLL_BEGIN, COLL_END, EXIT.
void record_iteration(runtime::ThreadState& t, uint32_t region, int i) {
  runtime::record_enter(t, region);
  runtime::record_p2p(t, EventKind::kIsend, 0, i % 7, i, uint64_t(i) * 8, uint64_t(i + 1));
  runtime::record_coll_begin(t);
  runtime::record_coll_end(t, EventKind::kCollEnd, 7, 0, 0, 8, 16, 0);
  runtime::record_exit(t, region);
}

// What a failed thread keeps doing: every kind of write through the state it holds (including
// the largest event), plus the entry points that look the state up again.
void keep_writing(runtime::ThreadState& t, uint32_t region, int iterations) {
  trace::Event counters;
  counters.kind = EventKind::kCounters;
  counters.bytes = trace::kMaxCounters;
  for (unsigned k = 0; k < trace::kMaxCounters; ++k) counters.counters[k] = k;
  for (int i = 0; i < iterations; ++i) {
    record_iteration(t, region, i);
    runtime::record_event(t, counters);
    critpath_enter(region);
    critpath_exit(region);
  }
}

// Checks that `location` holds a gap-free run of chunks 0..n-1 whose events are a whole
// number of iterations of the pattern (with `region`) and decode cleanly. Returns the event
// count.
uint64_t check_prefix(const trace::ChunkStore& store, uint16_t location, uint32_t region) {
  const std::vector<size_t> chunks = store.chunks_of(location);
  for (size_t k = 0; k < chunks.size(); ++k) REQUIRE(store.ref(chunks[k]).header.sequence == uint32_t(k));
  trace::TraceReader r(store, location);
  r.seek_begin();
  trace::Event e;
  uint64_t n = 0;
  while (r.next(e)) {
    const int i = int(n / kEventsPerIteration);
    switch (n % kEventsPerIteration) {
      case 0:
        REQUIRE(e.kind == EventKind::kEnter);
        REQUIRE(e.region == region);
        break;
      case 1:
        REQUIRE(e.kind == EventKind::kIsend);
        REQUIRE(e.tag == i);
        REQUIRE(e.request == uint64_t(i + 1));
        break;
      case 2: REQUIRE(e.kind == EventKind::kCollBegin); break;
      case 3: REQUIRE(e.kind == EventKind::kCollEnd); break;
      case 4:
        REQUIRE(e.kind == EventKind::kExit);
        REQUIRE(e.region == region);
        break;
    }
    ++n;
  }
  REQUIRE(r.status() == Status::kOk);
  return n;
}

// Records `iterations` full iterations on a new thread (which must be able to record).
void record_on_new_thread(uint32_t region, int iterations) {
  std::thread th([=] {
    runtime::ThreadState* t = runtime::ready_state();
    REQUIRE(t != nullptr);
    for (int i = 0; i < iterations; ++i) record_iteration(*t, region, i);
  });
  th.join();
}

bool wait_for(const std::function<bool()>& cond) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

TEST_CASE("record failure: injection is off by default and disarms after firing", "[runtime][tsan]") {
  runtime::debug_fail_allocations_after(0);
  CHECK(runtime::debug_allocations_until_failure() == 0);
  CHECK_NOTHROW(runtime::alloc_fault_point(AllocSite::kStore));
  runtime::debug_fail_allocations_after(2, AllocSite::kStore);
  CHECK_NOTHROW(runtime::alloc_fault_point(AllocSite::kEncode));  // another site: not counted
  CHECK_NOTHROW(runtime::alloc_fault_point(AllocSite::kStore));
  CHECK_THROWS_AS(runtime::alloc_fault_point(AllocSite::kStore), std::bad_alloc);
  CHECK_NOTHROW(runtime::alloc_fault_point(AllocSite::kStore));  // disarmed
  CHECK(runtime::debug_allocations_until_failure() == 0);
}

TEST_CASE("record failure: a failed buffer hand-off stops that thread only", "[runtime][tsan]") {
  FreshRecorder rec(/*compress_thread=*/true);
  StderrCapture err;
  constexpr int kIters = 2000;
  record_on_new_thread(4000, kIters);  // location 0: before the failure

  // Location 1: acquisitions are its registration (1) and one per hand-off, so the third
  // fails at its second hand-off, after chunks 0 and 1 went to the compressor.
  runtime::debug_fail_allocations_after(3, AllocSite::kBuffer);
  std::thread a([] {
    runtime::ThreadState* t = runtime::ready_state();
    REQUIRE(t != nullptr);
    for (int i = 0; i < kIters && t->state == 1; ++i) record_iteration(*t, 4001, i);
    REQUIRE(t->state == 2);
    CHECK(t->sequence == 2);
    keep_writing(*t, 4001, 500);  // the wrapper goes on: nothing crashes, nothing is stored
    CHECK(runtime::ready_state() == nullptr);
    CHECK(t->state == 2);
  });
  a.join();
  record_on_new_thread(4002, kIters);  // location 2: after the failure

  rec.stop();
  const std::vector<std::string> lines = critpath_lines(err.text());
  const trace::ChunkStore& store = runtime::chunk_store();
  CHECK(check_prefix(store, 0, 4000) == uint64_t(kIters) * kEventsPerIteration);
  CHECK(check_prefix(store, 2, 4002) == uint64_t(kIters) * kEventsPerIteration);
  const uint64_t partial = check_prefix(store, 1, 4001);
  CHECK(store.chunks_of(1).size() == 2);
  CHECK(partial > 0);
  CHECK(partial < uint64_t(kIters) * kEventsPerIteration);

  const runtime::RecorderStats st = runtime::recorder_stats();
  CHECK(st.threads_stopped == 1);
  CHECK(st.rank_stopped == 0);
  CHECK(st.chunks_discarded == 0);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("thread 1 stopped recording at a buffer hand-off") != std::string::npos);
  CHECK(lines[0].find("partial") != std::string::npos);
  const std::vector<std::string> notes = log::notes();
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("thread 1 stopped recording") != std::string::npos);
}

TEST_CASE("record failure: bad_alloc on the compressor thread cuts that thread's trace", "[runtime][tsan]") {
  FreshRecorder rec(/*compress_thread=*/true);
  StderrCapture err;
  constexpr int kIters = 2000;
  // The third chunk compressed fails. The thread hands three chunks off, waits until the
  // compressor thread has dealt with them (the pool is not exhausted, so nothing is
  // compressed inline), then records on: its next hand-off finds its location cut.
  runtime::debug_fail_allocations_after(3, AllocSite::kEncode);
  std::thread a([] {
    runtime::ThreadState* t = runtime::ready_state();
    REQUIRE(t != nullptr);
    int i = 0;
    while (t->sequence < 3) record_iteration(*t, 5000, i++);
    REQUIRE(wait_for([] { return runtime::recorder_stats().chunks_discarded >= 1; }));
    CHECK(runtime::recorder_stats().inline_compressions == 0);
    for (; i < kIters && t->state == 1; ++i) record_iteration(*t, 5000, i);
    REQUIRE(t->state == 2);
    CHECK(t->sequence == 4);  // chunk 3 was handed off, found its location cut, dropped
    keep_writing(*t, 5000, 500);
    CHECK(runtime::ready_state() == nullptr);
  });
  a.join();
  record_on_new_thread(5001, kIters);  // another thread records in full afterwards

  rec.stop();
  const std::vector<std::string> lines = critpath_lines(err.text());
  const trace::ChunkStore& store = runtime::chunk_store();
  CHECK(store.chunks_of(0).size() == 2);  // chunks 0 and 1; 2 failed, 3 was dropped
  CHECK(check_prefix(store, 0, 5000) > 0);
  CHECK(check_prefix(store, 1, 5001) == uint64_t(kIters) * kEventsPerIteration);

  const runtime::RecorderStats st = runtime::recorder_stats();
  CHECK(st.threads_stopped == 1);
  CHECK(st.rank_stopped == 0);
  CHECK(st.chunks_discarded == 2);
  CHECK(st.compress_errors == 1);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("thread 0 stopped recording at chunk compression (out of memory)") !=
        std::string::npos);
  CHECK(log::notes().size() == 1);
}

TEST_CASE("record failure: the chunk store out of memory stops the rank", "[runtime][tsan]") {
  FreshRecorder rec(/*compress_thread=*/false);  // inline: appends happen at hand-off
  StderrCapture err;
  constexpr int kIters = 2000;
  std::atomic<int> step{0};
  // Thread B records three chunks, then waits while A fails, then tries to go on.
  std::thread b([&] {
    runtime::ThreadState* t = runtime::ready_state();
    REQUIRE(t != nullptr);
    int i = 0;
    while (t->sequence < 3) record_iteration(*t, 6000, i++);
    step = 1;
    REQUIRE(wait_for([&] { return step.load() == 2; }));
    for (; i < kIters && t->state == 1; ++i) record_iteration(*t, 6000, i);
    CHECK(t->state == 2);  // stopped at its next hand-off
    keep_writing(*t, 6000, 100);
  });
  REQUIRE(wait_for([&] { return step.load() == 1; }));
  runtime::debug_fail_allocations_after(3, AllocSite::kStore);  // A's third chunk
  std::thread a([] {
    runtime::ThreadState* t = runtime::ready_state();
    REQUIRE(t != nullptr);
    for (int i = 0; i < kIters && t->state == 1; ++i) record_iteration(*t, 6001, i);
    REQUIRE(t->state == 2);
    CHECK(t->sequence == 3);
    keep_writing(*t, 6001, 100);
  });
  a.join();
  step = 2;
  b.join();
  std::thread c([] { CHECK(runtime::ready_state() == nullptr); });  // no new thread records
  c.join();

  rec.stop();
  const std::vector<std::string> lines = critpath_lines(err.text());
  const trace::ChunkStore& store = runtime::chunk_store();
  CHECK(store.chunks_of(0).size() == 3);  // B: the chunks stored before the failure
  CHECK(store.chunks_of(1).size() == 2);  // A: chunks 0 and 1
  CHECK(check_prefix(store, 0, 6000) > 0);
  CHECK(check_prefix(store, 1, 6001) > 0);
  CHECK(store.locations().size() == 2);

  const runtime::RecorderStats st = runtime::recorder_stats();
  CHECK(st.rank_stopped == 1);
  CHECK(st.threads_stopped == 2);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("recording stopped on this rank at the chunk store (out of memory)") !=
        std::string::npos);
  CHECK(log::notes().size() == 1);
}

TEST_CASE("record failure: thread registration and inline compressor failures", "[runtime][tsan]") {
  SECTION("registration") {
    FreshRecorder rec(/*compress_thread=*/true);
    StderrCapture err;
    runtime::debug_fail_allocations_after(1, AllocSite::kAttach);
    std::thread a([] {
      CHECK(runtime::ready_state() == nullptr);
      CHECK(runtime::t_state.state == 2);
      critpath_enter(7000);  // harmless
      critpath_exit(7000);
      CHECK(runtime::ready_state() == nullptr);  // never retries
    });
    a.join();
    record_on_new_thread(7001, 300);
    rec.stop();
    const std::vector<std::string> lines = critpath_lines(err.text());
    const trace::ChunkStore& store = runtime::chunk_store();
    CHECK(store.chunks_of(0).empty());
    CHECK(check_prefix(store, 1, 7001) == 300u * kEventsPerIteration);
    CHECK(runtime::recorder_stats().threads_stopped == 1);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("thread 0 stopped recording at thread registration") != std::string::npos);
    CHECK(log::notes().size() == 1);
  }
  SECTION("inline compressor") {
    FreshRecorder rec(/*compress_thread=*/false);
    StderrCapture err;
    std::thread a([] {
      runtime::ThreadState* t = runtime::ready_state();
      REQUIRE(t != nullptr);
      record_iteration(*t, 7100, 0);
      runtime::debug_fail_allocations_after(1, AllocSite::kCompressor);
      for (int i = 1; i < 1000 && t->state == 1; ++i) record_iteration(*t, 7100, i);
      REQUIRE(t->state == 2);
      keep_writing(*t, 7100, 100);
    });
    a.join();
    record_on_new_thread(7101, 300);  // creates its own compressor: fine
    rec.stop();
    const std::vector<std::string> lines = critpath_lines(err.text());
    const trace::ChunkStore& store = runtime::chunk_store();
    CHECK(store.chunks_of(0).empty());  // chunk 0 could not be compressed
    CHECK(check_prefix(store, 1, 7101) == 300u * kEventsPerIteration);
    const runtime::RecorderStats st = runtime::recorder_stats();
    CHECK(st.threads_stopped == 1);
    CHECK(st.chunks_discarded == 1);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("thread 0 stopped recording at a buffer hand-off") != std::string::npos);
    CHECK(log::notes().size() == 1);
  }
}

TEST_CASE("record failure: a second stopped thread adds a note, not a line", "[runtime][tsan]") {
  FreshRecorder rec(/*compress_thread=*/true);
  StderrCapture err;
  for (int k = 0; k < 2; ++k) {
    runtime::debug_fail_allocations_after(1, AllocSite::kAttach);
    std::thread a([] { CHECK(runtime::ready_state() == nullptr); });
    a.join();
  }
  rec.stop();
  CHECK(critpath_lines(err.text()).size() == 1);
  CHECK(log::notes().size() == 2);
  CHECK(runtime::recorder_stats().threads_stopped == 2);
}
