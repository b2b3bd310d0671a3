// critpath — libtrace/runtime/recorder.cpp
//
// Cold paths of the record API: thread attach, chunk hand-off, the compressor thread, and
// stop-and-flush at finalize. See recorder.h (hot path) and recorder_control.h (contract).
#include <pthread.h>
#include <sys/mman.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "libtrace/buffer/codec.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/recorder_control.h"
#include "libtrace/runtime/session.h"

namespace critpath::runtime {

std::atomic<uint8_t> g_phase{uint8_t(Phase::kPreInit)};
bool g_use_tsc = true;
constinit thread_local ThreadState t_state __attribute__((tls_model("initial-exec"))) = {};

namespace {

// One raw recording buffer. `slots` is mmap'ed (page-aligned, no malloc on the hot path).
struct RawChunk {
  trace::Slot* slots = nullptr;
  size_t capacity = 0;  // slots
  size_t used = 0;      // slots filled (set at hand-off)
  uint16_t location = 0;
  uint32_t sequence = 0;
};

class Recorder {
 public:
  Status start(const RecorderOptions& o);
  void stop();
  bool attach(ThreadState& t);
  void hand_off(ThreadState& t);
  void detach(ThreadState& t);
  trace::ChunkStore& store() { return store_; }
  RecorderStats stats();

 private:
  RawChunk* acquire(uint16_t location);  // requires mu_ held
  RawChunk* allocate();
  void release(RawChunk* c);             // requires mu_ held
  void compress(RawChunk* c, trace::ChunkCompressor& z);
  void compressor_loop();
  void enqueue(RawChunk* c);             // requires mu_ held

  RecorderOptions opt_;
  trace::ChunkStore store_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<RawChunk*> filled_;
  std::vector<RawChunk*> free_;
  std::vector<RawChunk*> all_;
  std::vector<ThreadState*> threads_;
  std::vector<std::unique_ptr<trace::ChunkCompressor>> inline_z_;  // per location
  std::thread compressor_;
  bool compressor_started_ = false;
  bool stopping_ = false;
  size_t busy_ = 0;  // chunks being compressed right now
  uint16_t next_location_ = 0;
  std::atomic<uint64_t> compress_ticks_{0};
  uint64_t inline_compressions_ = 0;
  uint64_t overhead_of_departed_ = 0;
  uint64_t overhead_max_departed_ = 0;
  std::atomic<uint64_t> compress_errors_{0};
  pthread_key_t key_{};
  bool key_ok_ = false;
};

Recorder* g_recorder = nullptr;  // created at start, intentionally never destroyed

void thread_exit(void* p) {
  if (g_recorder && p) g_recorder->detach(*static_cast<ThreadState*>(p));
}

Status Recorder::start(const RecorderOptions& o) {
  opt_ = o;
  store_.configure(o.memory_budget, o.spill_path);
  key_ok_ = pthread_key_create(&key_, thread_exit) == 0;
  RawChunk* first = allocate();
  if (!first) return Status::kNoMemory;
  free_.push_back(first);
  return Status::kOk;
}

RawChunk* Recorder::allocate() {
  size_t bytes = (opt_.chunk_bytes + 4095) & ~size_t(4095);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* c = new (std::nothrow) RawChunk;
  if (!c) {
    munmap(mem, bytes);
    return nullptr;
  }
  c->slots = static_cast<trace::Slot*>(mem);
  c->capacity = bytes / sizeof(trace::Slot);
  all_.push_back(c);
  return c;
}

// Free chunk, or a new one while the pool is small, or (compressor lagging) the oldest
// filled chunk compressed right here. Never fails for lack of a chunk unless mmap fails.
RawChunk* Recorder::acquire(uint16_t location) {
  if (!free_.empty()) {
    RawChunk* c = free_.back();
    free_.pop_back();
    return c;
  }
  const size_t cap = 4 + 2 * threads_.size();
  if (all_.size() < cap || filled_.empty()) {
    if (RawChunk* c = allocate()) return c;
    if (filled_.empty()) return nullptr;
  }
  RawChunk* c = filled_.front();
  filled_.pop_front();
  ++busy_;
  ++inline_compressions_;
  if (inline_z_.size() <= location) inline_z_.resize(location + 1);
  if (!inline_z_[location])
    inline_z_[location] = std::make_unique<trace::ChunkCompressor>(opt_.compression_level);
  trace::ChunkCompressor* z = inline_z_[location].get();
  mu_.unlock();
  compress(c, *z);
  mu_.lock();
  --busy_;
  cv_.notify_all();
  return c;
}

void Recorder::release(RawChunk* c) {
  c->used = 0;
  free_.push_back(c);
}

void Recorder::compress(RawChunk* c, trace::ChunkCompressor& z) {
  const uint64_t t0 = now();
  std::vector<uint8_t> out;
  Status s = z.compress(c->slots, c->slots + c->used, c->location, c->sequence, out);
  if (s == Status::kOk) s = store_.append(std::move(out));
  if (s != Status::kOk) {
    compress_errors_.fetch_add(1);
    log::warn_once("chunk", "storing a trace chunk failed (%s); see the report notes",
                   to_string(s));
  }
  compress_ticks_.fetch_add(now() - t0, std::memory_order_relaxed);
}

void Recorder::compressor_loop() {
  trace::ChunkCompressor z(opt_.compression_level);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !filled_.empty(); });
    if (filled_.empty()) break;  // stopping and drained
    RawChunk* c = filled_.front();
    filled_.pop_front();
    ++busy_;
    lock.unlock();
    compress(c, z);
    lock.lock();
    --busy_;
    release(c);
    cv_.notify_all();
  }
}

