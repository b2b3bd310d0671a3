// critpath — libtrace/buffer/codec.h
//
// Raw slots -> compact bytes -> zstd chunk, and back. The second stage of the data flow:
//
//   Slot[] (raw chunk) --encode_slots--> varint bytes --zstd--> Chunk (header + frame)
//   Chunk --decode_chunk--> Event[]
//   Chunk --ChunkDecoder::stream--> varint bytes --visit_events--> one event at a time
//                                                  (codec_stream.h)
//
// A chunk is self-contained: delta timestamps restart from the header's first_time, so any
// chunk decodes on its own. That is what lets the reader walk a trace backward one chunk at
// a time without decompressing the rest.
//
// Encoded stream (v2) = t_size u32 | r_size u32 | step u32 | kinds column | time column (the
// clock steps since the previous event, as a difference to the last count of the same (kind,
// region, comm) where that predicted well) | phase column (time modulo the clock step, when
// the step is above 1) | per-kind fields column. v1 streams (no step, no phase, every delta
// predicted) still decode. docs/trace-format.md §5 has the byte tables and the measurements
// behind the layout.
// All integers on disk are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "libtrace/event/event.h"
#include "libtrace/runtime/status.h"

namespace critpath::trace {

constexpr uint32_t kChunkMagic = 0x4b435043;  // "CPCK" little-endian
constexpr uint16_t kChunkVersion = 2;         // v2: clock steps and phase column, adaptive prediction
constexpr uint16_t kChunkVersionOldest = 1;   // v1 chunks (initial format) still decode

// On-disk chunk header, serialized field by field in little-endian order (no bitfields).
//
//   0 magic u32 | 4 version u16 | 6 location u16 | 8 sequence u32 | 12 event_count u32
//  16 encoded_size u32 | 20 payload_size u32 | 24 first_time u64 | 32 last_time u64 | 40
struct ChunkHeader {
  uint32_t magic = kChunkMagic;
  uint16_t version = kChunkVersion;
  uint16_t location = 0;      // thread index within the rank (0 = the thread that called MPI_Init)
  uint32_t sequence = 0;      // per-location chunk counter, from 0, no gaps
  uint32_t event_count = 0;   // events (not slots) in the chunk
  uint32_t encoded_size = 0;  // bytes of the varint stream before compression
  uint32_t payload_size = 0;  // bytes of the zstd frame that follows the header
  uint64_t first_time = 0;    // time of the first event (ticks)
  uint64_t last_time = 0;     // time of the last event (ticks)
};
constexpr size_t kChunkHeaderSize = 40;

void write_header(const ChunkHeader& h, uint8_t out[kChunkHeaderSize]);
Status read_header(const uint8_t* data, size_t size, ChunkHeader& h);

// Converts one event into its raw slots. Returns the number of slots written (<= kMaxEventSlots).
// Used by tests and slow paths; the hot path writes slots directly (runtime/recorder.h).
unsigned event_to_slots(const Event& e, Slot* out);

// Parses the raw slots [begin, end) into events (no compression involved).
// Returns kCorrupt on an unknown kind or a truncated multi-slot event.
Status slots_to_events(const Slot* begin, const Slot* end, std::vector<Event>& out);

// Encodes raw slots into the varint stream. Appends to `out`; fills event_count,
// first_time and last_time of `h` (other header fields untouched).
Status encode_slots(const Slot* begin, const Slot* end, std::vector<uint8_t>& out, ChunkHeader& h);

// Decodes a varint stream of the given format version (encode_slots writes kChunkVersion).
// Appends to `out`.
Status decode_events(const uint8_t* data, size_t size, uint64_t first_time, uint32_t event_count,
                     std::vector<Event>& out, uint16_t version = kChunkVersion);

// A decoded chunk in compact form (TraceReader::next and prev, ChunkDecoder::decode): 16
// bytes per event, so a whole chunk stays in cache. Events that carry only a region (ENTER,
// EXIT, CALLSITE, MEASUREMENT_OFF/ON) or nothing (COLL_BEGIN) are "narrow": every Event field
// but time, region, flags and kind is zero. The others are kept whole in `wide`.
struct CompactEvent {
  uint64_t time;
  uint32_t ref;  // narrow: the region; wide: the index in DecodedChunk::wide
  uint16_t flags;
  EventKind kind;
  uint8_t wide;  // 1: the event is wide[ref]
};
static_assert(sizeof(CompactEvent) == 16, "compact events are 16 bytes");

// A wide event's slot: an Event on a cache line of its own, so that its fields before the
// counters (56 bytes, all that events other than COUNTERS use) are one line, not two (an
// Event is 184 bytes: packed, 3 of 4 straddle a line boundary). Halves the lines a chunk's
// decode and its readers touch.
struct alignas(64) WideEvent {
  Event e;
};
static_assert(sizeof(WideEvent) == 192, "a wide slot is three cache lines");

struct DecodedChunk {
  std::vector<CompactEvent> events;  // [0, count) hold the chunk (the storage only grows)
  // [0, nwide) hold the chunk's wide events. The storage only grows: a slot is reused without
  // clearing its 128 bytes of counters unless it held a COUNTERS event (new_wide()).
  std::vector<WideEvent> wide;
  size_t nwide = 0;
  size_t count = 0;
  size_t size() const { return count; }
  // Wide event `ref` (CompactEvent::ref of a wide one).
  const Event& wide_event(uint32_t ref) const { return wide[ref].e; }
  // The next wide slot, every field zero, at index nwide - 1.
  Event& new_wide() {
    if (nwide == wide.size()) {
      wide.emplace_back();
      return wide[nwide++].e;
    }
    Event& e = wide[nwide++].e;
    if (e.kind == EventKind::kCounters) std::memset(e.counters, 0, sizeof e.counters);
    std::memset(static_cast<void*>(&e), 0, offsetof(Event, counters));
    return e;
  }
  // The full event i.
  void get(size_t i, Event& out) const {
    const CompactEvent& c = events[i];
    if (c.wide) {
      out = wide_event(c.ref);
      return;
    }
    out = Event{};
    out.time = c.time;
    out.region = c.ref;
    out.flags = c.flags;
    out.kind = c.kind;
  }
  void clear() {
    count = 0;
    nwide = 0;
  }
};

// Decodes a varint stream into the compact form, replacing `out` (reusing its storage).
// The same checks and the same all-or-nothing result as decode_events.
Status decode_events(const uint8_t* data, size_t size, uint64_t first_time, uint32_t event_count,
                     DecodedChunk& out, uint16_t version = kChunkVersion);

// Compresses raw slots into a complete chunk (header + zstd frame), replacing `out`.
// `scratch` is reused across calls to avoid allocation. `zstd_cctx` is a ZSTD_CCtx* owned by
// the caller (one per compressing thread). level: zstd level (1 = fast; negative allowed).
class ChunkCompressor {
 public:
  explicit ChunkCompressor(int level);
  ~ChunkCompressor();
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;

