// critpath — analyzer/engine/big_memory.cpp
#include "analyzer/engine/big_memory.h"

#include <sys/mman.h>

#include <cstdint>

namespace critpath::analyzer::engine {

void prefer_huge_pages(const void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  constexpr size_t kMinBytes = size_t(4) << 20;
  if (data == nullptr || bytes < kMinBytes) return;
  // Whole huge pages only: the flag splits the mapping at its bounds, and a huge page needs an
  // aligned 2 MiB block inside it; the rest of the range keeps 4 KiB pages.
  const uintptr_t begin = (uintptr_t(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (uintptr_t(data) + bytes) & ~(kHuge - 1);
  if (end <= begin) return;
#ifdef MADV_HUGEPAGE
  (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // a refusal: 4 KiB pages
#endif
}

}  // namespace critpath::analyzer::engine
