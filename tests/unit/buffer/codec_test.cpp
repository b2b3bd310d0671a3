// critpath — tests/unit/buffer/codec_test.cpp
//
// Unit tests for the codec stage (libtrace/buffer/codec.h, libtrace/event/event.h): the
// slot layout the hot path writes, the chunk header bytes, golden encoded streams that pin
// trace format v2 and keep v1 readable, a clock that steps by 26 ticks, round trips for
// every kind, and a corrupt-input fuzz of the
// decoder (random flips and truncations must give kCorrupt or a clean decode, never a
// crash). Tag: [codec].
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "libtrace/buffer/codec.h"
#include "libtrace/buffer/codec_stream.h"
#include "libtrace/buffer/varint.h"
#include "libtrace/event/event.h"
#include "tests/unit/buffer/buffer_test_util.h"

using namespace critpath;
using namespace critpath::trace;
using critpath::trace::testing::RandomEventSource;

namespace {

std::vector<Slot> to_slots(const std::vector<Event>& events) {
  std::vector<Slot> slots(events.size() * kMaxEventSlots);
  size_t pos = 0;
  for (const Event& e : events) pos += event_to_slots(e, slots.data() + pos);
  slots.resize(pos);
  return slots;
}

std::vector<Event> random_events(uint64_t seed, size_t n) {
  RandomEventSource src(seed);
  std::vector<Event> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) v.push_back(src.next());
  return v;
}

// Index of the first differing event, or -1 when the sequences are identical.
long first_difference(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() != b.size()) return long(std::min(a.size(), b.size()));
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return long(i);
  return -1;
}

const ExtraSlot* extra(const Slot* s) { return reinterpret_cast<const ExtraSlot*>(s + 1); }

// The events visit_events hands on, as whole Events (a narrow one's other fields zero).
Status visit_all(const uint8_t* data, size_t size, uint64_t first_time, uint32_t count,
                 std::vector<Event>& out, uint16_t version = kChunkVersion) {
  return visit_events(
      data, size, first_time, count,
      [&](uint64_t time, uint32_t region, uint16_t flags, EventKind kind, const Event* wide) {
        if (wide) {
          CHECK(wide->time == time);
          CHECK(wide->kind == kind);
          out.push_back(*wide);
          return;
        }
        Event& e = out.emplace_back();
        e.time = time;
        e.region = region;
        e.flags = flags;
        e.kind = kind;
      },
      version);
}

}  // namespace

TEST_CASE("to_string names every recordable kind", "[codec]") {
  std::set<std::string> names;
  for (EventKind k : testing::all_kinds()) {
    const std::string n = to_string(k);
    CHECK(n != "UNKNOWN");
    names.insert(n);
  }
  CHECK(names.size() == testing::all_kinds().size());
  CHECK(std::string(to_string(EventKind::kEnter)) == "ENTER");
  CHECK(std::string(to_string(EventKind::kCollEnd)) == "COLL_END");
  CHECK(std::string(to_string(EventKind(200))) == "UNKNOWN");
}

