// critpath — benchmarks/bench_record.cpp
//
// What recording costs. Prints figures, asserts nothing:
//   record.floor_ns_per_event        rdtsc + one 16-byte store (the floor on this machine)
//   record.<mode>.ns_per_event       ENTER/EXIT through the user-region hot path
//   record.<mode>.amortized_ns_per_event  the same plus draining all compression at the end
//   record.<mode>.compressed_bytes_per_event, compress_ns_per_event, inline_compressions
// Modes: thread (compression on the background thread), inline (on the recording thread).
// Each mode runs in a forked child because the recorder is process-wide and starts once.
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "critpath.h"
#include "libtrace/clock/clock.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/recorder_control.h"

using namespace critpath;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void floor_bench(size_t n) {
  std::vector<trace::Slot> buf(1 << 16);
  const double t0 = now_s();
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
    trace::Slot* s = &buf[pos];
    s->tsc = __rdtsc();
    s->kind = 1;
    s->nextra = 0;
    s->flags = 0;
    s->arg = uint32_t(i);
    pos = (pos + 1) & (buf.size() - 1);
  }
  const double dt = now_s() - t0;
  std::printf("record.floor_ns_per_event: %.2f ns\n", dt * 1e9 / double(n));
}

void run_mode(const char* mode, bool thread, size_t pairs) {
  runtime::RecorderOptions o;
  o.chunk_bytes = 256 * 1024;
  o.memory_budget = 4ull << 30;
  o.spill_path = "/tmp/critpath-bench-record.spill";
  o.compress_thread = thread;
  o.compression_level = 1;
  if (runtime::recorder_start(o) != Status::kOk) {
    std::printf("record.%s: cannot start\n", mode);
    return;
  }
  runtime::g_phase.store(uint8_t(runtime::Phase::kRecording));
  const unsigned regions[4] = {critpath_region_define("solve"), critpath_region_define("compute"),
                               critpath_region_define("halo"), critpath_region_define("norm")};
  // Warm-up: attach the thread and touch the pool.
  for (int i = 0; i < 100000; ++i) {
    critpath_enter(regions[i & 3]);
    critpath_exit(regions[i & 3]);
  }
  const clock::TimerKind k = clock::choose("auto", nullptr);
  const clock::ClockPair c0 = clock::sample_pair(k);
  const double t0 = now_s();
  for (size_t i = 0; i < pairs; ++i) {
    const unsigned r = regions[i & 3];
    critpath_enter(r);
    critpath_exit(r);
  }
  const double t1 = now_s();
  runtime::g_phase.store(uint8_t(runtime::Phase::kFinalizing));
  runtime::recorder_stop();
  const double t2 = now_s();
  const clock::ClockPair c1 = clock::sample_pair(k);
  const clock::TickConverter conv(k, c0, c1);
  const double events = double(pairs) * 2;
  const trace::ChunkStoreStats ss = runtime::chunk_store().stats();
  const runtime::RecorderStats rs = runtime::recorder_stats();
  std::printf("record.%s.ns_per_event: %.2f ns\n", mode, (t1 - t0) * 1e9 / events);
  std::printf("record.%s.amortized_ns_per_event: %.2f ns\n", mode, (t2 - t0) * 1e9 / events);
  std::printf("record.%s.compressed_bytes_per_event: %.3f B\n", mode,
              double(ss.bytes_total) / double(ss.events ? ss.events : 1));
  std::printf("record.%s.encoded_bytes_per_event: %.3f B\n", mode,
              double(ss.encoded_bytes) / double(ss.events ? ss.events : 1));
  std::printf("record.%s.compress_ns_per_event: %.2f ns\n", mode,
              conv.ticks_to_seconds(rs.compress_ticks) * 1e9 / double(ss.events ? ss.events : 1));
  std::printf("record.%s.compress_MB_per_s: %.1f MB/s (raw 16-byte slots)\n", mode,
              double(ss.events) * 16 / 1e6 / (conv.ticks_to_seconds(rs.compress_ticks) + 1e-12));
  std::printf("record.%s.inline_compressions: %llu of %llu chunks\n", mode,
              (unsigned long long)rs.inline_compressions, (unsigned long long)ss.chunks);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t pairs = argc > 1 ? size_t(std::atoll(argv[1])) : 10000000;
  floor_bench(pairs * 2);
  for (int m = 0; m < 2; ++m) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
      run_mode(m == 0 ? "thread" : "inline", m == 0, pairs);
      std::fflush(stdout);
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
  }
  return 0;
}
