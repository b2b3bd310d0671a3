// critpath — pmpi_wrappers/semantics/coll_bytes.h
//
// Bytes sent and received by THIS rank in a blocking collective: the two byte fields of
// COLL_END. The convention (docs/mpi-coverage.md, "Collective bytes") is per rank and
// buffer-based:
//
//   sent     = size of the data this rank supplies (its send buffer, where significant)
//   received = size of the data this rank obtains (its receive buffer, where significant)
//
// Each buffer counts once, as described by the rank's own arguments: a broadcast root sends
// count x size (not x N-1), a gather root receives N x recvcount x size (its own block
// included). MPI_IN_PLACE does not change the numbers: the in-place block is counted as if
// it had been passed separately, with the sizes taken from the arguments that describe it.
// Arguments the standard declares not significant at a rank are never read (they may be
// garbage, e.g. recvtype on a non-root of MPI_Gather), so `type_size` is only called for
// significant datatypes with a positive count.
//
// Intercommunicators (CollArgs::remote_size > 0). Data moves between the two groups only,
// so the count and type arrays have one entry per *remote* rank and a rank receives (or, for
// the all-to-all shapes, sends) one block per remote rank:
//   Allgather(v), Alltoall(v,w)        blocks and arrays over the remote group
//   Gather(v), Scatter(v), Bcast,      the root (MPI_ROOT, kRootHere below) only receives
//   Reduce                             (gathers, Reduce) or only sends (Scatter(v), Bcast),
//                                      over the remote group; the other group's ranks (any
//                                      root >= 0) only send or receive their own block; the
//                                      rest of the root's group (MPI_PROC_NULL, kRootNone)
//                                      moves nothing and reads nothing
//   Allreduce, Reduce_scatter(_block)  as on an intracommunicator: the counts describe the
//                                      local group (the standard requires equal totals)
// MPI_IN_PLACE is not allowed on intercommunicators and is ignored there.
//
// Pure C++: the caller provides the communicator size/rank and a type-size callback, so the
// rules are unit-tested with sentinel sizes (tests/unit/wrappers/).
#pragma once

#include <cstdint>

