// critpath — libtrace/buffer/trace_reader.h
//
// Streaming reader over one location's chunks, forward and backward. Holds one decoded chunk
// at a time, so memory stays O(chunk) however long the trace is. Used by every replay pass.
#pragma once

#include <cstdint>
#include <vector>

#include "libtrace/buffer/chunk_store.h"

namespace critpath::trace {

class TraceReader {
 public:
  TraceReader(const ChunkStore& store, uint16_t location);

  // Positions the cursor before the first event (forward) or after the last (backward).
  void seek_begin();
  void seek_end();
  // next(): the event after the cursor, moving forward. prev(): the event before the
  // cursor, moving backward. Return false at the respective end or on a decode error
  // (status() tells which).
  bool next(Event& e);
  bool prev(Event& e);
  Status status() const { return status_; }
  uint64_t event_count() const { return total_events_; }

 private:
  bool load(size_t chunk_pos);
  const ChunkStore& store_;
  std::vector<size_t> chunks_;  // store indices in sequence order
  ChunkDecoder decoder_;
  std::vector<uint8_t> raw_;
  DecodedChunk events_;
  size_t loaded_ = SIZE_MAX;  // position in chunks_ of the decoded chunk
  size_t chunk_pos_ = 0;      // cursor: chunk position
  size_t index_ = 0;          // cursor: index in that chunk (between events)
  uint64_t total_events_ = 0;
  Status status_ = Status::kOk;
};

}  // namespace critpath::trace
