// critpath — analyzer/passes/delay/delay_metrics.cpp: the delay analysis's declarations
// (delay.h has the cost model). Causing side: booked to the delaying rank and the call path of
// the delaying activity. Waiting side: booked to the waiting rank and its MPI call.
#include "analyzer/passes/pass_list.h"

namespace critpath::analyzer::passes {

std::vector<engine::MetricDecl> delay_metric_decls() {
  using engine::Combine;
  return {
      {"delay_cost_short_term", "s", "", "Delay cost, short-term",
       "The direct wait states a delay caused: for each wait state v (amount a_v) of the costed "
       "families, caused by rank C, scale * d[c] on C's call path c, where d = max(0, t_C - t_W) "
       "is the delay vector of C's and the waiting rank W's time per call path since their "
       "previous synchronization (waiting excluded), D = sum(d) + sum of C's own waits in its "
       "interval, scale = min(1, a_v / D). by_rank: the delaying ranks.",
       Combine::kSum, true},
      {"delay_cost_long_term", "s", "", "Delay cost, long-term",
       "The indirect wait states a delay caused further downstream: r_v * d[c] / D on C's call path "
       "c, where r_v is the cost propagated onto wait v by later waits whose causing interval "
       "contains v (r_u += scale_v * a_u + r_v * a_u / D_v, solved backward over all waits).",
       Combine::kSum, true},
      {"delay_late_sender_short_term", "s", "delay_cost_short_term", "  Late Sender",
       "Part of delay_cost_short_term caused through late_sender wait states.", Combine::kSum, true},
      {"delay_late_receiver_short_term", "s", "delay_cost_short_term", "  Late Receiver",
       "Part of delay_cost_short_term caused through late_receiver wait states.", Combine::kSum, true},
      {"delay_barrier_short_term", "s", "delay_cost_short_term", "  Wait at Barrier",
       "Part of delay_cost_short_term caused through wait_barrier (the last rank to arrive).", Combine::kSum,
       true},
      {"delay_nxn_short_term", "s", "delay_cost_short_term", "  Wait at N x N",
       "Part of delay_cost_short_term caused through wait_nxn (the last rank to arrive).", Combine::kSum,
       true},
      {"delay_late_broadcast_short_term", "s", "delay_cost_short_term", "  Late Broadcast",
       "Part of delay_cost_short_term caused through late_broadcast (the root).", Combine::kSum, true},
      {"delay_early_reduce_short_term", "s", "delay_cost_short_term", "  Early Reduce",
       "Part of delay_cost_short_term caused through early_reduce (the last sender).", Combine::kSum, true},
      {"delay_rma_short_term", "s", "delay_cost_short_term", "  One-sided",
       "Part of delay_cost_short_term caused through the one-sided wait states (Late Post, Early "
       "Transfer, Early Wait, Wait at Fence / Window Create / Window Free, Lock Contention, Wait "
       "for Progress; the causer: the latest poster, the last origin to complete, the latest "
       "member, the origin of the latest operation, the previous lock holder, the target).",
       Combine::kSum, true},
      {"delay_late_sender_long_term", "s", "delay_cost_long_term", "  Late Sender",
       "Part of delay_cost_long_term booked through late_sender wait states.", Combine::kSum, true},
      {"delay_late_receiver_long_term", "s", "delay_cost_long_term", "  Late Receiver",
       "Part of delay_cost_long_term booked through late_receiver wait states.", Combine::kSum, true},
      {"delay_barrier_long_term", "s", "delay_cost_long_term", "  Wait at Barrier",
       "Part of delay_cost_long_term booked through wait_barrier.", Combine::kSum, true},
      {"delay_nxn_long_term", "s", "delay_cost_long_term", "  Wait at N x N",
       "Part of delay_cost_long_term booked through wait_nxn.", Combine::kSum, true},
      {"delay_late_broadcast_long_term", "s", "delay_cost_long_term", "  Late Broadcast",
       "Part of delay_cost_long_term booked through late_broadcast.", Combine::kSum, true},
      {"delay_early_reduce_long_term", "s", "delay_cost_long_term", "  Early Reduce",
       "Part of delay_cost_long_term booked through early_reduce.", Combine::kSum, true},
      {"delay_rma_long_term", "s", "delay_cost_long_term", "  One-sided",
       "Part of delay_cost_long_term booked through the one-sided wait states.", Combine::kSum, true},
      {"wait_direct", "s", "", "Direct waiting",
       "Waiting time of the costed families not explained by the causing rank's own waiting: "
       "a_v - wait_indirect. Booked to the waiting rank and call.",
       Combine::kSum, true},
      {"wait_indirect", "s", "", "Indirect waiting",
       "The part of a wait state explained by the causing rank's own waiting in its interval: "
       "scale_v * sum(a_u). Booked to the waiting rank and call.",
       Combine::kSum, true},
      {"wait_propagating", "s", "", "Propagating waiting",
       "The part of a wait state that caused later waits elsewhere: max over the waits v whose "
       "causing interval contains it of scale_v * a_u (Scalasca's rule). Booked to the waiting rank.",
       Combine::kSum, true},
      {"wait_terminal", "s", "", "Terminal waiting",
       "Waiting time of the costed families that caused no later wait: a_u - wait_propagating.",
       Combine::kSum, true},
  };
}

std::vector<engine::ScalarDecl> delay_scalar_decls() {
  return {
      {"delay_analysed_s", "s",
       "The waiting time the delay analysis costed (see *Delay analysis*), all ranks."},
      {"delay_remainder_s", "s",
       "The part of it the cost model left unexplained: `delay_analysed_s` = short-term + "
       "long-term cost + this."},
      {"delay_wait_instances", "count", "Wait instances costed, all ranks."},
      {"delay_bytes", "bytes",
       "Payload the delay analysis exchanged (time vectors to the causers, replies, the "
       "propagation graph to rank 0 as varint deltas, none when no wait receives cost, or the "
       "distributed propagation's records)."},
      {"delay_propagation_batches", "count",
       "Rounds of the backward propagation when gathered on rank 0 (`CRITPATH_DEBUG_DELAY_REPLAY="
       "gathered`): batches of whole phases between global synchronizations, at most 2^22 wait "
       "instances each unless one phase holds more; 0 when distributed."},
      {"delay_largest_batch", "count",
       "Wait instances of the largest gathered batch: rank 0 holds ~60 B per instance of one batch "
       "at a time; 0 when distributed."},
      {"delay_distributed", "0/1",
       "1 when the propagation ran as a distributed backward replay over the ranks (above 64 ranks, "
       "or `CRITPATH_DEBUG_DELAY_REPLAY=distributed`); 0 when gathered on rank 0 (*Delay analysis*)."},
  };
}

}  // namespace critpath::analyzer::passes