namespace critpath::pmpi {

// One rule per blocking collective shape; the spec's `bytes = "kGather"` names it.
enum class CollRule : uint8_t {
  kBarrier,
  kBcast,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kReduce,
  kAllreduce,
  kReduceScatter,
  kReduceScatterBlock,
  kScan,
  kExscan,
  // Neighbourhood collectives (MPI_Neighbor_*): counts per neighbour; `indegree` sources
  // fill the receive buffer, `outdegree` destinations are sent to. Sent counts the send
  // buffer once for allgather shapes, once per destination block for alltoall shapes.
  kNeighborAllgather,
  kNeighborAllgatherv,
  kNeighborAlltoall,
  kNeighborAlltoallv,
  kNeighborAlltoallw,
  kNone,  // no data (constructors, MPI_Ibarrier-like posts)
};
const char* to_string(CollRule r);

// Which datatype argument a byte count refers to (index: position in the sendtypes /
// recvtypes arrays of the w-variants, 0 otherwise).
enum class TypeArg : uint8_t { kSend, kRecv };

// CollArgs::root of a rooted collective on an intercommunicator, besides the root's rank in
// the remote group: this rank is the root (it passed MPI_ROOT), or it is in the root's group
// but not the root (MPI_PROC_NULL). The caller translates; MPI's own constants differ
// between libraries.
constexpr int kRootHere = -2;
constexpr int kRootNone = -3;

struct CollArgs {
  int size = 1;           // ranks in the communicator (its local group, if an intercommunicator)
  int remote_size = 0;    // intercommunicators: ranks in the remote group; 0 otherwise
  int rank = 0;           // this rank in it
  int root = -1;          // rooted collectives: the root (or kRootHere / kRootNone); -1 otherwise
  bool in_place = false;  // MPI_IN_PLACE was passed (sendbuf, or recvbuf for Scatter(v))
  int64_t sendcount = 0;
  int64_t recvcount = 0;
  const int* sendcounts = nullptr;  // v/w variants: `size` entries (`remote_size`, see above)
  const int* recvcounts = nullptr;
  int indegree = 0;  // neighbourhood collectives: sources / destinations of this rank
  int outdegree = 0;
};

struct CollBytes {
  uint64_t sent = 0;
  uint64_t received = 0;
  friend bool operator==(const CollBytes&, const CollBytes&) = default;
};

// TypeSize: callable uint64_t(TypeArg which, int index) returning the datatype's size in
// bytes (0 when unknown). Called only for significant arguments with a positive count.
template <class TypeSize>
CollBytes coll_bytes(CollRule rule, const CollArgs& a, TypeSize&& type_size) {
  if (a.root == kRootNone) return {};
  const bool inter = a.remote_size > 0;
  const bool is_root = inter ? a.root == kRootHere : a.rank == a.root;
  const bool in_place = a.in_place && !inter;
  const int n = a.size > 0 ? a.size : 0;
  // The ranks this rank exchanges blocks with: its own group, or the remote one.
  const int peers = inter ? a.remote_size : n;
  auto times = [&](int64_t count, TypeArg which, int index = 0) -> uint64_t {
    return count > 0 ? uint64_t(count) * type_size(which, index) : 0;
  };
  // Sum of the first k entries (negative ones count as 0).
  auto sum = [&](const int* counts, int k) -> int64_t {
    int64_t s = 0;
    if (counts)
      for (int i = 0; i < k; ++i) s += counts[i] > 0 ? counts[i] : 0;
    return s;
  };
  auto at = [&](const int* counts, int i, int k) -> int64_t {
    return (counts && i >= 0 && i < k) ? counts[i] : 0;
  };
  const int in = a.indegree > 0 ? a.indegree : 0;
  const int out = a.outdegree > 0 ? a.outdegree : 0;
  CollBytes b;
  switch (rule) {
    case CollRule::kBarrier: break;
    case CollRule::kBcast:  // the buffer is described by the send/recv count and type
      if (is_root) b.sent = times(a.sendcount, TypeArg::kSend);
      else b.received = times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kGather:
      if (!(inter && is_root))  // an intercommunicator's root supplies nothing
        b.sent = (in_place && is_root) ? times(a.recvcount, TypeArg::kRecv)
                                       : times(a.sendcount, TypeArg::kSend);
      if (is_root) b.received = times(int64_t(peers) * a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kGatherv:
      if (!(inter && is_root))
        b.sent = (in_place && is_root) ? times(at(a.recvcounts, a.rank, n), TypeArg::kRecv)
                                       : times(a.sendcount, TypeArg::kSend);
      if (is_root) b.received = times(sum(a.recvcounts, peers), TypeArg::kRecv);
      break;
    case CollRule::kScatter:
      if (is_root) b.sent = times(int64_t(peers) * a.sendcount, TypeArg::kSend);
      if (!(inter && is_root))  // an intercommunicator's root obtains nothing
        b.received = (in_place && is_root) ? times(a.sendcount, TypeArg::kSend)
                                           : times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kScatterv:
      if (is_root) b.sent = times(sum(a.sendcounts, peers), TypeArg::kSend);
      if (!(inter && is_root))
        b.received = (in_place && is_root) ? times(at(a.sendcounts, a.rank, n), TypeArg::kSend)
                                           : times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kAllgather:
      b.sent = in_place ? times(a.recvcount, TypeArg::kRecv) : times(a.sendcount, TypeArg::kSend);
      b.received = times(int64_t(peers) * a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kAllgatherv:
      b.sent = in_place ? times(at(a.recvcounts, a.rank, n), TypeArg::kRecv)
                        : times(a.sendcount, TypeArg::kSend);
      b.received = times(sum(a.recvcounts, peers), TypeArg::kRecv);
      break;
    case CollRule::kAlltoall:
      b.received = times(int64_t(peers) * a.recvcount, TypeArg::kRecv);
      b.sent = in_place ? b.received : times(int64_t(peers) * a.sendcount, TypeArg::kSend);
      break;
    case CollRule::kAlltoallv:
      b.received = times(sum(a.recvcounts, peers), TypeArg::kRecv);
      b.sent = in_place ? b.received : times(sum(a.sendcounts, peers), TypeArg::kSend);
      break;
    case CollRule::kAlltoallw:
      for (int i = 0; i < peers; ++i) b.received += times(at(a.recvcounts, i, peers), TypeArg::kRecv, i);
      if (in_place) {
        b.sent = b.received;
      } else {
        for (int i = 0; i < peers; ++i) b.sent += times(at(a.sendcounts, i, peers), TypeArg::kSend, i);
      }
      break;
    case CollRule::kReduce:
      if (!(inter && is_root)) b.sent = times(a.sendcount, TypeArg::kSend);
      if (is_root) b.received = times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kAllreduce:
    case CollRule::kScan:
      b.sent = times(a.sendcount, TypeArg::kSend);
      b.received = times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kExscan:  // rank 0's receive buffer is not significant
      b.sent = times(a.sendcount, TypeArg::kSend);
      if (a.rank != 0) b.received = times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kReduceScatter:  // recvcounts: one entry per rank of the local group
      b.sent = times(sum(a.recvcounts, n), TypeArg::kSend);
      b.received = times(at(a.recvcounts, a.rank, n), TypeArg::kRecv);
      break;
    case CollRule::kReduceScatterBlock:
      b.sent = times(int64_t(n) * a.recvcount, TypeArg::kSend);
      b.received = times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kNeighborAllgather:
      b.sent = times(a.sendcount, TypeArg::kSend);
      b.received = times(int64_t(in) * a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kNeighborAllgatherv:
      b.sent = times(a.sendcount, TypeArg::kSend);
      b.received = times(sum(a.recvcounts, in), TypeArg::kRecv);
      break;
    case CollRule::kNeighborAlltoall:
      b.sent = times(int64_t(out) * a.sendcount, TypeArg::kSend);
      b.received = times(int64_t(in) * a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kNeighborAlltoallv:
      b.sent = times(sum(a.sendcounts, out), TypeArg::kSend);
      b.received = times(sum(a.recvcounts, in), TypeArg::kRecv);
      break;
    case CollRule::kNeighborAlltoallw:
      for (int i = 0; i < out; ++i) b.sent += times(at(a.sendcounts, i, out), TypeArg::kSend, i);
      for (int i = 0; i < in; ++i) b.received += times(at(a.recvcounts, i, in), TypeArg::kRecv, i);
      break;
    case CollRule::kNone: break;
  }
  return b;
}

// Whether an MPI_Alltoallv / MPI_Alltoallw (rule kAlltoallv / kAlltoallw) on an
// intracommunicator leaves some other member's block to this rank empty: its receive count
// (or, for the w form, its receive type's size) is zero. MPI requires the pair's send and
// receive signatures to agree, so the receive side alone names every pair without data.
// False for every other rule and on intercommunicators (whose data crosses between the groups).
template <class TypeSize>
bool some_block_empty(CollRule rule, const CollArgs& a, TypeSize&& type_size) {
  if ((rule != CollRule::kAlltoallv && rule != CollRule::kAlltoallw) || a.remote_size > 0 || !a.recvcounts)
    return false;
  for (int i = 0; i < a.size; ++i) {
    if (i == a.rank) continue;
    const int index = rule == CollRule::kAlltoallw ? i : 0;
    if (a.recvcounts[i] <= 0 || type_size(TypeArg::kRecv, index) == 0) return true;
  }
  return false;
}

}  // namespace critpath::pmpi
