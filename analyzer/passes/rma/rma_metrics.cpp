// critpath — analyzer/passes/rma/rma_metrics.cpp: the one-sided wait-state patterns, in
// WaitPattern order from kRmaLatePost (wait_states.h; pattern_def() reads these rows), then
// the RMA byte counts. Definitions follow [Hermanns2009] §4 and Scalasca 2.6 ([Scalasca2.6],
// docs/references.md); which calls are assumed blocking is part of each definition.
// Times are global; every wait is clamped at >= 0 and cut off at the call's exit.
// as_finding marks the patterns summary.txt's findings name, with the delay family that costs
// them (delay_<family>_short_term / _long_term, passes/delay/delay_metrics.cpp).
#include "analyzer/passes/pass_list.h"

namespace critpath::analyzer::passes {

std::vector<engine::MetricDecl> rma_pattern_decls() {
  using engine::as_finding;
  using engine::Combine;
  return {
      as_finding({"rma_late_post", "s", "mpi_rma_sync", "Late Post",
                  "PSCW access epoch (MPI_Win_start .. MPI_Win_complete) of an origin, L = the latest "
                  "enter(MPI_Win_post) of the matching exposure epochs of its targets. Win_start is assumed "
                  "blocking iff L lies inside it: L - enter(Win_start), booked at Win_start; otherwise "
                  "min(L, exit(Win_complete)) - enter(Win_complete), booked at Win_complete. The variant in "
                  "an RMA operation is rma_early_transfer.",
                  Combine::kSum, true},
                 "rma"),
      as_finding({"rma_early_transfer", "s", "mpi_rma_comm", "Early Transfer",
                  "Late Post in an RMA operation ([Hermanns2009] Early Transfer; Scalasca's Late Post, "
                  "communication variant): an RMA operation of a PSCW access epoch whose non-blocking "
                  "Win_start did not wait, towards a target T whose enter(MPI_Win_post) lies inside the "
                  "operation: enter(Win_post of T) - enter(operation). The operation is assumed blocking "
                  "only then.",
                  Combine::kSum, true},
                 "rma"),
      as_finding({"rma_early_wait", "s", "mpi_rma_sync", "Early Wait",
                  "PSCW exposure epoch closed by MPI_Win_wait (MPI_Win_test polls: none), C = the latest "
                  "enter(MPI_Win_complete) of the matching access epochs of its origins: "
                  "min(C, exit(Win_wait)) - enter(Win_wait), booked at Win_wait.",
                  Combine::kSum, true},
                 "rma"),
      {"rma_late_complete", "s", "rma_early_wait", "  Late Complete",
       "Part of rma_early_wait after the last RMA operation: min(C, exit(Win_wait)) - "
       "max(O, enter(Win_wait)), O = the latest exit of an RMA operation of the origins towards "
       "this target in the epoch (exit(Win_start) for an origin without one).",
       Combine::kSum, true},
      as_finding({"rma_wait_at_fence", "s", "mpi_rma_sync", "Wait at Fence",
                  "MPI_Win_fence: latest enter over the window's members - enter, when the fence "
                  "synchronized (every member entered before any left: latest enter < earliest exit); at "
                  "least rma_early_fence, which counts even when the fence did not visibly synchronize.",
                  Combine::kSum, true},
                 "rma"),
      {"rma_early_fence", "s", "rma_wait_at_fence", "  Early Fence",
       "Part of rma_wait_at_fence: the fence closing a fence epoch at a target, O = the latest "
       "exit of an RMA operation towards it in that epoch: min(O, exit(fence)) - enter(fence) "
       "when O > enter(fence).",
       Combine::kSum, true},
      as_finding(
          {"rma_wait_at_create", "s", "mpi_rma_sync", "Wait at Window Create",
           "MPI_Win_create / allocate / allocate_shared / create_dynamic: latest enter over the "
           "window's members - enter, when all members' calls overlapped (latest enter < earliest exit).",
           Combine::kSum, true},
          "rma"),
      as_finding({"rma_wait_at_free", "s", "mpi_rma_sync", "Wait at Window Free",
                  "MPI_Win_free: as rma_wait_at_create.", Combine::kSum, true},
                 "rma"),
      as_finding({"rma_lock_contention", "s", "mpi_rma", "Lock Contention",
                  "Passive target: a lock epoch of an origin on target T (MPI_Win_lock .. MPI_Win_unlock, or "
                  "the part of an MPI_Win_lock_all epoch that accesses T, a shared lock) waits in its "
                  "longest call X (lock, RMA operation, flush or unlock: assumed the blocking one) for "
                  "another origin's conflicting epoch (either lock exclusive) on T, ordered before it by "
                  "the exit of their unlocks: R - enter(X), R = the latest enter(unlock) of such an epoch "
                  "inside X. Booked at X.",
                  Combine::kSum, true},
                 "rma"),
      as_finding({"rma_wait_for_progress", "s", "mpi_rma", "Wait for Progress",
                  "Passive target: the blocking call X of a lock epoch on target T (as rma_lock_contention) "
                  "while T was outside MPI (its main thread), until T entered an MPI call: enter(that call "
                  "on T) - S when it lies inside X, S = enter(X), or the release that ended a lock "
                  "contention. Assumes an MPI library needing the target's progress for passive target "
                  "(true for MPICH's active-message RMA; hardware RMA needs none).",
                  Combine::kSum, true},
                 "rma"),
  };
}

std::vector<engine::MetricDecl> rma_metric_decls() {
  using engine::Combine;
  std::vector<engine::MetricDecl> out = rma_pattern_decls();
  out.push_back({"rma_bytes_put", "bytes", "", "RMA bytes put",
                 "Origin bytes (origin count x type size) of MPI_Put and MPI_Rput, booked at the "
                 "call on the origin.",
                 Combine::kSum, false});
  out.push_back({"rma_bytes_get", "bytes", "", "RMA bytes got",
                 "Origin bytes of MPI_Get and MPI_Rget, and the result bytes of the fetching "
                 "atomics (Get_accumulate, Rget_accumulate, Fetch_and_op, Compare_and_swap), "
                 "booked at the call on the origin.",
                 Combine::kSum, false});
  out.push_back({"rma_bytes_accumulated", "bytes", "", "RMA bytes accumulated",
                 "Origin bytes of MPI_Accumulate, Raccumulate, Get_accumulate, Rget_accumulate, "
                 "Fetch_and_op and Compare_and_swap, booked at the call on the origin.",
                 Combine::kSum, false});
  return out;
}

std::vector<engine::ScalarDecl> rma_scalar_decls() {
  return {
      {"rma_epochs", "count", "PSCW access/exposure and passive-target epochs analysed."},
      {"rma_analysis_bytes", "bytes",
       "Payload of the one-sided notes and verdicts (see *One-sided communication*)."},
  };
}

}  // namespace critpath::analyzer::passes
