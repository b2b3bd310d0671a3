// critpath — analyzer/passes/wait_states/wait_states_metrics.cpp: the wait-state patterns'
// declarations, in WaitPattern order (wait_states.h; pattern_def() reads these rows).
// Definitions follow Scalasca 2.6; enter(X)/exit(X) are the global entry/exit times of the
// MPI call holding event X; every wait is clamped at >= 0 and cut off at the call's exit.
// as_finding marks the patterns summary.txt's findings name, with the delay family that costs
// them (delay_<family>_short_term / _long_term, passes/delay/delay_metrics.cpp).
#include "analyzer/passes/pass_list.h"

namespace critpath::analyzer::passes {

std::vector<engine::MetricDecl> wait_state_metric_decls() {
  using engine::as_finding;
  using engine::Combine;
  return {
      as_finding(
          {"late_sender", "s", "mpi_p2p", "Late Sender",
           "min(enter(send), exit(R)) - enter(R), R = the call completing the receive (MPI_Recv, or the "
           "MPI_Wait* completing an MPI_Irecv); receives completed by MPI_Test* are skipped; a call "
           "completing several receives counts only the largest wait among them. Booked to the receiver, R.",
           Combine::kSum, true},
          "late_sender"),
      {"late_sender_wrong_order", "s", "late_sender", "Late Sender, wrong order",
       "Part of late_sender: a late-sender instance (among the last 100 of the rank) whose message "
       "was sent after the message of a receive completed later (enter(send) compared). Booked to "
       "the receiver, the earlier R.",
       Combine::kSum, true},
      {"late_sender_wrong_order_same_source", "s", "late_sender_wrong_order", "  same source",
       "Part of late_sender_wrong_order where both messages came from the same source.", Combine::kSum, true},
      {"late_sender_wrong_order_different_source", "s", "late_sender_wrong_order", "  different source",
       "Part of late_sender_wrong_order where the messages came from different sources.", Combine::kSum,
       true},
      as_finding(
          {"late_receiver", "s", "mpi_p2p", "Late Receiver",
           "S = the call completing a send (the blocking send, or the MPI_Wait* completing an MPI_Isend), "
           "P = the receiver's posting call: 0 when exit(S) <= enter(P) (buffered), else "
           "enter(P) - enter(S). Per call the largest wait; a call holding a late-sender wait is "
           "skipped. Booked to the sender, S.",
           Combine::kSum, true},
          "late_receiver"),
      as_finding(
          {"wait_barrier", "s", "mpi_collective", "Wait at Barrier",
           "min(latest enter over the communicator, exit) - enter, for MPI_Barrier and MPI_Ibarrier "
           "(measured in its completion call; the latest participant's post is its MPI_Ibarrier enter).",
           Combine::kSum, true},
          "barrier"),
      {"barrier_completion", "s", "mpi_collective", "Barrier Completion",
       "exit - max(earliest exit over the communicator, min(latest enter, exit)), for barriers.",
       Combine::kSum, true},
      as_finding({"wait_nxn", "s", "mpi_collective", "Wait at N x N",
                  "As wait_barrier, for the all-to-all collectives: Allreduce, Allgather(v), Alltoall(v,w), "
                  "Reduce_scatter(_block) and their nonblocking twins in their completion call, until the "
                  "latest rank that sent data entered. An instance in which no rank sends data (every count "
                  "zero), a rank that receives none, and instances whose senders the byte counts cannot name "
                  "(intercommunicators, neighbourhood collectives, an Alltoallv/w in which a rank sends or "
                  "receives nothing) do not synchronize: they book nothing and are no clock condition; "
                  "nor does a rank whose Alltoallv/w block from some member is empty wait.",
                  Combine::kSum, true},
                 "nxn"),
      {"nxn_completion", "s", "mpi_collective", "N x N Completion",
       "As barrier_completion, for the all-to-all collectives.", Combine::kSum, true},
      as_finding(
          {"late_broadcast", "s", "mpi_collective", "Late Broadcast",
           "Non-root ranks that receive bytes, when the root sent bytes: min(enter(root), exit) - enter "
           "(Bcast, Scatter(v) and their nonblocking twins in the completion call).",
           Combine::kSum, true},
          "late_broadcast"),
      as_finding({"early_reduce", "s", "mpi_collective", "Early Reduce",
                  "Root only: min(latest enter among the ranks that send bytes, exit) - enter (Reduce, "
                  "Gather(v) and their nonblocking twins in the completion call).",
                  Combine::kSum, true},
                 "early_reduce"),
      as_finding({"early_scan", "s", "mpi_collective", "Early Scan",
                  "min(max enter over communicator ranks 0..me, exit) - enter (Scan, Exscan and their "
                  "nonblocking twins in the completion call); nothing where no rank sends data.",
                  Combine::kSum, true},
                 nullptr),
      as_finding({"wait_finalize", "s", "mpi_management", "Wait at Finalize",
                  "latest enter(MPI_Finalize) over all ranks - enter(MPI_Finalize).", Combine::kSum, true},
                 nullptr),
      {"init_completion", "s", "mpi_management", "Initialization Completion",
       "exit(MPI_Init) - max(earliest exit(MPI_Init), latest enter(MPI_Init)) over all ranks.", Combine::kSum,
       true},
  };
}

}  // namespace critpath::analyzer::passes
