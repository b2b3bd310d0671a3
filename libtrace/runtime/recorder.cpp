// critpath — libtrace/runtime/recorder.cpp
//
// Cold paths of the record API: thread attach, chunk hand-off, the compressor thread, and
// stop-and-flush at finalize. See recorder.h (hot path) and recorder_control.h (contract).
// Nothing here throws into an adapter; failures stop a thread or the rank (class Recorder,
// "Failure model", and docs/reliability.md).
#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "libtrace/buffer/codec.h"
#include "libtrace/runtime/alloc_fault.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/recorder_control.h"
#include "libtrace/runtime/session.h"
#include "libtrace/runtime/sigsafe.h"

namespace critpath::runtime {

std::atomic<uint8_t> g_phase{uint8_t(Phase::kPreInit)};
bool g_use_tsc = true;
constinit thread_local ThreadState t_state __attribute__((tls_model("initial-exec"))) = {};

namespace {

// Where a stopped thread's records go: every commit on a stopped thread lands in
// flush_chunk(), which rewinds the cursor to here. One event of room is all it needs.
constinit thread_local trace::Slot t_sink[trace::kMaxEventSlots]
    __attribute__((tls_model("initial-exec"))) = {};

constexpr uint32_t kNoCut = UINT32_MAX;
constexpr const char* kOutOfMemory = "out of memory";

// One raw recording buffer. `slots` is mmap'ed (page-aligned, no malloc on the hot path).
struct RawChunk {
  trace::Slot* slots = nullptr;
  size_t capacity = 0;  // slots
  size_t used = 0;      // slots filled (set at hand-off)
  uint16_t location = 0;
  uint32_t sequence = 0;
};

// FIFO of chunks whose capacity is reserved ahead (allocate() keeps it >= the number of
// chunks), so pushing never allocates.
class ChunkQueue {
 public:
  void reserve(size_t n) {  // may throw std::bad_alloc, leaving the queue as it was
    if (n <= ring_.size()) return;
    std::vector<RawChunk*> r(std::max(n, 2 * ring_.size()));
    for (size_t i = 0; i < size_; ++i) r[i] = ring_[(head_ + i) % ring_.size()];
    ring_.swap(r);
    head_ = 0;
  }
  bool empty() const { return size_ == 0; }
  void push_back(RawChunk* c) {
    CRITPATH_DCHECK(size_ < ring_.size());
    ring_[(head_ + size_) % ring_.size()] = c;
    ++size_;
  }
  RawChunk* pop_front() {
    CRITPATH_DCHECK(size_ > 0);
    RawChunk* c = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --size_;
    return c;
  }

 private:
  std::vector<RawChunk*> ring_;
  size_t head_ = 0;
  size_t size_ = 0;
};

// Makes room for n elements, growing geometrically (may throw std::bad_alloc).
template <class T>
void reserve_for(std::vector<T>& v, size_t n) {
  if (v.capacity() < n) v.reserve(std::max(n, 2 * v.capacity()));
}

// Failure model (docs/reliability.md). Every cold path catches at its boundary; nothing
// throws into an adapter. What a failure costs:
//   * a thread's own cold path (registration, hand-off, inline compressor): that thread
//     stops recording (state 2, cursor on its sink);
//   * a chunk that cannot be compressed: its location is cut there (cut_), later chunks of
//     that location are discarded and its thread stops at its next hand-off;
//   * the chunk store out of memory: recording stops for the rank (rank_stopped_); every
//     location is cut at its first chunk not stored.
// A cut location keeps a gap-free prefix of whole chunks (stop() drops stored chunks past the
// cut, which a concurrent compression may have added), so whatever was stored decodes.
class Recorder {
 public:
  ~Recorder();
  Status start(const RecorderOptions& o);
  void stop();
  bool attach(ThreadState& t);
  void hand_off(ThreadState& t);
  void detach(ThreadState& t);
  trace::ChunkStore& store() { return store_; }
  RecorderStats stats();
  void dump_partial(int chunk_fd, int tail_fd, PartialDump& out) noexcept;