void Recorder::enqueue(RawChunk* c) {
  if (!opt_.compress_thread) {
    // Inline mode: compress now on the calling thread.
    ++busy_;
    if (inline_z_.size() <= c->location) inline_z_.resize(c->location + 1);
    if (!inline_z_[c->location])
      inline_z_[c->location] = std::make_unique<trace::ChunkCompressor>(opt_.compression_level);
    trace::ChunkCompressor* z = inline_z_[c->location].get();
    mu_.unlock();
    compress(c, *z);
    mu_.lock();
    --busy_;
    release(c);
    return;
  }
  filled_.push_back(c);
  if (!compressor_started_ && !stopping_) {
    compressor_started_ = true;
    try {
      compressor_ = std::thread([this] { compressor_loop(); });
    } catch (...) {
      compressor_started_ = false;
      opt_.compress_thread = false;  // no thread: compress inline from now on
      log::warn_once("thread", "cannot start the compression thread; compressing inline");
    }
  }
  cv_.notify_all();
}

bool Recorder::attach(ThreadState& t) {
  if (t.state >= 2) return false;  // failed, or departed (never re-attaches)
  std::lock_guard<std::mutex> lock(mu_);
  t.location = next_location_++;
  RawChunk* c = acquire(t.location);
  if (!c) {
    t.state = 2;
    log::warn_once("memory", "no memory for a trace buffer on a thread; its events are not recorded");
    return false;
  }
  t.chunk = c;
  t.base = c->slots;
  t.pos = c->slots;
  t.limit = c->slots + (c->capacity - trace::kMaxEventSlots);
  t.sequence = 0;
  t.overhead_ticks = 0;
  t.slots_written = 0;
  t.state = 1;
  threads_.push_back(&t);
  if (key_ok_) pthread_setspecific(key_, &t);
  return true;
}

void Recorder::hand_off(ThreadState& t) {
  const uint64_t t0 = now();
  std::unique_lock<std::mutex> lock(mu_);
  auto* c = static_cast<RawChunk*>(t.chunk);
  c->used = size_t(t.pos - t.base);
  c->location = t.location;
  c->sequence = t.sequence++;
  t.slots_written += c->used;
  enqueue(c);
  RawChunk* n = acquire(t.location);
  if (!n) {
    t.state = 2;
    t.chunk = nullptr;
    t.pos = t.base = t.limit = nullptr;
    log::warn_once("memory", "no memory for a trace buffer; recording stopped on a thread");
  } else {
    t.chunk = n;
    t.base = n->slots;
    t.pos = n->slots;
    t.limit = n->slots + (n->capacity - trace::kMaxEventSlots);
  }
  lock.unlock();
  t.overhead_ticks += now() - t0;
}

