// critpath — compiler_hooks/counters.h
//
// Hardware counters (CRITPATH_PAPI_EVENTS=PAPI_TOT_INS,PAPI_L2_DCM,...) read at every
// recorded function enter and exit. The values go into the trace as a COUNTERS event right
// after the ENTER/EXIT they belong to (same timestamp); the profile pass turns them into
// per-call-path inclusive and exclusive values, the `papi_<event>` metrics.
//
//   start(list) [cold, MPI_Init]  --> names + per-event source, g_count, g_read
//   record(t, tsc) [hot]          --> g_read(values) --> COUNTERS slot(s)
//
// Sources: PAPI (CRITPATH_HAVE_PAPI; one event set per thread, created on the thread's first
// read) and two synthetic events for tests and for machines without counters:
//   CRITPATH_TEST_NS     CLOCK_MONOTONIC nanoseconds (inclusive value = inclusive time)
//   CRITPATH_TEST_READS  number of counter reads on this thread
// An event that cannot be used (unknown name, PAPI missing, no hardware counters, too many
// events) is dropped with one `critpath:` warning naming it and why (rank 0); measurement
// goes on with the others. Unit tests inject a source with install_for_testing().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libtrace/event/event.h"
#include "libtrace/runtime/recorder.h"

namespace critpath::hooks::counters {

// Fills g_count values for the calling thread; false when this thread cannot read them
// (then nothing is recorded). Must not allocate after the thread's first call.
using ReadFn = bool (*)(uint64_t* values);

extern unsigned g_count;  // active counters, 0..trace::kMaxCounters; 0 = off
extern ReadFn g_read;

// Parses the comma-separated event list and activates what can be read. Publishes the active
// names with defs::set_counter_names(). Returns the active names. Cold; call once, before
// recording starts (or in tests).
std::vector<std::string> start(std::string_view events);
// Deactivates counters (g_count = 0). PAPI event sets of live threads are left alone.
void stop();
// Replaces the source: `names` (at most kMaxCounters) read by `fn`. For unit tests.
void install_for_testing(std::vector<std::string> names, ReadFn fn);

// Records one COUNTERS event with timestamp `tsc` (the ENTER/EXIT it follows).
CRITPATH_NOINSTR inline void record(runtime::ThreadState& t, uint64_t tsc) {
  uint64_t v[trace::kMaxCounters + 1];
  const unsigned n = g_count;
  if (!g_read(v)) return;
  v[n] = 0;
  trace::Slot* s = t.pos;
  const unsigned extra = (n + 1) / 2;
  runtime::write_head(s, tsc, trace::EventKind::kCounters, uint8_t(extra), n);
  auto* x = reinterpret_cast<trace::ExtraSlot*>(s + 1);
  for (unsigned i = 0; i < extra; ++i) {
    x[i].w0 = v[2 * i];
    x[i].w1 = v[2 * i + 1];
  }
  runtime::commit(t, s + 1 + extra);
}

}  // namespace critpath::hooks::counters
