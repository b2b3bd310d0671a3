// critpath — libtrace/runtime/session.cpp: forwards the MPI life cycle to the registered
// session (analyzer/session). Without one (unit tests), the calls do nothing.
#include "libtrace/runtime/session.h"

#include <atomic>

#include "libtrace/runtime/callsite.h"
#include "libtrace/runtime/recorder.h"

namespace critpath::runtime {

CallsiteCapture g_callsite_capture = nullptr;

namespace {
std::atomic<const SessionHooks*> g_hooks{nullptr};
std::atomic<const AdapterListener*> g_listeners[kMaxAdapterListeners] = {};
std::atomic<unsigned> g_nlisteners{0};
}  // namespace

void add_adapter_listener(const AdapterListener* listener) {
  const unsigned i = g_nlisteners.fetch_add(1);
  if (i < kMaxAdapterListeners) g_listeners[i].store(listener);
}

void notify_recording_start() {
  for (auto& l : g_listeners)
    if (const AdapterListener* p = l.load(); p && p->on_recording_start) p->on_recording_start();
}

void notify_recording_stop() {
  for (auto& l : g_listeners)
    if (const AdapterListener* p = l.load(); p && p->on_recording_stop) p->on_recording_stop();
}

namespace {

// One transition: from any phase in `from` (a bit per Phase) to `to`.
bool transition(unsigned from, Phase to, Phase* was = nullptr) {
  uint8_t cur = g_phase.load();
  do {
    if (!(from >> cur & 1u)) return false;
  } while (!g_phase.compare_exchange_weak(cur, uint8_t(to)));
  if (was) *was = Phase(cur);
  return true;
}
constexpr unsigned bit(Phase p) { return 1u << unsigned(p); }

}  // namespace

Phase current_phase() { return Phase(g_phase.load()); }

bool use_tsc_timer(bool tsc) {
  if (g_phase.load() != uint8_t(Phase::kPreInit)) return false;
  g_use_tsc = tsc;
  return true;
}
bool start_recording() { return transition(bit(Phase::kPreInit), Phase::kRecording); }
bool pause_recording() { return transition(bit(Phase::kRecording), Phase::kPaused); }
bool resume_recording() { return transition(bit(Phase::kPaused), Phase::kRecording); }
bool finish_recording(Phase& was) {
  return transition(bit(Phase::kRecording) | bit(Phase::kPaused), Phase::kRecording, &was);
}
bool enter_finalizing() {
  return transition(bit(Phase::kRecording) | bit(Phase::kPaused) | bit(Phase::kFinalizing),
                    Phase::kFinalizing);
}
bool end_session() { return transition(bit(Phase::kFinalizing) | bit(Phase::kPreInit), Phase::kDone); }
void disable_measurement() { g_phase.store(uint8_t(Phase::kDisabled)); }

void register_session(const SessionHooks* hooks) { g_hooks.store(hooks); }

void session_init(uint64_t t_enter, uint32_t init_region, int thread_level) {
  if (const SessionHooks* h = g_hooks.load(); h && h->on_init) h->on_init(t_enter, init_region, thread_level);
  if (recording()) notify_recording_start();
}
void session_finalize(uint32_t finalize_region) {
  if (const SessionHooks* h = g_hooks.load(); h && h->on_finalize) h->on_finalize(finalize_region);
}
void session_after_finalize() {
  if (const SessionHooks* h = g_hooks.load(); h && h->after_finalize) h->after_finalize();
}
void session_abort(int errorcode) {
  if (const SessionHooks* h = g_hooks.load(); h && h->on_abort) h->on_abort(errorcode);
}
void session_pcontrol(int level) {
  if (const SessionHooks* h = g_hooks.load(); h && h->on_pcontrol) h->on_pcontrol(level);
}

}  // namespace critpath::runtime
