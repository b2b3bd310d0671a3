// critpath — tests/unit/wrappers/coll_bytes_test.cpp: the collective byte rules
// (pmpi_wrappers/semantics/coll_bytes.h) with sentinel type sizes, no MPI.
//
// Send type = 4 bytes, receive type = 8 bytes, so every result shows which datatype argument a
// rule used. The TypeSize callback logs its calls: arguments that are not significant at a
// rank must never be looked at (they may be garbage handles in a real program).
#include <catch2/catch.hpp>

#include <vector>

#include "pmpi_wrappers/semantics/coll_bytes.h"

using critpath::pmpi::coll_bytes;
using critpath::pmpi::CollArgs;
using critpath::pmpi::CollBytes;
using critpath::pmpi::CollRule;
using critpath::pmpi::TypeArg;

namespace {

struct Sizer {
  std::vector<TypeArg> calls;
  uint64_t operator()(TypeArg which, int index) {
    calls.push_back(which);
    if (which == TypeArg::kSend) return 4 + 0 * uint64_t(index);
    return 8;
  }
  bool used(TypeArg which) const {
    for (TypeArg t : calls)
      if (t == which) return true;
    return false;
  }
};

// Per-block sizes for the w-variants: send block i is 10 + i bytes, receive block i 100 + i;
// logs the blocks whose datatype was asked for.
struct BlockSizer {
  std::vector<int> seen;
  uint64_t operator()(TypeArg which, int i) {
    seen.push_back(i);
    return which == TypeArg::kSend ? uint64_t(10 + i) : uint64_t(100 + i);
  }
};

CollArgs args(int size, int rank, int root, int64_t sc, int64_t rc, bool in_place = false) {
  CollArgs a;
  a.size = size;
  a.rank = rank;
  a.root = root;
  a.sendcount = sc;
  a.recvcount = rc;
  a.in_place = in_place;
  return a;
}

}  // namespace

TEST_CASE("barrier moves no bytes and reads no datatype", "[semantics]") {
  Sizer s;
  CHECK(coll_bytes(CollRule::kBarrier, args(4, 1, -1, 0, 0), s) == CollBytes{0, 0});
  CHECK(s.calls.empty());
}

TEST_CASE("bcast: root sends the buffer once, others receive it", "[semantics]") {
  Sizer s;
  CHECK(coll_bytes(CollRule::kBcast, args(4, 0, 0, 10, 10), s) == CollBytes{40, 0});
  Sizer s2;
  CHECK(coll_bytes(CollRule::kBcast, args(4, 3, 0, 10, 10), s2) == CollBytes{0, 80});
  CHECK_FALSE(s2.used(TypeArg::kSend));
}

TEST_CASE("gather: the root receives N blocks; recvtype unread on non-roots", "[semantics]") {
  Sizer nonroot;
  CHECK(coll_bytes(CollRule::kGather, args(4, 1, 0, 3, 3), nonroot) == CollBytes{12, 0});
  CHECK_FALSE(nonroot.used(TypeArg::kRecv));
  Sizer root;
  CHECK(coll_bytes(CollRule::kGather, args(4, 0, 0, 3, 3), root) == CollBytes{12, 96});
  Sizer in_place;  // root with MPI_IN_PLACE: sendcount/sendtype are not significant
  CHECK(coll_bytes(CollRule::kGather, args(4, 0, 0, 999, 3, true), in_place) == CollBytes{24, 96});
  CHECK_FALSE(in_place.used(TypeArg::kSend));
}

TEST_CASE("gatherv and scatterv sum the count arrays at the root", "[semantics]") {
  const int counts[3] = {1, 2, 3};
  CollArgs a = args(3, 2, 2, 5, 0);
  a.recvcounts = counts;
  Sizer s;
  CHECK(coll_bytes(CollRule::kGatherv, a, s) == CollBytes{20, 48});
  a.in_place = true;
  Sizer s2;
  CHECK(coll_bytes(CollRule::kGatherv, a, s2) == CollBytes{24, 48});  // own block: counts[2]
  CHECK_FALSE(s2.used(TypeArg::kSend));

  CollArgs b = args(3, 0, 1, 0, 7);
  b.sendcounts = counts;
  Sizer s3;  // non-root of scatterv: only recvcount/recvtype
  CHECK(coll_bytes(CollRule::kScatterv, b, s3) == CollBytes{0, 56});
  CHECK_FALSE(s3.used(TypeArg::kSend));
  b.rank = 1;
  Sizer s4;
  CHECK(coll_bytes(CollRule::kScatterv, b, s4) == CollBytes{24, 56});
  b.in_place = true;
  Sizer s5;  // root in place: receives its own block, described by sendcounts[root]
  CHECK(coll_bytes(CollRule::kScatterv, b, s5) == CollBytes{24, 8});
  CHECK_FALSE(s5.used(TypeArg::kRecv));
}