TEST_CASE("event_to_slots follows the slot layout in event.h", "[codec]") {
  Slot s[kMaxEventSlots];

  Event enter;
  enter.kind = EventKind::kEnter;
  enter.time = 0x0102030405060708ull;
  enter.region = 77;
  REQUIRE(event_to_slots(enter, s) == 1);
  CHECK(s[0].tsc == enter.time);
  CHECK(s[0].kind == uint8_t(EventKind::kEnter));
  CHECK(s[0].nextra == 0);
  CHECK(s[0].flags == 0);
  CHECK(s[0].arg == 77);
  // Byte offsets of the head slot as the diagram shows them.
  uint8_t bytes[16];
  std::memcpy(bytes, &s[0], 16);
  CHECK(bytes[8] == uint8_t(EventKind::kEnter));
  CHECK(bytes[12] == 77);

  Event send;
  send.kind = EventKind::kIsend;
  send.comm = 3;
  send.peer = -2;
  send.tag = 2147483647;
  send.bytes = uint64_t(1) << 40;
  send.request = 99;
  REQUIRE(event_to_slots(send, s) == 3);
  CHECK(s[0].nextra == 2);
  CHECK(s[0].arg == 3);
  CHECK(extra(s)[0].w0 == (uint64_t(0xfffffffeu) | (uint64_t(2147483647) << 32)));
  CHECK(extra(s)[0].w1 == send.bytes);
  CHECK(extra(s)[1].w0 == 99);
  CHECK(extra(s)[1].w1 == 0);

  Event req;
  req.kind = EventKind::kIrecvRequest;
  req.request = 12345;
  REQUIRE(event_to_slots(req, s) == 2);
  CHECK(s[0].nextra == 1);
  CHECK(s[0].arg == 0);
  CHECK(extra(s)[0].w0 == 12345);

  Event coll;
  coll.kind = EventKind::kIcollPost;
  coll.region = 500;
  coll.comm = 2;
  coll.root = -1;
  coll.bytes = 8;
  coll.bytes_received = 64;
  coll.request = 7;
  REQUIRE(event_to_slots(coll, s) == 3);
  CHECK(s[0].arg == 2);
  CHECK(extra(s)[0].w0 == (500ull | (uint64_t(0xffffffffu) << 32)));
  CHECK(extra(s)[0].w1 == 8);
  CHECK(extra(s)[1].w0 == 64);
  CHECK(extra(s)[1].w1 == 7);

  Event rma;
  rma.kind = EventKind::kRmaPut;
  rma.comm = 9;
  rma.peer = 4;
  rma.region = 2;
  rma.bytes = 1000;
  rma.request = 5;
  rma.root = -3;
  REQUIRE(event_to_slots(rma, s) == 3);
  CHECK(s[0].arg == 9);
  CHECK(extra(s)[0].w0 == (4ull | (2ull << 32)));
  CHECK(extra(s)[0].w1 == 1000);
  CHECK(extra(s)[1].w0 == 5);
  CHECK(extra(s)[1].w1 == 0xfffffffdull);

  Event ctr;
  ctr.kind = EventKind::kCounters;
  ctr.bytes = 3;
  ctr.counters[0] = 10;
  ctr.counters[1] = 11;
  ctr.counters[2] = 12;
  REQUIRE(event_to_slots(ctr, s) == 3);
  CHECK(s[0].nextra == 2);
  CHECK(s[0].arg == 3);
  CHECK(extra(s)[0].w0 == 10);
  CHECK(extra(s)[0].w1 == 11);
  CHECK(extra(s)[1].w0 == 12);
  CHECK(extra(s)[1].w1 == 0);
  ctr.bytes = kMaxCounters;
  CHECK(event_to_slots(ctr, s) == kMaxEventSlots);
}

TEST_CASE("slots_to_events rejects malformed raw chunks", "[codec]") {
  std::vector<Event> out;
  Slot s[4] = {};
  s[0].kind = 0;  // kInvalid
  CHECK(slots_to_events(s, s + 1, out) == Status::kCorrupt);
  for (uint8_t k : {uint8_t(15), uint8_t(31), uint8_t(39), uint8_t(63), uint8_t(68), uint8_t(255)}) {
    s[0].kind = k;
    CHECK(slots_to_events(s, s + 1, out) == Status::kCorrupt);
  }
  s[0].kind = uint8_t(EventKind::kSend);
  s[0].nextra = 1;
  CHECK(slots_to_events(s, s + 1, out) == Status::kCorrupt);  // truncated
  CHECK(slots_to_events(s, s + 2, out) == Status::kOk);
  s[0].nextra = 2;  // wrong extra count for SEND
  CHECK(slots_to_events(s, s + 3, out) == Status::kCorrupt);
  s[0].kind = uint8_t(EventKind::kCounters);
  s[0].arg = kMaxCounters + 1;
  s[0].nextra = 0;
  CHECK(slots_to_events(s, s + 4, out) == Status::kCorrupt);

  std::vector<uint8_t> enc;
  ChunkHeader h;
  s[0].kind = 0;
  CHECK(encode_slots(s, s + 1, enc, h) == Status::kCorrupt);
  CHECK(enc.empty());
}

