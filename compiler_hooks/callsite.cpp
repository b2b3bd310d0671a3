// critpath — compiler_hooks/callsite.cpp
//
// Call-site capture for MPI calls (CRITPATH_CALLSITE_DEPTH=k; the wrapper side is
// libtrace/runtime/callsite.h). Per MPI call, before its ENTER timestamp:
//
//   unw_backtrace (libunwind's cached fast trace; glibc backtrace() without libunwind)
//     -> skip the leading frames inside critpath and the MPI libraries
//     -> the k innermost application PCs -> hash -> call-site table (lock-free reads)
//     -> CALLSITE event (region = call-site id)
//
// A new PC vector defines a region "callsite#<n>" (kind kCallsite) under a mutex; at finalize
// it is renamed from the PCs' DWARF line info: "foo.c:42" for k = 1, "foo.c:42 < main.c:10"
// for deeper ones (innermost first). Return addresses are resolved at address - 1, so the
// line is the call's, and PIE/shared-library load bias is handled by symbols.cpp.
//
// Why not a frame-pointer walk: libcritpath and most applications are built with -O2, which
// omits frame pointers; libunwind's unw_backtrace uses its cached DWARF frame info and costs
// tens of nanoseconds per frame once warm (benchmarks/bench_hooks.cpp measures both).
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "compiler_hooks/symbols.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/callsite.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder.h"

#ifdef CRITPATH_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