TEST_CASE("scatter: the root sends N blocks", "[semantics]") {
  Sizer s;
  CHECK(coll_bytes(CollRule::kScatter, args(4, 0, 0, 2, 2), s) == CollBytes{32, 16});
  Sizer s2;
  CHECK(coll_bytes(CollRule::kScatter, args(4, 2, 0, 2, 2), s2) == CollBytes{0, 16});
  CHECK_FALSE(s2.used(TypeArg::kSend));
  Sizer s3;
  CHECK(coll_bytes(CollRule::kScatter, args(4, 0, 0, 2, 999, true), s3) == CollBytes{32, 8});
  CHECK_FALSE(s3.used(TypeArg::kRecv));
}

TEST_CASE("allgather(v) and alltoall(v) per rank", "[semantics]") {
  Sizer s;
  CHECK(coll_bytes(CollRule::kAllgather, args(3, 1, -1, 2, 2), s) == CollBytes{8, 48});
  Sizer s2;
  CHECK(coll_bytes(CollRule::kAllgather, args(3, 1, -1, 0, 2, true), s2) == CollBytes{16, 48});
  const int counts[3] = {4, 0, 1};
  CollArgs a = args(3, 2, -1, 1, 0);
  a.recvcounts = counts;
  Sizer s3;
  CHECK(coll_bytes(CollRule::kAllgatherv, a, s3) == CollBytes{4, 40});
  a.in_place = true;
  Sizer s4;
  CHECK(coll_bytes(CollRule::kAllgatherv, a, s4) == CollBytes{8, 40});
  Sizer s5;
  CHECK(coll_bytes(CollRule::kAlltoall, args(3, 0, -1, 2, 2), s5) == CollBytes{24, 48});
  Sizer s6;
  CHECK(coll_bytes(CollRule::kAlltoall, args(3, 0, -1, 0, 2, true), s6) == CollBytes{48, 48});
  CollArgs v = args(3, 0, -1, 0, 0);
  const int sc[3] = {1, 1, 1};
  v.sendcounts = sc;
  v.recvcounts = counts;
  Sizer s7;
  CHECK(coll_bytes(CollRule::kAlltoallv, v, s7) == CollBytes{12, 40});
}

TEST_CASE("alltoallw sizes every block by its own datatype", "[semantics]") {
  const int sc[2] = {1, 2};
  const int rc[2] = {3, 0};
  CollArgs a = args(2, 0, -1, 0, 0);
  a.sendcounts = sc;
  a.recvcounts = rc;
  BlockSizer sizer;
  // sent = 1*10 + 2*11, received = 3*100 (block 1 has count 0: its type is not read)
  CHECK(coll_bytes(CollRule::kAlltoallw, a, sizer) == CollBytes{32, 300});
  CHECK(sizer.seen == std::vector<int>{0, 0, 1});
}

TEST_CASE("an alltoallv/w names whether some other member's block to this rank is empty", "[semantics]") {
  using critpath::pmpi::some_block_empty;
  const int full[3] = {1, 2, 3}, own_zero[3] = {1, 0, 3}, other_zero[3] = {0, 2, 3};
  CollArgs a = args(3, 1, -1, 0, 0);
  a.recvcounts = full;
  BlockSizer sizer;
  CHECK_FALSE(some_block_empty(CollRule::kAlltoallw, a, sizer));
  a.recvcounts = own_zero;  // its own block does not count
  CHECK_FALSE(some_block_empty(CollRule::kAlltoallv, a, sizer));
  a.recvcounts = other_zero;
  BlockSizer unread;
  CHECK(some_block_empty(CollRule::kAlltoallw, a, unread));
  CHECK(unread.seen.empty());  // a zero count's type is not read
  // A zero-size receive type empties the block too.
  a.recvcounts = full;
  CHECK(some_block_empty(CollRule::kAlltoallw, a, [](TypeArg, int i) -> uint64_t { return i == 2 ? 0 : 4; }));
  // Other rules, and intercommunicators (blocks cross between the groups), never.
  a.recvcounts = other_zero;
  CHECK_FALSE(some_block_empty(CollRule::kNeighborAlltoallv, a, sizer));
  a.remote_size = 3;
  CHECK_FALSE(some_block_empty(CollRule::kAlltoallv, a, sizer));
}

