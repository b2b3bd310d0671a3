// critpath — libtrace/runtime/session.cpp: forwards the MPI life cycle to the registered
// session (analyzer/session). Without one (unit tests), the calls do nothing.
#include "libtrace/runtime/session.h"

#include <atomic>

namespace critpath::runtime {
namespace {
std::atomic<const SessionHooks*> g_hooks{nullptr};
}

void register_session(const SessionHooks* hooks) { g_hooks.store(hooks); }

void session_init(uint64_t t_enter, uint32_t init_region, int thread_level) {
  if (const SessionHooks* h = g_hooks.load(); h && h->on_init)
    h->on_init(t_enter, init_region, thread_level);
}
void session_finalize(uint32_t finalize_region) {
  if (const SessionHooks* h = g_hooks.load(); h && h->on_finalize) h->on_finalize(finalize_region);
}
void session_after_finalize() {
  if (const SessionHooks* h = g_hooks.load(); h && h->after_finalize) h->after_finalize();
}
void session_pcontrol(int level) {
  if (const SessionHooks* h = g_hooks.load(); h && h->on_pcontrol) h->on_pcontrol(level);
}

}  // namespace critpath::runtime