TEST_CASE("chunk header serializes little-endian at fixed offsets", "[codec]") {
  ChunkHeader h;
  h.location = 0x0201;
  h.sequence = 0x06050403;
  h.event_count = 2;
  h.encoded_size = 0x100;
  h.payload_size = 0x0d0c0b0a;
  h.first_time = 0x1112131415161718ull;
  h.last_time = 0x2122232425262728ull;
  uint8_t b[kChunkHeaderSize];
  write_header(h, b);
  const uint8_t golden[kChunkHeaderSize] = {0x43, 0x50, 0x43, 0x4b, 0x02, 0x00, 0x01, 0x02, 0x03, 0x04,
                                            0x05, 0x06, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                                            0x0a, 0x0b, 0x0c, 0x0d, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13,
                                            0x12, 0x11, 0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21};
  CHECK(std::memcmp(b, golden, kChunkHeaderSize) == 0);
  CHECK(std::memcmp(b, "CPCK", 4) == 0);

  ChunkHeader r;
  REQUIRE(read_header(b, kChunkHeaderSize, r) == Status::kOk);
  CHECK(r.location == h.location);
  CHECK(r.sequence == h.sequence);
  CHECK(r.event_count == h.event_count);
  CHECK(r.encoded_size == h.encoded_size);
  CHECK(r.payload_size == h.payload_size);
  CHECK(r.first_time == h.first_time);
  CHECK(r.last_time == h.last_time);

  CHECK(read_header(b, kChunkHeaderSize - 1, r) == Status::kCorrupt);
  CHECK(read_header(nullptr, 0, r) == Status::kCorrupt);
  uint8_t bad[kChunkHeaderSize];
  std::memcpy(bad, b, sizeof bad);
  bad[0] ^= 1;  // magic
  CHECK(read_header(bad, sizeof bad, r) == Status::kCorrupt);
  std::memcpy(bad, b, sizeof bad);
  bad[4] = 3;  // a version this decoder does not know
  CHECK(read_header(bad, sizeof bad, r) == Status::kCorrupt);
  bad[4] = 0;
  CHECK(read_header(bad, sizeof bad, r) == Status::kCorrupt);
  bad[4] = 1;  // v1 chunks still read
  CHECK(read_header(bad, sizeof bad, r) == Status::kOk);
  std::memcpy(bad, b, sizeof bad);
  bad[14] = 0x10;  // event_count far beyond what encoded_size can hold
  CHECK(read_header(bad, sizeof bad, r) == Status::kCorrupt);
}

// The six events of docs/trace-format.md §5.4.
static std::vector<Event> worked_example() {
  std::vector<Event> ev(6);
  ev[0].kind = EventKind::kEnter, ev[0].region = 5, ev[0].time = 1000;
  ev[1].kind = EventKind::kExit, ev[1].region = 5, ev[1].time = 1300;
  ev[2].kind = EventKind::kEnter, ev[2].region = 5, ev[2].time = 1350;
  ev[3].kind = EventKind::kExit, ev[3].region = 5, ev[3].time = 1660, ev[3].flags = 2;
  ev[4].kind = EventKind::kIsend, ev[4].comm = 1, ev[4].peer = -2, ev[4].tag = 7;
  ev[4].bytes = 300, ev[4].request = 10, ev[4].time = 1700;
  ev[5].kind = EventKind::kIsendComplete, ev[5].request = 9, ev[5].time = 1700;
  return ev;
}

TEST_CASE("v1 golden bytes still decode", "[codec]") {
  // The v1 layout (t_size | K | T | A, every delta predicted), as kept traces written before
  // v2 hold it.
  const std::vector<uint8_t> v1 = {
      0x07, 0x00, 0x00, 0x00,                    // t_size = 7
      0x01, 0x02, 0x01, 0x82, 0x05, 0x06,        // K (0x82: EXIT + flags)
      0x00, 0xd8, 0x04, 0x64, 0x14, 0x50, 0x00,  // T: zigzag residuals 0,300,50,10,40,0
      0x05, 0x05, 0x05, 0x02, 0x05,              // A: regions, flags=2 before region
      0x01, 0x03, 0x0e, 0xac, 0x02, 0x14,        //    ISEND comm, peer, tag, bytes, req
      0x01};                                     //    ISEND_COMPLETE request delta -1
  std::vector<Event> back;
  REQUIRE(decode_events(v1.data(), v1.size(), 1000, 6, back, 1) == Status::kOk);
  CHECK(first_difference(back, worked_example()) == -1);
  // The same bytes are no v2 stream.
  back.clear();
  CHECK(decode_events(v1.data(), v1.size(), 1000, 6, back) == Status::kCorrupt);
}

