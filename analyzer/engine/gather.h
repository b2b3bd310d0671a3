// critpath — analyzer/engine/gather.h
//
// The one variable-length gather of the analyzer: every rank contributes n elements, rank 0
// receives them concatenated in rank order, with per-rank element counts and displacements.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "analyzer/engine/comm.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

// Collective over `comm`. On rank 0: `all` = every rank's elements in rank order,
// counts[r] / displs[r] = rank r's element count / first index in `all`. Elsewhere the three
// vectors are left empty. Counts and displacements are ints: at most 2^31 - 1 bytes in all.
template <typename T>
Status gather_to_root(const T* mine, int n, const Comm& comm, std::vector<T>& all, std::vector<int>& counts,
                      std::vector<int>& displs) {
  static_assert(std::is_trivially_copyable_v<T>, "gathered as bytes");
  std::vector<unsigned char> bytes;
  CRITPATH_FORWARD_IF_ERROR(comm.gatherv(mine, n, sizeof(T), 0, bytes, counts, displs));
  all.resize(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(all.data(), bytes.data(), bytes.size());
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
