// critpath — compiler_hooks/hooks.h
//
// The compiler-instrumentation adapter: __cyg_profile_func_enter/exit (cyg_profile.cpp) turn
// function entries and exits of code built with -finstrument-functions (critpath-cc,
// critpath-cxx, critpath-f90) into ENTER/EXIT events of kFunction regions. Code built with
// `--xray` (-fxray-instrument) reaches the same core through XRay's patched sleds
// (xray.cpp, hook_core.h); everything below holds for both.
//
//   hook(fn) --per-thread shadow stack--> address table (fn -> region id | filtered | auto)
//            --recorded?--> record_region() [+ COUNTERS]   (libtrace/runtime/recorder.h)
//
// * Address table: one process-wide open-addressing hash (2^16 entries, in .bss, lock-free
//   reads). An address is looked up on every enter; on its first visit while recording it is
//   defined under a mutex: the filter file is applied (that needs the name, so the symbol is
//   resolved then) or, without a filter, a placeholder region "0x<addr>" is defined and named
//   at finalize. Filtered addresses are cached as such: a filtered call costs one lookup.
// * Shadow stack: per thread, every entered function from process start (also before
//   MPI_Init), with whether its ENTER was recorded. An exit pops it; only a frame whose ENTER
//   was recorded records an EXIT, so calls before MPI_Init or after MPI_Finalize, pauses and
//   filter decisions that change mid-call (auto-filter) never unbalance the trace. A longjmp
//   that skipped exits is repaired at the next exit by popping to the matching frame.
//   When recording starts, the frames already on the stack (main, and whatever called
//   MPI_Init) get ENTER events, so the call path below MPI_Init is main/setup/..., and a
//   `main` recorded this way is folded into the root by the profile pass (not main/main).
// * Automatic runtime filter: a function's first CRITPATH_AUTOFILTER_VISITS visits on a
//   thread are timed (each visit capped at ~10x the threshold, so that one preemption does
//   not decide; the cost of the clock reads is taken off); if their mean is below
//   CRITPATH_AUTOFILTER_NS it is no longer recorded
//   (all threads). Its later visits are only counted per thread (no clock read: an
//   auto-filtered call costs what a filtered one does plus one increment); their time is
//   estimated as visits x the judged sample's mean. At finalize the totals go to the region
//   definitions (defs::RegionTable::add_unrecorded), from where the profile pass adds them to
//   the function's call paths. XRay mode unpatches an auto-filtered function instead: its
//   later visits cost a nop sled and are not counted (hook_core.h's listener). GCC mode does
//   the same per call site (CRITPATH_PATCH_HOOKS, on by default; site_patch.h): a filtered or
//   auto-filtered function's next hook call turns its call instruction into a jump over
//   itself; from the verdict on its visits get no frame and are not counted.
// * At finalize the figures of docs/instrumentation.md (functions instrumented, patched,
//   unpatched, filtered, auto-filtered) go to defs::Instrumentation for the report.
//
// Thread safety: the hooks are called concurrently from any thread; everything per call is
// thread-local or a lock-free read. Signal safety: a hook interrupting a hook's cold path on
// the same thread is ignored (the thread is marked busy).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libtrace/runtime/status.h"

namespace critpath::hooks {

struct Options {
  std::string filter_file;  // CRITPATH_FILTER ("" = none)
  uint32_t autofilter_visits = 100000;
  uint32_t autofilter_ns = 200;  // 0 = automatic filter off
  int callsite_depth = 0;        // CRITPATH_CALLSITE_DEPTH
  std::string papi_events;       // CRITPATH_PAPI_EVENTS
  bool patch_sites = false;      // CRITPATH_PATCH_HOOKS (site_patch.h); tests call hooks directly
};

// Applies the options (cold): loads the filter (a bad file warns and filters nothing),
// starts counters and call sites. Called by the recording-start listener from
// config::current(); tests call it directly. Returns the filter's status.
Status configure(const Options& o, std::string* error = nullptr);

// Recording started (MPI_Init thread): frames already on the shadow stacks get ENTER events
// (this thread now, other threads at their next hook).
void recording_started();
// Recording is over (inside MPI_Finalize): names placeholder regions and call sites, and
// hands the automatic filter's unrecorded visits to the region table. Idempotent.
void recording_stopped();

// One row per address the hooks have seen while recording (tests, diagnostics).
struct FunctionEntry {
  uintptr_t address = 0;
  uint32_t region = 0;         // 0 when filtered by the filter file
  bool filtered = false;       // by the filter file
  bool auto_filtered = false;  // by the automatic filter
  uint64_t unrecorded_visits = 0;
  uint64_t unrecorded_ticks = 0;
};
std::vector<FunctionEntry> function_table();

// Forgets every address and filter decision, and the calling thread's shadow stack. Tests
// only; requires that no other thread is inside a hook.
void reset_for_testing();
// Current shadow-stack depth of the calling thread (tests).
uint32_t shadow_depth();

}  // namespace critpath::hooks