 private:
  RawChunk* acquire(uint16_t location);  // requires mu_ held; may throw (nothing changed)
  RawChunk* allocate();                  // requires mu_ held; may throw (nothing changed)
  void release(RawChunk* c);             // requires mu_ held; never allocates
  trace::ChunkCompressor* inline_compressor(uint16_t location);  // requires mu_; may throw
  void compress(RawChunk* c, trace::ChunkCompressor& z);         // requires mu_ NOT held; no throw
  void compressor_main();
  void compressor_loop();
  void enqueue(RawChunk* c);  // requires mu_ held; may throw before taking c
  // Failure bookkeeping, all requiring mu_ held.
  bool wanted(const RawChunk& c) const {
    return !rank_stopped_ && (c.location >= cut_.size() || c.sequence < cut_[c.location]);
  }
  bool location_stopped(uint16_t location) const {
    return rank_stopped_ || (location < cut_.size() && cut_[location] != kNoCut);
  }
  void cut_location(uint16_t location, uint32_t sequence, const char* where, const char* why);
  void drop_chunk(const RawChunk& c, const char* where, const char* why);
  void stop_rank(const char* where, const char* why);
  void stop_thread(ThreadState& t, const char* where, const char* why);
  void forget_thread(ThreadState& t);
  static void install(ThreadState& t, RawChunk* c);