namespace critpath::hooks {

// The raw capture, exposed for the benchmark: up to `max` PCs of the caller's stack,
// innermost first. Returns the count.
CRITPATH_NOINSTR int capture_stack(void** pcs, int max) {
#ifdef CRITPATH_HAVE_LIBUNWIND
  return unw_backtrace(pcs, max);
#else
  return backtrace(pcs, max);
#endif
}

namespace {

constexpr int kMaxDepth = 8;
constexpr int kMaxSkip = 8;  // critpath + MPI library frames between the capture and the app

struct Range {
  uintptr_t lo, hi;
};
Range g_tool[32];
int g_ntool = 0;
int g_depth = 0;

bool is_tool_object(const char* path, const char* self) {
  if (!path || !*path) return false;
  if (self && std::strcmp(path, self) == 0) return true;
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  static const char* const kPrefixes[] = {"libcritpath", "libmpi",      "libpmpi",     "libmpich",
                                          "libfmpich",   "libopen-pal", "libopen-rte", "libmpifort"};
  for (const char* p : kPrefixes)
    if (std::strncmp(base, p, std::strlen(p)) == 0) return true;
  return false;
}

struct PhdrCtx {
  const char* self;
};

int collect_ranges(dl_phdr_info* info, size_t, void* data) {
  auto* ctx = static_cast<PhdrCtx*>(data);
  if (!is_tool_object(info->dlpi_name, ctx->self)) return 0;
  for (int i = 0; i < info->dlpi_phnum && g_ntool < 32; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    g_tool[g_ntool++] = {lo, lo + ph.p_memsz};
  }
  return 0;
}

CRITPATH_NOINSTR inline bool in_tool(uintptr_t pc) {
  for (int i = 0; i < g_ntool; ++i)
    if (pc >= g_tool[i].lo && pc < g_tool[i].hi) return true;
  return false;
}

// ---- Call-site table ---------------------------------------------------------------------
struct SiteEntry {
  std::atomic<uint64_t> hash;  // 0 = empty; published last
  uint32_t region;
  uint32_t n;
  uintptr_t pcs[kMaxDepth];
};
constexpr size_t kSiteBits = 12;
constexpr size_t kSites = size_t(1) << kSiteBits;
SiteEntry g_sites[kSites];
size_t g_nsites = 0;  // requires g_site_mu
std::mutex g_site_mu;

CRITPATH_NOINSTR inline uint64_t hash_pcs(const uintptr_t* pcs, int n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ uint64_t(n);
  for (int i = 0; i < n; ++i) {
    h ^= uint64_t(pcs[i]);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return h | 1;  // never 0 (the empty marker)
}

CRITPATH_NOINSTR uint32_t site_region_slow(const uintptr_t* pcs, int n, uint64_t h) {
  std::lock_guard<std::mutex> lock(g_site_mu);
  size_t i = size_t(h >> (64 - kSiteBits));
  for (;; i = (i + 1) & (kSites - 1)) {
    SiteEntry& e = g_sites[i];
    const uint64_t k = e.hash.load(std::memory_order_relaxed);
    if (k == 0) break;
    if (k == h && e.n == uint32_t(n) && std::memcmp(e.pcs, pcs, sizeof(uintptr_t) * size_t(n)) == 0)
      return e.region;
  }
  if (g_nsites >= kSites * 3 / 4) {
    log::warn_once("callsite-table",
                   "more than %zu distinct MPI call sites; the others are "
                   "merged into their MPI call's path",
                   kSites * 3 / 4);
    return 0;
  }
  SiteEntry& e = g_sites[i];
  uint32_t region = 0;
  try {
    region = defs::regions().define("callsite#" + std::to_string(g_nsites + 1), defs::RegionKind::kCallsite);
  } catch (...) {
    return 0;
  }
  e.region = region;
  e.n = uint32_t(n);
  std::memcpy(e.pcs, pcs, sizeof(uintptr_t) * size_t(n));
  e.hash.store(h, std::memory_order_release);
  ++g_nsites;
  return region;
}

CRITPATH_NOINSTR uint32_t site_region(const uintptr_t* pcs, int n) {
  const uint64_t h = hash_pcs(pcs, n);
  size_t i = size_t(h >> (64 - kSiteBits));
  for (;; i = (i + 1) & (kSites - 1)) {
    const SiteEntry& e = g_sites[i];
    const uint64_t k = e.hash.load(std::memory_order_acquire);
    if (k == 0) break;
    if (k == h && e.n == uint32_t(n) && std::memcmp(e.pcs, pcs, sizeof(uintptr_t) * size_t(n)) == 0)
      return e.region;
  }
  return site_region_slow(pcs, n, h);
}

// Installed as runtime::g_callsite_capture when the depth is > 0.
CRITPATH_NOINSTR void capture(runtime::ThreadState& t) {
  void* raw[kMaxDepth + kMaxSkip];
  const int got = capture_stack(raw, g_depth + kMaxSkip);
  uintptr_t pcs[kMaxDepth];
  int n = 0;
  int i = 0;
  while (i < got && in_tool(reinterpret_cast<uintptr_t>(raw[i]))) ++i;
  for (; i < got && n < g_depth; ++i) pcs[n++] = reinterpret_cast<uintptr_t>(raw[i]);
  if (n == 0) return;
  const uint32_t region = site_region(pcs, n);
  if (region == 0) return;
  runtime::record_region(t, trace::EventKind::kCallsite, region, runtime::now());
}

std::string basename_of(const std::string& path) {
  const size_t s = path.rfind('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

}  // namespace

void callsites_configure(int depth) {
  g_depth = depth < 0 ? 0 : depth > kMaxDepth ? kMaxDepth : depth;
  if (g_depth == 0) {
    runtime::g_callsite_capture = nullptr;
    return;
  }
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&callsites_configure), &self);
  PhdrCtx ctx{self.dli_fname};
  g_ntool = 0;
  dl_iterate_phdr(collect_ranges, &ctx);
  void* warm[4];
  capture_stack(warm, 4);  // first use may load and cache unwind info: not on a timed path
  runtime::g_callsite_capture = capture;
}

void callsites_name_all() {
  runtime::g_callsite_capture = nullptr;
  std::lock_guard<std::mutex> lock(g_site_mu);
  for (SiteEntry& e : g_sites) {
    if (e.hash.load(std::memory_order_acquire) == 0 || e.region == 0) continue;
    std::string name, file;
    uint32_t line = 0;
    for (uint32_t k = 0; k < e.n; ++k) {
      const SymbolInfo s = resolve_symbol(e.pcs[k], /*is_return_address=*/true);
      std::string part;
      if (!s.file.empty() && s.line > 0) part = basename_of(s.file) + ":" + std::to_string(s.line);
      else if (s.found) part = s.name;
      else part = s.name;  // module+offset
      if (k == 0) {
        file = s.file;
        line = s.line;
      }
      name += (k == 0 ? "" : " < ") + part;
    }
    // '/' separates call-path elements in reports.
    for (char& c : name)
      if (c == '/') c = '|';
    defs::regions().rename(e.region, name, file, line);
  }
}

}  // namespace critpath::hooks
