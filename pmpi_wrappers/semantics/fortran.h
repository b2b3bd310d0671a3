// critpath — pmpi_wrappers/semantics/fortran.h
//
// Helpers of the generated Fortran entry points (mpi_send_, MPI_SEND, ...; see
// gen/gen_wrappers.py, fortran_plan()). Compiled only where the MPI library's Fortran
// bindings bypass the C MPI_* symbols (Open MPI: mpif.h and `use mpi` call PMPI_* or internal
// functions directly, so the C wrappers would see nothing of a Fortran program):
//
//   Fortran app --mpi_send_(MPI_Fint*...)--> generated entry --f2c--> cp_core_MPI_Send (the
//   C wrapper's inline core) --PMPI_Send--> MPI;   outputs --c2f--> Fortran arguments
//
// ABI assumptions (Open MPI 4.1, gfortran): MPI_Fint is int; a Fortran status is
// sizeof(MPI_Status)/sizeof(MPI_Fint) integers; LOGICAL .true. is 1; MPI_IN_PLACE,
// MPI_BOTTOM and MPI_STATUS(ES)_IGNORE are the addresses of Open MPI's common-block
// sentinels (mpi_fortran_*_ in libmpi). Arrays of handles/statuses use a stack buffer up to
// 16 entries, the heap beyond (if that fails the call runs with the application's own
// arrays unconverted: Open MPI's Fortran request handles are not C handles, so the call
// then fails with an MPI error rather than corrupting memory — documented limit).
#pragma once

#include <mpi.h>

#include <cstdlib>

#if CRITPATH_FORTRAN_WRAPPERS
extern "C" {
// Open MPI's Fortran sentinels (defined in libmpi.so; gfortran's common-block names).
extern int mpi_fortran_in_place_;
extern int mpi_fortran_bottom_;
}

namespace critpath::pmpi {

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed as int*");

inline void* fortran_buffer(const void* p) {
  if (p == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (p == &mpi_fortran_bottom_) return MPI_BOTTOM;
  return const_cast<void*>(p);
}

// n Fortran handles converted to C for the call and back afterwards.
template <class Handle>
class FortranHandles {
 public:
  FortranHandles(int n, const MPI_Fint* f, Handle (*f2c)(MPI_Fint)) : n_(n > 0 ? n : 0) {
    p_ = n_ <= kStack ? stack_ : static_cast<Handle*>(std::malloc(sizeof(Handle) * size_t(n_)));
    if (!p_) {
      n_ = 0;
      return;
    }
    for (int i = 0; i < n_; ++i) p_[i] = f2c(f[i]);
  }
  ~FortranHandles() {
    if (p_ != stack_) std::free(p_);
  }
  FortranHandles(const FortranHandles&) = delete;
  FortranHandles& operator=(const FortranHandles&) = delete;
  Handle* data() { return p_; }
  void store(MPI_Fint* f, MPI_Fint (*c2f)(Handle)) const {
    for (int i = 0; i < n_; ++i) f[i] = c2f(p_[i]);
  }

 private:
  static constexpr int kStack = 16;
  int n_;
  Handle* p_;
  Handle stack_[kStack];
};

// An array of n statuses: MPI_STATUSES_IGNORE for Fortran's sentinel, else C statuses
// copied back to the Fortran array (only the first `count`) after the call.
class FortranStatuses {
 public:
  static constexpr size_t kFintsPerStatus = sizeof(MPI_Status) / sizeof(MPI_Fint);
  FortranStatuses(int n, MPI_Fint* f) : n_(n > 0 ? n : 0) {
    if (f == MPI_F_STATUSES_IGNORE) {
      p_ = MPI_STATUSES_IGNORE;
      return;
    }
    p_ = n_ <= kStack ? stack_ : static_cast<MPI_Status*>(std::malloc(sizeof(MPI_Status) * size_t(n_)));
    if (!p_) p_ = MPI_STATUSES_IGNORE;
  }
  ~FortranStatuses() {
    if (p_ != stack_ && p_ != MPI_STATUSES_IGNORE) std::free(p_);
  }
  FortranStatuses(const FortranStatuses&) = delete;
  FortranStatuses& operator=(const FortranStatuses&) = delete;
  MPI_Status* data() { return p_; }
  void store(MPI_Fint* f, int count) const {
    if (p_ == MPI_STATUSES_IGNORE || count == MPI_UNDEFINED) return;
    for (int i = 0; i < count && i < n_; ++i) PMPI_Status_c2f(&p_[i], f + size_t(i) * kFintsPerStatus);
  }

 private:
  static constexpr int kStack = 16;
  int n_;
  MPI_Status* p_;
  MPI_Status stack_[kStack];
};

}  // namespace critpath::pmpi
#endif
