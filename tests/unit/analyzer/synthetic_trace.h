// critpath — tests/unit/analyzer/synthetic_trace.h: hand-written traces for the analyzer's unit
// tests (no MPI): MPI regions defined with the semantics the analysis reads, and one location's
// events written in time order, then compressed into a chunk store as the recorder would.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "libtrace/buffer/chunk_store.h"
#include "libtrace/buffer/codec.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/event/event.h"

namespace critpath::test {

// Defines MPI function `id` (a fixed id, as the wrappers' spec gives) called `name`.
inline void define_mpi(defs::Definitions& d, uint32_t id, const char* name, defs::MpiClass cls,
                       defs::MpiSync sync = defs::MpiSync::kNone,
                       defs::MpiLifecycle lifecycle = defs::MpiLifecycle::kNone) {
  defs::MpiSemantics s;
  s.cls = cls;
  s.sync = sync;
  s.lifecycle = lifecycle;
  d.regions.define_fixed(id, name, defs::RegionKind::kMpi, s);
}

// One location's events: each added `step` ticks after the previous one, from `t` on.
struct TraceWriter {
  std::vector<trace::Event> events;
  uint64_t t = 1000;
  uint64_t step = 10;

  trace::Event& add(trace::EventKind k, uint32_t region = 0) {
    trace::Event e;
    e.kind = k;
    e.time = t += step;
    e.region = region;
    events.push_back(e);
    return events.back();
  }
  void call(uint32_t region) { add(trace::EventKind::kEnter, region); }
  void end(uint32_t region) { add(trace::EventKind::kExit, region); }
  // The events as one compressed chunk of `location` in `s`.
  void store(trace::ChunkStore& s, uint16_t location = 0) const {
    trace::ChunkCompressor comp(1);
    std::vector<trace::Slot> slots(events.size() * trace::kMaxEventSlots + 1);
    size_t pos = 0;
    for (const trace::Event& e : events) pos += trace::event_to_slots(e, slots.data() + pos);
    std::vector<uint8_t> chunk;
    REQUIRE(comp.compress(slots.data(), slots.data() + pos, location, 0, chunk) == Status::kOk);
    REQUIRE(s.append(std::move(chunk)) == Status::kOk);
  }
};

}  // namespace critpath::test
