// critpath — compiler_hooks/cyg_profile.cpp
//
// __cyg_profile_func_enter/exit: the -finstrument-functions entry points (design in hooks.h).
// Hot path per recorded call: TLS block, shadow-stack push, one hash probe, clock read, one
// 16-byte ENTER slot; at exit, a pop, clock read, one EXIT slot and (auto-filter on) two adds.
#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "compiler_hooks/counters.h"
#include "compiler_hooks/filter.h"
#include "compiler_hooks/hook_core.h"
#include "compiler_hooks/hooks.h"
#include "compiler_hooks/site_patch.h"
#include "compiler_hooks/symbols.h"
#include "libtrace/clock/clock.h"
#include "libtrace/config/config.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/session.h"

extern "C" void __cyg_profile_func_enter(void* fn, void* site);
extern "C" void __cyg_profile_func_exit(void* fn, void* site);

namespace critpath::hooks {

void callsites_configure(int depth);  // callsite.cpp
void callsites_name_all();            // callsite.cpp

namespace {

// ---- Address table ---------------------------------------------------------------------
// Open addressing with linear probing. A slot is written once under g_mu: region and state
// first, then the address with a release store; readers load the address with acquire.
// `state` alone may change later (kRecord -> kAuto).
enum FnState : uint32_t { kRecord = 0, kFiltered = 1, kAuto = 2 };
struct FnEntry {
  std::atomic<uintptr_t> addr;
  std::atomic<uint32_t> region;
  std::atomic<uint32_t> state;
};
static_assert(sizeof(FnEntry) == 16);
constexpr unsigned kTableBits = 16;
constexpr size_t kTableSize = size_t(1) << kTableBits;
constexpr size_t kTableMax = kTableSize / 4 * 3;  // keep probes short
FnEntry g_table[kTableSize];                      // .bss: pages appear when touched
uint8_t g_resolved[kTableSize];                   // name final (requires g_mu)
// Auto-filtered functions: mean ticks per visit of the sample that judged them (fallback for
// the estimate when no later visit was sampled).
std::atomic<double> g_auto_mean[kTableSize];
size_t g_used = 0;  // requires g_mu
std::mutex g_mu;

CRITPATH_NOINSTR inline size_t slot_of(uintptr_t a) {
  return size_t((uint64_t(a) * 0x9E3779B97F4A7C15ull) >> (64 - kTableBits));
}

CRITPATH_NOINSTR inline FnEntry* find(void* fn) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(fn);
  size_t i = slot_of(a);
  for (;;) {
    const uintptr_t k = g_table[i].addr.load(std::memory_order_acquire);
    if (k == a) return &g_table[i];
    if (k == 0) return nullptr;
    i = (i + 1) & (kTableSize - 1);
  }
}

// ---- Configuration (written at recording start, read-only afterwards) -----------------------
Filter g_filter;
bool g_have_filter = false;
bool g_autofilter = true;
// CRITPATH_PATCH_HOOKS: a filtered or auto-filtered function's hook call sites are patched out
// (site_patch.h) at their next call; its visits from then on are neither framed nor counted.
// Turned off for good when the system refuses to make code writable (W^X).
std::atomic<bool> g_patch_sites{false};
uint32_t g_af_visits = 100000;
uint32_t g_af_ns = 200;
clock::ClockPair g_start_pair;  // for converting the auto-filter threshold to ticks
// What a timed interval costs by itself (two back-to-back clock reads, the minimum over a few
// trials): taken off the auto-filter's means, which would otherwise judge the clock (tens of
// ns on some VMs) rather than the function.
uint64_t g_clock_overhead = 0;
// Each timed visit counts at most this much towards the auto-filter's mean: a preemption or a
// page fault inside one visit of a 20 ns function would otherwise decide its fate. About 10x
// the threshold (CRITPATH_AUTOFILTER_NS x 50 ticks assumes a TSC of at most 5 GHz).
uint64_t g_visit_cap = ~uint64_t(0);
std::atomic<uint32_t> g_epoch{0};
std::atomic<bool> g_stopped{false};
core::AutoFilterListener g_af_listener = nullptr;  // XRay: unpatches the function

// ---- Per-thread state -------------------------------------------------------------------------
//
//   HookFrame (24 B): fn | t_enter | region | info = slot (bits 0..23) | flags (24..31)
enum : uint32_t {
  kSlotMask = (1u << 24) - 1,
  kRecorded = 1u << 24,  // ENTER recorded: record the EXIT
  kSampled = 1u << 25,   // auto-filtered, one visit in kSampleEvery: timed, not recorded
  kSynth = 1u << 26,     // ENTER synthesized at recording start: not a full visit
};
struct HookFrame {
  void* fn;
  uint64_t t;
  uint32_t region;
  uint32_t info;
};
static_assert(sizeof(HookFrame) == 24);

// Per thread and table slot: the auto-filter's sample and the unrecorded totals.
struct SlotStats {
  uint32_t visits;  // recorded visits timed so far (until judged)
  uint32_t judged;
  uint64_t ticks;
  uint64_t unrecorded_visits;  // visits after the function was auto-filtered
  uint64_t samples;            // ... of which timed (one in kSampleEvery)
  uint64_t sample_ticks;
};
// An auto-filtered function's later visits are counted; one in kSampleEvery is timed (two
// clock reads, nothing recorded), and its unrecorded time is estimated as visits x the mean
// of those samples. The judging sample's mean is no good for that: it includes the cost of
// recording, which dominates a function this short.
constexpr uint64_t kSampleEvery = 32;
constexpr uint32_t kStackCap = 2048;

// kOff: the session will never record again (CRITPATH_ENABLE=0, measurement disabled, after
// MPI_Finalize): both hooks return at their first test, no shadow stack is kept.
enum : uint8_t { kUnprepared = 0, kReady = 1, kFailed = 2, kBusy = 3, kOff = 4 };
struct alignas(64) HookThread {
  HookFrame* stack;
  SlotStats* stats;
  uint32_t depth;
  uint32_t epoch;
  uint8_t ok;
};
static_assert(std::is_trivially_destructible_v<HookThread>);
thread_local HookThread t_hook __attribute__((tls_model("initial-exec")));

std::mutex g_threads_mu;
std::vector<SlotStats*>* g_thread_stats = new std::vector<SlotStats*>;  // never destroyed
// Threads whose shadow stacks may be read by others (frame_in_flight): registered when their
// exit will unregister them (thread_gone, the pthread key's destructor). Requires g_threads_mu.
std::vector<HookThread*>* g_hook_threads = new std::vector<HookThread*>;  // never destroyed
pthread_key_t g_key;
bool g_key_ok = false;
std::once_flag g_key_once;

constexpr size_t kStackBytes = kStackCap * sizeof(HookFrame);
constexpr size_t kStatsBytes = kTableSize * sizeof(SlotStats);

void thread_gone(void* p) {
  // Runs on the exiting thread: hooks called by later TLS destructors must not touch the
  // stack, so the thread is marked failed first. The statistics stay (finalize sums them).
  {
    std::lock_guard<std::mutex> lock(g_threads_mu);
    auto& v = *g_hook_threads;
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] == &t_hook) {
        v[i] = v.back();
        v.pop_back();
        break;
      }
  }
  t_hook.ok = kFailed;
  t_hook.stack = nullptr;
  if (p) munmap(p, kStackBytes);
}

