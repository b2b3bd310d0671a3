// critpath — analyzer/engine/exchange.h
//
// What ranks tell each other so that every analysis can then run locally, in bulk rather
// than in per-message lockstep (Scalasca's replay sends ~100–150 B and three events per
// message per pass, for up to five passes):
//
//   p2p forward  (sender -> receiver): per message the sender's call enter time and the
//                send's index on the sender                                    12 B
//   p2p backward (receiver -> sender): per message the receiver's posting-call enter time
//                and the receive's index on the receiver                       12 B
//   plus, per (peer, comm, tag) group, a 12-byte header, and one count per rank pair.
//
// Matching: sends to a destination and receives from a source are grouped by (comm, tag);
// within a group the k-th send (in send order) matches the k-th receive (in posting order).
// Surplus on either side (cancelled, paused, truncated traces) stays unmatched, never hangs.
//
// Collectives: the instances of all communicators with the same ordered member list are
// synchronized together on one analysis communicator (created with MPI_Comm_create_group
// over a duplicate of MPI_COMM_WORLD, in a global order so creation never deadlocks): one
// vector MAXLOC/MINLOC/MAX reduction and one scan per member set per run.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/timeline.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

struct P2pMatch {
  // Per receive (aligned with Timeline::recvs); NaN / UINT32_MAX when unmatched.
  std::vector<double> send_enter;
  std::vector<uint32_t> send_index;
  // Per send (aligned with Timeline::sends).
  std::vector<double> recv_post_enter;
  std::vector<uint32_t> recv_index;
  uint64_t unmatched_sends = 0, unmatched_recvs = 0;
  uint64_t bytes_sent = 0;  // analysis payload bytes this rank sent (both directions)
};

Status exchange_p2p(const Timeline& t, const Comm& world, P2pMatch& out);

struct CollSync {
  bool valid = false;        // every member recorded this instance
  int comm_size = 0;
  int my_comm_rank = -1;
  double latest_begin = 0;   // max over members of begin (enter of the call)
  int latest_rank = -1;      // world rank of that member
  double earliest_end = 0;   // min over members of end (exit of the completing call)
  double root_begin = 0;     // begin of the root (rooted collectives)
  double root_sent = 0;      // bytes the root sent
  double latest_sender_begin = -1e300;  // max begin over members that sent bytes
  int latest_sender_rank = -1;
  double prefix_latest = 0;  // scan: max begin over comm ranks 0..me
};

struct CollExchangeStats {
  uint64_t member_sets = 0;
  uint64_t inconsistent_comms = 0;  // members disagree on the number of collectives
  uint64_t bytes_sent = 0;
};

// Per collective record of `t` (aligned with Timeline::colls). Collective over `world`.
// `definitions` (the traced rank's) give the members of its communicators.
Status sync_collectives(const Timeline& t, const defs::Definitions& definitions, const Comm& world,
                        std::vector<CollSync>& out, CollExchangeStats& stats);

}  // namespace critpath::analyzer::engine
