// critpath — benchmarks/bench_hooks.cpp
//
// What the compiler hooks cost (compiler_hooks/). Prints figures, asserts nothing:
//   hooks.floor_ns_per_pair            record_enter + record_exit through the record API
//   hooks.recorded_ns_per_pair         __cyg_profile_func_enter/exit of a recorded function
//   hooks.filtered_ns_per_call         ... of a function excluded by CRITPATH_FILTER
//   hooks.autofiltered_ns_per_call     ... of a function the automatic filter stopped
//   hooks.preinit_ns_per_pair          ... before MPI_Init (shadow stack only)
//   hooks.callsite.<walker>.depth<k>_ns  one stack capture of k application frames
//   hooks.dilation.{plain,recorded,autofilter}_s and .x  a function-heavy C++ kernel
// Every mode runs in a forked child because the recorder is process-wide and starts once.
// usage: critpath_bench_hooks [pairs]
#include <execinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler_hooks/hooks.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/recorder_control.h"

#ifdef CRITPATH_BENCH_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

extern "C" void __cyg_profile_func_enter(void* fn, void* site);
extern "C" void __cyg_profile_func_exit(void* fn, void* site);

namespace kernel_plain {
double run(size_t blocks, size_t block_size);
}
namespace kernel_instr {
double run(size_t blocks, size_t block_size);
}

using namespace critpath;

extern "C" __attribute__((noinline)) int bench_fn_recorded(int x) { return x + 1; }
extern "C" __attribute__((noinline)) int bench_fn_filtered(int x) { return x + 2; }
extern "C" __attribute__((noinline)) int bench_fn_auto(int x) { return x + 3; }
extern "C" __attribute__((noipa)) void bench_empty_enter(void*, void*) {}
extern "C" __attribute__((noipa)) void bench_empty_exit(void*, void*) {}