// Cold: first hook call of a thread. False when the thread cannot be tracked (or is busy).
CRITPATH_NOINSTR bool prepare_thread(HookThread& h) {
  if (h.ok != kUnprepared) return false;
  h.ok = kBusy;
  void* s = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* st = mmap(nullptr, kStatsBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                  -1, 0);
  if (s == MAP_FAILED || st == MAP_FAILED) {
    if (s != MAP_FAILED) munmap(s, kStackBytes);
    if (st != MAP_FAILED) munmap(st, kStatsBytes);
    h.ok = kFailed;
    return false;
  }
  h.stack = static_cast<HookFrame*>(s);
  h.stats = static_cast<SlotStats*>(st);
  h.depth = 0;
  h.epoch = g_epoch.load(std::memory_order_relaxed);
  try {
    std::call_once(g_key_once, [] { g_key_ok = pthread_key_create(&g_key, thread_gone) == 0; });
    const bool unregisters = g_key_ok && pthread_setspecific(g_key, s) == 0;
    std::lock_guard<std::mutex> lock(g_threads_mu);
    g_thread_stats->push_back(h.stats);
    if (unregisters) g_hook_threads->push_back(&h);
  } catch (...) {
  }
  h.ok = kReady;
  return true;
}

std::string hex_name(uintptr_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, a);
  return buf;
}