TEST_CASE("encoded stream matches the v2 golden bytes", "[codec]") {
  // Pins the column layout (docs/trace-format.md §5.4): t_size | r_size | step | K | T | A,
  // with a clock step of 1 (too few deltas to vote on one) and no R column.
  const std::vector<Event> ev = worked_example();
  const std::vector<Slot> slots = to_slots(ev);

  std::vector<uint8_t> enc = {0xee};  // encode_slots appends
  ChunkHeader h;
  REQUIRE(encode_slots(slots.data(), slots.data() + slots.size(), enc, h) == Status::kOk);
  const std::vector<uint8_t> golden = {
      0xee,                                      // pre-existing byte
      0x08, 0x00, 0x00, 0x00,                    // t_size = 8
      0x00, 0x00, 0x00, 0x00,                    // r_size = 0
      0x01, 0x00, 0x00, 0x00,                    // step = 1
      0x01, 0x02, 0x01, 0x82, 0x05, 0x06,        // K (0x82: EXIT + flags)
      0x00, 0xac, 0x02, 0x32, 0xb6, 0x02, 0x28,  // T: steps 0, 300, 50, 310 (its context's
      0x00,                                      //    last 300 was no prediction yet), 40, 0
      0x05, 0x05, 0x05, 0x02, 0x05,              // A: regions, flags=2 before region
      0x01, 0x03, 0x0e, 0xac, 0x02, 0x14,        //    ISEND comm, peer, tag, bytes, req
      0x01};                                     //    ISEND_COMPLETE request delta -1
  CHECK(enc == golden);
  CHECK(h.event_count == 6);
  CHECK(h.first_time == 1000);
  CHECK(h.last_time == 1700);

  std::vector<Event> back;
  REQUIRE(decode_events(enc.data() + 1, enc.size() - 1, h.first_time, h.event_count, back) == Status::kOk);
  CHECK(first_difference(back, ev) == -1);
}

TEST_CASE("a clock that steps by 26 ticks is coded in steps and phases", "[codec]") {
  // A loop of ENTER/EXIT on a 26-tick clock whose phase slips by one tick now and then,
  // with a backward step and a gap beyond 2^32 ticks: lossless, and smaller than the same
  // loop on a 1-tick clock with the same jitter scaled (the step's bits cost nothing).
  std::mt19937_64 rng(7);
  std::vector<Event> ev;
  uint64_t t = 1000003;
  for (unsigned i = 0; i < 20000; ++i) {
    Event e;
    e.kind = i % 2 ? EventKind::kExit : EventKind::kEnter;
    e.region = 1024 + (i / 2) % 3;
    t += 26 * (i % 2 ? 40 + rng() % 3 : 7 + rng() % 50);
    if (i % 997 == 0) t += 1;        // phase slip
    if (i == 5000) t -= 26 * 100;    // backward
    if (i == 9000) t += 1ull << 33;  // gap
    e.time = t;
    ev.push_back(e);
  }
  const std::vector<Slot> slots = to_slots(ev);
  std::vector<uint8_t> enc;
  ChunkHeader h;
  REQUIRE(encode_slots(slots.data(), slots.data() + slots.size(), enc, h) == Status::kOk);
  CHECK((enc[8] | (enc[9] << 8)) == 26);  // the step
  std::vector<Event> back;
  REQUIRE(decode_events(enc.data(), enc.size(), h.first_time, h.event_count, back) == Status::kOk);
  CHECK(first_difference(back, ev) == -1);
  DecodedChunk compact;
  REQUIRE(decode_events(enc.data(), enc.size(), h.first_time, h.event_count, compact) == Status::kOk);
  REQUIRE(compact.size() == ev.size());
  for (size_t i = 0; i < ev.size(); i += 101) CHECK(compact.events[i].time == ev[i].time);

  // A phase that is not below the step is corrupt.
  const uint32_t t_len = enc[0] | (enc[1] << 8) | (enc[2] << 16) | (uint32_t(enc[3]) << 24);
  std::vector<uint8_t> bad = enc;
  bad[12 + ev.size() + t_len] = 26;
  back.clear();
  CHECK(decode_events(bad.data(), bad.size(), h.first_time, h.event_count, back) == Status::kCorrupt);
}

