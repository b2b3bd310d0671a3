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
//
// Peers: MPICH's launcher SIGKILLs every other rank as soon as one dies, before they could
// write. So a rank that faults first sends kPeerSignal (sigqueue, its rank as the value) to the
// other ranks on its host, which dump their partial traces ("stopped at rank <r>'s fault") and go on
// untraced, and waits up to 3 s for their rank-<r>.json files before the fault proceeds. A peer
// that has begun a dump of its own (its trace/rank-<r>.dumping marker, made as a dump starts) is
// waited for but not signalled, and a rank that leaves by exit() first gives its peers 100 ms to
// begin theirs: every rank may be leaving main at once (fault.cpp, tell_peers).
// Ranks are on the same host when hostname, boot id and PID namespace agree (fault_host_key);
// ranks on other hosts are not told. kPeerSignal is SIGURG, whose default action is to ignore
// it; the handler is installed only over that default (or SIG_IGN) and acts only on a
// sigqueue() from a known peer's process id.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "analyzer/engine/run_info.h"

namespace critpath::analyzer {

constexpr int kPeerSignal = SIGURG;

struct FaultPeer {
  int rank = 0;
  pid_t pid = 0;
};

// At the end of MPI_Init, recording: prepares the dump and installs the signal handlers.
// A signal whose disposition is SIG_IGN is left alone, and so are SIGTERM and SIGINT when the
// application handles them itself.
void fault_arm(const RunInfo& run);
// Before fault_arm: whether it will listen for its peers' kPeerSignal (its disposition is the
// default or SIG_IGN); the MPI_Init exchange tells the peers.
bool fault_peer_signal_free();
// After fault_arm: the other ranks on this host that listen (see "Peers" above).
void fault_set_peers(const std::vector<FaultPeer>& peers);
// This host's identity for fault_set_peers: hostname, boot id and PID namespace hashed.
uint64_t fault_host_key();
// At the start of MPI_Finalize: no dump from now on; the handlers still installed are replaced
// by the dispositions found at arming.
void fault_disarm();
// The MPI_Abort wrapper, before PMPI_Abort.
void fault_abort(int errorcode);
// Load time: registers the exit handler (runs after the application's own exit handlers, so an
// MPI_Finalize called from one of them still finalizes normally).
void fault_install_exit_handler();

}  // namespace critpath::analyzer
