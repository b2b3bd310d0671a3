// critpath — libtrace/runtime/recorder.h
//
// The record API: the only thing adapters (pmpi_wrappers/, compiler_hooks/, the user API)
// call to put events into the trace. First stage of the data flow:
//
//   adapter --record_*()--> ThreadState.pos (raw chunk, 16-byte slots)
//                              | full: flush_chunk() (cold, out of line)
//                              v
//                     compressor thread --> ChunkStore
//
// Hot-path rules (docs/style): no locks, no allocation, no exceptions, no stdio. A record is
// written completely, then the cursor moves; the chunk is handed off only when the cursor
// passes `limit`, which leaves kMaxEventSlots of tail room so writes never check space first.
//
// Thread safety: every function here works on the calling thread's ThreadState only.
// Signal safety: none of these may be called from a signal handler.
#pragma once

#include <x86intrin.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <type_traits>

#include "libtrace/event/event.h"
#include "libtrace/runtime/status.h"

namespace critpath::runtime {

// Measurement phase, process-wide. Only kRecording records.
enum class Phase : uint8_t {
  kPreInit = 0,  // before MPI_Init: adapters pass through
  kRecording = 1,
  kPaused = 2,      // MPI_Pcontrol(0)
  kFinalizing = 3,  // inside MPI_Finalize: flushing and analysing
  kDone = 4,        // after MPI_Finalize
  kDisabled = 5,    // CRITPATH_ENABLE=0 or a fatal measurement problem
};

extern std::atomic<uint8_t> g_phase;
extern bool g_use_tsc;  // chosen once at init (clock/clock.h explains the choice)

// Per-thread recording state. Trivially destructible so TLS teardown never calls into the
// C++ runtime (which may malloc); a pthread key destructor returns its chunk.
struct alignas(64) ThreadState {
  trace::Slot* pos;         // next free slot
  trace::Slot* limit;       // flush once pos >= limit
  trace::Slot* base;        // start of the current raw chunk
  uint32_t sequence;        // next chunk sequence number of this location
  uint16_t location;        // thread index within the rank (0 = the MPI_Init thread)
  uint8_t in_mpi;           // an MPI wrapper is active on this thread (nested MPI calls pass through)
  uint8_t state;            // 0 = not attached, 1 = attached, 2 = stopped (records go to a sink),
                            // 3 = departed
  uint64_t overhead_ticks;  // ticks spent in cold paths (flush, inline compression)
  uint64_t slots_written;   // slots in chunks already handed off
  void* chunk;              // the RawChunk owning [base, limit) (recorder.cpp)
};
static_assert(std::is_trivially_destructible_v<ThreadState>);

// constinit: no dynamic initialization, so accesses from other translation units compile to
// a plain %fs-relative load instead of a call through the TLS wrapper function.
extern constinit thread_local ThreadState t_state __attribute__((tls_model("initial-exec")));

// Current time in ticks of the chosen clock (TSC or CLOCK_MONOTONIC nanoseconds).
CRITPATH_NOINSTR inline uint64_t now() {
  if (CRITPATH_LIKELY(g_use_tsc)) return __rdtsc();
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Cold paths (recorder.cpp). They never throw: a failure inside (out of memory) stops
// recording on this thread (state = 2) and points pos/base/limit at a per-thread sink of
// kMaxEventSlots slots, so a caller holding the ThreadState may go on writing records; each
// commit then lands in flush_chunk, which only rewinds the sink. docs/reliability.md.
bool attach_thread(ThreadState& t) noexcept;  // false: this thread cannot record (state = 2)
void flush_chunk(ThreadState& t) noexcept;    // hands the full raw chunk off, installs a fresh one

CRITPATH_NOINSTR inline bool recording() {
  return g_phase.load(std::memory_order_relaxed) == uint8_t(Phase::kRecording);
}

// Returns the calling thread's state ready to record, or nullptr when nothing may be
// recorded now (not recording, or this thread has no buffer).
CRITPATH_NOINSTR inline ThreadState* ready_state() {
  if (CRITPATH_UNLIKELY(!recording())) return nullptr;
  ThreadState& t = t_state;
  if (CRITPATH_UNLIKELY(t.state != 1) && !attach_thread(t)) return nullptr;
  return &t;
}

CRITPATH_NOINSTR inline void write_head(trace::Slot* s, uint64_t tsc, trace::EventKind kind, uint8_t nextra,
                                        uint32_t arg) {
  s->tsc = tsc;
  s->kind = uint8_t(kind);
  s->nextra = nextra;
  s->flags = 0;
  s->arg = arg;
}

CRITPATH_NOINSTR inline void commit(ThreadState& t, trace::Slot* next) {
  t.pos = next;
  if (CRITPATH_UNLIKELY(t.pos >= t.limit)) flush_chunk(t);
}

// ENTER/EXIT of a region. The cheapest record: one clock read, one 16-byte store.
CRITPATH_NOINSTR inline void record_region(ThreadState& t, trace::EventKind kind, uint32_t region,
                                           uint64_t tsc) {
  trace::Slot* s = t.pos;
  write_head(s, tsc, kind, 0, region);
  commit(t, s + 1);
}
CRITPATH_NOINSTR inline void record_enter(ThreadState& t, uint32_t region) {
  record_region(t, trace::EventKind::kEnter, region, now());
}
CRITPATH_NOINSTR inline void record_exit(ThreadState& t, uint32_t region) {
  record_region(t, trace::EventKind::kExit, region, now());
}

// The cold half of record_region_now: attaches the thread or reads the non-TSC clock.
__attribute__((noinline, cold)) void record_region_slow(trace::EventKind kind, uint32_t region);

// ENTER/EXIT at the current time, for callers without a ThreadState at hand (user API,
// compiler hooks). The common case is a leaf: phase check, state check, rdtsc, one 16-byte
// slot, bounds check; everything else is a tail call.
CRITPATH_NOINSTR inline void record_region_now(trace::EventKind kind, uint32_t region) {
  if (CRITPATH_UNLIKELY(!recording())) return;
  ThreadState& t = t_state;
  if (CRITPATH_UNLIKELY(t.state != 1 || !g_use_tsc)) return record_region_slow(kind, region);
  trace::Slot* s = t.pos;
  write_head(s, __rdtsc(), kind, 0, region);
  t.pos = s + 1;
  if (CRITPATH_UNLIKELY(t.pos >= t.limit)) flush_chunk(t);
}

// SEND/RECV (request = 0) and ISEND/IRECV (request != 0).
CRITPATH_NOINSTR inline void record_p2p(ThreadState& t, trace::EventKind kind, uint32_t comm, int32_t peer,
                                        int32_t tag, uint64_t bytes, uint64_t request) {
  trace::Slot* s = t.pos;
  const bool has_req = kind == trace::EventKind::kIsend || kind == trace::EventKind::kIrecv;
  write_head(s, now(), kind, has_req ? 2 : 1, comm);
  auto* x = reinterpret_cast<trace::ExtraSlot*>(s + 1);
  x[0].w0 = uint64_t(uint32_t(peer)) | (uint64_t(uint32_t(tag)) << 32);
  x[0].w1 = bytes;
  if (has_req) {
    x[1].w0 = request;
    x[1].w1 = 0;
  }
  commit(t, s + (has_req ? 3 : 2));
}

// ISEND_COMPLETE, IRECV_REQUEST, REQUEST_CANCEL, ICOLL_COMPLETE.
CRITPATH_NOINSTR inline void record_request(ThreadState& t, trace::EventKind kind, uint64_t request) {
  trace::Slot* s = t.pos;
  write_head(s, now(), kind, 1, 0);
  auto* x = reinterpret_cast<trace::ExtraSlot*>(s + 1);
  x->w0 = request;
  x->w1 = 0;
  commit(t, s + 2);
}

CRITPATH_NOINSTR inline void record_coll_begin(ThreadState& t) {
  trace::Slot* s = t.pos;
  write_head(s, now(), trace::EventKind::kCollBegin, 0, 0);
  commit(t, s + 1);
}

// COLL_END (request = 0) and ICOLL_POST (request != 0). op = region id of the MPI call.
CRITPATH_NOINSTR inline void record_coll_end(ThreadState& t, trace::EventKind kind, uint32_t op,
                                             uint32_t comm, int32_t root, uint64_t sent, uint64_t received,
                                             uint64_t request) {
  trace::Slot* s = t.pos;
  write_head(s, now(), kind, 2, comm);
  auto* x = reinterpret_cast<trace::ExtraSlot*>(s + 1);
  x[0].w0 = uint64_t(op) | (uint64_t(uint32_t(root)) << 32);
  x[0].w1 = sent;
  x[1].w0 = received;
  x[1].w1 = request;
  commit(t, s + 3);
}

// RMA events (kinds 32..63). window = critpath window id.
CRITPATH_NOINSTR inline void record_rma(ThreadState& t, trace::EventKind kind, uint32_t window, int32_t peer,
                                        uint32_t op, uint64_t bytes, uint64_t request, int32_t root) {
  trace::Slot* s = t.pos;
  write_head(s, now(), kind, 2, window);
  auto* x = reinterpret_cast<trace::ExtraSlot*>(s + 1);
  x[0].w0 = uint64_t(uint32_t(peer)) | (uint64_t(op) << 32);
  x[0].w1 = bytes;
  x[1].w0 = request;
  x[1].w1 = uint64_t(uint32_t(root));
  commit(t, s + 3);
}

// Writes any decoded event (slow path: measurement control, counters, tests).
void record_event(ThreadState& t, const trace::Event& e);

}  // namespace critpath::runtime
