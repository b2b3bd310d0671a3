// critpath — libtrace/buffer/codec.cpp
//
// Second stage of the data flow: raw 16-byte slots -> compact column-split varint stream ->
// zstd frame behind a 40-byte chunk header, and the way back to decoded Events.
//
//   Slot[] --parse_event--> Fields --encode--> [prefix | K | T | R | A] --zstd--> chunk payload
//
// The encoded stream (trace format v2, docs/trace-format.md has the byte tables):
//
//   +---------------+---------------+-------------------+-----------------+------------------+
//   | t_size r_size | K: kind bytes | T: time steps     | R: phases       | A: per-kind      |
//   | step (u32 LE) | 1 per event   | 1 varint/event    | 1 varint/event  | fields, varints  |
//   |               |               |                   | if step > 1     | in event order   |
//   +---------------+---------------+-------------------+-----------------+------------------+
//
// Why columns instead of interleaving kind, time and fields per event: zstd level 1 finds
// the long repeats of the kind and field columns (loops), while the time column is mostly
// jitter that only its Huffman stage can squeeze; interleaved, the jitter bytes break every
// match. Why clock steps: a clock that only moves in steps of `step` ticks makes every delta
// a multiple of `step`, which a byte-wise Huffman stage cannot exploit (log2(step) bits per
// event wasted); T counts steps and R holds the phase (time - first_time) mod step, which
// rarely changes. Why an
// *adaptive* prediction: where the step count last seen before the same (kind, region, comm)
// predicted that context's count to within half of it (a loop's region durations), T holds
// the difference, so only the jitter is left; elsewhere (MPI calls, waits) the difference of
// two unrelated values would cost more than the count itself, which T then holds plainly.
// These choices were measured with benchmarks/bench_codec.cpp and traced applications
// (figures in docs/trace-format.md, "Design notes"). v1 streams (no step, no phase, every
// delta predicted) still decode.
//
// Decoding is defensive: every read is bounds-checked, every value range-checked, and any
// inconsistency is Status::kCorrupt, never a crash or an out-of-bounds access.
#include "libtrace/buffer/codec.h"
#include "libtrace/buffer/codec_stream.h"
#include "libtrace/buffer/varint.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace critpath::trace {
namespace {

using namespace codec_detail;

// ---------------------------------------------------------------------------------------
// Little-endian scalar helpers (explicit byte order, no reliance on the host).
inline void put_le16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
inline void put_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline void put_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}

// Extra slots a head of this layout must carry (COUNTERS depends on its count).
constexpr unsigned fixed_extra(Layout l) {
  switch (l) {
    case Layout::kP2p:
    case Layout::kRequest: return 1;
    case Layout::kP2pReq:
    case Layout::kColl:
    case Layout::kCollReq:
    case Layout::kRma: return 2;
    default: return 0;
  }
}

// The fields of one event as parsed from slots, without the counter values (those stay in
// the slots and are read from `counter_slots`).
struct Fields {
  uint64_t time = 0;
  uint64_t bytes = 0;
  uint64_t bytes_received = 0;
  uint64_t request = 0;
  uint32_t region = 0;
  uint32_t comm = 0;
  int32_t peer = 0;
  int32_t tag = 0;
  int32_t root = 0;
  uint16_t flags = 0;
  uint8_t kind = 0;
  Layout layout = Layout::kNone;
  const ExtraSlot* counter_slots = nullptr;
};

