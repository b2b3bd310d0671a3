// critpath — analyzer/engine/group.cpp: the passes' cross-rank operations, over engine::Comm.
#include "analyzer/engine/group.h"

#include <algorithm>

namespace critpath::analyzer::engine {
namespace {

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kSum: break;
  }
  return MPI_SUM;
}

}  // namespace

Group Group::local() { return Group(); }

Status Group::over(MPI_Comm comm, Group& out) {
  Group g;
  CRITPATH_FORWARD_IF_ERROR(Comm::native(comm, g.comm_));
  out = std::move(g);
  return Status::kOk;
}

Status Group::over(const Comm& ranks, Group& out) {
  Group g;
  CRITPATH_FORWARD_IF_ERROR(ranks.dup(g.comm_));
  out = std::move(g);
  return Status::kOk;
}

Status Group::barrier() const { return comm_.barrier(); }

Status Group::allreduce(double* v, size_t n, ReduceOp op) const {
  return comm_.allreduce(v, int(n), MPI_DOUBLE, mpi_op(op));
}
Status Group::allreduce(uint64_t* v, size_t n, ReduceOp op) const {
  return comm_.allreduce(v, int(n), MPI_UINT64_T, mpi_op(op));
}
Status Group::allreduce(int* v, size_t n, ReduceOp op) const {
  return comm_.allreduce(v, int(n), MPI_INT, mpi_op(op));
}

Status Group::allreduce_cells(void* cells, size_t n, size_t bytes, size_t rounds,
                              MPI_User_function* fn) const {
  if (n == 0 || size() == 1) return Status::kOk;  // one rank (local(): no MPI) has the result
  MPI_Datatype cell = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  Status st = Status::kMpiError;
  if (PMPI_Type_contiguous(int(bytes), MPI_BYTE, &cell) == MPI_SUCCESS &&
      PMPI_Type_commit(&cell) == MPI_SUCCESS && PMPI_Op_create(fn, 1, &op) == MPI_SUCCESS) {
    const size_t piece = std::max(std::max<size_t>(kTopPieceBytes / bytes, 1), (n + rounds - 1) / rounds);
    st = Status::kOk;
    for (size_t at = 0; at < n && st == Status::kOk; at += piece)
      st = comm_.allreduce(static_cast<unsigned char*>(cells) + at * bytes, int(std::min(piece, n - at)),
                           cell, op);
  }
  if (op != MPI_OP_NULL) PMPI_Op_free(&op);
  if (cell != MPI_DATATYPE_NULL) PMPI_Type_free(&cell);
  return st;
}

Status Group::allreduce_maxloc(std::pair<double, int>* v, size_t n) const {
  if (n == 0) return Status::kOk;
  struct DoubleInt {
    double v;
    int r;
  };
  std::vector<DoubleInt> io(n);
  for (size_t i = 0; i < n; ++i) io[i] = {v[i].first, v[i].second};
  CRITPATH_FORWARD_IF_ERROR(comm_.allreduce(io.data(), int(n), MPI_DOUBLE_INT, MPI_MAXLOC));
  for (size_t i = 0; i < n; ++i) v[i] = {io[i].v, io[i].r};
  return Status::kOk;
}

Status Group::reduce_to_root(const double* v, size_t n, ReduceOp op, std::vector<double>& out) const {
  out.assign(is_root() ? n : 0, 0.0);
  if (n == 0) return Status::kOk;
  // Elsewhere than on the root the result buffer is not used (MPI_Reduce's, the segment's and
  // the hosted reduction's alike).
  return comm_.reduce(v, is_root() ? out.data() : nullptr, int(n), MPI_DOUBLE, mpi_op(op), 0);
}

Status Group::gather_rows(const double* v, size_t n, std::vector<double>& out) const {
  std::vector<int> counts, displs;
  return engine::gather_to_root(v, int(n), comm_, out, counts, displs);
}

Status Group::allgather(int v, std::vector<int>& out) const {
  out.assign(size_t(size()), v);
  return comm_.allgather(&v, sizeof v, out.data());
}

Status Group::exclusive_scan(uint64_t mine, uint64_t& before) const {
  uint64_t through = 0;
  CRITPATH_FORWARD_IF_ERROR(comm_.scan(&mine, &through, 1, MPI_UINT64_T, MPI_SUM));
  before = through - mine;
  return Status::kOk;
}

Status Group::broadcast_bytes(void* p, size_t bytes) const { return comm_.bcast(p, bytes, 0); }

Status Group::split(int color, Group& out) const {
  Group g;
  CRITPATH_FORWARD_IF_ERROR(comm_.split(color, g.comm_));
  out = std::move(g);
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