// Cold: first visit of an address while recording. Returns its entry, or nullptr when the
// table is full (the function is then not recorded).
CRITPATH_NOINSTR FnEntry* define_slow(void* fn) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (FnEntry* e = find(fn)) return e;
  if (g_used >= kTableMax) {
    log::warn_once("hooks-table",
                   "more than %zu instrumented functions; the others are not "
                   "recorded (use CRITPATH_FILTER)",
                   kTableMax);
    return nullptr;
  }
  const uintptr_t a = reinterpret_cast<uintptr_t>(fn);
  size_t i = slot_of(a);
  while (g_table[i].addr.load(std::memory_order_relaxed) != 0) i = (i + 1) & (kTableSize - 1);
  FnEntry& e = g_table[i];
  uint32_t region = 0;
  uint32_t state = kRecord;
  try {
    if (g_have_filter) {
      const SymbolInfo s = resolve_symbol(a);
      if (g_filter.excluded(s.name, s.mangled.empty() ? s.name : s.mangled, s.file)) {
        state = kFiltered;
      } else {
        region = defs::regions().define(s.name, defs::RegionKind::kFunction, s.file, s.line);
        g_resolved[i] = 1;
      }
    } else {
      region = defs::regions().define(hex_name(a), defs::RegionKind::kFunction);
    }
  } catch (...) {
    state = kFiltered;  // out of memory: leave the function out
  }
  e.region.store(region, std::memory_order_relaxed);
  e.state.store(state, std::memory_order_relaxed);
  e.addr.store(a, std::memory_order_release);
  ++g_used;
  return &e;
}

// Out of line: its value buffer would otherwise give every hook call a large stack frame
// (and six register saves) even on the filtered path.
__attribute__((noinline, cold)) CRITPATH_NOINSTR void record_counters(runtime::ThreadState& t, uint64_t tsc) {
  counters::record(t, tsc);
}

CRITPATH_NOINSTR inline void record_with_counters(runtime::ThreadState& t, trace::EventKind k,
                                                  uint32_t region, uint64_t tsc) {
  runtime::record_region(t, k, region, tsc);
  if (CRITPATH_UNLIKELY(counters::g_count != 0)) record_counters(t, tsc);
}

// Cold: recording (re)started since this thread last looked. Frames already on the shadow
// stack that are not recorded get ENTER events now, outermost first.
CRITPATH_NOINSTR void sync_thread(HookThread& h) {
  h.epoch = g_epoch.load(std::memory_order_relaxed);
  runtime::ThreadState* t = runtime::ready_state();
  if (!t) return;
  const uint32_t n = h.depth < kStackCap ? h.depth : kStackCap;
  h.ok = kBusy;
  const uint64_t now = runtime::now();
  for (uint32_t d = 0; d < n; ++d) {
    HookFrame& f = h.stack[d];
    if (f.info != 0) continue;
    FnEntry* e = find(f.fn);
    if (!e) e = define_slow(f.fn);
    if (!e || e->state.load(std::memory_order_relaxed) != kRecord) continue;
    f.t = now;
    f.region = e->region.load(std::memory_order_relaxed);
    f.info = uint32_t(e - g_table) | kRecorded | kSynth;
    record_with_counters(*t, trace::EventKind::kEnter, f.region, now);
  }
  h.ok = kReady;
}

