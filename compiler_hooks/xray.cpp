// critpath — compiler_hooks/xray.cpp: the XRay adapter (hook_core.h, docs/instrumentation.md).
//
// A program built by `critpath-cc/-cxx --xray` has nop sleds at the entry and exits of every
// function clang instrumented, and the XRay runtime linked in, which critpath_xray.o hands
// over (xray_api.h). Life cycle:
//
//   constructor of the executable   critpath_attach_xray(api): remembered, nothing patched
//   recording starts (MPI_Init)     function id -> address table; handler installed; sleds
//                                   patched (all, or one by one skipping what CRITPATH_FILTER
//                                   excludes); the MPI_Init thread's running functions adopted
//   a sled fires                    handler(id, type) -> core::enter/exit(address): the same
//                                   shadow stack, address table and automatic filter as GCC mode
//   the automatic filter drops fn   its sleds are unpatched (__xray_unpatch_function): later
//                                   calls run the nop sleds and are not counted at all
//   recording stops (MPI_Finalize)  every sled unpatched, handler removed
//
// So a function the automatic filter dropped costs a nop sled (a short jump over the sled's
// bytes), and a program that never calls MPI_Init runs with all sleds unpatched. Frames of a
// function open on other threads (or deeper in a recursion) when it is unpatched never see
// their exit: the core closes them at their caller's exit (hooks.h, "longjmp"), so such a
// call's time runs to its caller's exit.
//
// Patching is cold and serialized by g_patch_mu; the handler takes no lock.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "compiler_hooks/hook_core.h"
#include "compiler_hooks/symbols.h"
#include "compiler_hooks/xray_api.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/status.h"

namespace critpath::hooks::xray {
namespace {

const critpath_xray_api* g_api = nullptr;
std::atomic<bool> g_started{false};
// Function id -> address (index 0 unused); written before the handler is installed and
// read-only while it is.
std::vector<uintptr_t>* g_addr = nullptr;
size_t g_max_id = 0;
// (address, id), sorted by address: owns(), the unpatch listener and the adopted frames.
std::vector<std::pair<uintptr_t, int32_t>>* g_by_addr = nullptr;
std::mutex g_patch_mu;
uint64_t g_patched = 0;    // requires g_patch_mu
uint64_t g_unpatched = 0;  // requires g_patch_mu

CRITPATH_NOINSTR void handler(int32_t id, int type) {
  if (CRITPATH_UNLIKELY(id <= 0 || size_t(id) > g_max_id)) return;
  void* fn = reinterpret_cast<void*>((*g_addr)[size_t(id)]);
  if (type == CRITPATH_XRAY_ENTRY) core::enter(fn);
  else if (type == CRITPATH_XRAY_EXIT || type == CRITPATH_XRAY_TAIL) core::exit(fn);
}

int32_t id_of(uintptr_t fn) {
  const auto& v = *g_by_addr;
  auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(fn, int32_t(0)));
  return it != v.end() && it->first == fn ? it->second : 0;
}

// The automatic filter dropped `fn`: its sleds go back to nops.
void on_auto_filtered(uintptr_t fn) {
  const int32_t id = id_of(fn);
  if (id == 0) return;  // a -finstrument-functions function of a mixed build
  std::lock_guard<std::mutex> lock(g_patch_mu);
  if (!g_started.load()) return;
  if (g_api->unpatch_function(id) == CRITPATH_XRAY_SUCCESS) ++g_unpatched;
  else
    log::warn_once("xray-unpatch", "XRay could not unpatch a function the automatic filter dropped; "
                                   "it is counted instead");
}

// The functions running on this thread (innermost frames inside critpath and MPI skipped:
// they have no sleds), outermost first, so that the call paths below MPI_Init start at main.
void adopt_running_frames() {
  void* pcs[128];
  const int n = capture_stack(pcs, 128);
  std::vector<void*> fns;
  for (int i = n - 1; i >= 0; --i) {
    const uintptr_t pc = reinterpret_cast<uintptr_t>(pcs[i]);
    const SymbolInfo s = resolve_symbol(pc, true);
    if (!s.found || s.offset > pc) continue;
    const uintptr_t start = pc - s.offset;
    if (id_of(start) != 0) fns.push_back(reinterpret_cast<void*>(start));
  }
  if (!fns.empty()) core::adopt_frames(fns.data(), fns.size());
}

}  // namespace

bool attached() { return g_api != nullptr; }

void start() {
  if (!g_api || g_started.load()) return;
  try {
    std::lock_guard<std::mutex> lock(g_patch_mu);
    g_max_id = g_api->max_function_id();
    if (g_max_id == 0) return;
    if (!g_addr) g_addr = new std::vector<uintptr_t>;  // never destroyed: hooks run during exit
    if (!g_by_addr) g_by_addr = new std::vector<std::pair<uintptr_t, int32_t>>;
    g_addr->assign(g_max_id + 1, 0);
    g_by_addr->clear();
    for (size_t id = 1; id <= g_max_id; ++id) {
      const uintptr_t a = g_api->function_address(int32_t(id));
      (*g_addr)[id] = a;
      if (a) g_by_addr->push_back({a, int32_t(id)});
    }
    std::sort(g_by_addr->begin(), g_by_addr->end());
    core::set_autofilter_listener(on_auto_filtered);
    if (!g_api->set_handler(handler)) {
      log::warn_once("xray-handler", "XRay did not accept critpath's handler; functions are not recorded");
      return;
    }
    // Without a filter file one call patches every sled; with one, each function is decided
    // (its name resolved) and patched alone.
    bool filtered_any = false;
    std::vector<int32_t> keep;
    for (const auto& [a, id] : *g_by_addr) {
      if (core::filter_excludes(a)) filtered_any = true;
      else keep.push_back(id);
    }
    g_patched = 0;
    g_unpatched = 0;
    if (!filtered_any) {
      if (g_api->patch() == CRITPATH_XRAY_SUCCESS) g_patched = keep.size();
    } else {
      for (int32_t id : keep) g_patched += g_api->patch_function(id) == CRITPATH_XRAY_SUCCESS;
    }
    if (g_patched == 0) {
      log::warn_once("xray-patch", "XRay patched no function; functions are not recorded");
      g_api->remove_handler();
      return;
    }
    g_started.store(true);
  } catch (...) {
    log::warn_once("xray-start", "out of memory while patching the XRay sleds; functions are not recorded");
    return;
  }
  adopt_running_frames();
}

void stop() {
  std::lock_guard<std::mutex> lock(g_patch_mu);
  if (!g_started.exchange(false)) return;
  g_api->unpatch();
  g_api->remove_handler();
}

bool owns(uintptr_t fn) { return g_by_addr && !g_by_addr->empty() && id_of(fn) != 0; }

void add_counts(defs::Instrumentation& info) {
  std::lock_guard<std::mutex> lock(g_patch_mu);
  if (!g_by_addr || g_patched == 0) return;
  info.xray = true;
  info.instrumented += g_by_addr->size();
  info.patched = g_patched;
  info.unpatched = g_unpatched;
}

void reset_for_testing() {
  stop();
  std::lock_guard<std::mutex> lock(g_patch_mu);
  g_api = nullptr;
  g_max_id = 0;
  if (g_by_addr) g_by_addr->clear();
  g_patched = 0;
  g_unpatched = 0;
}

}  // namespace critpath::hooks::xray

extern "C" CRITPATH_EXPORT void critpath_attach_xray(const critpath_xray_api* api) {
  if (!api || api->version < 1) return;
  critpath::hooks::xray::g_api = api;
}
