// critpath — libtrace/buffer/trace_reader.cpp
//
// The replay engine's view of one location: a cursor that walks the location's chunks in
// sequence order, forward or backward, decoding one chunk at a time.
//
//   chunks_:  [c0][c1][c2] ... [cN-1]          cursor = (chunk_pos_, index_)
//                   ^ index_ = 3: between events 2 and 3 of c1
//   begin = (0, 0)          end = (N, 0)
//
// Chunk event counts come from the store's index (headers), so crossing an empty chunk or
// a chunk boundary never decodes anything; only the chunk that holds the next event is
// decoded, and it stays decoded until the cursor leaves it.
#include "libtrace/buffer/trace_reader.h"

namespace critpath::trace {

TraceReader::TraceReader(const ChunkStore& store, uint16_t location)
    : store_(store), chunks_(store.chunks_of(location)) {
  for (size_t i : chunks_) total_events_ += store_.ref(i).header.event_count;
  seek_begin();
}

void TraceReader::seek_begin() {
  chunk_pos_ = 0;
  index_ = 0;
}

void TraceReader::seek_end() {
  chunk_pos_ = chunks_.size();
  index_ = 0;
}

bool TraceReader::load(size_t chunk_pos) {
  if (loaded_ == chunk_pos) return true;
  loaded_ = SIZE_MAX;
  Status s = store_.read(chunks_[chunk_pos], raw_);
  ChunkHeader h;
  if (s == Status::kOk) s = decoder_.decode(raw_.data(), raw_.size(), h, events_);
  // The index and the chunk must agree, or the cursor arithmetic would be off.
  if (s == Status::kOk && events_.size() != store_.ref(chunks_[chunk_pos]).header.event_count)
    s = Status::kCorrupt;
  if (s != Status::kOk) {
    status_ = s;
    events_.clear();
    return false;
  }
  loaded_ = chunk_pos;
  return true;
}

bool TraceReader::next(Event& e) {
  if (status_ != Status::kOk) return false;
  while (chunk_pos_ < chunks_.size()) {
    const size_t count = store_.ref(chunks_[chunk_pos_]).header.event_count;
    if (index_ < count) {
      if (!load(chunk_pos_)) return false;
      events_.get(index_++, e);
      return true;
    }
    ++chunk_pos_;
    index_ = 0;
  }
  return false;
}

bool TraceReader::prev(Event& e) {
  if (status_ != Status::kOk) return false;
  for (;;) {
    if (chunk_pos_ < chunks_.size() && index_ > 0) {
      if (!load(chunk_pos_)) return false;
      events_.get(--index_, e);
      return true;
    }
    if (chunk_pos_ == 0) return false;
    --chunk_pos_;
    index_ = store_.ref(chunks_[chunk_pos_]).header.event_count;
  }
}

}  // namespace critpath::trace
