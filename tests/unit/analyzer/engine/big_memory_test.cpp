// critpath — tests/unit/analyzer/engine/big_memory_test.cpp: engine::prefer_huge_pages and
// reserve_big never fail and never change what a vector holds: small, empty, unaligned and
// big ranges, and a big vector filled after the advice.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "analyzer/engine/big_memory.h"

using namespace critpath::analyzer;

TEST_CASE("big_memory: prefer_huge_pages accepts any range", "[engine][big_memory]") {
  engine::prefer_huge_pages(nullptr, 0);
  engine::prefer_huge_pages(nullptr, size_t(64) << 20);
  std::vector<char> small(100, 'x');
  engine::prefer_huge_pages(small.data(), small.size());
  engine::prefer_huge_pages(small.data() + 1, small.size() - 1);
  CHECK(small[0] == 'x');
  CHECK(small[99] == 'x');
}

TEST_CASE("big_memory: reserve_big reserves, and the storage holds what is written", "[engine][big_memory]") {
  std::vector<uint64_t> v;
  const size_t n = (size_t(9) << 20) / sizeof(uint64_t) + 3;  // 9 MiB and a bit: unaligned end
  engine::reserve_big(v, n);
  CHECK(v.capacity() >= n);
  CHECK(v.empty());
  const uint64_t* data = v.data();
  for (size_t i = 0; i < n; ++i) v.push_back(i * 3);
  CHECK(v.data() == data);  // no regrowth
  bool same = true;
  for (size_t i = 0; i < n; ++i) same &= v[i] == i * 3;
  CHECK(same);

  std::vector<int> w{1, 2, 3};
  engine::reserve_big(w, 2);  // below the size: keeps it
  CHECK(w == std::vector<int>{1, 2, 3});
}
