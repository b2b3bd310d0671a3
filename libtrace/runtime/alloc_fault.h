// critpath — libtrace/runtime/alloc_fault.h
//
// Test-only allocation-failure injection for the recording path's cold paths. A unit test
// arms it; the next matching cold-path allocation point throws std::bad_alloc, exactly as a
// real allocation there would, so the boundary catch (recorder.cpp, chunk_store.cpp) is what
// gets tested. Nothing reads the environment.
//
//   debug_fail_allocations_after(3, AllocSite::kBuffer)
//       -> the 3rd trace-buffer acquisition from now throws, then the injection disarms
//
// Cost when unarmed: one relaxed load and one predictable branch, on cold paths only (thread
// registration, buffer hand-off, compression, chunk store). The hot path never reaches it.
#pragma once

#include <atomic>
#include <cstdint>

#include "libtrace/runtime/status.h"

namespace critpath::runtime {

// Where the recording path allocates (each point guards the allocations of its cold path).
enum class AllocSite : uint8_t {
  kAny = 0,
  kAttach = 1,      // registering a thread with the recorder (first event of a thread)
  kBuffer = 2,      // getting a raw trace buffer (thread registration and every hand-off)
  kCompressor = 3,  // creating a compression context for inline compression
  kEncode = 4,      // encoding + compressing one chunk (compressor thread or inline)
  kStore = 5,       // ChunkStore::append (in memory or spilled)
};
const char* to_string(AllocSite s);

// Arms the injection: the n-th cold-path allocation point of `site` (any site: kAny) reached
// from now on, on any thread, throws std::bad_alloc; then the injection disarms itself.
// n = 0 disarms. Test only.
void debug_fail_allocations_after(uint64_t n, AllocSite site = AllocSite::kAny);
// Allocation points still to pass before the armed failure (0 = not armed / already fired).
uint64_t debug_allocations_until_failure();

namespace detail {
extern std::atomic<bool> g_alloc_fault_armed;
[[gnu::cold, gnu::noinline]] void alloc_fault_point_slow(AllocSite site);
}  // namespace detail

// Placed right before the allocations of a cold path. May throw std::bad_alloc (armed only).
CRITPATH_NOINSTR inline void alloc_fault_point(AllocSite site) {
  if (CRITPATH_UNLIKELY(detail::g_alloc_fault_armed.load(std::memory_order_relaxed)))
    detail::alloc_fault_point_slow(site);
}

}  // namespace critpath::runtime