TEST_CASE("every kind round-trips through slots, stream and chunk", "[codec]") {
  const std::vector<Event> ev = random_events(42, 200000);
  const std::vector<Slot> slots = to_slots(ev);

  std::vector<Event> parsed;
  REQUIRE(slots_to_events(slots.data(), slots.data() + slots.size(), parsed) == Status::kOk);
  CHECK(first_difference(parsed, ev) == -1);

  std::vector<uint8_t> enc;
  ChunkHeader h;
  REQUIRE(encode_slots(slots.data(), slots.data() + slots.size(), enc, h) == Status::kOk);
  CHECK(h.event_count == ev.size());
  CHECK(h.first_time == ev.front().time);
  CHECK(h.last_time == ev.back().time);
  std::vector<Event> decoded;
  REQUIRE(decode_events(enc.data(), enc.size(), h.first_time, h.event_count, decoded) == Status::kOk);
  CHECK(first_difference(decoded, ev) == -1);
  std::vector<Event> visited;
  REQUIRE(visit_all(enc.data(), enc.size(), h.first_time, h.event_count, visited) == Status::kOk);
  CHECK(first_difference(visited, ev) == -1);

  // The same through compressor and decoder, in chunks of assorted sizes; the compressor
  // and decoder are reused across chunks like the runtime does.
  ChunkCompressor comp(1);
  ChunkDecoder dec;
  std::vector<uint8_t> chunk;
  std::vector<Event> out;
  size_t at = 0, ev_at = 0;
  uint32_t seq = 0;
  for (size_t want : {0, 1, 2, 100, 16384, 3, 70000, 16384}) {
    size_t end = at;
    size_t n = 0;
    while (end < slots.size() && end - at < want) {
      end += 1 + slots[end].nextra;
      ++n;
    }
    REQUIRE(comp.compress(slots.data() + at, slots.data() + end, 7, seq, chunk) == Status::kOk);
    ChunkHeader ch;
    REQUIRE(dec.decode(chunk.data(), chunk.size(), ch, out) == Status::kOk);
    size_t seen = 0;
    ChunkHeader vh;
    uint32_t given = 0;
    uint64_t last = 0;
    REQUIRE(visit_chunk(
                dec, chunk.data(), chunk.size(), vh,
                [&](uint64_t time, uint32_t, uint16_t, EventKind kind, const Event*) {
                  CHECK(time == out[seen].time);
                  CHECK(kind == out[seen].kind);
                  ++seen;
                },
                given, last) == Status::kOk);
    CHECK(seen == n);
    CHECK(given == n);
    if (n > 0) CHECK(last == out.back().time);
    CHECK(ch.location == 7);
    CHECK(ch.sequence == seq);
    CHECK(ch.event_count == n);
    CHECK(ch.payload_size + kChunkHeaderSize == chunk.size());
    REQUIRE(out.size() == n);
    CHECK(first_difference(out, std::vector<Event>(ev.begin() + long(ev_at), ev.begin() + long(ev_at + n))) ==
          -1);
    at = end;
    ev_at += n;
    ++seq;
  }
}

