// critpath — analyzer/engine/group.cpp: the passes' cross-rank operations over MPI.
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

Status ok(int rc) { return rc == MPI_SUCCESS ? Status::kOk : Status::kMpiError; }

template <typename T>
Status reduce_in_place(MPI_Comm comm, T* v, size_t n, ReduceOp op, MPI_Datatype type) {
  if (comm == MPI_COMM_NULL || n == 0) return Status::kOk;
  return ok(PMPI_Allreduce(MPI_IN_PLACE, v, int(n), type, mpi_op(op), comm));
}

}  // namespace

Group Group::local() { return Group(); }

Status Group::adopt(int rc, MPI_Comm made, Group& out) {
  if (rc != MPI_SUCCESS || made == MPI_COMM_NULL) return Status::kMpiError;
  Group g;
  g.comm_ = made;
  PMPI_Comm_set_errhandler(g.comm_, MPI_ERRORS_RETURN);
  PMPI_Comm_rank(g.comm_, &g.rank_);
  PMPI_Comm_size(g.comm_, &g.size_);
  out = std::move(g);
  return Status::kOk;
}

Status Group::over(MPI_Comm comm, Group& out) {
  MPI_Comm dup = MPI_COMM_NULL;
  const int rc = PMPI_Comm_dup(comm, &dup);
  return adopt(rc, dup, out);
}

Group& Group::operator=(Group&& o) noexcept {
  if (this != &o) {
    if (comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
    comm_ = o.comm_;
    rank_ = o.rank_;
    size_ = o.size_;
    o.comm_ = MPI_COMM_NULL;
    o.rank_ = 0;
    o.size_ = 1;
  }
  return *this;
}

Group::~Group() {
  if (comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

Status Group::barrier() const {
  if (comm_ == MPI_COMM_NULL) return Status::kOk;
  return ok(PMPI_Barrier(comm_));
}

Status Group::allreduce(double* v, size_t n, ReduceOp op) const {
  return reduce_in_place(comm_, v, n, op, MPI_DOUBLE);
}
Status Group::allreduce(uint64_t* v, size_t n, ReduceOp op) const {
  return reduce_in_place(comm_, v, n, op, MPI_UINT64_T);
}
Status Group::allreduce(int* v, size_t n, ReduceOp op) const {
  return reduce_in_place(comm_, v, n, op, MPI_INT);
}

Status Group::allreduce_maxloc(std::pair<double, int>* v, size_t n) const {
  if (comm_ == MPI_COMM_NULL || n == 0) return Status::kOk;
  struct DoubleInt {
    double v;
    int r;
  };
  std::vector<DoubleInt> in(n), out(n);
  for (size_t i = 0; i < n; ++i) in[i] = {v[i].first, v[i].second};
  CRITPATH_FORWARD_IF_ERROR(
      ok(PMPI_Allreduce(in.data(), out.data(), int(n), MPI_DOUBLE_INT, MPI_MAXLOC, comm_)));
  for (size_t i = 0; i < n; ++i) v[i] = {out[i].v, out[i].r};
  return Status::kOk;
}

Status Group::reduce_to_root(const double* v, size_t n, ReduceOp op, std::vector<double>& out) const {
  out.assign(is_root() ? n : 0, 0.0);
  if (comm_ == MPI_COMM_NULL) {
    std::copy(v, v + n, out.begin());
    return Status::kOk;
  }
  if (n == 0) return Status::kOk;
  return ok(PMPI_Reduce(v, out.data(), int(n), MPI_DOUBLE, mpi_op(op), 0, comm_));
}

Status Group::gather_rows(const double* v, size_t n, std::vector<double>& out) const {
  out.assign(is_root() ? n * size_t(size_) : 0, 0.0);
  if (comm_ == MPI_COMM_NULL) {
    std::copy(v, v + n, out.begin());
    return Status::kOk;
  }
  if (n == 0) return Status::kOk;
  return ok(PMPI_Gather(v, int(n), MPI_DOUBLE, out.data(), int(n), MPI_DOUBLE, 0, comm_));
}

Status Group::allgather(int v, std::vector<int>& out) const {
  out.assign(size_t(size_), v);
  if (comm_ == MPI_COMM_NULL) return Status::kOk;
  return ok(PMPI_Allgather(&v, 1, MPI_INT, out.data(), 1, MPI_INT, comm_));
}

Status Group::broadcast_bytes(void* p, size_t bytes) const {
  if (comm_ == MPI_COMM_NULL || bytes == 0) return Status::kOk;
  return ok(PMPI_Bcast(p, int(bytes), MPI_BYTE, 0, comm_));
}

Status Group::split(int color, Group& out) const {
  if (comm_ == MPI_COMM_NULL) {
    out = Group();
    return Status::kOk;
  }
  MPI_Comm part = MPI_COMM_NULL;
  const int rc = PMPI_Comm_split(comm_, color, rank_, &part);
  return adopt(rc, part, out);
}

}  // namespace critpath::analyzer::engine
