// critpath — analyzer/engine/group.h
//
// The analysis ranks as the passes see them: every cross-rank operation a pass may need,
// typed, behind one class. It is the only way analysis code below analyzer/passes/ reaches
// other ranks (the passes never call MPI; a test greps for it):
//
//   pass  --(Group: allreduce, gather to the report rank, broadcast, split)-->  engine  --> MPI
//
// A Group made with Group::local() is one rank alone and never touches MPI, so passes run in
// unit tests on synthetic timelines without MPI_Init. A Group made over an MPI communicator
// owns a duplicate of it (errors returned, never fatal) and frees it on destruction.
//
// Every call is collective over the group, must be made by all its ranks in the same order,
// and returns kOk or kMpiError; on error the outputs are unspecified (callers stop the pass
// and mark its results missing, they never retry).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/gather.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

enum class ReduceOp : uint8_t { kSum = 0, kMax = 1, kMin = 2 };

class Group {
 public:
  // One rank alone: rank 0 of 1; every operation is a local copy.
  static Group local();
  // A private duplicate of `comm` (one location per process). kMpiError when it cannot be made.
  static Status over(MPI_Comm comm, Group& out);
  // A private duplicate of the analysis ranks `ranks` (native or hosted, engine/comm.h).
  static Status over(const Comm& ranks, Group& out);
  static constexpr size_t kTopPieceBytes = 8192;

  Group() = default;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  Group(Group&& o) noexcept = default;
  Group& operator=(Group&& o) noexcept = default;

  int rank() const { return comm_.rank(); }
  int size() const { return comm_.size(); }
  bool is_root() const { return comm_.rank() == 0; }  // the rank that writes the report
  // The communicator for the engine's own exchanges (a local one for local()).
  const Comm& comm() const { return comm_; }

