// critpath — libtrace/runtime/alloc_fault.cpp: test-only allocation-failure injection
// (alloc_fault.h).
#include "libtrace/runtime/alloc_fault.h"

#include <new>

namespace critpath::runtime {

namespace detail {
std::atomic<bool> g_alloc_fault_armed{false};
}  // namespace detail

namespace {
std::atomic<uint64_t> g_countdown{0};
std::atomic<uint8_t> g_site{0};
}  // namespace

const char* to_string(AllocSite s) {
  switch (s) {
    case AllocSite::kAny: return "any";
    case AllocSite::kAttach: return "thread registration";
    case AllocSite::kBuffer: return "trace buffer";
    case AllocSite::kCompressor: return "compression context";
    case AllocSite::kEncode: return "chunk compression";
    case AllocSite::kStore: return "chunk store";
  }
  return "unknown";
}

void debug_fail_allocations_after(uint64_t n, AllocSite site) {
  detail::g_alloc_fault_armed.store(false);
  g_site.store(uint8_t(site));
  g_countdown.store(n);
  if (n > 0) detail::g_alloc_fault_armed.store(true);
}

uint64_t debug_allocations_until_failure() { return g_countdown.load(); }

void detail::alloc_fault_point_slow(AllocSite site) {
  const uint8_t armed_site = g_site.load(std::memory_order_relaxed);
  if (armed_site != uint8_t(AllocSite::kAny) && armed_site != uint8_t(site)) return;
  uint64_t left = g_countdown.load(std::memory_order_relaxed);
  // Exactly one caller takes the count from 1 to 0 and throws.
  while (left > 0 && !g_countdown.compare_exchange_weak(left, left - 1)) {
  }
  if (left != 1) return;
  g_alloc_fault_armed.store(false, std::memory_order_relaxed);
  throw std::bad_alloc();
}

}  // namespace critpath::runtime
