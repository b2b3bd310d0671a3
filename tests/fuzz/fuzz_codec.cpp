// critpath — tests/fuzz/fuzz_codec.cpp: libFuzzer target for the trace decoder
// (libtrace/buffer/codec.*, docs/trace-format.md).
//
// One input feeds three decoders, each of which must return a Status and never crash, hang or
// read out of bounds: a whole chunk (header + zstd frame, what a kept trace file holds), the
// varint stream alone (decode_events, both forms and both format versions, and visit_events,
// the three agreeing), and raw slots
// (slots_to_events). Whatever slots parse must round-trip: encoded and decoded again, the same
// events.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "libtrace/buffer/codec.h"
#include "libtrace/buffer/codec_stream.h"

using namespace critpath;
using namespace critpath::trace;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ChunkDecoder decoder;
  ChunkHeader header;
  std::vector<Event> events;
  (void)decoder.decode(data, size, header, events);
  DecodedChunk compact;
  (void)decoder.decode(data, size, header, compact);

  // The varint stream without zstd: the first 12 bytes choose first_time, the count and
  // the format version (the count's top bit: v1, else the current one).
  if (size >= 12) {
    uint64_t first_time = 0;
    uint32_t count = 0;
    std::memcpy(&first_time, data, 8);
    std::memcpy(&count, data + 8, 4);
    const uint16_t version = (count & 0x80000000u) ? kChunkVersionOldest : kChunkVersion;
    count %= 4096;
    std::vector<Event> a;
    DecodedChunk b;
    const Status sa = decode_events(data + 12, size - 12, first_time, count, a, version);
    const Status sb = decode_events(data + 12, size - 12, first_time, count, b, version);
    if (sa != sb) std::abort();
    size_t visited = 0;
    const Status sc = visit_events(
        data + 12, size - 12, first_time, count,
        [&](uint64_t time, uint32_t region, uint16_t, EventKind kind, const Event* wide) {
          // Where the others decoded, the same events.
          if (sa == Status::kOk &&
              (visited >= a.size() || a[visited].time != time || a[visited].kind != kind ||
               (!wide && a[visited].region != region) || (wide && !(*wide == a[visited]))))
            std::abort();
          ++visited;
        },
        version);
    if (sc != sa) std::abort();
    if (sa == Status::kOk) {
      if (a.size() != b.size() || visited != a.size()) std::abort();
      for (size_t i = 0; i < a.size(); ++i) {
        Event e;
        b.get(i, e);
        if (!(e == a[i])) std::abort();
      }
    }
  }

  // Raw slots: what parses must survive encode + decode unchanged.
  const size_t n = size / sizeof(Slot);
  if (n > 0) {
    std::vector<Slot> slots(n);
    std::memcpy(slots.data(), data, n * sizeof(Slot));
    std::vector<Event> parsed;
    if (slots_to_events(slots.data(), slots.data() + n, parsed) == Status::kOk && !parsed.empty()) {
      std::vector<uint8_t> stream;
      ChunkHeader h;
      if (encode_slots(slots.data(), slots.data() + n, stream, h) == Status::kOk) {
        std::vector<Event> back;
        if (decode_events(stream.data(), stream.size(), h.first_time, h.event_count, back) != Status::kOk)
          std::abort();
        if (back.size() != parsed.size()) std::abort();
        for (size_t i = 0; i < back.size(); ++i)
          if (!(back[i] == parsed[i])) std::abort();
      }
    }
  }
  return 0;
}