// Parses the event whose head is at p. Returns the slot count, or 0 if the head is not a
// valid event (unknown kind, wrong nextra, more slots than remain before end).
__attribute__((always_inline)) inline unsigned parse_event(const Slot* p, const Slot* end, Fields& f) {
  const Layout l = layout_of(p->kind);
  if (l == Layout::kNone) return 0;
  unsigned extra = fixed_extra(l);
  if (l == Layout::kCounters) {
    if (p->arg > kMaxCounters) return 0;
    extra = (p->arg + 1) / 2;
  }
  if (p->nextra != extra || size_t(end - p) < 1 + size_t(extra)) return 0;
  const auto* x = reinterpret_cast<const ExtraSlot*>(p + 1);
  f.time = p->tsc;
  f.kind = p->kind;
  f.flags = p->flags;
  f.layout = l;
  switch (l) {
    case Layout::kRegion: f.region = p->arg; break;
    case Layout::kP2pReq: f.request = x[1].w0; [[fallthrough]];
    case Layout::kP2p:
      f.comm = p->arg;
      f.peer = int32_t(uint32_t(x[0].w0));
      f.tag = int32_t(uint32_t(x[0].w0 >> 32));
      f.bytes = x[0].w1;
      break;
    case Layout::kRequest: f.request = x[0].w0; break;
    case Layout::kColl:
    case Layout::kCollReq:
      f.comm = p->arg;
      f.region = uint32_t(x[0].w0);
      f.root = int32_t(uint32_t(x[0].w0 >> 32));
      f.bytes = x[0].w1;
      f.bytes_received = x[1].w0;
      f.request = x[1].w1;
      break;
    case Layout::kRma:
      f.comm = p->arg;
      f.peer = int32_t(uint32_t(x[0].w0));
      f.region = uint32_t(x[0].w0 >> 32);
      f.bytes = x[0].w1;
      f.request = x[1].w0;
      f.root = int32_t(uint32_t(x[1].w1));
      break;
    case Layout::kCounters:
      f.bytes = p->arg;
      f.counter_slots = x;
      break;
    case Layout::kEmpty:
    case Layout::kNone: break;
  }
  return 1 + extra;
}

// The clock step of a chunk: the value most windows of 8 consecutive nonzero time deltas
// have as their gcd (a Boyer-Moore majority vote over the first kStepSample events: 64
// windows at most), 1 if there is none. Any step is lossless; a wrong one only costs
// compression.
constexpr unsigned kStepSample = 512;
uint64_t detect_step(const Slot* begin, const Slot* end) {
  uint64_t cand = 1, g = 0;
  unsigned votes = 0, n = 0, events = 0;
  uint64_t prev = begin < end ? begin->tsc : 0;
  for (const Slot* p = begin; p < end && events < kStepSample; p += 1 + p->nextra, ++events) {
    const uint64_t d = p->tsc - prev;
    prev = p->tsc;
    if (d == 0) continue;
    g = g == 0 ? d : std::gcd(g, d % g);
    if (++n < 8) continue;
    if (votes == 0) cand = g;
    votes = g == cand ? votes + 1 : votes - 1;
    g = 0;
    n = 0;
  }
  return cand > UINT32_MAX ? 1 : cand;
}

// Splits times into steps and phase (encoder side): x = time - first_time = step * q + r.
// Deltas below 2^32 advance (q, r) by a multiplication with the step's 64-bit reciprocal,
// which divides every 32-bit value exactly (Lemire, Kaser and Kurz, "Faster remainder by
// direct computation", 2019); anything else (a large gap, a time before the previous one)
// divides x afresh.
struct StepSplitter {
  uint64_t first, step;
  uint64_t reciprocal = step > 1 ? UINT64_MAX / step + 1 : 0;
  uint64_t x = 0, q = 0, r = 0;
  // Returns the steps advanced since the previous time; the phase is left in r.
  uint64_t advance(uint64_t time) {
    const uint64_t nx = time - first;
    const uint64_t d = nx - x;
    const uint64_t s = r + d;
    uint64_t dq;
    if (step == 1) {
      dq = d;
    } else if (nx >= x && s < (uint64_t(1) << 32)) {
      dq = uint64_t((static_cast<unsigned __int128>(reciprocal) * s) >> 64);
      r = s - dq * step;
    } else {
      const uint64_t nq = nx / step;
      r = nx - nq * step;
      dq = nq - q;
    }
    q += dq;
    x = nx;
    return dq;
  }
};

