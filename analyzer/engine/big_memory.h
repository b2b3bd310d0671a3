// critpath — analyzer/engine/big_memory.h
//
// The analysis's big arrays (the replay index, the passes' per-call arrays) are written once,
// front to back, into memory fresh from the kernel, and each 4 KiB page costs a fault on first
// touch (about 2-3 us on a virtual machine: a third of the decode of a message-bound run). With
// transparent huge pages (THP) one fault maps 2 MiB. Most hosts run THP in `madvise` mode:
// only ranges that ask get them, so the analysis asks for its big arrays alone and leaves the
// host application's memory as it is.
#pragma once

#include <cstddef>
#include <vector>

namespace critpath::analyzer::engine {

// Asks for huge pages on the whole 2 MiB blocks of [data, data + bytes) (madvise MADV_HUGEPAGE),
// before they are first touched. Below 4 MiB, on a kernel without THP, or where madvise refuses,
// it does nothing: the pages stay 4 KiB, only slower to fault in. Never fails.
void prefer_huge_pages(const void* data, size_t bytes);

// v.reserve(n), and huge pages for the reserved storage (its pages are touched as elements
// arrive; what is never reached stays address space).
template <class T>
void reserve_big(std::vector<T>& v, size_t n) {
  v.reserve(n);
  prefer_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace critpath::analyzer::engine
