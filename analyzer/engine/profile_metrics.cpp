// critpath — analyzer/engine/profile_metrics.cpp: the call-path profile's metrics.
// The profile itself is built by the engine's forward pass (analyzer/engine/profile.cpp);
// these rows are its declarations (engine/metric_store.h). The rows with a column are read
// from the unified profile's columns (engine/profile.h), the others are booked in the store;
// papi_<event> stands for one metric per measured hardware counter.
#include "analyzer/engine/metric_store.h"
#include "analyzer/engine/profile.h"

namespace critpath::analyzer::engine {

std::vector<MetricDecl> profile_metric_decls() {
  return {
      {"time", "s", "", "Time",
       "Exclusive time of the call path: the sum over its visits of (exit time - enter time - the "
       "inclusive time of its children); MPI calls are leaves. by_callpath sums over ranks; "
       "by_rank[r] is the sum over call paths on rank r, i.e. rank r's measured span. Threads "
       "other than the main one (MPI_THREAD_MULTIPLE, or instrumented functions on other "
       "threads) hang their call trees under the root and add their own span (first to last "
       "event) to it: a rank's time is the sum of its threads' times.",
       Combine::kSum, false, kColExclusive},
      {"computation", "s", "time", "Computation",
       "Exclusive time of call paths that are not MPI calls (time - mpi_time).", Combine::kSum, false},
      {"mpi_time", "s", "time", "MPI",
       "Exclusive time of call paths whose last region is an MPI call (0 for all others); by_rank[r] "
       "is rank r's total time inside MPI.",
       Combine::kSum, false, kColMpi},
      {"mpi_p2p", "s", "mpi_time", "MPI point-to-point",
       "Time in point-to-point MPI calls: sends, receives, Sendrecv*, persistent *_init/Start*, "
       "Wait*, Test*, *probe, Mrecv/Imrecv, Cancel, Request_free. A Wait* completing a nonblocking "
       "collective counts here (it is a request-completion call); its wait state is a collective one.",
       Combine::kSum, false},
      {"mpi_collective", "s", "mpi_time", "MPI collective",
       "Time in blocking, nonblocking and neighbourhood collective calls and MPI_Reduce_local.",
       Combine::kSum, false},
      {"mpi_rma", "s", "mpi_time", "MPI one-sided",
       "Time in one-sided calls: MPI_Win_*, Put, Get, Accumulate, Get_accumulate, Fetch_and_op, "
       "Compare_and_swap and their request-based R* forms.",
       Combine::kSum, false},
      {"mpi_rma_sync", "s", "mpi_rma", "MPI one-sided synchronization",
       "Time in the one-sided calls that are not RMA operations: window creation and free, "
       "MPI_Win_fence, start, complete, post, wait, test, lock, unlock, lock_all, unlock_all, "
       "flush*, sync, attach, detach.",
       Combine::kSum, false},
      {"mpi_rma_comm", "s", "mpi_rma", "MPI one-sided communication",
       "Time in the RMA operations: Put, Get, Accumulate, Get_accumulate, Fetch_and_op, "
       "Compare_and_swap and their request-based R* forms.",
       Combine::kSum, false},
      {"mpi_management", "s", "mpi_time", "MPI management",
       "Time in every other MPI call (MPI_Init, MPI_Finalize, communicators, groups, topologies, "
       "datatypes, ...).",
       Combine::kSum, false},
      {"visits", "count", "", "Visits", "Number of ENTER events of the call path.", Combine::kSum, false,
       kColVisits},
      {"bytes_sent", "bytes", "", "Bytes sent",
       "Point-to-point: the message size (count x type size) of each send, booked at the send call "
       "(blocking or nonblocking). Collectives: the bytes this rank contributes, as defined per "
       "collective in docs/mpi-coverage.md.",
       Combine::kSum, false, kColBytesSent},
      {"bytes_received", "bytes", "", "Bytes received",
       "Point-to-point: the message size of each completed receive, booked at the call that "
       "completed it (MPI_Recv, or the MPI_Wait*/MPI_Test* completing an MPI_Irecv). Collectives: the "
       "bytes this rank receives (docs/mpi-coverage.md).",
       Combine::kSum, false, kColBytesReceived},
      // by_callpath_inclusive: the inclusive values; by_rank: the rank's total.
      {engine::kPapiMetricId, "count", "", "Hardware counter",
       "Hardware counter <event> (CRITPATH_PAPI_EVENTS): exclusive value per call path, summed over ranks",
       Combine::kSum, false},
  };
}

}  // namespace critpath::analyzer::engine
