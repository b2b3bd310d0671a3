// critpath — libtrace/buffer/codec_stream.h
//
// The varint stream's decoder as a template, for readers that consume the events as they
// are decoded (visit_events) instead of reading them back from a decoded chunk (codec.h's
// decode_events): the call-path profile and the replay index (analyzer/engine/profile.cpp)
// get each event in registers, and no chunk of CompactEvents and WideEvents (about 1 MB for
// a chunk of a message loop: more than the L2 cache) is written and read back.
//
// What codec.cpp's encoder shares with the decoder lives here too (the kinds' layouts, the
// time prediction, the stream's prefix), in codec_detail; codec.cpp has the layout of the
// stream and why (docs/trace-format.md §5 the byte tables).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "libtrace/buffer/codec.h"
#include "libtrace/buffer/varint.h"

namespace critpath::trace {
namespace codec_detail {

// Little-endian reads (explicit byte order, no reliance on the host).
inline uint16_t get_le16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t get_le32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t get_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// unzigzag's bits, forced inline: the decode loop is past GCC's inlining budget, which left
// unzigzag a call per value there.
[[gnu::always_inline]] inline uint64_t unzigzag_bits(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

// A varint read past the fast paths: its value and the byte after it (null: the column ended
// or the varint overran 64 bits). A free function of values, so that a reader's position never
// has its address taken and stays in a register in the decode loop.
struct VarintRead {
  uint64_t value;
  const uint8_t* next;
};
[[gnu::noinline]] inline VarintRead read_varint_slow(const uint8_t* p, const uint8_t* end) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (p >= end) return {0, nullptr};
    const uint8_t b = *p++;
    // The 10th byte may only carry the top bit of a 64-bit value.
    if (shift == 63 && b > 1) return {0, nullptr};
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return {v, p};
  }
  return {0, nullptr};
}

// Bounds-checked varint reader over one column. A failed read sets `failed` and makes every
// later read fail too, so decoders can check once per event. The columns of a stream share one
// `failed`: a decoder that hands each event on at once checks one flag per event.
struct ColumnReader {
  const uint8_t* p;
  const uint8_t* end;
  bool& failed;

