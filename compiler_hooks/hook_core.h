// critpath — compiler_hooks/hook_core.h
//
// Internal interface between the two ways compiler_hooks learns of function entries and
// exits (docs/instrumentation.md):
//
//   -finstrument-functions: __cyg_profile_func_enter/exit (cyg_profile.cpp)
//   XRay:                   the handler xray.cpp installs, called from the patched sleds
//
// Both feed one core, which lives in cyg_profile.cpp: per-thread shadow stacks, the address
// table with each function's region and filter decision, and the automatic filter (design
// in hooks.h). The XRay side adds what only it can do: patching when recording starts,
// unpatching what the automatic filter drops, unpatching everything when recording stops.
#pragma once

#include <cstddef>
#include <cstdint>

#include "libtrace/defs/definitions.h"

namespace critpath::hooks {

// ---- The core (cyg_profile.cpp) -----------------------------------------------------------
namespace core {
// A function entry / exit (what the __cyg_profile_func_* hooks do). Hot; any thread.
void enter(void* fn);
void exit(void* fn);
// Functions already running on the calling thread when recording starts, outermost first
// (XRay: their entries happened before the sleds were patched). They go on the shadow stack
// and get ENTER events with the frames GCC mode tracked from the start. Ignored when the
// thread's shadow stack is not empty. Cold.
void adopt_frames(void* const* fns, size_t n);
// True when CRITPATH_FILTER excludes the function at `fn` (resolves its name; cold). The
// address table remembers the decision: an excluded function counts as filtered.
bool filter_excludes(uintptr_t fn);
// Called once per function the automatic filter stops recording, on the thread that judged
// it, with no lock of the core held. Set before recording starts; nullptr = none.
using AutoFilterListener = void (*)(uintptr_t fn);
void set_autofilter_listener(AutoFilterListener listener);
}  // namespace core

// ---- The XRay adapter (xray.cpp) -----------------------------------------------------------
namespace xray {
// critpath_attach_xray() was called: the executable has the XRay runtime and sleds.
bool attached();
// Recording starts (MPI_Init thread, after the core is configured): installs the handler,
// patches every function's sleds (those CRITPATH_FILTER excludes stay unpatched) and adopts
// the calling thread's running frames. No-op when not attached.
void start();
// Recording stops: unpatches every sled and removes the handler. No-op when not started.
void stop();
// True when `fn` is the address of a function with XRay sleds (after start()).
bool owns(uintptr_t fn);
// Adds XRay's figures (instrumented, patched, unpatched) to `info`; sets info.xray when
// anything was patched.
void add_counts(defs::Instrumentation& info);
// Detaches the runtime and forgets everything (tests, which attach a fake runtime).
void reset_for_testing();
}  // namespace xray

// Up to `max` return addresses of the caller's stack, innermost first (callsite.cpp).
int capture_stack(void** pcs, int max);

}  // namespace critpath::hooks