// Encodes [begin, end) into buf[base, base + returned length) in the current version's
// layout (t_size | r_size | step | K | T | R | A). Grows buf if needed (never shrinks it, so
// a reused scratch vector stops allocating after the largest chunk).
Status encode_into(const Slot* begin, const Slot* end, std::vector<uint8_t>& buf, size_t base, ChunkHeader& h,
                   size_t& length) {
  const size_t nslots = size_t(end - begin);
  if (nslots > (kMaxEncodedSize - kStreamPrefix) / kMaxEncodedPerSlot) return Status::kInvalidArgument;
  // Columns are written into disjoint worst-case regions, then T, R and A are moved down so
  // they follow K directly.
  const size_t k_off = base + kStreamPrefix;
  const size_t t_off = k_off + nslots;
  const size_t r_off = t_off + nslots * 10;
  const size_t a_off = r_off + nslots * 5;
  const size_t need = a_off + nslots * (kMaxEncodedPerSlot - 16);
  if (buf.size() < need) buf.resize(need);
  uint8_t* const k0 = buf.data() + k_off;
  uint8_t* const t0 = buf.data() + t_off;
  uint8_t* const r0 = buf.data() + r_off;
  uint8_t* const a0 = buf.data() + a_off;
  uint8_t* k = k0;
  uint8_t* t = t0;
  uint8_t* r = r0;
  uint8_t* a = a0;

  Predictor pred;
  uint64_t prev_time = nslots ? begin->tsc : 0;
  StepSplitter steps{prev_time, detect_step(begin, end)};
  uint64_t prev_request = 0;
  uint64_t prev_counters[kMaxCounters] = {};
  uint32_t count = 0;
  h.first_time = prev_time;
  h.last_time = prev_time;

  for (const Slot* p = begin; p < end;) {
    Fields f;
    const unsigned n = parse_event(p, end, f);
    if (n == 0) return Status::kCorrupt;
    p += n;
    ++count;

    *k++ = uint8_t(f.kind | (f.flags ? kFlagsBit : 0));
    if (f.flags) a = put_varint(a, f.flags);
    auto put_request_delta = [&](uint64_t r) {
      a = put_varint(a, zigzag(int64_t(r - prev_request)));
      prev_request = r;
    };
    switch (f.layout) {
      case Layout::kRegion: a = put_varint(a, f.region); break;
      case Layout::kP2p:
      case Layout::kP2pReq:
        a = put_varint(a, f.comm);
        a = put_varint(a, zigzag(f.peer));
        a = put_varint(a, zigzag(f.tag));
        a = put_varint(a, f.bytes);
        if (f.layout == Layout::kP2pReq) put_request_delta(f.request);
        break;
      case Layout::kRequest: put_request_delta(f.request); break;
      case Layout::kColl:
      case Layout::kCollReq:
        a = put_varint(a, f.region);
        a = put_varint(a, f.comm);
        a = put_varint(a, zigzag(f.root));
        a = put_varint(a, f.bytes);
        a = put_varint(a, f.bytes_received);
        if (f.layout == Layout::kCollReq) put_request_delta(f.request);
        else a = put_varint(a, f.request);
        break;
      case Layout::kRma:
        a = put_varint(a, f.comm);
        a = put_varint(a, zigzag(f.peer));
        a = put_varint(a, f.region);
        a = put_varint(a, f.bytes);
        a = put_varint(a, f.request);
        a = put_varint(a, zigzag(f.root));
        break;
      case Layout::kCounters: {
        const unsigned nc = unsigned(f.bytes);
        a = put_varint(a, nc);
        for (unsigned i = 0; i < nc; ++i) {
          const ExtraSlot& x = f.counter_slots[i / 2];
          const uint64_t v = (i & 1) ? x.w1 : x.w0;
          a = put_varint(a, zigzag(int64_t(v - prev_counters[i])));
          prev_counters[i] = v;
        }
        break;
      }
      case Layout::kEmpty:
      case Layout::kNone: break;
    }
    prev_time = f.time;
    const uint64_t dq = steps.advance(f.time);
    t = put_varint(t, code_steps(pred.last[Predictor::slot(f.kind, f.region, f.comm)], dq));
    if (steps.step > 1) r = put_varint(r, steps.r);
  }
  h.event_count = count;
  h.last_time = prev_time;

  const size_t k_len = size_t(k - k0);
  const size_t t_len = size_t(t - t0);
  const size_t r_len = size_t(r - r0);
  const size_t a_len = size_t(a - a0);
  put_le32(buf.data() + base, uint32_t(t_len));
  put_le32(buf.data() + base + 4, uint32_t(r_len));
  put_le32(buf.data() + base + 8, uint32_t(steps.step));
  std::memmove(k0 + k_len, t0, t_len);
  std::memmove(k0 + k_len + t_len, r0, r_len);
  std::memmove(k0 + k_len + t_len + r_len, a0, a_len);
  length = kStreamPrefix + k_len + t_len + r_len + a_len;
  return Status::kOk;
}

}  // namespace