TEST_CASE("extreme field values and backward time round-trip", "[codec]") {
  std::vector<Event> ev;
  Event e;
  e.kind = EventKind::kSend;
  e.time = UINT64_MAX;
  e.comm = UINT32_MAX;
  e.peer = INT32_MIN;
  e.tag = INT32_MAX;
  e.bytes = UINT64_MAX;
  e.flags = UINT16_MAX;
  ev.push_back(e);
  Event f;
  f.kind = EventKind::kIcollPost;
  f.time = 0;  // time going backward by 2^64-1
  f.region = UINT32_MAX;
  f.root = INT32_MIN;
  f.bytes_received = UINT64_MAX;
  f.request = UINT64_MAX;
  ev.push_back(f);
  Event g;
  g.kind = EventKind::kIcollComplete;
  g.time = UINT64_MAX / 2;
  g.request = 0;
  ev.push_back(g);
  Event c;
  c.kind = EventKind::kCounters;
  c.time = 5;
  c.bytes = kMaxCounters;
  for (unsigned i = 0; i < kMaxCounters; ++i) c.counters[i] = i % 2 ? UINT64_MAX : 0;
  ev.push_back(c);
  c.time = 4;
  for (unsigned i = 0; i < kMaxCounters; ++i) c.counters[i] = i % 2 ? 0 : UINT64_MAX;
  ev.push_back(c);
  Event z;
  z.kind = EventKind::kCounters;
  z.time = 4;
  ev.push_back(z);  // zero counters: a single head slot

  const std::vector<Slot> slots = to_slots(ev);
  ChunkCompressor comp(3);
  ChunkDecoder dec;
  std::vector<uint8_t> chunk;
  REQUIRE(comp.compress(slots.data(), slots.data() + slots.size(), 0, 0, chunk) == Status::kOk);
  ChunkHeader h;
  std::vector<Event> out;
  REQUIRE(dec.decode(chunk.data(), chunk.size(), h, out) == Status::kOk);
  CHECK(first_difference(out, ev) == -1);
}

TEST_CASE("decoder survives corrupt chunks and streams", "[codec]") {
  // Valid inputs of a few shapes: random kinds, a tiny chunk, an empty chunk.
  ChunkCompressor comp(1);
  std::vector<std::vector<uint8_t>> chunks;
  std::vector<std::vector<uint8_t>> streams;
  std::vector<ChunkHeader> stream_headers;
  for (size_t n : {size_t(0), size_t(1), size_t(40), size_t(600)}) {
    const std::vector<Slot> slots = to_slots(random_events(1000 + n, n));
    std::vector<uint8_t> c;
    REQUIRE(comp.compress(slots.data(), slots.data() + slots.size(), 1, 2, c) == Status::kOk);
    chunks.push_back(c);
    std::vector<uint8_t> s;
    ChunkHeader h;
    REQUIRE(encode_slots(slots.data(), slots.data() + slots.size(), s, h) == Status::kOk);
    streams.push_back(s);
    stream_headers.push_back(h);
  }

  ChunkDecoder dec;
  std::vector<Event> out;
  ChunkHeader h;
  std::mt19937_64 rng(7);
  uint64_t ok = 0, corrupt = 0, other = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    const size_t which = rng() % chunks.size();
    std::vector<uint8_t> c = chunks[which];
    const unsigned mode = unsigned(rng() % 4);
    bool must_fail = false;
    if (mode == 0) {
      c.resize(rng() % c.size());  // truncate (possibly to nothing)
      must_fail = true;
    } else if (mode == 1) {
      c.push_back(uint8_t(rng()));  // trailing garbage
      must_fail = true;
    } else {
      const int flips = 1 + int(rng() % 4);
      for (int f = 0; f < flips; ++f) c[rng() % c.size()] ^= uint8_t(1u << (rng() % 8));
    }
    const Status s = dec.decode(c.data(), c.size(), h, out);
    if (s == Status::kOk) {
      ++ok;
      CHECK(out.size() == h.event_count);
    } else if (s == Status::kCorrupt) {
      ++corrupt;
      CHECK(out.empty());
    } else {
      ++other;
    }
    if (must_fail && s == Status::kOk) FAIL("truncated/extended chunk decoded as valid");
  }
  INFO("decoded ok " << ok << ", corrupt " << corrupt);
  CHECK(other == 0);
  CHECK(corrupt > 15000);

  // The raw varint stream has no checksum: flips may decode to other valid events, but
  // never crash, never read out of bounds, and a truncation is always detected.
  uint64_t stream_ok = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    const size_t which = 1 + rng() % (streams.size() - 1);
    std::vector<uint8_t> s = streams[which];
    const ChunkHeader& sh = stream_headers[which];
    uint32_t count = sh.event_count;
    const unsigned mode = unsigned(rng() % 4);
    bool must_fail = false;
    if (mode == 0) {
      s.resize(rng() % s.size());
      must_fail = true;
    } else if (mode == 1) {
      count += rng() % 2 ? 1 : -1;  // event_count mismatch
      must_fail = true;
    } else {
      const int flips = 1 + int(rng() % 3);
      for (int f = 0; f < flips; ++f) s[rng() % s.size()] ^= uint8_t(1u << (rng() % 8));
    }
    // Decode into an exactly sized copy so any overread would hit the heap redzone
    // under a sanitizer build.
    std::vector<uint8_t> exact(s.begin(), s.end());
    out.clear();
    const Status st = decode_events(exact.data(), exact.size(), sh.first_time, count, out);
    std::vector<Event> visited;
    CHECK(visit_all(exact.data(), exact.size(), sh.first_time, count, visited) == st);
    if (st == Status::kOk) {
      ++stream_ok;
      CHECK(out.size() == count);
      CHECK(first_difference(visited, out) == -1);
    } else {
      CHECK(st == Status::kCorrupt);
      CHECK(out.empty());
    }
    if (must_fail && st == Status::kOk) FAIL("truncated stream or wrong count decoded as valid");
  }
  INFO("stream flips that still decoded: " << stream_ok);

  // Pure garbage of every small size.
  for (size_t n = 0; n < 300; ++n) {
    std::vector<uint8_t> g(n);
    for (auto& b : g) b = uint8_t(rng());
    if (n >= 4) std::memcpy(g.data(), "CPCK", 4);
    if (n >= 6) g[4] = 1, g[5] = 0;
    CHECK(dec.decode(g.data(), g.size(), h, out) == Status::kCorrupt);
    out.clear();
    const Status st = decode_events(g.data(), g.size(), 0, uint32_t(rng() % 64), out);
    CHECK((st == Status::kCorrupt || st == Status::kOk));
  }
}