  RecorderOptions opt_;
  trace::ChunkStore store_;
  std::mutex mu_;
  std::condition_variable cv_;
  ChunkQueue filled_;
  std::vector<RawChunk*> free_;  // capacity >= all_.size()
  std::vector<RawChunk*> all_;
  std::vector<ThreadState*> threads_;                              // attached threads (state 1) only
  std::vector<std::unique_ptr<trace::ChunkCompressor>> inline_z_;  // per location
  std::vector<uint32_t> cut_;  // per location: first sequence not stored (kNoCut: none)
  std::thread compressor_;
  bool compressor_started_ = false;
  bool stopping_ = false;
  bool rank_stopped_ = false;
  bool warned_thread_stop_ = false;
  size_t busy_ = 0;  // chunks being compressed right now
  uint16_t next_location_ = 0;
  std::atomic<uint64_t> compress_ticks_{0};
  uint64_t inline_compressions_ = 0;
  uint64_t overhead_of_departed_ = 0;
  uint64_t overhead_max_departed_ = 0;
  std::atomic<uint64_t> compress_errors_{0};
  uint64_t threads_stopped_ = 0;
  uint64_t chunks_discarded_ = 0;
  pthread_key_t key_{};
  bool key_ok_ = false;
};

Recorder* g_recorder = nullptr;  // created at start, intentionally never destroyed (tests reset)

void thread_exit(void* p) {
  if (g_recorder && p) g_recorder->detach(*static_cast<ThreadState*>(p));
}

Recorder::~Recorder() {
  // Only recorder_reset_for_testing() destroys a recorder, after stop().
  if (key_ok_) pthread_key_delete(key_);
  for (RawChunk* c : all_) {
    munmap(c->slots, c->capacity * sizeof(trace::Slot));
    delete c;
  }
}

Status Recorder::start(const RecorderOptions& o) {
  try {
    opt_ = o;
    store_.configure(o.memory_budget, o.spill_path, o.memory_cap);
    key_ok_ = pthread_key_create(&key_, thread_exit) == 0;
    std::lock_guard<std::mutex> lock(mu_);
    RawChunk* first = allocate();
    if (!first) return Status::kNoMemory;
    free_.push_back(first);
    return Status::kOk;
  } catch (...) {
    return Status::kNoMemory;
  }
}

RawChunk* Recorder::allocate() {
  // Room for the new chunk in every list first: releasing and queueing never allocate.
  reserve_for(all_, all_.size() + 1);
  reserve_for(free_, all_.size() + 1);
  filled_.reserve(all_.size() + 1);
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

trace::ChunkCompressor* Recorder::inline_compressor(uint16_t location) {
  if (location < inline_z_.size() && inline_z_[location]) return inline_z_[location].get();
  alloc_fault_point(AllocSite::kCompressor);
  if (inline_z_.size() <= location) inline_z_.resize(size_t(location) + 1);
  inline_z_[location] = std::make_unique<trace::ChunkCompressor>(opt_.compression_level);
  return inline_z_[location].get();
}

// Free chunk, or a new one while the pool is small, or (compressor lagging) the oldest
// filled chunk compressed right here. Returns nullptr when mmap fails; throws (with nothing
// changed) when an allocation fails.
RawChunk* Recorder::acquire(uint16_t location) {
  alloc_fault_point(AllocSite::kBuffer);  // at every acquisition, whether it allocates or not
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
  trace::ChunkCompressor* z = inline_compressor(location);  // before taking a chunk
  RawChunk* c = filled_.pop_front();
  ++busy_;
  ++inline_compressions_;
  mu_.unlock();
  compress(c, *z);
  mu_.lock();
  --busy_;
  cv_.notify_all();
  return c;
}

void Recorder::release(RawChunk* c) {
  c->used = 0;
  free_.push_back(c);  // capacity reserved by allocate()
}

void Recorder::install(ThreadState& t, RawChunk* c) {
  t.chunk = c;
  t.base = c->slots;
  t.pos = c->slots;
  t.limit = c->slots + (c->capacity - trace::kMaxEventSlots);
}

void Recorder::cut_location(uint16_t location, uint32_t sequence, const char* where, const char* why) {
  bool first = true;
  if (location < cut_.size()) {
    first = cut_[location] == kNoCut;
    cut_[location] = std::min(cut_[location], sequence);
  }
  if (!first) return;
  ++threads_stopped_;
  if (rank_stopped_) return;  // the rank's warning covers every thread
  // One stderr line per run for this cause; every stopped thread gets its report note.
  if (!warned_thread_stop_) {
    warned_thread_stop_ = true;
    log::warn("thread %u stopped recording at %s (%s): its trace is partial", unsigned(location), where, why);
  } else {
    log::note("thread %u stopped recording at %s (%s): its trace is partial", unsigned(location), where, why);
  }
}

void Recorder::drop_chunk(const RawChunk& c, const char* where, const char* why) {
  ++chunks_discarded_;
  cut_location(c.location, c.sequence, where, why);
}

void Recorder::stop_rank(const char* where, const char* why) {
  if (rank_stopped_) return;
  rank_stopped_ = true;
  log::warn("recording stopped on this rank at %s (%s): the traces of its threads are partial", where, why);
}

void Recorder::forget_thread(ThreadState& t) {
  for (auto& p : threads_)
    if (p == &t) {
      overhead_of_departed_ += t.overhead_ticks;
      overhead_max_departed_ = std::max(overhead_max_departed_, t.overhead_ticks);
      p = nullptr;
    }
}

// On t's own thread (its sink is this thread's). t must not hold a chunk.
void Recorder::stop_thread(ThreadState& t, const char* where, const char* why) {
  forget_thread(t);
  t.chunk = nullptr;
  t.base = t.pos = t.limit = t_sink;
  t.state = 2;
  cut_location(t.location, t.sequence, where, why);
}

void Recorder::compress(RawChunk* c, trace::ChunkCompressor& z) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!wanted(*c)) {  // its location was cut before it, or the rank stopped
      drop_chunk(*c, "chunk compression", "an earlier failure");
      return;
    }
  }
  const uint64_t t0 = now();
  bool in_store = false;
  Status s = Status::kOk;
  try {
    alloc_fault_point(AllocSite::kEncode);
    std::vector<uint8_t> out;
    s = z.compress(c->slots, c->slots + c->used, c->location, c->sequence, out);
    if (s == Status::kOk) {
      in_store = true;
      s = store_.append(std::move(out));  // never throws
    }
  } catch (...) {
    s = Status::kNoMemory;
  }
  compress_ticks_.fetch_add(now() - t0, std::memory_order_relaxed);
  if (s == Status::kOk) return;
  compress_errors_.fetch_add(1);
  if (in_store && s == Status::kIoError) {  // the spill failed: kept in memory instead
    const int err = store_.spill_errno();
    log::warn_once("chunk",
                   "spilling trace chunks to %s failed (%s): they stay in memory from now on, "
                   "up to %llu MiB",
                   store_.spill_path().c_str(), err ? std::strerror(err) : "I/O error",
                   static_cast<unsigned long long>(opt_.memory_cap >> 20));
    return;
  }
  const char* where = in_store ? "the chunk store" : "chunk compression";
  std::lock_guard<std::mutex> lock(mu_);
  if (in_store && s == Status::kNoMemory) {  // global
    char why[160];
    std::snprintf(why, sizeof why, "%s; %llu MiB of unspillable chunks is the cap", to_string(s),
                  static_cast<unsigned long long>(opt_.memory_cap >> 20));
    stop_rank(where, opt_.memory_cap != UINT64_MAX ? why : to_string(s));
  }
  drop_chunk(*c, where, to_string(s));
}