// Cold: the auto-filter's verdict after g_af_visits timed visits on this thread.
CRITPATH_NOINSTR void judge(uint32_t slot, const SlotStats& s) {
  const uint64_t now_ticks = runtime::now();
  const uint64_t now_ns = clock::monotonic_ns();
  double ticks_per_ns = 1.0;
  if (runtime::g_use_tsc && now_ns > g_start_pair.ns + 1000)
    ticks_per_ns = double(now_ticks - g_start_pair.ticks) / double(now_ns - g_start_pair.ns);
  double mean_ticks = double(s.ticks) / double(s.visits) - double(g_clock_overhead);
  if (mean_ticks < 0) mean_ticks = 0;
  const double mean_ns = mean_ticks / ticks_per_ns;
  if (mean_ns < double(g_af_ns)) {
    g_auto_mean[slot].store(mean_ticks, std::memory_order_relaxed);
    uint32_t expected = kRecord;  // another thread may have judged it first
    if (g_table[slot].state.compare_exchange_strong(expected, kAuto, std::memory_order_acq_rel) &&
        g_af_listener)
      g_af_listener(g_table[slot].addr.load(std::memory_order_relaxed));
  }
}

CRITPATH_NOINSTR inline void account(HookThread& h, uint32_t info, uint64_t dt) {
  SlotStats& s = h.stats[info & kSlotMask];
  if ((info & kSynth) || s.judged) return;
  ++s.visits;
  s.ticks += dt < g_visit_cap ? dt : g_visit_cap;
  if (CRITPATH_UNLIKELY(s.visits >= g_af_visits)) {
    s.judged = 1;
    judge(info & kSlotMask, s);
  }
}

// Cold: the exit's function is not on top of the shadow stack (a longjmp skipped exits, or
// the function was entered while the thread was busy). Pops down to the matching frame,
// recording EXITs of recorded frames in between; returns that frame's index, or -1 when
// the function is not on the stack at all (the exit is then ignored).
CRITPATH_NOINSTR int64_t resync(HookThread& h, void* fn, uint32_t d) {
  const uint32_t top = d < kStackCap ? d : kStackCap - 1;
  int64_t i = int64_t(top);
  while (i >= 0 && h.stack[i].fn != fn) --i;
  if (i < 0) {
    h.depth = d + 1;  // not ours: leave the stack as it was
    return -1;
  }
  runtime::ThreadState* t = runtime::ready_state();
  const uint64_t now = runtime::now();
  for (int64_t j = int64_t(top); j > i; --j) {
    const HookFrame& f = h.stack[j];
    if ((f.info & kRecorded) && t) record_with_counters(*t, trace::EventKind::kExit, f.region, now);
  }
  h.depth = uint32_t(i);
  return i;
}

// Estimated unrecorded ticks of table slot i: visits x sampled mean (requires g_mu).
uint64_t estimate_unrecorded(size_t i, const std::vector<SlotStats*>& stats, uint64_t& visits) {
  uint64_t samples = 0, sample_ticks = 0;
  visits = 0;
  for (SlotStats* p : stats) {
    visits += p[i].unrecorded_visits;
    samples += p[i].samples;
    sample_ticks += p[i].sample_ticks;
  }
  double mean = samples > 0 ? double(sample_ticks) / double(samples) - double(g_clock_overhead)
                            : g_auto_mean[i].load(std::memory_order_relaxed);
  if (mean < 0) mean = 0;
  return uint64_t(double(visits) * mean + 0.5);
}

void on_start_listener();
void on_stop_listener();
const runtime::AdapterListener kListener = {on_start_listener, on_stop_listener};
__attribute__((constructor)) void install_listener() { runtime::add_adapter_listener(&kListener); }