TEST_CASE("visit_events stops before the event a damage reaches", "[codec]") {
  // A stream whose event 300 has an unknown kind: decode_events stores nothing, visit_events
  // has handed on events 0..299, decoded as before the damage, and none after.
  const std::vector<Event> ev = random_events(11, 1000);
  const std::vector<Slot> slots = to_slots(ev);
  std::vector<uint8_t> enc;
  ChunkHeader h;
  REQUIRE(encode_slots(slots.data(), slots.data() + slots.size(), enc, h) == Status::kOk);
  std::vector<uint8_t> bad = enc;
  bad[12 + 300] = 0x7f;  // K column: kind 127, no layout
  std::vector<Event> out;
  CHECK(decode_events(bad.data(), bad.size(), h.first_time, h.event_count, out) == Status::kCorrupt);
  CHECK(out.empty());
  std::vector<Event> visited;
  CHECK(visit_all(bad.data(), bad.size(), h.first_time, h.event_count, visited) == Status::kCorrupt);
  CHECK(first_difference(visited, std::vector<Event>(ev.begin(), ev.begin() + 300)) == -1);
  uint32_t given = 0;
  uint64_t last = 0;
  CHECK(visit_events(
            bad.data(), bad.size(), h.first_time, h.event_count,
            [](uint64_t, uint32_t, uint16_t, EventKind, const Event*) {}, kChunkVersion, &given,
            &last) == Status::kCorrupt);
  CHECK(given == 300);
  CHECK(last == ev[299].time);

  // A stream cut short in its last column: the events whose fields are still there go on, the
  // first one whose read fails does not.
  visited.clear();
  CHECK(visit_all(enc.data(), enc.size() - 40, h.first_time, h.event_count, visited) == Status::kCorrupt);
  CHECK(visited.size() < ev.size());
  CHECK(first_difference(visited, std::vector<Event>(ev.begin(), ev.begin() + long(visited.size()))) == -1);
}

