// critpath — compiler_hooks/site_patch.cpp: hook call sites turned into jumps (see site_patch.h).
#include "compiler_hooks/site_patch.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "libtrace/runtime/status.h"

namespace critpath::hooks::site_patch {
namespace {

// Sites that cannot be patched, direct-mapped by address (a lost entry only costs a retry).
constexpr size_t kNoPatchSlots = 4096;
std::atomic<uintptr_t> g_no_patch[kNoPatchSlots];
std::atomic<uint64_t> g_patched{0};
std::atomic<bool> g_refused{false};
std::mutex g_mu;  // one patch at a time: mprotect(RW) .. mprotect(RX) must not interleave

CRITPATH_NOINSTR size_t no_patch_slot(uintptr_t a) {
  return size_t((uint64_t(a) * 0x9E3779B97F4A7C15ull) >> 52) & (kNoPatchSlots - 1);
}

// The loaded segments of the object that holds an address.
struct Module {
  uintptr_t probe = 0;
  bool found = false;
  int n = 0;
  struct Seg {
    uintptr_t lo, hi;
    uint32_t flags;  // PF_*
  } seg[16];
  // The segment holding [a, a + len), or nullptr.
  const Seg* holding(uintptr_t a, size_t len) const {
    for (int i = 0; i < n; ++i)
      if (a >= seg[i].lo && a + len <= seg[i].hi && a + len >= a) return &seg[i];
    return nullptr;
  }
};

CRITPATH_NOINSTR int find_module(struct dl_phdr_info* info, size_t, void* data) {
  Module& m = *static_cast<Module*>(data);
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + p.p_vaddr, hi = lo + p.p_memsz;
    if (m.probe >= lo && m.probe < hi && (p.p_flags & PF_X)) mine = true;
  }
  if (!mine) return 0;
  m.found = true;
  for (int i = 0; i < info->dlpi_phnum && m.n < 16; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + p.p_vaddr;
    m.seg[m.n++] = {lo, lo + p.p_memsz, p.p_flags};
  }
  return 1;
}

CRITPATH_NOINSTR int32_t rel32(uintptr_t a) {
  int32_t v;
  std::memcpy(&v, reinterpret_cast<const void*>(a), sizeof v);
  return v;
}
CRITPATH_NOINSTR uint8_t byte_at(uintptr_t a) { return *reinterpret_cast<const uint8_t*>(a); }

// Whether the GOT slot at `slot` (8 bytes, inside the module) holds `hook`.
CRITPATH_NOINSTR bool slot_holds(const Module& m, uintptr_t slot, uintptr_t hook) {
  if (!m.holding(slot, sizeof(uintptr_t))) return false;
  uintptr_t v;
  std::memcpy(&v, reinterpret_cast<const void*>(slot), sizeof v);
  return v == hook;
}

// Whether the code at `target` (a PLT stub of the module, or the hook itself) leads to `hook`.
CRITPATH_NOINSTR bool leads_to(const Module& m, uintptr_t target, uintptr_t hook) {
  if (target == hook) return true;
  const Module::Seg* s = m.holding(target, 16);
  if (!s || !(s->flags & PF_X)) return false;
  uintptr_t p = target;
  if (byte_at(p) == 0xf3 && byte_at(p + 1) == 0x0f && byte_at(p + 2) == 0x1e && byte_at(p + 3) == 0xfa)
    p += 4;
  if (byte_at(p) == 0xf2) ++p;                                     // bnd
  if (byte_at(p) != 0xff || byte_at(p + 1) != 0x25) return false;  // jmp *disp32(%rip)
  return slot_holds(m, p + 6 + uintptr_t(intptr_t(rel32(p + 2))), hook);
}

// The 2 bytes at `site` become `jmp rel8` over the rest of the call (`len` bytes in all).
CRITPATH_NOINSTR bool write_jump(uintptr_t site, size_t len, const Module::Seg& seg) {
  const long page = sysconf(_SC_PAGESIZE);
  const uintptr_t start = site & ~uintptr_t(page - 1);
  if (mprotect(reinterpret_cast<void*>(start), size_t(page), PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
    g_refused.store(true, std::memory_order_relaxed);
    return false;
  }
  const uint16_t jmp = uint16_t(0xeb | (uint16_t(len - 2) << 8));
  // One store (within a cache line: checked by the caller), so that a thread fetching the
  // code sees either the call or the jump. As asm: the site is not 2-byte aligned.
  __asm__ __volatile__("movw %1, (%0)" : : "r"(site), "r"(jmp) : "memory");
  int prot = 0;
  if (seg.flags & PF_R) prot |= PROT_READ;
  if (seg.flags & PF_W) prot |= PROT_WRITE;
  if (seg.flags & PF_X) prot |= PROT_EXEC;
  mprotect(reinterpret_cast<void*>(start), size_t(page), prot);
  return true;
}

}  // namespace

CRITPATH_NOINSTR bool patch(uintptr_t ret, uintptr_t hook) {
#if defined(__x86_64__)
  if (ret < 16 || g_refused.load(std::memory_order_relaxed)) return false;
  std::atomic<uintptr_t>& no = g_no_patch[no_patch_slot(ret)];
  if (no.load(std::memory_order_relaxed) == ret) return false;
  // try_lock: a signal handler's hook must never wait for the thread it interrupted.
  std::unique_lock<std::mutex> lock(g_mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  Module m;
  m.probe = ret - 1;
  dl_iterate_phdr(find_module, &m);
  bool ok = false;
  if (m.found) {
    uintptr_t site = 0;
    size_t len = 0;
    if ((m.holding(ret - 5, 2) && byte_at(ret - 5) == 0xeb && byte_at(ret - 4) == 0x03) ||
        (m.holding(ret - 6, 2) && byte_at(ret - 6) == 0xeb && byte_at(ret - 5) == 0x04)) {
      ok = true;  // patched already (by another thread, between this call and now)
    } else if (m.holding(ret - 5, 5) && byte_at(ret - 5) == 0xe8 &&
               leads_to(m, ret + uintptr_t(intptr_t(rel32(ret - 4))), hook)) {
      site = ret - 5;
      len = 5;
    } else if (m.holding(ret - 6, 6) && byte_at(ret - 6) == 0xff && byte_at(ret - 5) == 0x15 &&
               slot_holds(m, ret + uintptr_t(intptr_t(rel32(ret - 4))), hook)) {
      site = ret - 6;
      len = 6;
    }
    const Module::Seg* seg = site ? m.holding(site, len) : nullptr;
    if (seg && (seg->flags & PF_X) && site % 64 != 63 && write_jump(site, len, *seg)) {
      g_patched.fetch_add(1, std::memory_order_relaxed);
      ok = true;
    }
  }
  if (!ok) no.store(ret, std::memory_order_relaxed);
  return ok;
#else
  (void)ret;
  (void)hook;
  return false;
#endif
}

uint64_t sites_patched() { return g_patched.load(std::memory_order_relaxed); }
bool refused() { return g_refused.load(std::memory_order_relaxed); }

}  // namespace critpath::hooks::site_patch