  // Most values are one or two bytes: those skip the general loop.
  [[gnu::always_inline]] uint64_t u64() {
    if (p < end) [[likely]] {
      const uint8_t b0 = p[0];
      if (b0 < 0x80) [[likely]] {
        ++p;
        return b0;
      }
      if (end - p >= 2 && p[1] < 0x80) {
        const uint64_t v = uint64_t(b0 & 0x7f) | (uint64_t(p[1]) << 7);
        p += 2;
        return v;
      }
    }
    const VarintRead r = read_varint_slow(p, end);
    if (r.next == nullptr) return fail();
    p = r.next;
    return r.value;
  }
  [[gnu::always_inline]] uint32_t u32() {
    const uint64_t v = u64();
    if (v > UINT32_MAX) return uint32_t(fail());
    return uint32_t(v);
  }
  [[gnu::always_inline]] int32_t s32() {
    const uint64_t v = u64();
    if (v > UINT32_MAX) return uint32_t(fail());
    return int32_t(uint32_t(unzigzag_bits(v)));
  }
  [[gnu::always_inline]] uint64_t fail() {
    failed = true;
    p = end;
    return 0;
  }
};

// ---------------------------------------------------------------------------------------
// Per-kind slot layout (event.h diagram). One table drives parsing, encoding and decoding.
enum class Layout : uint8_t {
  kNone,      // unknown kind
  kRegion,    // ENTER, EXIT, MEASUREMENT_OFF/ON, CALLSITE: arg = region
  kEmpty,     // COLL_BEGIN
  kP2p,       // SEND, RECV: 1 extra
  kP2pReq,    // ISEND, IRECV: 2 extra
  kRequest,   // ISEND_COMPLETE, IRECV_REQUEST, REQUEST_TEST, CANCEL, ICOLL_COMPLETE: 1 extra
  kColl,      // COLL_END: 2 extra, request stored as a plain value
  kCollReq,   // ICOLL_POST: 2 extra, request delta-coded
  kRma,       // RMA_*: 2 extra
  kCounters,  // COUNTERS: ceil(count/2) extra
};

constexpr Layout layout_of(uint8_t kind) {
  switch (EventKind(kind)) {
    case EventKind::kEnter:
    case EventKind::kExit:
    case EventKind::kMeasurementOff:
    case EventKind::kMeasurementOn:
    case EventKind::kCallsite: return Layout::kRegion;
    case EventKind::kCollBegin: return Layout::kEmpty;
    case EventKind::kSend:
    case EventKind::kRecv: return Layout::kP2p;
    case EventKind::kIsend:
    case EventKind::kIrecv: return Layout::kP2pReq;
    case EventKind::kIsendComplete:
    case EventKind::kIrecvRequest:
    case EventKind::kRequestTest:
    case EventKind::kRequestCancel:
    case EventKind::kIcollComplete: return Layout::kRequest;
    case EventKind::kCollEnd: return Layout::kColl;
    case EventKind::kIcollPost: return Layout::kCollReq;
    case EventKind::kRmaWinCreate:
    case EventKind::kRmaWinFree:
    case EventKind::kRmaPut:
    case EventKind::kRmaGet:
    case EventKind::kRmaAccumulate:
    case EventKind::kRmaSync:
    case EventKind::kRmaCollSync:
    case EventKind::kRmaRequestComplete: return Layout::kRma;
    case EventKind::kCounters: return Layout::kCounters;
    default: return Layout::kNone;
  }
}

// ---------------------------------------------------------------------------------------
// Time-delta prediction shared by encoder and decoder: the delta last seen before an event
// with the same (kind, region, comm), in a direct-mapped table reset at every chunk start.
// Entries keep the low 32 bits of a delta (both sides truncate alike, so it stays
// lossless; 8 KiB keeps the table cheap on a small thread stack).
//
// ENTER/EXIT, the bulk of every trace, index the table directly by region so that region
// ids that are close together never collide: entry = 2 * fold(region) + (kind == EXIT),
// where fold() XORs the bits above 10 into the low ones (MPI ids 1..999 and the run-time
// ids from 1024 up, libtrace/defs, then land apart). Every other kind hashes
// (kind, region, comm) into the table. A collision only costs compression, never
// correctness.
constexpr unsigned kPredictBits = 11;
constexpr uint32_t kPredictMask = (1u << kPredictBits) - 1;

struct Predictor {
  uint32_t last[1u << kPredictBits];
  Predictor() { std::memset(last, 0, sizeof(last)); }
  // An ENTER's (exit false) or EXIT's slot.
  static unsigned region_slot(uint32_t region, bool exit) {
    const uint32_t folded = region ^ ((region >> 10) * 0x2a5u) ^ (region >> 20);
    return ((folded << 1) | (exit ? 1u : 0u)) & kPredictMask;
  }
  static unsigned slot(uint8_t kind, uint32_t region, uint32_t comm) {
    if (kind == uint8_t(EventKind::kEnter) || kind == uint8_t(EventKind::kExit))
      return region_slot(region, kind == uint8_t(EventKind::kExit));
    uint32_t h = (uint32_t(kind) * 0x01000193u) ^ region ^ (comm * 0x9e3779b1u);
    h ^= h >> 16;  // murmur3 finalizer
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h & kPredictMask;
  }
};

// v2 time model (docs/trace-format.md §5.2). A clock that advances in steps of `step` ticks
// (the TSC of the AMD EPYC virtual machine this was measured on advances by 26 ticks at a
// time: a 100 MHz count scaled to 2.6 GHz) has times
// first_time + step * Q + R where R, the phase, almost never changes: T codes the steps Q
// advanced since the previous event and the R column the phase, so the log2(step) bits the
// clock's step leaves without information cost nothing.
//
// A Predictor entry holds the last step count of its context in bits 0..30 and, in bit 31,
// whether the previous prediction missed that count by less than half of it. Only then is
// the next count coded as zz(count - last): MPI calls' durations and the gaps between them
// often vary by more than that, and the difference of two unrelated values costs more than
// the value itself.
constexpr uint32_t kPredictable = 0x80000000u;

[[gnu::always_inline]] inline uint64_t predict_update(uint32_t& entry, uint64_t dq) {
  const uint64_t last = entry & ~kPredictable;
  const uint64_t err = dq >= last ? dq - last : last - dq;
  entry = uint32_t(dq & ~kPredictable) | (err < (dq >> 1) ? kPredictable : 0u);
  return last;
}
[[gnu::always_inline]] inline uint64_t code_steps(uint32_t& entry, uint64_t dq) {
  // Branch-free: whether a context predicts flips often in MPI traces.
  const uint64_t predicted = 0 - uint64_t(entry >> 31);
  const uint64_t last = predict_update(entry, dq);
  return (zigzag(int64_t(dq - last)) & predicted) | (dq & ~predicted);
}
[[gnu::always_inline]] inline uint64_t uncode_steps(uint32_t& entry, uint64_t v) {
  const uint64_t dq = (entry & kPredictable) ? (entry & ~kPredictable) + unzigzag_bits(v) : v;
  predict_update(entry, dq);
  return dq;
}

// The encoded stream's fixed prefix: the T column's size (v1); T's size, R's size and the
// clock step (v2).
constexpr size_t kStreamPrefixV1 = 4;
constexpr size_t kStreamPrefix = 12;
constexpr size_t stream_prefix(uint16_t version) { return version == 1 ? kStreamPrefixV1 : kStreamPrefix; }
// Worst-case column bytes per input slot: K 1, T 10 (a 64-bit varint) and R 5 (a 32-bit
// varint) per event, and A at most 18.3 per slot (COUNTERS with 16 values: 3 flags + 1
// count + 16 x 10 over 9 slots; COLL_END needs 48 over 3 slots = 16). encode_into gives A
// 21 bytes per slot.
constexpr size_t kMaxEncodedPerSlot = 37;
// Largest encoded stream a decoder accepts (bounds allocation on corrupt headers).
constexpr uint64_t kMaxEncodedSize = uint64_t(1) << 30;
// Bit 7 of a K byte: a flags varint leads the event's A fields. Kinds stay below 128.
constexpr uint8_t kFlagsBit = 0x80;
static_assert(uint8_t(EventKind::kKindEnd) <= kFlagsBit);

// Per-kind layouts as a table (the decoder's per-event lookup).
struct LayoutTable {
  Layout of[256];
  constexpr LayoutTable() : of() {
    for (unsigned k = 0; k < 256; ++k) of[k] = layout_of(uint8_t(k));
  }
};
inline constexpr LayoutTable kLayouts;

// Predictor::slot for the decoder: a wide event's hash remembered per kind (a message loop's
// sends and receives name the same communicator, and kind, region and comm decide the slot).
struct SlotMemo {
  struct Entry {
    uint32_t region = 0, comm = 0;
    uint32_t slot = UINT32_MAX;  // none yet
  };
  Entry last[128];  // by kind (kinds stay below 128: kFlagsBit)
  [[gnu::always_inline]] unsigned slot(uint8_t kind, uint32_t region, uint32_t comm, bool wide) {
    if (!wide) return Predictor::slot(kind, region, comm);
    Entry& e = last[kind & 0x7f];
    if (e.slot == UINT32_MAX || e.region != region || e.comm != comm)
      e = {region, comm, Predictor::slot(kind, region, comm)};
    return e.slot;
  }
};

// An event's flags (the varint before its A fields when its K byte has kFlagsBit).
[[gnu::always_inline]] inline uint16_t read_flags(ColumnReader& a) {
  const uint64_t fl = a.u64();
  if (fl > UINT16_MAX) a.fail();
  return uint16_t(fl);
}

// A wide event's fields from the A column by its layout (`e`'s kind and flags are set); the
// region and communicator also as the predictor's context. Inline in the decode loop. region
// and comm come back as written to the event, not read back from it: two 4-byte stores read as
// one 8-byte load cannot be forwarded, and the load waits for them to reach the cache.
[[gnu::always_inline]] inline uint64_t request_delta(ColumnReader& a, uint64_t& prev_request) {
  prev_request += unzigzag_bits(a.u64());
  return prev_request;
}
[[gnu::always_inline]] inline void read_wide_fields(ColumnReader& a, Layout l, Event& e, uint32_t& region,
                                                    uint32_t& comm, uint64_t& prev_request,
                                                    uint64_t* prev_counters) {
  switch (l) {
    case Layout::kP2p:
    case Layout::kP2pReq:
      e.comm = comm = a.u32();
      e.peer = a.s32();
      e.tag = a.s32();
      e.bytes = a.u64();
      if (l == Layout::kP2pReq) e.request = request_delta(a, prev_request);
      break;
    case Layout::kRequest: e.request = request_delta(a, prev_request); break;
    case Layout::kColl:
    case Layout::kCollReq:
      e.region = region = a.u32();
      e.comm = comm = a.u32();
      e.root = a.s32();
      e.bytes = a.u64();
      e.bytes_received = a.u64();
      e.request = l == Layout::kCollReq ? request_delta(a, prev_request) : a.u64();
      break;
    case Layout::kRma:
      e.comm = comm = a.u32();
      e.peer = a.s32();
      e.region = region = a.u32();
      e.bytes = a.u64();
      e.request = a.u64();
      e.root = a.s32();
      break;
    case Layout::kCounters: {
      const uint64_t n = a.u64();
      if (n > kMaxCounters) {
        a.fail();
        break;
      }
      e.bytes = n;
      for (unsigned c = 0; c < n; ++c) {
        prev_counters[c] += unzigzag_bits(a.u64());
        e.counters[c] = prev_counters[c];
      }
      break;
    }
    case Layout::kRegion:
    case Layout::kEmpty:
    case Layout::kNone: break;
  }
}

// The times of a stream's events in turn, by one of its time models (v1's deltas; v2 with a
// step of 1, or with a phase column).
template <bool kV1, bool kPhase>
struct TimeModel {
  uint64_t first_time;
  uint64_t step;
  uint64_t prev_time;  // the previous event's (first_time before the first)
  uint64_t q = 0;      // v2: steps since first_time
  // The next event's time, its context's predictor entry `last`; a phase not below the step
  // sets `failed`.
  [[gnu::always_inline]] uint64_t next(uint32_t& last, ColumnReader& t, ColumnReader& ph, bool& failed) {
    if constexpr (kV1) {
      const uint64_t delta = last + unzigzag_bits(t.u64());
      last = uint32_t(delta);
      return prev_time + delta;
    } else {
      q += uncode_steps(last, t.u64());
      if constexpr (kPhase) {
        const uint64_t phase = ph.u64();
        failed |= phase >= step;
        return first_time + q * step + phase;
      } else {
        return first_time + q;  // a step of 1: no phase
      }
    }
  }
};

// What the events other than a flag-less ENTER or EXIT carry over from one to the next: the
// last request and counter values (delta-coded) and the wide kinds' predictor slots.
struct OtherState {
  uint64_t prev_request = 0;
  uint64_t prev_counters[kMaxCounters] = {};
  SlotMemo slots;
};

// Such an event's flags and A fields (a wide one's into the sink's event `we`, else null) and
// its predictor slot; false: an unknown kind.
template <class Sink>
[[gnu::always_inline]] inline bool read_other(uint8_t kb, uint32_t i, ColumnReader& a, Sink& sink,
                                              OtherState& o, uint16_t& flags, uint32_t& region, Event*& we,
                                              unsigned& slot) {
  const uint8_t kind = kb & uint8_t(~kFlagsBit);
  const Layout l = kLayouts.of[kind];
  if (l == Layout::kNone) return false;
  if (kb & kFlagsBit) flags = read_flags(a);
  uint32_t comm = 0;
  if (l == Layout::kRegion) {
    region = a.u32();
  } else if (l != Layout::kEmpty) {
    we = &sink.wide(i);
    we->kind = EventKind(kind);
    we->flags = flags;
    read_wide_fields(a, l, *we, region, comm, o.prev_request, o.prev_counters);
  }
  slot = o.slots.slot(kind, region, comm, we != nullptr);
  return true;
}

// A flag-less ENTER, EXIT, SEND or RECV, its kind a constant: its region (a SEND's or RECV's
// fields into the sink's event `we`, as read_other reads them: layout kP2p, no region); returns
// its predictor slot.
template <EventKind K>
using KindConstant = std::integral_constant<EventKind, K>;
template <EventKind kKind, class Sink>
[[gnu::always_inline]] inline unsigned read_known(uint32_t i, ColumnReader& a, Sink& sink, OtherState& o,
                                                  uint32_t& region, Event*& we) {
  if constexpr (kKind == EventKind::kEnter || kKind == EventKind::kExit) {
    region = a.u32();
    return Predictor::region_slot(region, kKind == EventKind::kExit);
  } else {
    static_assert(kKind == EventKind::kSend || kKind == EventKind::kRecv);
    we = &sink.wide(i);
    we->kind = kKind;
    uint32_t comm = 0;
    read_wide_fields(a, Layout::kP2p, *we, region, comm, o.prev_request, o.prev_counters);
    return o.slots.slot(uint8_t(kKind), region, comm, true);
  }
}

// The stream decoder behind both decode_events and visit_events. `prepare(count)` sizes the
// sink's storage once the counts are checked; returns false if the stream is corrupt. A sink
// that stores the events (kEager false) then holds garbage the caller discards; one that
// hands each event on at once (kEager true) has been given the events before the damage,
// never one a failed read made.
template <class Sink, class Prepare>
bool decode_stream(const uint8_t* data, size_t size, uint64_t first_time, uint32_t event_count,
                   uint16_t version, Prepare prepare) {
  // Size checks come before any allocation: a corrupt count cannot reserve more than fits.
  if (version < kChunkVersionOldest || version > kChunkVersion) return false;
  const bool v1 = version == 1;
  const size_t prefix = stream_prefix(version);
  if (data == nullptr || size < prefix) return false;
  const uint64_t t_len = get_le32(data);
  const uint64_t r_len = v1 ? 0 : get_le32(data + 4);
  const uint64_t step = v1 ? 1 : get_le32(data + 8);
  const uint64_t body = size - prefix;
  if (event_count > body || t_len > body - event_count || r_len > body - event_count - t_len) return false;
  // A step of 1 has no phase column; any other step has one phase per event.
  if (step == 0 || (step == 1 && r_len != 0)) return false;
  if (event_count == 0) return t_len == 0 && r_len == 0 && body == 0;
  const uint8_t* kp = data + prefix;
  bool failed = false;  // a read failed, or a phase was not below the step: corrupt
  ColumnReader t{kp + event_count, kp + event_count + t_len, failed};
  ColumnReader ph{t.end, t.end + r_len, failed};
  ColumnReader a{ph.end, data + size, failed};
  Sink sink = prepare(event_count);
  Predictor pred;
  OtherState other;
  // An eager sink learns how many events it was given and the last one's time.
  constexpr bool kEager = std::remove_reference_t<Sink>::kEager;

  // The loop once per time model, so that no event asks which. An ENTER or EXIT without flags
  // (most events of every trace), and a SEND or RECV (a message loop's others), is read by its
  // K byte alone, each in a branch of its own that hands it on with its kind a constant: no
  // layout looked up, no flags, an ENTER's or EXIT's predictor slot without the kind's test,
  // and none of the sink's tests of the kind left (they fold where the sink is inlined).
  auto run = [&](auto tm) __attribute__((always_inline)) {
    auto stop = [&](uint32_t given) {
      if constexpr (kEager) sink.stopped(given, tm.prev_time);
      return false;
    };
    // An event of kind kb (any) or of a flag-less kind read by its K byte alone (known: the
    // kind a constant); false: an unknown kind, or a read failed (an eager sink is not given
    // the event it damaged: it goes to its consumer now, before the end of the chunk).
    auto hand_on = [&](uint32_t i, unsigned slot, uint32_t region, uint16_t flags, uint8_t kind, Event* we)
        __attribute__((always_inline)) {
      const uint64_t time = tm.next(pred.last[slot], t, ph, failed);
      if (we) we->time = time;
      if constexpr (kEager) {
        if (failed) return false;
      }
      tm.prev_time = time;
      sink.put(i, time, region, flags, kind, we != nullptr);
      return true;
    };
    auto known = [&](uint32_t i, auto kind_c) __attribute__((always_inline)) {
      constexpr EventKind kKind = decltype(kind_c)::value;
      uint32_t region = 0;
      Event* we = nullptr;
      const unsigned slot = read_known<kKind>(i, a, sink, other, region, we);
      return hand_on(i, slot, region, 0, uint8_t(kKind), we);
    };
    auto any = [&](uint32_t i, uint8_t kb) __attribute__((always_inline)) {
      uint16_t flags = 0;
      uint32_t region = 0;
      Event* we = nullptr;  // the full event of a wide kind
      unsigned slot;
      if (!read_other(kb, i, a, sink, other, flags, region, we, slot)) return false;
      return hand_on(i, slot, region, flags, uint8_t(kb & uint8_t(~kFlagsBit)), we);
    };
    // The K column walked by pointer (the index only where a sink or a stop asks for it).
    for (const uint8_t* k = kp; k != kp + event_count; ++k) {
      using K = EventKind;
      const uint8_t kb = *k;
      const uint32_t i = uint32_t(k - kp);
      bool ok;
      if (kb == uint8_t(K::kEnter)) [[likely]]
        ok = known(i, KindConstant<K::kEnter>{});
      else if (kb == uint8_t(K::kExit)) [[likely]] ok = known(i, KindConstant<K::kExit>{});
      else if (kb == uint8_t(K::kSend)) ok = known(i, KindConstant<K::kSend>{});
      else if (kb == uint8_t(K::kRecv)) ok = known(i, KindConstant<K::kRecv>{});
      else ok = any(i, kb);
      if (!ok) return stop(i);
    }
    if constexpr (kEager) sink.stopped(event_count, tm.prev_time);
    // A failed read is looked at once, here: it left its column at the end and made every
    // later read of it return 0 (still within the stream and the sink's event_count events).
    if (failed) return false;
    // Every column must be consumed exactly: leftovers mean a count or size mismatch.
    return t.p == t.end && ph.p == ph.end && a.p == a.end;
  };
  if (v1) return run(TimeModel<true, false>{first_time, step, first_time});
  if (step > 1) return run(TimeModel<false, true>{first_time, step, first_time});
  return run(TimeModel<false, false>{first_time, step, first_time});
}

// visit_events' sink: each event to `visit` as soon as it is decoded. The decode loop holds
// the sink itself (nothing else sees its address), so that what the visitor captured stays in
// registers there: an rvalue visitor is moved in, an lvalue one is held by reference.
template <class Visit>
struct VisitSink {
  static constexpr bool kEager = true;
  Visit visit;
  Event* e;             // the wide event being decoded (the storage is reused)
  uint32_t* given;      // events handed on
  uint64_t* last_time;  // the last one's time (given > 0)
  void stopped(uint32_t n, uint64_t t) {
    *given = n;
    *last_time = t;
  }
  // The next wide event, every field zero (the counters only if they held some). Field by
  // field: GCC made the memset of the 56 bytes before the counters a rep stos (15
  // instructions under callgrind, and slow to start on the CPU).
  [[gnu::always_inline]] Event& wide(uint32_t) {
    if (e->kind == EventKind::kCounters) std::memset(e->counters, 0, sizeof e->counters);
    e->time = 0;
    e->region = e->comm = 0;
    e->peer = e->tag = e->root = 0;
    e->flags = 0;
    e->kind = EventKind::kInvalid;
    e->reserved = 0;
    e->bytes = e->bytes_received = e->request = 0;
    static_assert(offsetof(Event, counters) == 56, "every field before the counters is zeroed");
    static_assert(sizeof(Event) == offsetof(Event, counters) + sizeof(Event::counters),
                  "the counters are the last field: none after them goes unzeroed");
    return *e;
  }
  [[gnu::always_inline]] void put(uint32_t, uint64_t time, uint32_t region, uint16_t flags, uint8_t kind,
                                  bool is_wide) {
    visit(time, region, flags, EventKind(kind), is_wide ? e : nullptr);
  }
};

}  // namespace codec_detail