  // Returns when every rank called it.
  Status barrier() const;
  // In place, on every rank.
  Status allreduce(double* v, size_t n, ReduceOp op) const;
  Status allreduce(uint64_t* v, size_t n, ReduceOp op) const;
  Status allreduce(int* v, size_t n, ReduceOp op) const;
  // (value, rank) pairs: the largest value and the lowest rank holding it, on every rank.
  Status allreduce_maxloc(std::pair<double, int>* v, size_t n) const;
  // Top lists: each of the `n` cells holds K entries, first to last by Entry::before (a strict
  // order, which must also order entries of different ranks), padded with Entry::none() (last
  // in that order). On return every rank's cell holds the first K of all ranks' entries of
  // that cell, merged: one round (up to K when more than kTopPieceBytes of cells, never fewer
  // than kTopPieceBytes a round: what a host's shared segment takes in one operation), where
  // K rounds of a maxloc would take K. Entry: trivially copyable, no pointers.
  template <class Entry, size_t K>
  Status allreduce_top(std::array<Entry, K>* cells, size_t n) const {
    static_assert(std::is_trivially_copyable_v<Entry>, "top entries travel as bytes");
    return allreduce_cells(cells, n, sizeof(std::array<Entry, K>), K, &merge_top<Entry, K>);
  }
  // Cells combined by Cell::merge(const Cell& in, Cell& inout), which must commute and
  // associate (a histogram's counts, a minimum, a maximum): every rank's cells become the
  // combination of all ranks', in one round. Cell: trivially copyable, no pointers.
  template <class Cell>
  Status allreduce_merge(Cell* cells, size_t n) const {
    static_assert(std::is_trivially_copyable_v<Cell>, "cells travel as bytes");
    return allreduce_cells(cells, n, sizeof(Cell), 1, &merge_cells<Cell>);
  }
  // Elementwise reduction of `n` values to the root (`out` sized there, empty elsewhere).
  Status reduce_to_root(const double* v, size_t n, ReduceOp op, std::vector<double>& out) const;
  // Every rank's `n` values, rank after rank, on the root (fixed-size rows).
  Status gather_rows(const double* v, size_t n, std::vector<double>& out) const;
  // One int per rank, on every rank.
  Status allgather(int v, std::vector<int>& out) const;
  // The sum of `mine` over the ranks before this one (0 on rank 0): an exclusive prefix sum.
  Status exclusive_scan(uint64_t mine, uint64_t& before) const;
  // The root's `n` elements to every rank.
  template <typename T>
  Status broadcast(T* v, size_t n) const {
    static_assert(std::is_trivially_copyable_v<T>, "broadcast as bytes");
    return broadcast_bytes(v, n * sizeof(T));
  }
  // Variable-length gather: on the root, every rank's elements concatenated in rank order,
  // with per-rank counts and first indices; elsewhere the three vectors are left empty.
  template <typename T>
  Status gather_to_root(const T* mine, size_t n, std::vector<T>& all, std::vector<int>& counts,
                        std::vector<int>& displs) const {
    return engine::gather_to_root(mine, int(n), comm_, all, counts, displs);
  }
  // Bytes to every rank: send[counts[0] bytes for rank 0, then rank 1, ...]; `recv` gets every
  // rank's bytes for this one in rank order, recv_counts[s] from rank s.
  Status alltoallv(const void* send, const std::vector<int>& counts, std::vector<unsigned char>& recv,
                   std::vector<int>& recv_counts) const {
    return comm_.alltoallv(send, counts, 1, recv, recv_counts);
  }
  // The sparse all-to-all (Comm::exchange): bytes to the few ranks a rank talks to, at most
  // one piece per rank; `in` gets one parcel per rank that sent this one bytes, by ascending
  // source rank. Nothing sized by the group is made per rank when hosted.
  Status exchange(const std::vector<Comm::Piece>& out, std::vector<Comm::Parcel>& in) const {
    return comm_.exchange(out, in);
  }
  // The root's counts[r] elements (contiguous in rank order) to rank r.
  template <typename T>
  Status scatter_from_root(const std::vector<T>& all, const std::vector<int>& counts,
                           std::vector<T>& mine) const {
    static_assert(std::is_trivially_copyable_v<T>, "scattered as bytes");
    std::vector<unsigned char> bytes;
    CRITPATH_FORWARD_IF_ERROR(comm_.scatterv(all.data(), counts, sizeof(T), 0, bytes));
    mine.resize(bytes.size() / sizeof(T));
    if (!bytes.empty()) std::memcpy(mine.data(), bytes.data(), bytes.size());
    return Status::kOk;
  }
  // Point to point (engine/comm.h): not collective. post() queues bytes for `dest` and returns
  // at once; receive() waits up to `timeout_s` for the next message from anyone (its sender
  // in `src`); complete_posts() waits until every posted message was delivered.
  Status post(int dest, std::vector<unsigned char>&& bytes) const {
    return comm_.post(dest, std::move(bytes));
  }
  Status receive(int& src, std::vector<unsigned char>& bytes, double timeout_s) const {
    return comm_.receive(src, bytes, timeout_s);
  }
  Status complete_posts(double timeout_s) const { return comm_.complete_posts(timeout_s); }
  // The ranks with the same `color` form `out`, ordered by their rank here.
  Status split(int color, Group& out) const;

 private:
  // allreduce_top's and allreduce_merge's reduction: `n` cells of `bytes` each, by the
  // commutative `fn`, in pieces of at least kTopPieceBytes, at most `rounds` of them.
  Status allreduce_cells(void* cells, size_t n, size_t bytes, size_t rounds, MPI_User_function* fn) const;
  template <class Cell>
  static void merge_cells(void* in, void* inout, int* len, MPI_Datatype*) {
    const Cell* a = static_cast<const Cell*>(in);
    Cell* b = static_cast<Cell*>(inout);
    for (int c = 0; c < *len; ++c) Cell::merge(a[c], b[c]);
  }
  template <class Entry, size_t K>
  static void merge_top(void* in, void* inout, int* len, MPI_Datatype*) {
    const auto* a = static_cast<const std::array<Entry, K>*>(in);
    auto* b = static_cast<std::array<Entry, K>*>(inout);
    for (int c = 0; c < *len; ++c) {
      std::array<Entry, K> out;
      size_t i = 0, j = 0;
      for (Entry& e : out) {
        const bool first = Entry::before(a[c][i], b[c][j]);
        e = first ? a[c][i] : b[c][j];
        i += first ? 1 : 0;
        j += first ? 0 : 1;
      }
      b[c] = out;
    }
  }
  Status broadcast_bytes(void* p, size_t bytes) const;

  Comm comm_;
};

}  // namespace critpath::analyzer::engine