// -----------------------------------------------------------------------------------------
// Header.

void write_header(const ChunkHeader& h, uint8_t out[kChunkHeaderSize]) {
  put_le32(out + 0, h.magic);
  put_le16(out + 4, h.version);
  put_le16(out + 6, h.location);
  put_le32(out + 8, h.sequence);
  put_le32(out + 12, h.event_count);
  put_le32(out + 16, h.encoded_size);
  put_le32(out + 20, h.payload_size);
  put_le64(out + 24, h.first_time);
  put_le64(out + 32, h.last_time);
}

Status read_header(const uint8_t* data, size_t size, ChunkHeader& h) {
  if (data == nullptr || size < kChunkHeaderSize) return Status::kCorrupt;
  ChunkHeader r;
  r.magic = get_le32(data + 0);
  r.version = get_le16(data + 4);
  r.location = get_le16(data + 6);
  r.sequence = get_le32(data + 8);
  r.event_count = get_le32(data + 12);
  r.encoded_size = get_le32(data + 16);
  r.payload_size = get_le32(data + 20);
  r.first_time = get_le64(data + 24);
  r.last_time = get_le64(data + 32);
  if (r.magic != kChunkMagic || r.version < kChunkVersionOldest || r.version > kChunkVersion)
    return Status::kCorrupt;
  // Every event costs at least one K byte and one T byte.
  if (r.encoded_size > kMaxEncodedSize ||
      uint64_t(r.encoded_size) < stream_prefix(r.version) + 2 * uint64_t(r.event_count))
    return Status::kCorrupt;
  if (r.payload_size == 0 || r.payload_size > UINT32_MAX - kChunkHeaderSize) return Status::kCorrupt;
  h = r;
  return Status::kOk;
}

// -----------------------------------------------------------------------------------------
// Slots <-> events.

unsigned event_to_slots(const Event& e, Slot* out) {
  const uint8_t kind = uint8_t(e.kind);
  const Layout l = layout_of(kind);
  auto* x = reinterpret_cast<ExtraSlot*>(out + 1);
  auto head = [&](uint8_t nextra, uint32_t arg) {
    out->tsc = e.time;
    out->kind = kind;
    out->nextra = nextra;
    out->flags = e.flags;
    out->arg = arg;
  };
  switch (l) {
    case Layout::kRegion: head(0, e.region); return 1;
    case Layout::kEmpty: head(0, 0); return 1;
    case Layout::kP2p:
    case Layout::kP2pReq: {
      const bool req = l == Layout::kP2pReq;
      head(req ? 2 : 1, e.comm);
      x[0].w0 = uint64_t(uint32_t(e.peer)) | (uint64_t(uint32_t(e.tag)) << 32);
      x[0].w1 = e.bytes;
      if (!req) return 2;
      x[1].w0 = e.request;
      x[1].w1 = 0;
      return 3;
    }
    case Layout::kRequest:
      head(1, 0);
      x[0].w0 = e.request;
      x[0].w1 = 0;
      return 2;
    case Layout::kColl:
    case Layout::kCollReq:
      head(2, e.comm);
      x[0].w0 = uint64_t(e.region) | (uint64_t(uint32_t(e.root)) << 32);
      x[0].w1 = e.bytes;
      x[1].w0 = e.bytes_received;
      x[1].w1 = e.request;
      return 3;
    case Layout::kRma:
      head(2, e.comm);
      x[0].w0 = uint64_t(uint32_t(e.peer)) | (uint64_t(e.region) << 32);
      x[0].w1 = e.bytes;
      x[1].w0 = e.request;
      x[1].w1 = uint64_t(uint32_t(e.root));
      return 3;
    case Layout::kCounters: {
      const unsigned n = unsigned(std::min<uint64_t>(e.bytes, kMaxCounters));
      const unsigned extra = (n + 1) / 2;
      head(uint8_t(extra), n);
      for (unsigned i = 0; i < extra; ++i) {
        x[i].w0 = e.counters[2 * i];
        x[i].w1 = 2 * i + 1 < n ? e.counters[2 * i + 1] : 0;
      }
      return 1 + extra;
    }
    case Layout::kNone: break;
  }
  // Unknown kind: a bare head, which slots_to_events and the encoder reject.
  head(0, 0);
  return 1;
}

