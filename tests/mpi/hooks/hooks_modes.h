// critpath — tests/mpi/hooks/hooks_modes.h: the header of hooks_modes.cpp. Its functions are
// defined here, in a header, as C++ accessors usually are: critpath-cxx leaves them
// uninstrumented unless --instrument-headers is given.
#pragma once

#include <vector>

namespace grid {

template <typename T>
class Field {
 public:
  explicit Field(int n) : data_(size_t(n), T(0)) {}
  __attribute__((noinline)) T& at(int i) { return data_[size_t(i)]; }
  int size() const { return int(data_.size()); }

 private:
  std::vector<T> data_;
};

}  // namespace grid
