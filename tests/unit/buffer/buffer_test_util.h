// critpath — tests/unit/buffer/buffer_test_util.h
//
// Shared helpers for the buffer-stage tests: a reproducible random event generator that
// produces a trace chunk by chunk (so a 10M-event trace never has to sit in memory as
// Events: each chunk is regenerated from its seed when the decode is checked), and the
// writer side of the round trip (raw slots -> ChunkCompressor -> ChunkStore).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "libtrace/buffer/chunk_store.h"
#include "libtrace/buffer/codec.h"
#include "libtrace/buffer/trace_reader.h"
#include "libtrace/event/event.h"

namespace critpath::trace::testing {

// Every recordable kind (REQUEST_TEST included, although the runtime only counts it).
inline const std::vector<EventKind>& all_kinds() {
  // clang-format off
  static const std::vector<EventKind> kinds = {
      EventKind::kEnter,          EventKind::kExit,          EventKind::kSend,
      EventKind::kRecv,           EventKind::kIsend,         EventKind::kIsendComplete,
      EventKind::kIrecvRequest,   EventKind::kIrecv,         EventKind::kRequestTest,
      EventKind::kRequestCancel,  EventKind::kCollBegin,     EventKind::kCollEnd,
      EventKind::kIcollPost,      EventKind::kIcollComplete, EventKind::kRmaWinCreate,
      EventKind::kRmaWinFree,     EventKind::kRmaPut,        EventKind::kRmaGet,
      EventKind::kRmaAccumulate,  EventKind::kRmaSync,       EventKind::kRmaCollSync,
      EventKind::kMeasurementOff, EventKind::kMeasurementOn, EventKind::kCounters,
      EventKind::kCallsite};
  // clang-format on
  return kinds;
}

// Random but valid events: only the fields a kind uses are set, the rest stay zero.
class RandomEventSource {
 public:
  explicit RandomEventSource(uint64_t seed, uint64_t start_time = 1000) : rng_(seed), time_(start_time) {}

  uint64_t time() const { return time_; }

  Event next() {
    Event e;
    const auto& kinds = all_kinds();
    e.kind = kinds[pick(kinds.size())];
    // Timestamps never decrease; mostly small steps, sometimes equal, rarely huge jumps.
    const unsigned r = unsigned(pick(1000));
    if (r < 50) {
      // same tick
    } else if (r < 55) {
      time_ += uint64_t(1) << (20 + pick(21));  // up to 2^40 ticks (minutes at 3 GHz)
    } else {
      time_ += pick(5000);
    }
    e.time = time_;
    if (pick(8) == 0) e.flags = uint16_t(rng_());
    switch (e.kind) {
      case EventKind::kEnter:
      case EventKind::kExit:
      case EventKind::kMeasurementOff:
      case EventKind::kMeasurementOn:
      case EventKind::kCallsite: e.region = small_or_big_u32(); break;
      case EventKind::kSend:
      case EventKind::kRecv:
      case EventKind::kIsend:
      case EventKind::kIrecv:
        e.comm = small_or_big_u32();
        e.peer = peer();
        e.tag = tag();
        e.bytes = bytes();
        if (e.kind == EventKind::kIsend || e.kind == EventKind::kIrecv) e.request = request();
        break;
      case EventKind::kIsendComplete:
      case EventKind::kIrecvRequest:
      case EventKind::kRequestTest:
      case EventKind::kRequestCancel:
      case EventKind::kIcollComplete: e.request = request(); break;
      case EventKind::kCollBegin: break;
      case EventKind::kCollEnd:
      case EventKind::kIcollPost:
        e.region = small_or_big_u32();
        e.comm = small_or_big_u32();
        e.root = pick(2) ? -1 : peer();
        e.bytes = bytes();
        e.bytes_received = bytes();
        if (e.kind == EventKind::kIcollPost) e.request = request();
        break;
      case EventKind::kCounters: {
        const unsigned n = pick(4) ? kMaxCounters : unsigned(pick(kMaxCounters + 1));
        e.bytes = n;
        for (unsigned i = 0; i < n; ++i) e.counters[i] = pick(2) ? rng_() : (counter_[i] += pick(1u << 20));
        break;
      }
      default:  // RMA range
        e.comm = small_or_big_u32();
        e.peer = peer();
        e.region = uint32_t(pick(8));
        e.bytes = bytes();
        e.request = pick(2) ? 0 : rng_();
        e.root = int32_t(uint32_t(rng_()));
        break;
    }
    return e;
  }