Status slots_to_events(const Slot* begin, const Slot* end, std::vector<Event>& out) {
  for (const Slot* p = begin; p < end;) {
    Fields f;
    const unsigned n = parse_event(p, end, f);
    if (n == 0) return Status::kCorrupt;
    p += n;
    Event& e = out.emplace_back();
    e.time = f.time;
    e.kind = EventKind(f.kind);
    e.flags = f.flags;
    e.region = f.region;
    e.comm = f.comm;
    e.peer = f.peer;
    e.tag = f.tag;
    e.root = f.root;
    e.bytes = f.bytes;
    e.bytes_received = f.bytes_received;
    e.request = f.request;
    for (unsigned i = 0; f.counter_slots && i < f.bytes; ++i)
      e.counters[i] = (i & 1) ? f.counter_slots[i / 2].w1 : f.counter_slots[i / 2].w0;
  }
  return Status::kOk;
}

// -----------------------------------------------------------------------------------------
// Varint stream.

Status encode_slots(const Slot* begin, const Slot* end, std::vector<uint8_t>& out, ChunkHeader& h) {
  const size_t base = out.size();
  size_t length = 0;
  const Status s = encode_into(begin, end, out, base, h, length);
  out.resize(s == Status::kOk ? base + length : base);
  return s;
}

namespace {

// Where decode_stream puts events: into full Events (decode_events' vector; the storage is
// zeroed) or into a DecodedChunk (compact records, wide events whole).
struct FullSink {
  static constexpr bool kEager = false;
  Event* ev;
  Event& wide(uint32_t i) { return ev[i]; }
  void put(uint32_t i, uint64_t time, uint32_t region, uint16_t flags, uint8_t kind, bool wide) {
    Event& e = ev[i];
    e.time = time;
    if (wide) return;
    e.region = region;
    e.flags = flags;
    e.kind = EventKind(kind);
  }
};

struct CompactSink {
  static constexpr bool kEager = false;
  DecodedChunk& out;
  CompactEvent* ev;
  Event& wide(uint32_t) { return out.new_wide(); }
  void put(uint32_t i, uint64_t time, uint32_t region, uint16_t flags, uint8_t kind, bool wide) {
    CompactEvent& c = ev[i];
    c.time = time;
    c.ref = wide ? uint32_t(out.nwide - 1) : region;
    c.flags = flags;
    c.kind = EventKind(kind);
    c.wide = wide ? 1 : 0;
  }
};

}  // namespace

Status decode_events(const uint8_t* data, size_t size, uint64_t first_time, uint32_t event_count,
                     std::vector<Event>& out, uint16_t version) {
  const size_t base = out.size();
  const bool ok = decode_stream<FullSink>(data, size, first_time, event_count, version, [&](uint32_t n) {
    out.resize(base + n);
    return FullSink{out.data() + base};
  });
  if (ok) return Status::kOk;
  out.resize(base);
  return Status::kCorrupt;
}

Status decode_events(const uint8_t* data, size_t size, uint64_t first_time, uint32_t event_count,
                     DecodedChunk& out, uint16_t version) {
  out.clear();
  const bool ok = decode_stream<CompactSink>(data, size, first_time, event_count, version, [&](uint32_t n) {
    if (out.events.size() < n) out.events.resize(n);
    return CompactSink{out, out.events.data()};
  });
  if (ok) {
    out.count = event_count;
    return Status::kOk;
  }
  out.clear();
  return Status::kCorrupt;
}

// -----------------------------------------------------------------------------------------
// Chunk compressor / decoder.

