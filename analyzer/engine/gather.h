// critpath — analyzer/engine/gather.h
//
// The one variable-length gather of the analyzer: every rank contributes n elements, rank 0
// receives them concatenated in rank order, with per-rank element counts and displacements.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

// Collective over `comm`. On rank 0: `all` = every rank's elements in rank order,
// counts[r] / displs[r] = rank r's element count / first index in `all`. Elsewhere the three
// vectors are left empty. Counts and displacements are ints: at most 2^31 - 1 bytes in all.
template <typename T>
Status gather_to_root(const T* mine, int n, MPI_Comm comm, std::vector<T>& all,
                      std::vector<int>& counts, std::vector<int>& displs) {
  static_assert(std::is_trivially_copyable_v<T>, "gathered as bytes");
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  counts.assign(rank == 0 ? size_t(size) : 0, 0);
  displs.assign(counts.size(), 0);
  all.clear();
  if (PMPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm) != MPI_SUCCESS)
    return Status::kMpiError;
  std::vector<int> byte_counts(counts.size()), byte_displs(counts.size());
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[size_t(r)] = total;
      byte_displs[size_t(r)] = total * int(sizeof(T));
      byte_counts[size_t(r)] = counts[size_t(r)] * int(sizeof(T));
      total += counts[size_t(r)];
    }
    all.resize(size_t(total));
  }
  if (PMPI_Gatherv(mine, n * int(sizeof(T)), MPI_BYTE, all.data(), byte_counts.data(),
                   byte_displs.data(), MPI_BYTE, 0, comm) != MPI_SUCCESS)
    return Status::kMpiError;
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