TEST_CASE("header fields that disagree with the frame are corrupt", "[codec]") {
  const std::vector<Slot> slots = to_slots(random_events(5, 300));
  ChunkCompressor comp(1);
  std::vector<uint8_t> chunk;
  REQUIRE(comp.compress(slots.data(), slots.data() + slots.size(), 0, 0, chunk) == Status::kOk);
  ChunkHeader h;
  REQUIRE(read_header(chunk.data(), chunk.size(), h) == Status::kOk);
  ChunkDecoder dec;
  std::vector<Event> out;

  auto with = [&](auto mutate) {
    ChunkHeader m = h;
    mutate(m);
    std::vector<uint8_t> c = chunk;
    write_header(m, c.data());
    ChunkHeader got;
    return dec.decode(c.data(), c.size(), got, out);
  };
  CHECK(with([](ChunkHeader&) {}) == Status::kOk);
  CHECK(with([](ChunkHeader& m) { m.event_count += 1; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.event_count -= 1; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.encoded_size += 1; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.encoded_size -= 1; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.payload_size -= 1; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.encoded_size = 0xffffffffu; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.first_time += 1; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.last_time -= 1; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.magic = 0; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.version = 3; }) == Status::kCorrupt);
  CHECK(with([](ChunkHeader& m) { m.version = 1; }) == Status::kCorrupt);  // a v2 stream read as v1
  // Location and sequence are index data, not integrity data.
  CHECK(with([](ChunkHeader& m) { m.sequence = 12; }) == Status::kOk);
}

TEST_CASE("a reused DecodedChunk's wide events hold nothing of the chunk before", "[codec]") {
  // The first chunk's wide slots hold counters and a collective; the second chunk's wide
  // events land in the same slots and must read exactly as decoded afresh.
  auto encode = [](const std::vector<Event>& ev, std::vector<uint8_t>& enc, ChunkHeader& h) {
    const std::vector<Slot> slots = to_slots(ev);
    enc.clear();
    REQUIRE(encode_slots(slots.data(), slots.data() + slots.size(), enc, h) == Status::kOk);
  };
  auto event = [](EventKind kind, uint64_t time) {
    Event e;
    e.kind = kind;
    e.time = time;
    return e;
  };
  std::vector<Event> first{event(EventKind::kCounters, 1000), event(EventKind::kCollEnd, 1010),
                           event(EventKind::kEnter, 1020)};
  first[0].bytes = 3;
  for (unsigned k = 0; k < 3; ++k) first[0].counters[k] = 11 * (k + 1);
  first[1].region = 7;
  first[1].comm = 2;
  first[1].root = 1;
  first[1].bytes = 64;
  first[1].bytes_received = 128;
  first[2].region = 1500;
  std::vector<Event> second{event(EventKind::kSend, 2000), event(EventKind::kIrecvRequest, 2010),
                            event(EventKind::kExit, 2020)};
  second[0].peer = 1;
  second[0].tag = 9;
  second[0].bytes = 8;
  second[1].request = 5;
  second[2].region = 1500;
  DecodedChunk compact;
  for (const std::vector<Event>* ev : {&first, &second}) {
    std::vector<uint8_t> enc;
    ChunkHeader h;
    encode(*ev, enc, h);
    REQUIRE(decode_events(enc.data(), enc.size(), h.first_time, h.event_count, compact) == Status::kOk);
    REQUIRE(compact.size() == ev->size());
    for (size_t i = 0; i < ev->size(); ++i) {
      Event got;
      compact.get(i, got);
      CHECK(got == (*ev)[i]);
    }
  }
}

TEST_CASE("varints: round trip, zigzag deltas, truncated input refused", "[codec]") {
  const uint64_t values[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, uint64_t(1) << 35, UINT64_MAX};
  std::vector<unsigned char> b;
  for (uint64_t v : values) put_varint(b, v);
  CHECK(b.size() == 1 + 1 + 1 + 2 + 2 + 2 + 3 + 5 + 6 + 10);
  const unsigned char* p = b.data();
  for (uint64_t want : values) {
    uint64_t v = 7;
    REQUIRE(get_varint(p, b.data() + b.size(), v));
    CHECK(v == want);
  }
  CHECK(p == b.data() + b.size());
  uint64_t v = 0;
  CHECK_FALSE(get_varint(p, b.data() + b.size(), v));  // nothing left
  const unsigned char cut[] = {0x80, 0x80};            // a value that never ends
  p = cut;
  CHECK_FALSE(get_varint(p, cut + 2, v));

  CHECK(zigzag(0) == 0);
  CHECK(zigzag(-1) == 1);
  CHECK(zigzag(1) == 2);
  CHECK(zigzag(-2) == 3);
  for (int64_t d :
       {int64_t(0), int64_t(-1), int64_t(5), int64_t(-4294967295), int64_t(4294967295), INT64_MIN, INT64_MAX})
    CHECK(unzigzag(zigzag(d)) == d);
}
