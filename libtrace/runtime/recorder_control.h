// critpath — libtrace/runtime/recorder_control.h
//
// Starting and stopping the recorder (the session calls these; adapters never do).
//
//   start(): chunk pool + ChunkStore configured; threads attach lazily on their first event.
//   stop():  every thread's partial chunk is handed off, the compressor drains and joins;
//            afterwards the ChunkStore holds the complete trace of this rank.
//
// Filled raw chunks are compressed on a background thread started on the first hand-off
// (CRITPATH_COMPRESS_THREAD=1), so the application thread only swaps buffers. When the
// compressor lags and the pool is exhausted, the application thread compresses the oldest
// filled chunk itself: slower, never lossy.
//
// Out of memory on any of these cold paths is caught where it happens: the thread concerned
// stops recording (or, when the chunk store fails, the whole rank does), one `critpath:` line
// goes to stderr, a note names the partial thread, and RecorderStats counts it. What was
// stored before stays a gap-free, decodable prefix per location (docs/reliability.md).
#pragma once

#include <cstdint>
#include <string>

#include "libtrace/buffer/chunk_store.h"

namespace critpath::runtime {

struct RecorderOptions {
  uint64_t chunk_bytes = 256 * 1024;     // raw chunk size per thread
  uint64_t memory_budget = 64ull << 20;  // compressed bytes kept in memory
  std::string spill_path;                // file for chunks past the budget
  // When chunks cannot be spilled (no spill_path, or spilling failed): compressed bytes
  // kept in memory at most; past it recording stops with a note (the application's memory
  // is not the tracer's to exhaust).
  uint64_t memory_cap = UINT64_MAX;
  int compression_level = 1;
  bool compress_thread = true;
};

struct RecorderStats {
  uint64_t overhead_ticks_max_thread = 0;  // max over this rank's threads of cold-path ticks
  uint64_t overhead_ticks_total = 0;
  uint64_t compress_ticks = 0;       // ticks spent compressing (any thread)
  uint64_t inline_compressions = 0;  // chunks the application thread compressed itself
  uint64_t threads = 0;
  uint64_t raw_chunks_allocated = 0;
  uint64_t compress_errors = 0;
  // Partial data (docs/reliability.md): threads whose trace ends early because a cold path
  // failed (out of memory), whether recording stopped for the whole rank (the chunk store
  // failed), and raw chunks that were recorded but never stored.
  uint64_t threads_stopped = 0;
  uint64_t rank_stopped = 0;  // 0 or 1
  uint64_t chunks_discarded = 0;
};

// A partial trace written at a fault (analyzer/session/fault.cpp, docs/trace-format.md 6.3):
// the chunks stored so far go to a kept trace file, the raw chunks not yet compressed (every
// thread's current buffer, filled buffers waiting for the compressor) to a tail file. Each
// tail record is a 16-byte header, then `slots` raw 16-byte slots in host byte order:
//   u32 magic kTailMagic, u16 location, u16 0, u32 sequence, u32 slots.
// A chunk may appear in both files (compressed while the dump ran); a reader keeps the
// compressed one.
constexpr uint32_t kTailMagic = 0x4c494154u;  // "TAIL" in a little-endian file
constexpr size_t kTailHeaderSize = 16;
struct PartialDump {
  trace::ChunkStoreStats stored;  // what went to the chunk file
  uint64_t tail_chunks = 0;       // raw chunks that went to the tail file
  uint64_t tail_slots = 0;
  bool complete = true;  // false: a lock stayed taken or a write failed
};
// Async-signal-safe (runtime/sigsafe.h). Requires: the phase is no longer kRecording, and
// one caller at a time. Threads that are writing an event right now may finish it after the
// dump: that event is not in the tail. Recording cannot resume afterwards.
void recorder_dump_partial(int chunk_fd, int tail_fd, PartialDump& out) noexcept;

// Requires: called once, by the thread that called MPI_Init, before the phase is set to
// recording. Returns kNoMemory when the first chunk cannot be allocated.
Status recorder_start(const RecorderOptions& options);
// Requires: the phase is no longer kRecording. Safe to call twice.
void recorder_stop();
trace::ChunkStore& chunk_store();
RecorderStats recorder_stats();
// Tests only: stops the recorder and destroys it, so that recorder_start() starts a fresh
// one. Threads that recorded before keep their ThreadState (departed or stopped): a test
// records on new threads afterwards.
void recorder_reset_for_testing();

}  // namespace critpath::runtime
