// critpath — analyzer/engine/exchange.h
//
// What ranks tell each other so that every analysis can then run locally, in bulk rather
// than in per-message lockstep (Scalasca's replay sends ~100–150 B and three events per
// message per pass, for up to five passes):
//
//   p2p forward  (sender -> receiver): per message the sender's call enter time     8 B
//   p2p backward (receiver -> sender): per message the receiver's posting-call enter time,
//                relative to the send's, in single precision                     4 B
//   plus, per (peer, comm, tag) group, a 12-byte header (the sparse all-to-all,
//   Comm::exchange: only to the peers a rank sent to; natively one count per rank pair).
//   Messages are named by (group, position) on both sides, so no index travels.
//
// Matching: sends to a destination and receives from a source are grouped by (comm, tag);
// within a group the k-th send (in send order) matches the k-th receive (in posting order).
// Surplus on either side (cancelled, paused, truncated traces) stays unmatched, never hangs.
//
// Collectives: the instances of all communicators with the same ordered member list are
// synchronized together on one analysis communicator (created with MPI_Comm_create_group
// over a duplicate of MPI_COMM_WORLD, in a global order so creation never deadlocks): per
// member set per run one maximum of the instance counts (their minimum negated in it), then one
// vector MAXLOC (the MINLOC of the ends negated in it), one MAX and one scan: 4 rounds.
//
// Point to point: 3 rounds (forward the counts, then the parcels; the replies without a count
// round: their sizes follow from the parcels).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/timeline.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

struct P2pMatch {
  // Per receive (aligned with Timeline::recvs); NaN / UINT32_MAX when unmatched. A message is
  // named on both sides by (group, position): the ordinal of its (comm, tag) group among the
  // groups its sender sent to its receiver (in (comm, tag) order), and its place in the group.
  std::vector<double> send_enter;
  std::vector<uint32_t> send_group, send_pos;
  // Per send (aligned with Timeline::sends): the receive's posting-call entry (NaN when
  // unmatched), and the send's own (group, position) towards its destination.
  std::vector<double> recv_post_enter;
  std::vector<uint32_t> group, pos;
  // To resolve a peer's (group, position): this rank's sends to the peer of group g, in send
  // order; its receives from the peer matching the peer's group g, in posting order. Only
  // the peers this rank sent to (received from) have an entry, ascending by peer: nothing
  // here is sized by the number of ranks.
  struct PeerGroups {
    int32_t peer;
    std::vector<std::vector<uint32_t>> groups;
  };
  std::vector<PeerGroups> sends_to, recvs_from;
  uint64_t unmatched_sends = 0, unmatched_recvs = 0;
  uint64_t bytes_sent = 0;  // analysis payload bytes this rank sent (both directions)

  // The send index / receive index named by `peer`'s (group, position); UINT32_MAX if none.
  uint32_t send_of(int peer, uint32_t g, uint32_t k) const { return lookup(sends_to, peer, g, k); }
  uint32_t recv_of(int peer, uint32_t g, uint32_t k) const { return lookup(recvs_from, peer, g, k); }

 private:
  static uint32_t lookup(const std::vector<PeerGroups>& by_peer, int peer, uint32_t g, uint32_t k);
};

Status exchange_p2p(const Timeline& t, const Comm& world, P2pMatch& out);

struct CollSync {
  bool valid = false;  // every member recorded this instance
  int comm_size = 0;
  int my_comm_rank = -1;
  double latest_begin = 0;              // max over members of begin (enter of the call)
  int latest_rank = -1;                 // world rank of that member
  double earliest_end = 0;              // min over members of end (exit of the completing call)
  double root_begin = 0;                // begin of the root (rooted collectives)
  double root_sent = 0;                 // bytes the root sent
  double latest_sender_begin = -1e300;  // max begin over members that sent bytes
  int latest_sender_rank = -1;
  double prefix_latest = 0;  // scan: max begin over comm ranks 0..me
  bool dense = false;        // every member sent and received data (instances without a root)
};

// Whether a collective instance makes its members wait for each other, decided alike on every
// member (the what-if replay's protocol needs that): a barrier always; any other only when
// some member sent data, and only when the byte totals say from whom. With every count zero
// (MPI_Reduce_scatter with zero recvcounts, an MPI_Allreduce of 0 elements) MPI lets each
// rank leave at once, so the instance implies neither a wait state nor a clock condition (a
// late rank may begin after the others ended on one shared clock). Neither does one whose
// senders the totals cannot name: on an intercommunicator (data comes from the remote group,
// whose times are not exchanged), between neighbours (the topology is not in the trace), nor
// an Alltoallv/w in which some member sent or received nothing (its zero counts may be the
// late member's).
inline bool synchronizes(CollKind kind, CollFlow flow, const CollSync& s) {
  switch (flow) {
    case CollFlow::kRemote:
    case CollFlow::kNeighbor: return false;
    case CollFlow::kPairwise: return s.latest_sender_rank >= 0 && s.dense;
    case CollFlow::kEvery: break;
  }
  return kind == CollKind::kBarrier || s.latest_sender_rank >= 0;
}
inline bool synchronizes(const CollRecord& c, const CollSync& s) { return synchronizes(c.kind, c.flow, s); }

// The time before which this rank's completion of instance `c` cannot have ended, by the
// call's data flow: the begin of the latest member whose data it waited for (a barrier: of
// every member; N x N and N -> 1: of the latest member that sent data, when this rank received
// any, and in an Alltoallv/w only when it received from every other member (else the latest
// sender's block to it may have been empty: CollRecord::some_block_empty); 1 -> N: of the root, when the root sent and this rank received; a scan: of the latest
// among members 0..me). NaN when the instance does not make it wait (synchronizes(), a rank
// that receives nothing, the root of a 1 -> N, a member of an N -> 1 that is not its root).
// The wait-state patterns, the clock-condition check, the controlled logical clock and the
// what-if replay's clock errors all take this one decision.
double coll_ready(const CollRecord& c, const CollSync& s);

struct CollExchangeStats {
  uint64_t member_sets = 0;
  uint64_t inconsistent_comms = 0;  // members disagree on the number of collectives
  uint64_t dropped = 0;             // this rank's instances beyond what every member recorded (left out)
  uint64_t bytes_sent = 0;
};

// The world ranks of communicator `comm`'s members in comm-rank order (empty if unknown);
// `me` resolves MPI_COMM_SELF.
std::vector<int32_t> comm_members(const defs::CommTable& comms, uint32_t comm, int world_size, int me);

// Per collective record of `t` (aligned with Timeline::colls). Collective over `world`.
// `definitions` (the traced rank's) give the members of its communicators.
Status sync_collectives(const Timeline& t, const defs::Definitions& definitions, const Comm& world,
                        std::vector<CollSync>& out, CollExchangeStats& stats);

// The same for the window collectives (Timeline::win_colls: creation, fences, free), over the
// members of each window (definitions.windows). `inconsistent` receives the ids of windows
// whose members recorded different numbers of instances (their instances stay invalid).
Status sync_window_collectives(const Timeline& t, const defs::Definitions& definitions, const Comm& world,
                               std::vector<CollSync>& out, CollExchangeStats& stats,
                               std::vector<uint32_t>& inconsistent);

}  // namespace critpath::analyzer::engine
