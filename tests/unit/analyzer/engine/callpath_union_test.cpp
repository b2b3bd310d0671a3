// critpath — tests/unit/analyzer/engine/callpath_union_test.cpp: the union of call trees merged
// in any order (engine/callpath_union.h) numbers the call paths as reading the trees rank
// after rank does, with the same kinds, auto-filtered flags and local-to-global maps.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analyzer/engine/callpath_union.h"

using critpath::analyzer::engine::CallpathUnion;
namespace engine = critpath::analyzer::engine;

namespace {

struct TreeNode {
  int32_t parent;
  uint32_t kind_word;
  std::string name;
};

// profile.cpp's serialize_tree bytes of `nodes`.
std::vector<char> tree_bytes(const std::vector<TreeNode>& nodes) {
  std::vector<char> b;
  for (const TreeNode& n : nodes) {
    char tmp[8];
    std::memcpy(tmp, &n.parent, 4);
    std::memcpy(tmp + 4, &n.kind_word, 4);
    b.insert(b.end(), tmp, tmp + 8);
    b.insert(b.end(), n.name.begin(), n.name.end());
    b.push_back('\0');
  }
  return b;
}

// The numbering by reading the trees rank after rank: ids by first (global parent, name),
// a parent index not before its node counting as none.
struct Sequential {
  std::vector<TreeNode> paths;  // kind_word: the first one's kind, OR of the flags
  std::vector<std::vector<int>> maps;
};

Sequential sequential(const std::vector<std::vector<TreeNode>>& ranks) {
  Sequential out;
  std::map<std::pair<int32_t, std::string>, int> ids;
  for (const auto& tree : ranks) {
    std::vector<int> l2g;
    for (const TreeNode& n : tree) {
      const int32_t gp = n.parent < 0 || size_t(n.parent) >= l2g.size() ? -1 : l2g[size_t(n.parent)];
      auto [it, added] = ids.emplace(std::make_pair(gp, n.name), int(out.paths.size()));
      if (added) out.paths.push_back(TreeNode{gp, n.kind_word, n.name});
      out.paths[size_t(it->second)].kind_word |= n.kind_word & 0x100u;
      l2g.push_back(it->second);
    }
    out.maps.push_back(std::move(l2g));
  }
  return out;
}

// A random tree over a few names (repeated names under one parent included: two regions of
// one name), kinds varying by rank, some auto-filtered, now and then a bad parent index.
std::vector<TreeNode> random_tree(std::mt19937& rng, int rank) {
  const char* names[] = {"main", "solve", "MPI_Send", "MPI_Recv", "halo", "io", "MPI_Allreduce"};
  std::vector<TreeNode> t{{-1, 0, "ROOT"}};
  const int n = 1 + int(rng() % 12);
  for (int i = 0; i < n; ++i) {
    TreeNode x;
    x.parent = rng() % 17 == 0 ? int32_t(t.size() + 3) : int32_t(rng() % t.size());
    x.kind_word = uint32_t((rank + i) % 3) | (rng() % 5 == 0 ? 0x100u : 0u);
    x.name = names[rng() % 7];
    t.push_back(x);
  }
  return t;
}

void check_same(const CallpathUnion& u, const Sequential& ref) {
  REQUIRE(u.nodes.size() == ref.paths.size());
  for (size_t g = 0; g < u.nodes.size(); ++g) {
    CHECK(u.nodes[g].parent == ref.paths[g].parent);
    CHECK(u.nodes[g].name == ref.paths[g].name);
    CHECK(u.nodes[g].kind_word == ref.paths[g].kind_word);
  }
}

}  // namespace

TEST_CASE("callpath union: any merge order numbers as rank after rank", "[engine]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int P = 1 + int(rng() % 13);
    std::vector<std::vector<TreeNode>> trees;
    std::vector<CallpathUnion> unions;
    for (int r = 0; r < P; ++r) {
      trees.push_back(random_tree(rng, r));
      unions.push_back(engine::union_of_tree(tree_bytes(trees.back()), r, int32_t(4 + (r * 5) % 3)));
    }
    const Sequential ref = sequential(trees);
    // Binomial order (reduce_union's) and a random one, through the bytes each time.
    for (int order = 0; order < 2; ++order) {
      std::vector<CallpathUnion> pool = unions;
      while (pool.size() > 1) {
        const size_t i = order == 0 ? 0 : rng() % pool.size();
        size_t j = order == 0 ? 1 : rng() % pool.size();
        if (j == i) j = (i + 1) % pool.size();
        std::vector<unsigned char> bytes;
        engine::put_union(pool[j], true, bytes);
        CallpathUnion back;
        REQUIRE(engine::get_union(bytes.data(), bytes.size(), true, back));
        pool[i] = engine::merge_unions(pool[i], back);
        pool.erase(pool.begin() + ptrdiff_t(j));
      }
      std::vector<unsigned char> bytes;
      engine::put_union(pool[0], false, bytes);
      CallpathUnion all;
      REQUIRE(engine::get_union(bytes.data(), bytes.size(), false, all));
      check_same(all, ref);
      CHECK(all.counters == 4);  // the smallest: rank 0's
      for (int r = 0; r < P; ++r)
        CHECK(engine::map_tree(tree_bytes(trees[size_t(r)]), all) == ref.maps[size_t(r)]);
    }
  }
}

TEST_CASE("callpath union: one rank alone on a local Comm", "[engine]") {
  const std::vector<TreeNode> tree{{-1, 0, "ROOT"}, {0, 1, "main"}, {1, 2, "MPI_Send"}, {0, 1, "main"}};
  const engine::Comm one;
  CallpathUnion all;
  REQUIRE(engine::reduce_union(engine::union_of_tree(tree_bytes(tree), 0, 2), one, 1.0, all) ==
          critpath::Status::kOk);
  REQUIRE(all.nodes.size() == 3);
  CHECK(all.counters == 2);
  CHECK(engine::map_tree(tree_bytes(tree), all) == std::vector<int>{0, 1, 2, 1});
}

TEST_CASE("callpath union: malformed bytes are refused", "[engine]") {
  CallpathUnion u = engine::union_of_tree(tree_bytes({{-1, 0, "ROOT"}, {0, 0, "a"}}), 0, 0);
  std::vector<unsigned char> bytes;
  engine::put_union(u, true, bytes);
  CallpathUnion back;
  CHECK_FALSE(engine::get_union(bytes.data(), bytes.size() - 1, true, back));
  CHECK_FALSE(engine::get_union(bytes.data(), bytes.size(), false, back));
  bytes[8 + 16 + 5] = 9;  // the second node's parent: itself or later
  CHECK_FALSE(engine::get_union(bytes.data(), bytes.size(), true, back));
}
