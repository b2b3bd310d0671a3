// critpath — analyzer/engine/callpath_union.h: the union of the ranks' call trees, merged up a
// binomial tree of the ranks (profile.cpp's unify_profile).
//
// A call path is the sequence of region names from the root. Its global id is its rank in the
// order of its first occurrence when the ranks' trees are read rank after rank, each in its
// local node order: the order of the smallest (rank, local index) of the nodes that reach it.
// A union keeps that smallest pair per call path and its nodes sorted by it, so merging two
// unions (in either order, of any ranks) gives the same union, and the union of all ranks
// lists the call paths in global id order. A parent's pair is smaller than its children's
// (a rank's tree lists a parent before its children), so a parent precedes its children.
//
// Each round of the merge sends a union bounded by the distinct call paths, not by the
// ranks: ceil(log2 P) rounds of point-to-point messages up the tree (counted in the
// communicator's traffic rounds), then the union is broadcast and every rank maps its local
// nodes onto it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/engine/comm.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

struct CallpathUnion {
  struct Node {
    int32_t parent = -1;     // an earlier node, or -1 (a root)
    uint32_t kind_word = 0;  // region kind (low byte) of the first occurrence; bit 8: auto-filtered
                             // on some rank
    uint64_t first = 0;      // (rank << 32) | local index of the first occurrence
    std::string name;
  };
  std::vector<Node> nodes;  // by `first`, ascending
  int32_t counters = 0;     // the smallest number of hardware counters over the ranks merged
};

// One rank's tree as a union. `tree`: per node [parent u32][kind word u32][name\0] in local
// order (profile.cpp's serialize_tree); a parent index not before its node counts as none.
// Nodes reaching the same call path are one.
CallpathUnion union_of_tree(const std::vector<char>& tree, int rank, int32_t counters);

// The union of `a` and `b`.
CallpathUnion merge_unions(const CallpathUnion& a, const CallpathUnion& b);

// The union as bytes and back (`with_first`: the first-occurrence pairs too; the broadcast
// leaves them out). get_union returns false on malformed bytes.
void put_union(const CallpathUnion& u, bool with_first, std::vector<unsigned char>& out);
bool get_union(const unsigned char* p, size_t n, bool with_first, CallpathUnion& out);

// The global id of every node of `tree` (serialize_tree's bytes) in `all`, -1 for a node it
// lacks (none when `all` holds this rank's tree).
std::vector<int> map_tree(const std::vector<char>& tree, const CallpathUnion& all);

// Collective over `comm`: the union of every rank's `mine` on every rank, in `all`. The
// merge goes up a binomial tree to rank 0 (post and receive, each wait up to `timeout_s`),
// the union comes back by two broadcasts; `all.nodes[i].first` is left zero.
Status reduce_union(const CallpathUnion& mine, const Comm& comm, double timeout_s, CallpathUnion& all);

}  // namespace critpath::analyzer::engine
