// critpath — analyzer/engine/watchdog.h
//
// The analysis deadline (CRITPATH_ANALYSIS_TIMEOUT): an analysis must never hang the job. The
// engine's MPI operations (comm.cpp) run as nonblocking MPI calls completed by polling. Past
// the deadline no operation starts any more: it fails at once with kMpiError, without calling
// MPI, so the analysis unwinds through its ordinary error paths and MPI_Finalize returns. An
// operation already started is waited for a grace period longer (5 % of the timeout, 1 to 30 s)
// and then abandoned, its request left pending. The grace matters: an abandoned operation's
// buffers belong to the caller and are soon freed, so no other rank may join it afterwards.
// Every rank starts its deadline at the same moment (after the collective that creates the
// analysis communicator), stops starting operations at its deadline, and abandons only after
// the grace: no rank can start a matching operation after another abandoned its own unless
// their clocks of the start drift apart by more than the grace. (MPICH 4.0 and Open MPI 4.1
// both finalize with such requests pending; MPICH's UCX layer then warns about them.)
//
// Not covered: communicator creation by MPI_Comm_split / MPI_Comm_create_group (no
// nonblocking form in MPI 3.1), and critpath-analyze's rendezvous of the traced ranks hosted
// by one process.
#pragma once

#include <mpi.h>

#include <functional>
#include <vector>

#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

// Arms the deadline `seconds` from now (0: none); process-wide, for every analysis rank the
// process hosts. Clears an earlier expiry.
void watchdog_start(double seconds);
// Disarms it (an expiry stays recorded until the next start).
void watchdog_stop();
// Whether the deadline has passed (sticky once true): no operation starts any more.
bool watchdog_expired();
// Whether an operation started now would be abandoned: the deadline and its grace have passed
// (watchdog_expired() is then true from here on). For waits outside complete_all (host_shm.h).
bool watchdog_abandoned();
// Starts a nonblocking MPI operation with `start(&request)` and polls it to completion.
// kMpiError when starting fails, when the deadline and the grace pass first, or (without
// starting) when the deadline had passed already.
Status complete_nonblocking(const std::function<int(MPI_Request*)>& start);
// The same for requests already started: polls them all to completion (MPI_Testall).
Status complete_all(std::vector<MPI_Request>& requests);
// MPI_Alltoallv over `comm` made of nonblocking point-to-point messages (tag kAlltoallTag),
// completed under the deadline: counts and displacements in elements of `type` (of `extent`
// bytes), zero counts send nothing, the own block is copied. Open MPI 4.1's MPI_Ialltoall(v)
// (libnbc) never completes on some of the analysis's exchanges (mpi.corpus.scan_exscan,
// mpi.critpath.imbalance_b), so the engine's all-to-all does not use them.
Status alltoallv_p2p(const void* send, const int* send_counts, const int* send_displs, void* recv,
                     const int* recv_counts, const int* recv_displs, MPI_Datatype type, size_t extent,
                     MPI_Comm comm);
constexpr int kAlltoallTag = 0x4350;

}  // namespace critpath::analyzer::engine