// Decodes a varint stream of the given format version like decode_events, but hands every
// event to `visit` as it is decoded, in order, instead of storing it:
//
//   visit(uint64_t time, uint32_t region, uint16_t flags, EventKind kind, const Event* wide)
//
// `wide` is null for a narrow event (CompactEvent: only time, region, flags and kind; every
// other Event field zero) and else the whole event, valid during the call only.
//
// The same checks and the same status as decode_events, but not all or nothing: the events
// before a damage are handed on before it is found. A read that fails stops the decode
// before the event it belongs to; what only the stream's end can tell (a column not consumed
// exactly) comes after all its events.
//
// `given` (when not null) receives the number of events handed on and `last` the last one's
// time (unchanged when none was).
template <class Visit>
Status visit_events(const uint8_t* data, size_t size, uint64_t first_time, uint32_t event_count,
                    Visit&& visit, uint16_t version = kChunkVersion, uint32_t* given = nullptr,
                    uint64_t* last = nullptr) {
  using Sink = codec_detail::VisitSink<Visit>;
  Event wide{};
  uint32_t n = 0;
  uint64_t t = 0;
  const bool ok = codec_detail::decode_stream<Sink>(data, size, first_time, event_count, version,
                                                    [&](uint32_t) {
                                                      return Sink{std::forward<Visit>(visit), &wide, &n, &t};
                                                    });
  if (given) *given = n;
  if (last && n > 0) *last = t;
  return ok ? Status::kOk : Status::kCorrupt;
}

// A whole chunk (header + zstd frame) through `decoder` and visit_events (`given`, `last`:
// as there; `given` is 0 when the chunk did not decompress), with
// ChunkDecoder::decode's checks (the last event's time must be the header's: checked after
// the last event went to `visit`). A zstd frame carries a checksum of its content, so a
// damaged stream in a frame that decompressed comes from a faulty encoder or a forged file,
// not from bit rot.
template <class Visit>
Status visit_chunk(ChunkDecoder& decoder, const uint8_t* chunk, size_t size, ChunkHeader& header,
                   Visit&& visit, uint32_t& given, uint64_t& last) {
  given = 0;
  const uint8_t* stream = nullptr;
  size_t n = 0;
  CRITPATH_FORWARD_IF_ERROR(decoder.stream(chunk, size, header, stream, n));
  CRITPATH_FORWARD_IF_ERROR(visit_events(stream, n, header.first_time, header.event_count,
                                         std::forward<Visit>(visit), header.version, &given, &last));
  return header.event_count > 0 && last != header.last_time ? Status::kCorrupt : Status::kOk;
}

}  // namespace critpath::trace