// A thread is leaving (pthread key destructor) or the run ends: hand its partial chunk off.
void Recorder::detach(ThreadState& t) {
  if (t.state != 1) return;
  std::unique_lock<std::mutex> lock(mu_);
  auto* c = static_cast<RawChunk*>(t.chunk);
  if (c && t.pos > t.base) {
    c->used = size_t(t.pos - t.base);
    c->location = t.location;
    c->sequence = t.sequence++;
    t.slots_written += c->used;
    enqueue(c);
  } else if (c) {
    release(c);
  }
  t.chunk = nullptr;
  t.pos = t.base = t.limit = nullptr;
  t.state = 3;  // departed: never re-attaches
  for (auto& p : threads_)
    if (p == &t) {
      overhead_of_departed_ += t.overhead_ticks;
      overhead_max_departed_ = std::max(overhead_max_departed_, t.overhead_ticks);
      p = nullptr;
    }
}

void Recorder::stop() {
  std::vector<ThreadState*> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (ThreadState* p : threads_)
      if (p) live.push_back(p);
  }
  for (ThreadState* p : live) detach(*p);
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  cv_.notify_all();
  if (compressor_started_) {
    lock.unlock();
    compressor_.join();
    lock.lock();
    compressor_started_ = false;
  }
  // Whatever is still queued (no thread was ever started) is compressed here.
  trace::ChunkCompressor z(opt_.compression_level);
  while (!filled_.empty()) {
    RawChunk* c = filled_.front();
    filled_.pop_front();
    lock.unlock();
    compress(c, z);
    lock.lock();
    release(c);
  }
  cv_.wait(lock, [&] { return busy_ == 0; });
}

RecorderStats Recorder::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  RecorderStats s;
  s.overhead_ticks_total = overhead_of_departed_;
  s.overhead_ticks_max_thread = overhead_max_departed_;
  for (ThreadState* p : threads_)
    if (p) {
      s.overhead_ticks_total += p->overhead_ticks;
      s.overhead_ticks_max_thread = std::max(s.overhead_ticks_max_thread, p->overhead_ticks);
    }
  s.compress_ticks = compress_ticks_.load();
  s.inline_compressions = inline_compressions_;
  s.threads = next_location_;
  s.raw_chunks_allocated = all_.size();
  s.compress_errors = compress_errors_.load();
  return s;
}

}  // namespace

bool attach_thread(ThreadState& t) {
  if (!g_recorder || !recording()) return false;
  return g_recorder->attach(t);
}

void flush_chunk(ThreadState& t) {
  if (g_recorder) g_recorder->hand_off(t);
}

void record_region_slow(trace::EventKind kind, uint32_t region) {
  if (ThreadState* t = ready_state()) record_region(*t, kind, region, now());
}

void record_event(ThreadState& t, const trace::Event& e) {
  trace::Slot* s = t.pos;
  unsigned n = trace::event_to_slots(e, s);
  commit(t, s + n);
}

Status recorder_start(const RecorderOptions& options) {
  if (!g_recorder) g_recorder = new (std::nothrow) Recorder;
  if (!g_recorder) return Status::kNoMemory;
  return g_recorder->start(options);
}

void recorder_stop() {
  notify_recording_stop();
  if (g_recorder) g_recorder->stop();
}

trace::ChunkStore& chunk_store() {
  if (!g_recorder) g_recorder = new Recorder;
  return g_recorder->store();
}

RecorderStats recorder_stats() { return g_recorder ? g_recorder->stats() : RecorderStats{}; }

}  // namespace critpath::runtime
