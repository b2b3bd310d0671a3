// critpath — libtrace/runtime/callsite.h
//
// Call sites of MPI calls (CRITPATH_CALLSITE_DEPTH=k). An MPI wrapper calls record_callsite()
// once, after its reentry guard and BEFORE it takes the ENTER timestamp of the call, so the
// stack walk is charged to the caller, never to MPI time:
//
//   ready_state() ... record_callsite(*t); record_enter(*t, region::kMPI_Send); PMPI_Send(...)
//
// With depth 0 (the default) this is one predictable branch on a null pointer. Otherwise the
// capture function (compiler_hooks/callsite.cpp installs it at MPI_Init) walks the k innermost
// application frames, maps the program counters to a call-site region id (kind kCallsite,
// named "file:line" at finalize) and records a CALLSITE event; the profile pass then puts the
// next MPI ENTER under a call-path node for that call site.
//
// libtrace only holds the pointer, so wrappers depend on libtrace alone.
#pragma once

#include "libtrace/runtime/recorder.h"

namespace critpath::runtime {

using CallsiteCapture = void (*)(ThreadState& t);
extern CallsiteCapture g_callsite_capture;  // null: call sites off

// Hot path of every MPI wrapper. Thread-safe; not signal-safe (like all record_* calls).
CRITPATH_NOINSTR inline void record_callsite(ThreadState& t) {
  if (CRITPATH_UNLIKELY(g_callsite_capture != nullptr)) g_callsite_capture(t);
}

}  // namespace critpath::runtime