void on_start_listener() {
  try {
    const config::Config& c = config::current();
    Options o;
    o.filter_file = c.filter;
    o.autofilter_visits = uint32_t(c.autofilter_visits);
    o.autofilter_ns = uint32_t(c.autofilter_ns);
    o.callsite_depth = c.callsite_depth;
    o.papi_events = c.papi_events;
    o.patch_sites = c.patch_hooks;
    std::string err;
    if (configure(o, &err) != Status::kOk && log::rank() <= 0)
      log::warn("CRITPATH_FILTER=%s: %s; no functions are filtered", o.filter_file.c_str(), err.c_str());
    xray::start();
    recording_started();
  } catch (...) {
    log::warn_once("hooks-start", "internal error while starting the compiler hooks");
  }
}

void on_stop_listener() {
  try {
    xray::stop();
    recording_stopped();
  } catch (...) {
    log::warn_once("hooks-stop", "internal error while naming instrumented functions");
  }
}

}  // namespace

// ---- Control (cold) ----------------------------------------------------------------------------

Status configure(const Options& o, std::string* error) {
  Status st = Status::kOk;
  g_have_filter = false;
  if (!o.filter_file.empty()) {
    std::string err;
    st = g_filter.load(o.filter_file, &err);
    if (st == Status::kOk) g_have_filter = !g_filter.empty();
    else if (error) *error = err;
  }
  g_af_visits = o.autofilter_visits > 0 ? o.autofilter_visits : 1;
  g_af_ns = o.autofilter_ns;
  g_autofilter = o.autofilter_ns > 0;
  g_patch_sites.store(o.patch_sites, std::memory_order_relaxed);
  g_start_pair = clock::sample_pair(runtime::g_use_tsc ? clock::TimerKind::kTsc
                                                       : clock::TimerKind::kMonotonic);
  g_stopped.store(false);
  uint64_t best = ~uint64_t(0);
  for (int i = 0; i < 64; ++i) {
    const uint64_t a = runtime::now();
    const uint64_t b = runtime::now();
    if (b - a < best) best = b - a;
  }
  g_clock_overhead = best;
  g_visit_cap = uint64_t(g_af_ns) * (runtime::g_use_tsc ? 50 : 10) + best;
  if (!o.papi_events.empty()) counters::start(o.papi_events);
  callsites_configure(o.callsite_depth);
  return st;
}

void recording_started() {
  g_epoch.fetch_add(1);
  HookThread& h = t_hook;
  if (h.ok == kReady) sync_thread(h);
}

void recording_stopped() {
  if (g_stopped.exchange(true)) return;
  std::vector<SlotStats*> stats;
  {
    std::lock_guard<std::mutex> lock(g_threads_mu);
    stats = *g_thread_stats;
  }
  defs::Instrumentation info;
  {  // g_mu is released before xray::add_counts: the XRay adapter takes its lock before g_mu
    std::lock_guard<std::mutex> lock(g_mu);
    for (size_t i = 0; i < kTableSize; ++i) {
      const uintptr_t a = g_table[i].addr.load(std::memory_order_acquire);
      if (a == 0) continue;
      const uint32_t state = g_table[i].state.load(std::memory_order_relaxed);
      if (!xray::owns(a)) ++info.instrumented;  // a -finstrument-functions hook ran
      info.filtered += state == kFiltered;
      info.auto_filtered += state == kAuto;
      const uint32_t region = g_table[i].region.load(std::memory_order_relaxed);
      if (region == 0) continue;
      if (!g_resolved[i]) {
        const SymbolInfo s = resolve_symbol(a);
        defs::regions().rename(region, s.name, s.file, s.line);
        g_resolved[i] = 1;
      }
      uint64_t v = 0;
      const uint64_t ticks = estimate_unrecorded(i, stats, v);
      const bool autof = state == kAuto;
      if (v > 0 || autof) defs::regions().add_unrecorded(region, v, ticks, autof);
    }
  }
  info.gcc = info.instrumented > 0;
  info.sites_patched_out = site_patch::sites_patched();
  if (site_patch::refused())
    log::note("GCC hook calls of filtered functions were not patched out: the system refused to make "
              "code pages writable (W^X policy); their hooks ran at every call (CRITPATH_PATCH_HOOKS)");
  xray::add_counts(info);
  defs::set_instrumentation(info);
  callsites_name_all();
}

