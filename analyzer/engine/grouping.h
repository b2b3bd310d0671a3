// critpath — analyzer/engine/grouping.h
//
// Items grouped by the rank they go to, for the sparse exchanges of the critical-path walk and
// the delay analysis: a count per rank only where the items are at least as many as the ranks,
// so that a rank with a few items does no work of the order of P.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace critpath::analyzer::engine {

// A run of elements to or from one rank (PathExchange::exchange, Grouping::runs).
struct PathRun {
  int32_t peer = 0;
  uint32_t count = 0;
};

// Groups n items by destination rank, ascending: `order` lists the items (of 0..n; those
// whose destination is negative left out) destination by destination, ascending within one;
// `runs` the destinations and their counts. A count per rank only when the items are at least
// as many as the ranks, else a sort of the items: the work is O(n + min(n, P) + n log n when
// n < P), never O(P) for a few items.
struct Grouping {
  std::vector<uint32_t> order;
  std::vector<PathRun> runs;
  std::vector<uint32_t> starts;  // per rank (n >= P)
  std::vector<uint64_t> keys;    // destination << 32 | item (n < P)

  template <typename Dest>
  void group(size_t n, int P, Dest dest) {
    runs.clear();
    if (n >= size_t(P)) {
      starts.assign(size_t(P) + 1, 0);
      for (size_t k = 0; k < n; ++k) {
        const int32_t d = dest(k);
        if (d >= 0) ++starts[size_t(d) + 1];
      }
      for (size_t d = 0; d < size_t(P); ++d) {
        if (starts[d + 1]) runs.push_back({int32_t(d), starts[d + 1]});
        starts[d + 1] += starts[d];
      }
      order.resize(starts[size_t(P)]);
      for (size_t k = 0; k < n; ++k) {
        const int32_t d = dest(k);
        if (d >= 0) order[starts[size_t(d)]++] = uint32_t(k);
      }
      return;
    }
    keys.clear();
    for (size_t k = 0; k < n; ++k) {
      const int32_t d = dest(k);
      if (d >= 0) keys.push_back(uint64_t(uint32_t(d)) << 32 | k);
    }
    std::sort(keys.begin(), keys.end());
    order.resize(keys.size());
    for (size_t pos = 0; pos < keys.size(); ++pos) {
      order[pos] = uint32_t(keys[pos]);
      const int32_t d = int32_t(keys[pos] >> 32);
      if (runs.empty() || runs.back().peer != d) runs.push_back({d, 0});
      ++runs.back().count;
    }
  }
};

}  // namespace critpath::analyzer::engine