TEST_CASE("reductions", "[semantics]") {
  Sizer s;
  CHECK(coll_bytes(CollRule::kReduce, args(4, 1, 0, 5, 5), s) == CollBytes{20, 0});
  CHECK_FALSE(s.used(TypeArg::kRecv));
  Sizer s2;
  CHECK(coll_bytes(CollRule::kReduce, args(4, 0, 0, 5, 5, true), s2) == CollBytes{20, 40});
  Sizer s3;
  CHECK(coll_bytes(CollRule::kAllreduce, args(4, 2, -1, 5, 5, true), s3) == CollBytes{20, 40});
  Sizer s4;
  CHECK(coll_bytes(CollRule::kScan, args(4, 0, -1, 5, 5), s4) == CollBytes{20, 40});
  Sizer s5;
  CHECK(coll_bytes(CollRule::kExscan, args(4, 0, -1, 5, 5), s5) == CollBytes{20, 0});
  CHECK_FALSE(s5.used(TypeArg::kRecv));
  Sizer s6;
  CHECK(coll_bytes(CollRule::kExscan, args(4, 1, -1, 5, 5), s6) == CollBytes{20, 40});
  const int counts[4] = {1, 2, 3, 4};
  CollArgs a = args(4, 2, -1, 0, 0);
  a.recvcounts = counts;
  Sizer s7;
  CHECK(coll_bytes(CollRule::kReduceScatter, a, s7) == CollBytes{40, 24});
  Sizer s8;
  CHECK(coll_bytes(CollRule::kReduceScatterBlock, args(4, 2, -1, 0, 3), s8) == CollBytes{48, 24});
}

TEST_CASE("zero and negative counts never query a datatype", "[semantics]") {
  Sizer s;
  CHECK(coll_bytes(CollRule::kAllreduce, args(4, 0, -1, 0, 0), s) == CollBytes{0, 0});
  CHECK(coll_bytes(CollRule::kGather, args(4, 0, 0, -3, 0), s) == CollBytes{0, 0});
  CHECK(s.calls.empty());
}

TEST_CASE("neighbourhood collective bytes use the degrees", "[semantics]") {
  using namespace critpath::pmpi;
  auto sz = [](TypeArg which, int) -> uint64_t { return which == TypeArg::kSend ? 4 : 8; };
  CollArgs a;
  a.size = 5;
  a.rank = 2;
  a.indegree = 3;
  a.outdegree = 2;
  a.sendcount = 10;
  a.recvcount = 7;
  CHECK(coll_bytes(CollRule::kNeighborAllgather, a, sz) == CollBytes{40, 3 * 7 * 8});
  CHECK(coll_bytes(CollRule::kNeighborAlltoall, a, sz) == CollBytes{2 * 40, 3 * 7 * 8});
  const int sc[2] = {1, 2}, rc[3] = {3, 4, 5};
  a.sendcounts = sc;
  a.recvcounts = rc;
  CHECK(coll_bytes(CollRule::kNeighborAllgatherv, a, sz) == CollBytes{40, 12 * 8});
  CHECK(coll_bytes(CollRule::kNeighborAlltoallv, a, sz) == CollBytes{3 * 4, 12 * 8});
  auto per = [](TypeArg which, int i) -> uint64_t { return which == TypeArg::kSend ? 1u + i : 10; };
  CHECK(coll_bytes(CollRule::kNeighborAlltoallw, a, per) == CollBytes{1 * 1 + 2 * 2, 12 * 10});
  a.indegree = a.outdegree = 0;  // no neighbours: nothing moves
  CHECK(coll_bytes(CollRule::kNeighborAlltoallv, a, per) == CollBytes{0, 0});
  CHECK(coll_bytes(CollRule::kNone, a, sz) == CollBytes{0, 0});
}

// Intercommunicators: 3 local ranks, 2 remote ones. The count and type arrays hold remote-group
// entries only, so reading a third entry would read past them (it may be garbage).
TEST_CASE("intercommunicator blocks run over the remote group", "[semantics]") {
  using namespace critpath::pmpi;
  CollArgs a = args(3, 2, -1, 2, 3);
  a.remote_size = 2;
  Sizer s;
  CHECK(coll_bytes(CollRule::kAllgather, a, s) == CollBytes{8, 2 * 3 * 8});
  Sizer s2;
  CHECK(coll_bytes(CollRule::kAlltoall, a, s2) == CollBytes{2 * 2 * 4, 2 * 3 * 8});
  a.in_place = true;  // not allowed on an intercommunicator: ignored
  Sizer s3;
  CHECK(coll_bytes(CollRule::kAlltoall, a, s3) == CollBytes{2 * 2 * 4, 2 * 3 * 8});
  a.in_place = false;

  const int sc[2] = {1, 2}, rc[2] = {3, 0};
  a.sendcounts = sc;
  a.recvcounts = rc;
  Sizer s4;
  CHECK(coll_bytes(CollRule::kAlltoallv, a, s4) == CollBytes{3 * 4, 3 * 8});
  Sizer s5;
  CHECK(coll_bytes(CollRule::kAllgatherv, a, s5) == CollBytes{2 * 4, 3 * 8});
  BlockSizer sizer;
  // sent 1*10 + 2*11, received 3*100; entry 1 of recvtypes has count 0 and is not read
  CHECK(coll_bytes(CollRule::kAlltoallw, a, sizer) == CollBytes{32, 300});
  CHECK(sizer.seen == std::vector<int>{0, 0, 1});
}