 private:
  uint64_t pick(uint64_t n) { return n ? rng_() % n : 0; }
  uint32_t small_or_big_u32() { return pick(4) ? uint32_t(pick(200)) : uint32_t(rng_()); }
  int32_t peer() {
    switch (pick(6)) {
      case 0: return -2;  // MPI_PROC_NULL-like
      case 1: return -1;  // MPI_ANY_SOURCE-like
      case 2: return int32_t(pick(uint64_t(1) << 31));
      default: return int32_t(pick(64));
    }
  }
  int32_t tag() {
    switch (pick(5)) {
      case 0: return -1;
      case 1: return 2147483647;
      case 2: return int32_t(pick(uint64_t(1) << 31));
      default: return int32_t(pick(100));
    }
  }
  uint64_t bytes() {
    switch (pick(4)) {
      case 0: return uint64_t(1) << 40;
      case 1: return pick((uint64_t(1) << 40) + 1);
      default: return pick(100000);
    }
  }
  uint64_t request() {
    switch (pick(4)) {
      case 0: return rng_();  // arbitrary id: large deltas both ways
      default: return next_request_ += pick(3);
    }
  }

  std::mt19937_64 rng_;
  uint64_t time_;
  uint64_t next_request_ = 1;
  uint64_t counter_[kMaxCounters] = {};
};

// One raw chunk: the events generated for it and their slots. A chunk is cut when the next
// event might not fit, as the recorder's tail-room rule does.
struct RawChunk {
  std::vector<Event> events;
  std::vector<Slot> slots;
};

// The generator state at the start of each chunk, so any chunk can be regenerated alone.
struct ChunkSeed {
  uint64_t seed;
  uint64_t start_time;
  size_t events;  // events generated for this chunk
};

inline void generate_chunk(const ChunkSeed& cs, size_t chunk_slots, size_t max_events, RawChunk& out,
                           uint64_t* end_time = nullptr) {
  RandomEventSource src(cs.seed, cs.start_time);
  out.events.clear();
  out.slots.resize(chunk_slots + kMaxEventSlots);
  size_t pos = 0;
  while (pos + kMaxEventSlots <= chunk_slots && out.events.size() < max_events) {
    const Event e = src.next();
    pos += event_to_slots(e, out.slots.data() + pos);
    out.events.push_back(e);
  }
  out.slots.resize(pos);
  if (end_time) *end_time = src.time();
}

// Generates `total_events` random events for one location as chunks of `chunk_slots`
// slots, compresses each and appends it to `store`. Returns the per-chunk seeds.
// `append_status` collects each append's status (for the spill tests).
inline std::vector<ChunkSeed> fill_store(ChunkStore& store, uint64_t seed, size_t total_events,
                                         size_t chunk_slots, uint16_t location,
                                         std::vector<Status>* append_status = nullptr,
                                         std::vector<RawChunk>* keep = nullptr) {
  std::vector<ChunkSeed> seeds;
  ChunkCompressor comp(1);
  RawChunk raw;
  std::vector<uint8_t> chunk;
  uint64_t t = 1000;
  size_t done = 0;
  std::mt19937_64 seeder(seed);
  for (uint32_t seq = 0; done < total_events; ++seq) {
    ChunkSeed cs{seeder(), t, 0};
    generate_chunk(cs, chunk_slots, total_events - done, raw, &t);
    cs.events = raw.events.size();
    done += cs.events;
    seeds.push_back(cs);
    const Status c = comp.compress(raw.slots.data(), raw.slots.data() + raw.slots.size(), location, seq,
                                   chunk);
    const Status a = c == Status::kOk ? store.append(std::move(chunk)) : c;
    if (append_status) append_status->push_back(a);
    if (keep) keep->push_back(raw);
  }
  return seeds;
}

// Walks the store's location forward and then backward with one TraceReader and compares
// every event with the regenerated sequence. Returns the number of mismatches (0 = ok);
// `first_bad` describes the first one.
inline uint64_t verify_store(const ChunkStore& store, uint16_t location, const std::vector<ChunkSeed>& seeds,
                             size_t total_events, size_t chunk_slots, std::string& first_bad) {
  uint64_t bad = 0;
  auto note = [&](const std::string& what) {
    if (bad++ == 0) first_bad = what;
  };
  TraceReader reader(store, location);
  if (reader.event_count() != total_events) note("event_count differs");
  RawChunk raw;
  Event e;
  uint64_t index = 0;
  for (size_t c = 0; c < seeds.size(); ++c) {
    generate_chunk(seeds[c], chunk_slots, seeds[c].events, raw);
    for (const Event& want : raw.events) {
      if (!reader.next(e)) {
        note("forward: next() ended early at " + std::to_string(index));
        return bad;
      }
      if (!(e == want)) note("forward: event " + std::to_string(index) + " differs");
      ++index;
    }
  }
  if (reader.next(e)) note("forward: extra event");
  if (reader.status() != Status::kOk) note("forward: reader status not ok");

  reader.seek_end();
  for (size_t c = seeds.size(); c-- > 0;) {
    generate_chunk(seeds[c], chunk_slots, seeds[c].events, raw);
    for (size_t i = raw.events.size(); i-- > 0;) {
      --index;
      if (!reader.prev(e)) {
        note("backward: prev() ended early at " + std::to_string(index));
        return bad;
      }
      if (!(e == raw.events[i])) note("backward: event " + std::to_string(index) + " differs");
    }
  }
  if (reader.prev(e)) note("backward: extra event");
  if (reader.status() != Status::kOk) note("backward: reader status not ok");
  return bad;
}

}  // namespace critpath::trace::testing