namespace {

// A benchmark whose setup fails measures nothing: it stops with the reason.
void must(Status s) {
  if (s == Status::kOk) return;
  std::fprintf(stderr, "benchmark setup failed: %s\n", to_string(s));
  std::exit(1);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void start_recording() {
  runtime::RecorderOptions o;
  o.chunk_bytes = 256 * 1024;
  o.memory_budget = 4ull << 30;
  o.spill_path = "/tmp/critpath-bench-hooks." + std::to_string(getpid()) + ".spill";
  if (runtime::recorder_start(o) != Status::kOk) {
    std::printf("hooks: cannot start the recorder\n");
    _exit(1);
  }
  runtime::g_phase.store(uint8_t(runtime::Phase::kRecording));
}

void stop_recording() {
  runtime::g_phase.store(uint8_t(runtime::Phase::kFinalizing));
  runtime::recorder_stop();
  std::remove(("/tmp/critpath-bench-hooks." + std::to_string(getpid()) + ".spill").c_str());
}

double pairs_ns(void* fn, size_t pairs) {
  for (size_t i = 0; i < 100000; ++i) {  // warm-up: first visit, thread attach
    __cyg_profile_func_enter(fn, nullptr);
    __cyg_profile_func_exit(fn, nullptr);
  }
  const double t0 = now_s();
  for (size_t i = 0; i < pairs; ++i) {
    __cyg_profile_func_enter(fn, nullptr);
    __cyg_profile_func_exit(fn, nullptr);
  }
  return (now_s() - t0) * 1e9 / double(pairs);
}

void mode_hot_paths(size_t pairs) {
  const std::string filter = "/tmp/critpath-bench-hooks-filter." + std::to_string(getpid());
  if (FILE* f = std::fopen(filter.c_str(), "w")) {
    std::fputs("SCOREP_REGION_NAMES_BEGIN\n EXCLUDE bench_fn_filtered\nSCOREP_REGION_NAMES_END\n", f);
    std::fclose(f);
  }
  hooks::Options o;
  o.filter_file = filter;
  o.autofilter_visits = 1000;
  o.autofilter_ns = 1000000;  // bench_fn_auto is judged short after 1000 visits
  must(hooks::configure(o));
  // The loop and two calls of empty functions: what any hook costs at least.
  double t0 = now_s();
  for (size_t i = 0; i < pairs; ++i) {
    bench_empty_enter(nullptr, nullptr);
    bench_empty_exit(nullptr, nullptr);
  }
  const double empty = (now_s() - t0) * 1e9 / double(pairs);
  t0 = now_s();
  uint64_t acc = 0;
  for (size_t i = 0; i < pairs; ++i) acc += runtime::now();
  const double clock_ns = (now_s() - t0) * 1e9 / double(pairs) + double(acc & 0);
  // Before MPI_Init: shadow stack only.
  const double pre = pairs_ns(reinterpret_cast<void*>(&bench_fn_recorded), pairs);
  start_recording();
  const unsigned r = defs::regions().define("bench_floor", defs::RegionKind::kUser);
  runtime::ThreadState* t = runtime::ready_state();
  for (int i = 0; i < 100000; ++i) {
    runtime::record_enter(*t, r);
    runtime::record_exit(*t, r);
  }
  t0 = now_s();
  for (size_t i = 0; i < pairs; ++i) {
    runtime::record_enter(*t, r);
    runtime::record_exit(*t, r);
  }
  const double floor = (now_s() - t0) * 1e9 / double(pairs);
  // The recorded function must never be judged short: a large sample size.
  const double filtered = pairs_ns(reinterpret_cast<void*>(&bench_fn_filtered), pairs);
  const double autof = pairs_ns(reinterpret_cast<void*>(&bench_fn_auto), pairs);
  o.autofilter_ns = 0;
  o.filter_file.clear();
  must(hooks::configure(o));
  const double recorded = pairs_ns(reinterpret_cast<void*>(&bench_fn_recorded), pairs);
  stop_recording();
  std::remove(filter.c_str());
  std::printf("hooks.empty_calls_ns_per_pair: %.2f ns (loop + two calls of empty functions)\n", empty);
  std::printf("hooks.clock_read_ns: %.2f ns (runtime::now(), the event timestamp)\n", clock_ns);
  std::printf("hooks.floor_ns_per_pair: %.2f ns (record_enter+record_exit, 2 events)\n", floor);
  std::printf("hooks.recorded_ns_per_pair: %.2f ns (%.2f ns per recorded event)\n", recorded, recorded / 2);
  std::printf("hooks.filtered_ns_per_call: %.2f ns (enter+exit of a CRITPATH_FILTER'ed function)\n",
              filtered);
  std::printf("hooks.autofiltered_ns_per_call: %.2f ns (enter+exit, counted, not recorded)\n", autof);
  std::printf("hooks.preinit_ns_per_pair: %.2f ns (before MPI_Init: shadow stack only)\n", pre);
}

// ---- Call-site stack walks -----------------------------------------------------------------
// A frame-pointer walk: valid only through frames built with frame pointers (this file is,
// see CMakeLists.txt); shown as the lower bound a walk can cost.
__attribute__((noinline)) int fp_walk(void** out, int max) {
  void** fp = static_cast<void**>(__builtin_frame_address(0));
  int n = 0;
  while (fp && n < max) {
    void* ret = fp[1];
    if (!ret) break;
    out[n++] = ret;
    void** next = static_cast<void**>(fp[0]);
    if (next <= fp) break;
    fp = next;
  }
  return n;
}

using Walker = int (*)(void**, int);
#ifdef CRITPATH_BENCH_HAVE_LIBUNWIND
int unw_fast(void** out, int max) { return unw_backtrace(out, max); }
int unw_steps(void** out, int max) {
  unw_context_t ctx;
  unw_cursor_t cur;
  unw_getcontext(&ctx);
  unw_init_local(&cur, &ctx);
  int n = 0;
  while (n < max && unw_step(&cur) > 0) {
    unw_word_t ip;
    unw_get_reg(&cur, UNW_REG_IP, &ip);
    out[n++] = reinterpret_cast<void*>(ip);
  }
  return n;
}
#endif
int glibc_bt(void** out, int max) { return backtrace(out, max); }

volatile int g_sink;
__attribute__((noinline)) double walk_at_depth(int nest, Walker w, int depth, size_t reps) {
  if (nest > 0) {
    const double r = walk_at_depth(nest - 1, w, depth, reps);
    g_sink = g_sink + 1;  // not a tail call
    return r;
  }
  void* pcs[32];
  for (int i = 0; i < 1000; ++i) g_sink = g_sink + w(pcs, depth + 2);
  const double t0 = now_s();
  for (size_t i = 0; i < reps; ++i) g_sink = g_sink + w(pcs, depth + 2);  // +2: critpath's frames
  return (now_s() - t0) * 1e9 / double(reps);
}

void mode_callsite() {
  struct {
    const char* name;
    Walker w;
  } walkers[] = {
      {"framepointer", fp_walk},
#ifdef CRITPATH_BENCH_HAVE_LIBUNWIND
      {"unw_backtrace", unw_fast},
      {"unw_step", unw_steps},
#endif
      {"glibc_backtrace", glibc_bt},
  };
  for (const auto& w : walkers)
    for (int depth : {1, 2, 4, 8})
      std::printf("hooks.callsite.%s.depth%d_ns: %.1f ns\n", w.name, depth,
                  walk_at_depth(12, w.w, depth, 200000));
}

// ---- Dilation of a function-heavy kernel -----------------------------------------------------
void mode_dilation(const char* what, size_t blocks, size_t block) {
  double t0 = 0, s = 0;
  if (std::string(what) == "plain") {
    kernel_plain::run(blocks / 10, block);
    t0 = now_s();
    s = kernel_plain::run(blocks, block);
  } else {
    hooks::Options o;
    if (std::string(what) == "recorded") o.autofilter_ns = 0;  // else the defaults
    must(hooks::configure(o));
    start_recording();
    t0 = now_s();
    s = kernel_instr::run(blocks, block);
  }
  const double dt = now_s() - t0;
  uint64_t events = 0;
  if (std::string(what) != "plain") {
    stop_recording();
    events = runtime::chunk_store().stats().events;
  }
  std::printf("hooks.dilation.%s_s: %.4f s (calls %.0f, events %llu, checksum %.0f)\n", what, dt,
              double(blocks) * (3.0 * double(block) + 1), (unsigned long long)events, s);
  std::fflush(stdout);
}

template <class F>
void in_child(F f) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    f();
    std::fflush(stdout);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t pairs = argc > 1 ? size_t(std::atoll(argv[1])) : 10000000;
  in_child([&] { mode_hot_paths(pairs); });
  in_child([] { mode_callsite(); });
  const size_t blocks = 4000, block = 1000;  // 12M tiny calls
  for (const char* m : {"plain", "recorded", "autofilter"})
    in_child([&] { mode_dilation(m, blocks, block); });
  return 0;
}