void Recorder::compressor_main() {
  // The compressor thread's boundary: compress() never throws, so only the lock or the
  // condition variable could get here. Nothing is lost: queued chunks are compressed
  // inline from now on (and by stop()).
  try {
    compressor_loop();
  } catch (...) {
    log::warn_once("thread", "the compression thread failed; compressing inline");
    try {
      std::lock_guard<std::mutex> lock(mu_);
      opt_.compress_thread = false;
    } catch (...) {
    }
  }
}

void Recorder::compressor_loop() {
  trace::ChunkCompressor z(opt_.compression_level);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !filled_.empty(); });
    if (filled_.empty()) break;  // stopping and drained
    RawChunk* c = filled_.pop_front();
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
    trace::ChunkCompressor* z = inline_compressor(c->location);  // may throw: c not taken
    ++busy_;
    mu_.unlock();
    compress(c, *z);
    mu_.lock();
    --busy_;
    release(c);
    cv_.notify_all();
    return;
  }
  filled_.push_back(c);  // capacity reserved by allocate()
  if (!compressor_started_ && !stopping_) {
    compressor_started_ = true;
    try {
      compressor_ = std::thread([this] { compressor_main(); });
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
  if (rank_stopped_) {  // the rank's warning says so; this thread never recorded
    t.base = t.pos = t.limit = t_sink;
    t.state = 2;
    return false;
  }
  t.location = next_location_++;
  t.sequence = 0;
  t.overhead_ticks = 0;
  t.slots_written = 0;
  t.chunk = nullptr;
  const char* why = kOutOfMemory;
  try {
    alloc_fault_point(AllocSite::kAttach);
    reserve_for(threads_, threads_.size() + 1);
    if (cut_.size() <= t.location) cut_.resize(size_t(t.location) + 1, kNoCut);
    if (RawChunk* c = acquire(t.location)) {
      install(t, c);
      t.state = 1;
      threads_.push_back(&t);  // capacity reserved above
      if (key_ok_) pthread_setspecific(key_, &t);
      return true;
    }
    why = "out of memory for a trace buffer";
  } catch (...) {
  }
  stop_thread(t, "thread registration", why);
  return false;
}

void Recorder::hand_off(ThreadState& t) {
  const uint64_t t0 = now();
  std::unique_lock<std::mutex> lock(mu_);
  auto* c = static_cast<RawChunk*>(t.chunk);
  t.chunk = nullptr;
  c->used = size_t(t.pos - t.base);
  c->location = t.location;
  c->sequence = t.sequence++;
  t.slots_written += c->used;
  const char* why = kOutOfMemory;
  RawChunk* n = nullptr;
  if (wanted(*c)) {
    try {
      enqueue(c);  // throws before taking c, or takes it
      c = nullptr;
      n = acquire(t.location);
      if (!n) why = "out of memory for a trace buffer";
    } catch (...) {
    }
  }
  if (c) {  // a whole chunk, but nobody took it: its location ends before it
    drop_chunk(*c, "a buffer hand-off", why);
    release(c);
  }
  if (n && !location_stopped(t.location)) {
    install(t, n);
    lock.unlock();
    t.overhead_ticks += now() - t0;
    return;
  }
  if (n) release(n);
  t.overhead_ticks += now() - t0;
  stop_thread(t, "a buffer hand-off", why);  // no new note if this location was cut already
}

// A thread is leaving (pthread key destructor) or the run ends: hand its partial chunk off.
void Recorder::detach(ThreadState& t) {
  std::unique_lock<std::mutex> lock(mu_);
  forget_thread(t);
  if (t.state != 1) return;
  auto* c = static_cast<RawChunk*>(t.chunk);
  const size_t used = c ? size_t(t.pos - t.base) : 0;
  t.chunk = nullptr;
  t.pos = t.base = t.limit = nullptr;
  t.state = 3;  // departed: never re-attaches
  if (!c) return;
  if (used == 0) {
    release(c);
    return;
  }
  c->used = used;
  c->location = t.location;
  c->sequence = t.sequence++;
  t.slots_written += c->used;
  if (wanted(*c)) {
    try {
      enqueue(c);
      return;
    } catch (...) {
    }
  }
  drop_chunk(*c, "the last hand-off", kOutOfMemory);
  release(c);
}

void Recorder::stop() {
  // Detach every attached thread (detach() takes it off threads_).
  for (;;) {
    ThreadState* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (ThreadState* q : threads_)
        if (q) {
          p = q;
          break;
        }
    }
    if (!p) break;
    detach(*p);
  }
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
    RawChunk* c = filled_.pop_front();
    lock.unlock();
    compress(c, z);
    lock.lock();
    release(c);
  }
  cv_.wait(lock, [&] { return busy_ == 0; });
  // A cut location keeps the prefix before its first lost chunk: a compression running
  // concurrently with the failing one may have stored a later chunk.
  for (size_t loc = 0; loc < cut_.size(); ++loc)
    if (cut_[loc] != kNoCut) store_.drop_chunks_from(uint16_t(loc), cut_[loc]);
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
  s.threads_stopped = threads_stopped_;
  s.rank_stopped = rank_stopped_ ? 1 : 0;
  s.chunks_discarded = chunks_discarded_;
  return s;
}