std::vector<FunctionEntry> function_table() {
  std::vector<SlotStats*> stats;
  {
    std::lock_guard<std::mutex> lock(g_threads_mu);
    stats = *g_thread_stats;
  }
  std::vector<FunctionEntry> out;
  std::lock_guard<std::mutex> lock(g_mu);
  for (size_t i = 0; i < kTableSize; ++i) {
    const uintptr_t a = g_table[i].addr.load(std::memory_order_acquire);
    if (a == 0) continue;
    FunctionEntry e;
    e.address = a;
    e.region = g_table[i].region.load(std::memory_order_relaxed);
    const uint32_t st = g_table[i].state.load(std::memory_order_relaxed);
    e.filtered = st == kFiltered;
    e.auto_filtered = st == kAuto;
    e.unrecorded_ticks = estimate_unrecorded(i, stats, e.unrecorded_visits);
    out.push_back(e);
  }
  return out;
}

void reset_for_testing() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<SlotStats*> stats;
  {
    std::lock_guard<std::mutex> l2(g_threads_mu);
    stats = *g_thread_stats;
  }
  for (size_t i = 0; i < kTableSize; ++i) {
    if (g_table[i].addr.load(std::memory_order_relaxed) == 0) continue;
    g_table[i].addr.store(0);
    g_table[i].region.store(0);
    g_table[i].state.store(0);
    g_resolved[i] = 0;
    g_auto_mean[i].store(0);
    for (SlotStats* p : stats) p[i] = SlotStats{};
  }
  g_used = 0;
  t_hook.depth = 0;
  if (t_hook.ok == kOff) t_hook.ok = t_hook.stack ? kReady : kUnprepared;
  g_have_filter = false;
  g_stopped.store(false);
  g_af_listener = nullptr;
  g_patch_sites.store(false, std::memory_order_relaxed);
}

uint32_t shadow_depth() { return t_hook.depth; }

}  // namespace critpath::hooks

// ---- The hooks ----------------------------------------------------------------------------------
//
// Each hook is a lean fast path (no stack frame, no callee-saved registers) for the common
// cases — a filtered call, an unrecorded frame's exit — that tail-calls an out-of-line
// function for everything else (recording, first visits, pre-init tracking, repairs).

