// critpath — analyzer/session/fault.h
//
// Partial traces when the application does not reach MPI_Finalize: a fatal signal (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGABRT, and SIGTERM / SIGINT while they have their default
// action), exit() or a return from main without MPI_Finalize, and MPI_Abort. Each rank then
// writes what it recorded as a kept trace marked partial (trace/rank-<r>.cptrace, .tail and
// .json in the output directory, docs/trace-format.md 6.3), prints one `critpath:` line on
// stderr saying where, and lets the fault take its course: the original disposition is
// restored and the signal raised again (same exit status, stdout untouched).
// `critpath-analyze DIR` then reports the consistent prefix of the run (partial_trace.h).
//
//   MPI_Init     -> fault_arm():    paths and the JSON prefix prepared, handlers installed
//   fault        -> handler / exit handler / fault_abort(): dump once, then the fault proceeds
//   MPI_Finalize -> fault_disarm(): the dispositions found at arming restored
//
// The dump is async-signal-safe (runtime/sigsafe.h): open/write/rename/mkdir only, nothing
// allocated, every lock only tried. What can be lost: an event a thread was writing at the very
// moment of the signal; everything, when the process is killed with SIGKILL (which MPICH's
// launcher sends to the other ranks when one rank fails) or the dump cannot take a lock.
#pragma once

#include "analyzer/session/run_info.h"

namespace critpath::analyzer {

// At the end of MPI_Init, recording: prepares the dump and installs the signal handlers.
// A signal whose disposition is SIG_IGN is left alone, and so are SIGTERM and SIGINT when the
// application handles them itself.
void fault_arm(const RunInfo& run);
// At the start of MPI_Finalize: no dump from now on; the handlers still installed are replaced
// by the dispositions found at arming.
void fault_disarm();
// The MPI_Abort wrapper, before PMPI_Abort.
void fault_abort(int errorcode);
// Load time: registers the exit handler (runs after the application's own exit handlers, so an
// MPI_Finalize called from one of them still finalizes normally).
void fault_install_exit_handler();

}  // namespace critpath::analyzer