// Holding mu_ freezes the raw chunks: a chunk leaves the "filled" or "being compressed" state
// only by release(), which needs mu_, and compress() stores it before that. So every chunk not
// free is either in the store already (the store is written after mu_ is taken) or written raw
// here, possibly both. Installed chunks are read up to their thread's cursor, which moves only
// after a whole event is written (a thread still writing one when the signal came loses it).
void Recorder::dump_partial(int chunk_fd, int tail_fd, PartialDump& out) noexcept {
  const bool locked = sigsafe::lock(mu_);
  if (!store_.write_fd_signal_safe(chunk_fd, out.stored)) out.complete = false;
  if (!locked) {
    out.complete = false;
    return;
  }
  for (RawChunk* c : all_) {
    if (std::find(free_.begin(), free_.end(), c) != free_.end()) continue;
    size_t used = c->used;
    uint16_t location = c->location;
    uint32_t sequence = c->sequence;
    for (ThreadState* t : threads_)
      if (t && t->chunk == c) {
        const trace::Slot* pos = __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
        used = pos >= t->base && pos <= c->slots + c->capacity ? size_t(pos - t->base) : 0;
        location = t->location;
        sequence = t->sequence;
      }
    if (used == 0 || used > c->capacity) continue;
    if (rank_stopped_ || (location < cut_.size() && sequence >= cut_[location])) continue;  // after a gap
    uint8_t head[kTailHeaderSize] = {};
    const uint32_t magic = kTailMagic, n = uint32_t(used);
    std::memcpy(head, &magic, 4);
    std::memcpy(head + 4, &location, 2);
    std::memcpy(head + 8, &sequence, 4);
    std::memcpy(head + 12, &n, 4);
    if (!sigsafe::write_all(tail_fd, head, sizeof head) ||
        !sigsafe::write_all(tail_fd, c->slots, used * sizeof(trace::Slot))) {
      out.complete = false;
      break;
    }
    out.tail_chunks += 1;
    out.tail_slots += used;
  }
  mu_.unlock();
}

}  // namespace

void recorder_dump_partial(int chunk_fd, int tail_fd, PartialDump& out) noexcept {
  if (g_recorder) g_recorder->dump_partial(chunk_fd, tail_fd, out);
}

// The boundaries between the adapters and the recorder's cold paths. attach() and
// hand_off() catch their own failures; the catch-all here only guards against the
// impossible (a mutex error) so that nothing can ever unwind into a wrapper or a hook.
bool attach_thread(ThreadState& t) noexcept {
  if (!g_recorder || !recording()) return false;
  try {
    return g_recorder->attach(t);
  } catch (...) {
    t.base = t.pos = t.limit = t_sink;
    t.state = 2;
    return false;
  }
}

void flush_chunk(ThreadState& t) noexcept {
  if (CRITPATH_UNLIKELY(t.state != 1)) {  // stopped: rewind the sink (departed: nullptr)
    t.pos = t.base;
    return;
  }
  if (!g_recorder) return;
  try {
    g_recorder->hand_off(t);
  } catch (...) {
    t.chunk = nullptr;  // lost with its records; the location may show a gap
    t.base = t.pos = t.limit = t_sink;
    t.state = 2;
  }
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

void recorder_reset_for_testing() {
  if (!g_recorder) return;
  g_recorder->stop();
  delete g_recorder;
  g_recorder = nullptr;
}

}  // namespace critpath::runtime