  Status compress(const Slot* begin, const Slot* end, uint16_t location, uint32_t sequence,
                  std::vector<uint8_t>& out);

 private:
  int level_;
  void* cctx_;  // ZSTD_CCtx*
  std::vector<uint8_t> scratch_;
};

// Decompresses and decodes a whole chunk (header + frame). Replaces `out`.
class ChunkDecoder {
 public:
  ChunkDecoder();
  ~ChunkDecoder();
  ChunkDecoder(const ChunkDecoder&) = delete;
  ChunkDecoder& operator=(const ChunkDecoder&) = delete;

  Status decode(const uint8_t* chunk, size_t size, ChunkHeader& header, std::vector<Event>& out);
  // The same into the compact form (replaces `out`, keeping its storage).
  Status decode(const uint8_t* chunk, size_t size, ChunkHeader& header, DecodedChunk& out);
  // Checks the header and decompresses the chunk's varint stream, for visit_events
  // (codec_stream.h): [stream, stream + n), valid until the next call.
  Status stream(const uint8_t* chunk, size_t size, ChunkHeader& header, const uint8_t*& stream, size_t& n);

 private:
  // Checks the header and decompresses the stream into scratch_. Returns the stream size.
  Status decompress(const uint8_t* chunk, size_t size, ChunkHeader& h, size_t& n);
  void* dctx_;  // ZSTD_DCtx*
  std::vector<uint8_t> scratch_;
};

}  // namespace critpath::trace