namespace critpath::hooks {
namespace {

// Enter: recording a function (state kRecord) or counting an auto-filtered one (kAuto).
__attribute__((noinline)) CRITPATH_NOINSTR void enter_record(HookThread& h, HookFrame& f, FnEntry* e,
                                                             uint32_t state) {
  const uint32_t slot = uint32_t(e - g_table);
  if (state == kAuto) {
    // Counted; one visit in kSampleEvery is timed (not recorded).
    if (CRITPATH_UNLIKELY(h.stats[slot].unrecorded_visits++ % kSampleEvery == 0)) {
      f.info = slot | kSampled;
      f.t = runtime::now();
    }
    return;
  }
  runtime::ThreadState* t = runtime::ready_state();
  if (CRITPATH_UNLIKELY(!t)) return;
  const uint64_t now = runtime::now();
  const uint32_t region = e->region.load(std::memory_order_relaxed);
  f.t = now;
  f.region = region;
  f.info = slot | kRecorded;
  record_with_counters(*t, trace::EventKind::kEnter, region, now);
}

// Enter: first visit of an address while recording.
__attribute__((noinline)) CRITPATH_NOINSTR void enter_define(HookThread& h, HookFrame& f, void* fn) {
  h.ok = kBusy;
  FnEntry* e = define_slow(fn);
  h.ok = kReady;
  if (!e) return;
  const uint32_t state = e->state.load(std::memory_order_relaxed);
  if (state != kFiltered) enter_record(h, f, e, state);
}

void enter_fast(void* fn, uintptr_t ret);

// Whether some thread has a frame of `fn` on its shadow stack: a visit that began before the
// verdict, still running. Its exit hook must stay (patched out, the frame would never be
// popped and later calls would nest under it), so exit sites are patched only when none is
// (asked again at the next call). Cold. A thread's frame is written before it reads the
// function's state, and the verdict is published with a full barrier long before an exit site
// is asked about, so a visit that saw the old state is on its stack by then. True also when
// the registry is busy.
CRITPATH_NOINSTR bool frame_in_flight(void* fn) {
  std::unique_lock<std::mutex> lock(g_threads_mu, std::try_to_lock);
  if (!lock.owns_lock()) return true;
  for (const HookThread* t : *g_hook_threads) {
    const HookFrame* stack = t->stack;
    if (!stack) continue;
    const uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_RELAXED);
    const uint32_t n = depth < kStackCap ? depth : kStackCap;
    for (uint32_t d = 0; d < n; ++d)
      if (__atomic_load_n(&stack[d].fn, __ATOMIC_RELAXED) == fn) return true;
  }
  return false;
}

// Patches the call of `hook` that returned to `ret` (site_patch.h). A refusal by the system
// ends patching for good: visits get frames again (exits of frameless ones are resync's "not
// ours").
CRITPATH_NOINSTR void patch_out(HookThread& h, uintptr_t ret, void (*hook)(void*, void*)) {
  h.ok = kBusy;  // a signal handler's hooks on this thread pass while the site is patched
  if (!site_patch::patch(ret, reinterpret_cast<uintptr_t>(hook)) && site_patch::refused())
    g_patch_sites.store(false, std::memory_order_relaxed);
  h.ok = kReady;
}

// Enter of a function whose hook calls are patched out (g_patch_sites; `ret` the hook call's
// return address): no frame, no count; the call site becomes a jump if it can.
__attribute__((noinline)) CRITPATH_NOINSTR void enter_patch(HookThread& h, uintptr_t ret) {
  --h.depth;  // the frame enter_fast pushed
  patch_out(h, ret, &__cyg_profile_func_enter);
}

// Enter: thread not prepared, not recording, or recording (re)started since its last event.
__attribute__((noinline)) CRITPATH_NOINSTR void enter_slow(void* fn, uintptr_t ret) {
  HookThread& h = t_hook;
  if (h.ok == kOff) return;
  const runtime::Phase phase = runtime::current_phase();
  if (phase == runtime::Phase::kDisabled || phase == runtime::Phase::kDone) {
    // Recording never resumes: pass through from now on (CRITPATH_ENABLE=0 costs the two
    // hook calls and a test each).
    if (h.ok != kBusy) h.ok = kOff;
    return;
  }
  if (h.ok != kReady && !prepare_thread(h)) return;
  if (!runtime::recording()) {
    // Before MPI_Init, paused, or after MPI_Finalize: only track the stack.
    const uint32_t d = h.depth++;
    if (CRITPATH_LIKELY(d < kStackCap)) h.stack[d] = HookFrame{fn, 0, 0, 0};
    return;
  }
  if (h.epoch != g_epoch.load(std::memory_order_relaxed)) sync_thread(h);  // sets h.epoch
  if (h.ok == kReady) enter_fast(fn, ret);
}

// `ret`: the hook call's return address (0: XRay's handler, whose sleds are not patched here).
CRITPATH_NOINSTR inline void enter_fast(void* fn, uintptr_t ret) {
  HookThread& h = t_hook;
  if (CRITPATH_UNLIKELY(h.ok != kReady || !runtime::recording() ||
                        h.epoch != g_epoch.load(std::memory_order_relaxed)))
    return enter_slow(fn, ret);
  const uint32_t d = h.depth++;
  if (CRITPATH_UNLIKELY(d >= kStackCap)) return;  // too deep: not recorded, exit matches it
  HookFrame& f = h.stack[d];
  f.fn = fn;
  f.info = 0;
  FnEntry* e = find(fn);
  if (CRITPATH_UNLIKELY(e == nullptr)) return enter_define(h, f, fn);
  const uint32_t state = e->state.load(std::memory_order_relaxed);
  if (state != kRecord && ret != 0 && g_patch_sites.load(std::memory_order_relaxed))
    return enter_patch(h, ret);
  if (state == kFiltered) return;
  return enter_record(h, f, e, state);
}

// Exit: anything but an unrecorded frame on top of the stack.
__attribute__((noinline)) CRITPATH_NOINSTR void exit_slow(HookThread& h, void* fn, uint32_t d,
                                                          uintptr_t ret) {
  if (CRITPATH_UNLIKELY(h.stack[d].fn != fn)) {
    if (ret != 0 && g_patch_sites.load(std::memory_order_relaxed)) {
      // A visit of a patched-out function has no frame: its exit pops nothing.
      const FnEntry* e = find(fn);
      if (e && e->state.load(std::memory_order_relaxed) != kRecord) {
        h.depth = d + 1;
        if (!frame_in_flight(fn)) patch_out(h, ret, &__cyg_profile_func_exit);
        return;
      }
    }
    const int64_t i = resync(h, fn, d);
    if (i < 0) return;
    d = uint32_t(i);
  }
  const HookFrame& f = h.stack[d];
  const uint32_t info = f.info;
  if (info == 0) return;  // not recorded
  const uint64_t now = runtime::now();
  if (info & kSampled) {
    SlotStats& s = h.stats[info & kSlotMask];
    ++s.samples;
    s.sample_ticks += now - f.t;
    return;
  }
  runtime::ThreadState* t = runtime::ready_state();
  if (CRITPATH_UNLIKELY(!t)) return;  // recording ended (MPI_Finalize) or paused
  record_with_counters(*t, trace::EventKind::kExit, f.region, now);
  if (g_autofilter) account(h, info, now - f.t);
}

CRITPATH_NOINSTR inline void exit_fast(void* fn, uintptr_t ret) {
  HookThread& h = t_hook;
  if (CRITPATH_UNLIKELY(h.ok != kReady) || CRITPATH_UNLIKELY(h.depth == 0)) return;
  const uint32_t d = --h.depth;
  if (CRITPATH_UNLIKELY(d >= kStackCap)) return;
  const HookFrame& f = h.stack[d];
  if (CRITPATH_LIKELY(f.fn == fn && f.info == 0)) return;  // filtered or unrecorded frame
  exit_slow(h, fn, d, ret);
}

}  // namespace
}  // namespace critpath::hooks