TEST_CASE("intercommunicator rooted collectives: root, other group, bystanders", "[semantics]") {
  using namespace critpath::pmpi;
  const int counts[2] = {4, 5};
  // The root (MPI_ROOT) receives the remote group's blocks and supplies nothing.
  CollArgs root = args(3, 1, kRootHere, 99, 2);
  root.remote_size = 2;
  root.recvcounts = counts;
  Sizer g;
  CHECK(coll_bytes(CollRule::kGather, root, g) == CollBytes{0, 2 * 2 * 8});
  CHECK_FALSE(g.used(TypeArg::kSend));
  Sizer gv;
  CHECK(coll_bytes(CollRule::kGatherv, root, gv) == CollBytes{0, 9 * 8});
  CHECK_FALSE(gv.used(TypeArg::kSend));
  Sizer r;
  CHECK(coll_bytes(CollRule::kReduce, root, r) == CollBytes{0, 2 * 8});
  CHECK_FALSE(r.used(TypeArg::kSend));
  // ... or sends them and obtains nothing.
  root.sendcount = 3;
  root.sendcounts = counts;
  root.recvcounts = nullptr;
  Sizer sc;
  CHECK(coll_bytes(CollRule::kScatter, root, sc) == CollBytes{2 * 3 * 4, 0});
  CHECK_FALSE(sc.used(TypeArg::kRecv));
  Sizer scv;
  CHECK(coll_bytes(CollRule::kScatterv, root, scv) == CollBytes{9 * 4, 0});
  CHECK_FALSE(scv.used(TypeArg::kRecv));
  Sizer bc;
  CHECK(coll_bytes(CollRule::kBcast, root, bc) == CollBytes{3 * 4, 0});

  // A rank of the other group: root = the root's rank in the remote group, even when it
  // equals this rank's own number.
  CollArgs member = args(2, 1, 1, 6, 7);
  member.remote_size = 3;
  Sizer m1;
  CHECK(coll_bytes(CollRule::kGather, member, m1) == CollBytes{6 * 4, 0});
  CHECK_FALSE(m1.used(TypeArg::kRecv));
  Sizer m2;
  CHECK(coll_bytes(CollRule::kScatterv, member, m2) == CollBytes{0, 7 * 8});
  CHECK_FALSE(m2.used(TypeArg::kSend));
  Sizer m3;
  CHECK(coll_bytes(CollRule::kBcast, member, m3) == CollBytes{0, 7 * 8});
  Sizer m4;
  CHECK(coll_bytes(CollRule::kReduce, member, m4) == CollBytes{6 * 4, 0});

  // The rest of the root's group (MPI_PROC_NULL): nothing, nothing read.
  CollArgs bystander = args(3, 0, kRootNone, 6, 7);
  bystander.remote_size = 2;
  Sizer none;
  for (CollRule rule : {CollRule::kBcast, CollRule::kGather, CollRule::kGatherv, CollRule::kScatter,
                        CollRule::kScatterv, CollRule::kReduce})
    CHECK(coll_bytes(rule, bystander, none) == CollBytes{0, 0});
  CHECK(none.calls.empty());
}

TEST_CASE("intercommunicator reductions count the local group", "[semantics]") {
  using namespace critpath::pmpi;
  const int counts[3] = {1, 2, 3};
  CollArgs a = args(3, 1, -1, 6, 6);
  a.remote_size = 2;
  a.recvcounts = counts;
  Sizer s;
  CHECK(coll_bytes(CollRule::kReduceScatter, a, s) == CollBytes{6 * 4, 2 * 8});
  a.recvcount = 2;
  Sizer s2;
  CHECK(coll_bytes(CollRule::kReduceScatterBlock, a, s2) == CollBytes{3 * 2 * 4, 2 * 8});
  Sizer s3;
  CHECK(coll_bytes(CollRule::kAllreduce, a, s3) == CollBytes{6 * 4, 2 * 8});
}