ChunkCompressor::ChunkCompressor(int level) : level_(level), cctx_(ZSTD_createCCtx()) {
  if (cctx_ == nullptr) return;
  auto* c = static_cast<ZSTD_CCtx*>(cctx_);
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level_);
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);  // the decoder checks it
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);     // 4 bytes/chunk: catches bit rot
}

ChunkCompressor::~ChunkCompressor() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

Status ChunkCompressor::compress(const Slot* begin, const Slot* end, uint16_t location, uint32_t sequence,
                                 std::vector<uint8_t>& out) {
  if (cctx_ == nullptr) return Status::kNoMemory;
  ChunkHeader h;
  h.location = location;
  h.sequence = sequence;
  size_t encoded = 0;
  CRITPATH_FORWARD_IF_ERROR(encode_into(begin, end, scratch_, 0, h, encoded));
  h.encoded_size = uint32_t(encoded);

  const size_t bound = ZSTD_compressBound(encoded);
  out.resize(kChunkHeaderSize + bound);
  const size_t n = ZSTD_compress2(static_cast<ZSTD_CCtx*>(cctx_), out.data() + kChunkHeaderSize, bound,
                                  scratch_.data(), encoded);
  if (ZSTD_isError(n) || n > UINT32_MAX) {
    out.clear();
    return Status::kCompressError;
  }
  h.payload_size = uint32_t(n);
  write_header(h, out.data());
  out.resize(kChunkHeaderSize + n);
  return Status::kOk;
}

ChunkDecoder::ChunkDecoder() : dctx_(ZSTD_createDCtx()) {}

ChunkDecoder::~ChunkDecoder() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_)); }

Status ChunkDecoder::decompress(const uint8_t* chunk, size_t size, ChunkHeader& h, size_t& n) {
  if (dctx_ == nullptr) return Status::kNoMemory;
  CRITPATH_FORWARD_IF_ERROR(read_header(chunk, size, h));
  if (size - kChunkHeaderSize != h.payload_size) return Status::kCorrupt;
  const uint8_t* payload = chunk + kChunkHeaderSize;
  // The frame must be exactly one zstd frame that declares the size the header claims,
  // checked before the scratch buffer is sized from it.
  if (ZSTD_findFrameCompressedSize(payload, h.payload_size) != h.payload_size ||
      ZSTD_getFrameContentSize(payload, h.payload_size) != h.encoded_size)
    return Status::kCorrupt;
  if (scratch_.size() < h.encoded_size) scratch_.resize(h.encoded_size);
  n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), scratch_.data(), h.encoded_size, payload,
                          h.payload_size);
  if (ZSTD_isError(n) || n != h.encoded_size) return Status::kCorrupt;
  return Status::kOk;
}

Status ChunkDecoder::stream(const uint8_t* chunk, size_t size, ChunkHeader& header, const uint8_t*& stream,
                            size_t& n) {
  CRITPATH_FORWARD_IF_ERROR(decompress(chunk, size, header, n));
  stream = scratch_.data();
  return Status::kOk;
}

Status ChunkDecoder::decode(const uint8_t* chunk, size_t size, ChunkHeader& header, std::vector<Event>& out) {
  out.clear();
  ChunkHeader h;
  size_t n = 0;
  CRITPATH_FORWARD_IF_ERROR(decompress(chunk, size, h, n));
  CRITPATH_FORWARD_IF_ERROR(decode_events(scratch_.data(), n, h.first_time, h.event_count, out, h.version));
  if (h.event_count > 0 && out.back().time != h.last_time) {
    out.clear();
    return Status::kCorrupt;
  }
  header = h;
  return Status::kOk;
}

Status ChunkDecoder::decode(const uint8_t* chunk, size_t size, ChunkHeader& header, DecodedChunk& out) {
  out.clear();
  ChunkHeader h;
  size_t n = 0;
  CRITPATH_FORWARD_IF_ERROR(decompress(chunk, size, h, n));
  CRITPATH_FORWARD_IF_ERROR(decode_events(scratch_.data(), n, h.first_time, h.event_count, out, h.version));
  if (h.event_count > 0 && out.events[out.count - 1].time != h.last_time) {
    out.clear();
    return Status::kCorrupt;
  }
  header = h;
  return Status::kOk;
}

}  // namespace critpath::trace