using namespace critpath;
using namespace critpath::hooks;

extern "C" CRITPATH_EXPORT CRITPATH_NOINSTR void __cyg_profile_func_enter(void* fn, void* /*site*/) {
  enter_fast(fn, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

extern "C" CRITPATH_EXPORT CRITPATH_NOINSTR void __cyg_profile_func_exit(void* fn, void* /*site*/) {
  exit_fast(fn, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

// ---- The core's interface for the XRay adapter (hook_core.h) ------------------------------------

namespace critpath::hooks::core {

CRITPATH_NOINSTR void enter(void* fn) { enter_fast(fn, 0); }

CRITPATH_NOINSTR void exit(void* fn) { exit_fast(fn, 0); }

void adopt_frames(void* const* fns, size_t n) {
  HookThread& h = t_hook;
  if (h.ok != kReady && !prepare_thread(h)) return;
  if (h.depth != 0) return;
  for (size_t i = 0; i < n && h.depth < kStackCap; ++i) h.stack[h.depth++] = HookFrame{fns[i], 0, 0, 0};
}

bool filter_excludes(uintptr_t fn) {
  if (!g_have_filter) return false;
  void* p = reinterpret_cast<void*>(fn);
  FnEntry* e = find(p);
  if (!e) e = define_slow(p);
  return e && e->state.load(std::memory_order_relaxed) == kFiltered;
}

void set_autofilter_listener(AutoFilterListener listener) { g_af_listener = listener; }

}  // namespace critpath::hooks::core
