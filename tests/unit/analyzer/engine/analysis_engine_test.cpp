// critpath — tests/unit/analyzer/engine/analysis_engine_test.cpp: the memory budget's count of
// the ranks sharing a host from bucket sums (host_bucket_count), on synthetic sums.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "analyzer/engine/analysis_engine.h"

using namespace critpath::analyzer::engine;

namespace {

// The bucket sums of ranks whose (bucket, q) are listed.
std::vector<uint64_t> sums_of(size_t buckets, const std::vector<std::pair<size_t, uint64_t>>& ranks) {
  std::vector<uint64_t> v(3 * buckets, 0);
  for (const auto& [b, q] : ranks) {
    v[3 * b] += 1;
    v[3 * b + 1] += q;
    v[3 * b + 2] += q * q;
  }
  return v;
}

}  // namespace

TEST_CASE("host_bucket_count: one host per bucket is exact", "[engine]") {
  // Host A (q 7) with 3 ranks in bucket 1, host B (q 9) with 2 ranks in bucket 4.
  const auto v = sums_of(8, {{1, 7}, {1, 7}, {1, 7}, {4, 9}, {4, 9}});
  bool exact = false, mixed = true;
  CHECK(host_bucket_count(v, 1, exact, mixed) == 3);
  CHECK(exact);
  CHECK_FALSE(mixed);
  CHECK(host_bucket_count(v, 4, exact, mixed) == 2);
  CHECK(exact);
}

TEST_CASE("host_bucket_count: two hosts in one bucket are seen", "[engine]") {
  // Hosts A (q 7, 2 ranks) and B (q 9, 1 rank) share bucket 2; host C (q 5) is alone in 3.
  const auto v = sums_of(8, {{2, 7}, {2, 7}, {2, 9}, {3, 5}});
  bool exact = true, mixed = false;
  CHECK(host_bucket_count(v, 2, exact, mixed) == 3);  // an upper bound
  CHECK_FALSE(exact);
  CHECK(mixed);
  CHECK(host_bucket_count(v, 3, exact, mixed) == 1);
  CHECK(exact);
  CHECK(mixed);  // another round is needed for the others
}

TEST_CASE("host_bucket_count: large sums stay exact", "[engine]") {
  // 2^17 ranks of one host with a 20-bit q: sum(q^2) just below 2^57, (sum q)^2 beyond 2^64.
  const uint64_t q = (uint64_t(1) << 20) - 1, n = uint64_t(1) << 17;
  std::vector<uint64_t> v = {n, n * q, n * q * q};
  bool exact = false, mixed = true;
  CHECK(host_bucket_count(v, 0, exact, mixed) == n);
  CHECK(exact);
  CHECK_FALSE(mixed);
  v[1] -= 1;  // one rank with q - 1
  v[2] -= 2 * q - 1;
  host_bucket_count(v, 0, exact, mixed);
  CHECK_FALSE(exact);
}
