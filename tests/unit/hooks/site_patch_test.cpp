// critpath — tests/unit/hooks/site_patch_test.cpp: hook call sites turned into jumps
// (compiler_hooks/site_patch.h), on call sites of this test program: a stand-in hook patches
// the call that reached it; the next calls through that site skip it.
#include <catch2/catch.hpp>

#include <cstdint>

#include "compiler_hooks/site_patch.h"

namespace {

volatile int g_calls = 0;
int g_patched = 0;

extern "C" __attribute__((noinline, used)) void critpath_test_fake_hook() {
  g_calls = g_calls + 1;
  const uintptr_t ret = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (critpath::hooks::site_patch::patch(ret, reinterpret_cast<uintptr_t>(&critpath_test_fake_hook)))
    ++g_patched;
}

// Eight call sites; the empty asm keeps each call a call (no tail jump).
#define CRITPATH_TEST_SITE(n)                 \
  __attribute__((noinline)) void site_##n() { \
    critpath_test_fake_hook();                \
    __asm__ __volatile__("" ::: "memory");    \
  }
CRITPATH_TEST_SITE(0)
CRITPATH_TEST_SITE(1)
CRITPATH_TEST_SITE(2)
CRITPATH_TEST_SITE(3)
CRITPATH_TEST_SITE(4)
CRITPATH_TEST_SITE(5)
CRITPATH_TEST_SITE(6)
CRITPATH_TEST_SITE(7)

int g_data[64];

}  // namespace

TEST_CASE("site patch: a hook's call site becomes a jump over it at its first call", "[hooks]") {
#if defined(__x86_64__)
  void (*sites[])() = {site_0, site_1, site_2, site_3, site_4, site_5, site_6, site_7};
  const uint64_t before = critpath::hooks::site_patch::sites_patched();
  int skipped_later = 0;
  for (auto* s : sites) {
    const int c0 = g_calls, p0 = g_patched;
    s();
    REQUIRE(g_calls == c0 + 1);  // the first call always reaches the hook
    const bool patched = g_patched == p0 + 1;
    s();
    s();
    // Patched: the later calls jump over the call; not patched (a 2-byte store across a
    // cache line, 1 site in 64): they still reach the hook.
    CHECK(g_calls == c0 + (patched ? 1 : 3));
    skipped_later += patched ? 1 : 0;
  }
  CHECK(skipped_later >= 6);
  CHECK(critpath::hooks::site_patch::sites_patched() == before + uint64_t(skipped_later));
  CHECK_FALSE(critpath::hooks::site_patch::refused());
#endif
}

TEST_CASE("site patch: anything but a call of the hook is left alone", "[hooks]") {
  const uintptr_t hook = reinterpret_cast<uintptr_t>(&critpath_test_fake_hook);
  // Not code: data, a null page, the middle of a function.
  CHECK_FALSE(critpath::hooks::site_patch::patch(reinterpret_cast<uintptr_t>(&g_data[32]), hook));
  CHECK_FALSE(critpath::hooks::site_patch::patch(0x10, hook));
  CHECK_FALSE(critpath::hooks::site_patch::patch(reinterpret_cast<uintptr_t>(&site_0) + 1, hook));
  // A call, but of another function: site_1's call of the fake hook is not a call of site_0.
  CHECK_FALSE(critpath::hooks::site_patch::patch(reinterpret_cast<uintptr_t>(&site_1) + 5,
                                                 reinterpret_cast<uintptr_t>(&site_0)));
  // Asked twice: the negative answer is remembered, and the same.
  CHECK_FALSE(critpath::hooks::site_patch::patch(reinterpret_cast<uintptr_t>(&g_data[32]), hook));
}
