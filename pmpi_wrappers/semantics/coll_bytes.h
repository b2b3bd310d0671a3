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

struct CollArgs {
  int size = 1;        // ranks in the communicator
  int rank = 0;        // this rank in it
  int root = -1;       // rooted collectives: the root; -1 otherwise
  bool in_place = false;  // MPI_IN_PLACE was passed (sendbuf, or recvbuf for Scatter(v))
  int64_t sendcount = 0;
  int64_t recvcount = 0;
  const int* sendcounts = nullptr;  // v/w variants, `size` entries
  const int* recvcounts = nullptr;
  int indegree = 0;   // neighbourhood collectives: sources / destinations of this rank
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
  const bool is_root = a.rank == a.root;
  const int n = a.size > 0 ? a.size : 0;
  auto times = [&](int64_t count, TypeArg which, int index = 0) -> uint64_t {
    return count > 0 ? uint64_t(count) * type_size(which, index) : 0;
  };
  auto sum = [&](const int* counts) -> int64_t {
    int64_t s = 0;
    if (counts)
      for (int i = 0; i < n; ++i) s += counts[i] > 0 ? counts[i] : 0;
    return s;
  };
  auto at = [&](const int* counts, int i) -> int64_t {
    return (counts && i >= 0 && i < n) ? counts[i] : 0;
  };
  const int in = a.indegree > 0 ? a.indegree : 0;
  const int out = a.outdegree > 0 ? a.outdegree : 0;
  auto sum_n = [&](const int* counts, int k) -> int64_t {
    int64_t s = 0;
    if (counts)
      for (int i = 0; i < k; ++i) s += counts[i] > 0 ? counts[i] : 0;
    return s;
  };
  CollBytes b;
  switch (rule) {
    case CollRule::kBarrier:
      break;
    case CollRule::kBcast:  // the buffer is described by the send/recv count and type
      if (is_root) b.sent = times(a.sendcount, TypeArg::kSend);
      else b.received = times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kGather:
      b.sent = (a.in_place && is_root) ? times(a.recvcount, TypeArg::kRecv)
                                       : times(a.sendcount, TypeArg::kSend);
      if (is_root) b.received = times(int64_t(n) * a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kGatherv:
      b.sent = (a.in_place && is_root) ? times(at(a.recvcounts, a.rank), TypeArg::kRecv)
                                       : times(a.sendcount, TypeArg::kSend);
      if (is_root) b.received = times(sum(a.recvcounts), TypeArg::kRecv);
      break;
    case CollRule::kScatter:
      if (is_root) b.sent = times(int64_t(n) * a.sendcount, TypeArg::kSend);
      b.received = (a.in_place && is_root) ? times(a.sendcount, TypeArg::kSend)
                                           : times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kScatterv:
      if (is_root) b.sent = times(sum(a.sendcounts), TypeArg::kSend);
      b.received = (a.in_place && is_root) ? times(at(a.sendcounts, a.rank), TypeArg::kSend)
                                           : times(a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kAllgather:
      b.sent = a.in_place ? times(a.recvcount, TypeArg::kRecv)
                          : times(a.sendcount, TypeArg::kSend);
      b.received = times(int64_t(n) * a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kAllgatherv:
      b.sent = a.in_place ? times(at(a.recvcounts, a.rank), TypeArg::kRecv)
                          : times(a.sendcount, TypeArg::kSend);
      b.received = times(sum(a.recvcounts), TypeArg::kRecv);
      break;
    case CollRule::kAlltoall:
      b.received = times(int64_t(n) * a.recvcount, TypeArg::kRecv);
      b.sent = a.in_place ? b.received : times(int64_t(n) * a.sendcount, TypeArg::kSend);
      break;
    case CollRule::kAlltoallv:
      b.received = times(sum(a.recvcounts), TypeArg::kRecv);
      b.sent = a.in_place ? b.received : times(sum(a.sendcounts), TypeArg::kSend);
      break;
    case CollRule::kAlltoallw:
      for (int i = 0; i < n; ++i) b.received += times(at(a.recvcounts, i), TypeArg::kRecv, i);
      if (a.in_place) {
        b.sent = b.received;
      } else {
        for (int i = 0; i < n; ++i) b.sent += times(at(a.sendcounts, i), TypeArg::kSend, i);
      }
      break;
    case CollRule::kReduce:
      b.sent = times(a.sendcount, TypeArg::kSend);
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
    case CollRule::kReduceScatter:
      b.sent = times(sum(a.recvcounts), TypeArg::kSend);
      b.received = times(at(a.recvcounts, a.rank), TypeArg::kRecv);
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
      b.received = times(sum_n(a.recvcounts, in), TypeArg::kRecv);
      break;
    case CollRule::kNeighborAlltoall:
      b.sent = times(int64_t(out) * a.sendcount, TypeArg::kSend);
      b.received = times(int64_t(in) * a.recvcount, TypeArg::kRecv);
      break;
    case CollRule::kNeighborAlltoallv:
      b.sent = times(sum_n(a.sendcounts, out), TypeArg::kSend);
      b.received = times(sum_n(a.recvcounts, in), TypeArg::kRecv);
      break;
    case CollRule::kNeighborAlltoallw:
      for (int i = 0; i < out && a.sendcounts; ++i)
        b.sent += times(a.sendcounts[i], TypeArg::kSend, i);
      for (int i = 0; i < in && a.recvcounts; ++i)
        b.received += times(a.recvcounts[i], TypeArg::kRecv, i);
      break;
    case CollRule::kNone:
      break;
  }
  return b;
}

}  // namespace critpath::pmpi
