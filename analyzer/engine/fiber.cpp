// critpath — analyzer/engine/fiber.cpp: fibers on a pool of worker threads.
//
// Each worker owns a run queue its thread alone touches, and a list of fibers woken by other
// threads (under its mutex). A fiber leaves its worker in one of three ways: it yields (back
// of the queue), parks (until wake(); a wake that comes before the park is remembered), or
// returns (its stack is unmapped). A worker with nothing runnable waits on its condition
// variable; one whose fibers only poll gives the core away after every quiet round. Before it
// resumes a fiber, it prefetches the top of the next one's stack.
#include "analyzer/engine/fiber.h"

#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <thread>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CRITPATH_FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define CRITPATH_FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(CRITPATH_FIBER_ASAN)
#define CRITPATH_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(CRITPATH_FIBER_TSAN)
#define CRITPATH_FIBER_TSAN 1
#endif

#if CRITPATH_FIBER_ASAN
extern "C" void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old,
                                                size_t* size_old);
#endif
#if CRITPATH_FIBER_TSAN
extern "C" void* __tsan_get_current_fiber();
extern "C" void* __tsan_create_fiber(unsigned flags);
extern "C" void __tsan_destroy_fiber(void* fiber);
extern "C" void __tsan_switch_to_fiber(void* fiber, unsigned flags);
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define CRITPATH_FIBER_ASM 1
// critpath_fiber_switch(save, load): saves the caller's callee-saved registers and control
// words on its stack and the stack pointer in *save, then resumes the context whose stack
// pointer is `load`. critpath_fiber_start: where a new fiber's first switch returns to; calls
// the function in r12 (entry(), which never returns).
asm(R"(
  .text
  .p2align 4
  .globl critpath_fiber_switch
  .hidden critpath_fiber_switch
  .type critpath_fiber_switch, @function
critpath_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size critpath_fiber_switch, .-critpath_fiber_switch
  .p2align 4
  .globl critpath_fiber_start
  .hidden critpath_fiber_start
  .type critpath_fiber_start, @function
critpath_fiber_start:
  callq *%r12
  ud2
  .size critpath_fiber_start, .-critpath_fiber_start
)");
extern "C" void critpath_fiber_switch(void** save, void* load);
extern "C" void critpath_fiber_start();
#endif

namespace critpath::analyzer::engine::fiber {

struct Worker;

// A suspended execution context. On x86-64 a switch (switch_to) pushes the callee-saved
// registers and the SSE and x87 control words on the stack it leaves and keeps only the stack
// pointer: no system call (swapcontext sets the signal mask at every switch, two system
// calls per resume) and, with thousands of fibers whose state is cold by the time they run
// again, a few cache lines on the fiber's own stack instead of a 936-byte ucontext_t.
// Elsewhere, ucontext. Fibers never change their thread's signal mask, so none is kept.
struct Context {
#if CRITPATH_FIBER_ASM
  void* sp = nullptr;
#else
  ucontext_t uc;
#endif
};

struct Fiber {
  enum class Leave { kYield, kPark, kFinish };
  Context ctx;
  Worker* worker = nullptr;
  size_t index = 0;
  unsigned char* map = nullptr;  // guard page, then the stack
  size_t map_bytes = 0;
  size_t guard_bytes = 0;
  Leave leave = Leave::kYield;
  bool parked = false;        // under worker->mu
  bool wake_pending = false;  // under worker->mu: woken before it parked
  uint64_t cpu_ns = 0;        // while it ran
  double polling_cpu_s = 0;   // of cpu_ns, in wait loops (PollClock)
  uint64_t resumed_cpu_ns = 0;
  void* asan_fake_stack = nullptr;
  void* tsan_fiber = nullptr;
};

struct Pool {
  const std::function<void(size_t)>* task = nullptr;
  const PoolOptions* options = nullptr;
};

struct Worker {
  Pool* pool = nullptr;
  Context ctx;
  std::deque<Fiber*> run;  // this worker's thread only
  size_t live = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Fiber*> woken;  // under mu
  // The thread's CPU clock when it last came back from a fiber: the scheduler's work between
  // two fibers counts to the next one, so a switch reads the clock once.
  uint64_t clock_ns = 0;
  // The worker thread's own stack, for ASan's switches back to it.
  const void* stack_bottom = nullptr;
  size_t stack_size = 0;
  void* asan_fake_stack = nullptr;
  void* tsan_fiber = nullptr;
};

namespace {

thread_local Fiber* t_current = nullptr;
thread_local Worker* t_worker = nullptr;
thread_local double t_polling_cpu_s = 0;  // a plain thread's PollClock time
std::atomic<size_t> g_max_stack_resident{0};

std::atomic<double> g_ranks_per_core{1.0};

// How much of a fiber's stack (above its stack pointer) the scheduler prefetches before
// resuming it.
constexpr size_t kPrefetchBytes = 2048;

uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

size_t page_bytes() {
  static const size_t kPage = size_t(sysconf(_SC_PAGESIZE));
  return kPage;
}

// The resident pages of f's stack (how deep it ever went), for max_stack_resident().
void note_stack_use(const Fiber& f) {
  const size_t page = page_bytes();
  const size_t pages = (f.map_bytes - f.guard_bytes) / page;
  std::vector<unsigned char> in(pages);
  if (mincore(f.map + f.guard_bytes, pages * page, in.data()) != 0) return;
  size_t resident = 0;
  for (unsigned char c : in) resident += c & 1;
  size_t seen = g_max_stack_resident.load();
  while (resident * page > seen && !g_max_stack_resident.compare_exchange_weak(seen, resident * page)) {
  }
}

// Saves the running context in `from` and resumes `to`; returns when `from` is resumed.
inline void switch_to(Context& from, Context& to) {
#if CRITPATH_FIBER_ASM
  critpath_fiber_switch(&from.sp, to.sp);
#else
  swapcontext(&from.uc, &to.uc);
#endif
}

// A context that runs `fn` on the stack [base, base + bytes) when first switched to.
void init_context(Context& c, unsigned char* base, size_t bytes, void (*fn)()) {
#if CRITPATH_FIBER_ASM
  // The frame critpath_fiber_switch pops, below a return address into critpath_fiber_start:
  // control words, r15, r14, r13, r12 (fn), rbx, rbp (0), so that the stack is 16-byte
  // aligned at critpath_fiber_start's call, as the ABI wants.
  auto top = (reinterpret_cast<uintptr_t>(base) + bytes) & ~uintptr_t(15);
  auto* frame = reinterpret_cast<uint64_t*>(top - 16 - 8 * 8);
  uint32_t mxcsr = 0;
  uint16_t fpucw = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  frame[0] = uint64_t(mxcsr) | uint64_t(fpucw) << 32;
  frame[1] = frame[2] = frame[3] = 0;          // r15, r14, r13
  frame[4] = reinterpret_cast<uintptr_t>(fn);  // r12
  frame[5] = frame[6] = 0;                     // rbx, rbp
  frame[7] = reinterpret_cast<uintptr_t>(&critpath_fiber_start);
  c.sp = frame;
#else
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = base;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, fn, 0);
#endif
}

// The fiber side of a switch: leaves `f` for its worker's scheduler, and returns when the
// scheduler resumes it (never after kFinish).
void leave(Fiber* f, Fiber::Leave how) {
  Worker* w = f->worker;
  f->leave = how;
#if CRITPATH_FIBER_ASAN
  __sanitizer_start_switch_fiber(how == Fiber::Leave::kFinish ? nullptr : &f->asan_fake_stack,
                                 w->stack_bottom, w->stack_size);
#endif
#if CRITPATH_FIBER_TSAN
  __tsan_switch_to_fiber(w->tsan_fiber, 0);
#endif
  switch_to(f->ctx, w->ctx);
#if CRITPATH_FIBER_ASAN
  __sanitizer_finish_switch_fiber(f->asan_fake_stack, &w->stack_bottom, &w->stack_size);
#endif
}

void entry() {
  Fiber* f = t_current;
#if CRITPATH_FIBER_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &f->worker->stack_bottom, &f->worker->stack_size);
#endif
  try {
    (*f->worker->pool->task)(f->index);
  } catch (...) {
  }
  leave(f, Fiber::Leave::kFinish);
}

// A fiber of `stack_bytes` (rounded up to pages) with its guard page; false when out of
// address space.
bool make_fiber(Fiber& f, size_t stack_bytes) {
  const size_t page = page_bytes();
  f.guard_bytes = page;
  f.map_bytes = (stack_bytes + page - 1) / page * page + page;
  void* m = mmap(nullptr, f.map_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) return false;
  f.map = static_cast<unsigned char*>(m);
  mprotect(f.map, f.guard_bytes, PROT_NONE);
  init_context(f.ctx, f.map + f.guard_bytes, f.map_bytes - f.guard_bytes, entry);
#if CRITPATH_FIBER_TSAN
  f.tsan_fiber = __tsan_create_fiber(0);
#endif
  return true;
}

void drop_fiber(Fiber& f) {
  note_stack_use(f);
#if CRITPATH_FIBER_TSAN
  if (f.tsan_fiber) __tsan_destroy_fiber(f.tsan_fiber);
  f.tsan_fiber = nullptr;
#endif
  munmap(f.map, f.map_bytes);
  f.map = nullptr;
}

// Asks the memory for the top of `f`'s stack, which it reads first when resumed (the frames
// it returns through): with thousands of fibers it is out of the caches by then, and the
// fiber that runs before it hides the latency.
inline void prefetch_stack(const Fiber& f) {
#if CRITPATH_FIBER_ASM
  const auto* p = static_cast<const char*>(f.ctx.sp);
  for (size_t k = 0; k < kPrefetchBytes; k += 64) __builtin_prefetch(p + k);
#else
  (void)f;
#endif
}

// The scheduler side: runs `f` until it leaves, keeping its CPU time.
void resume(Worker& w, Fiber* f) {
  t_current = f;
  f->resumed_cpu_ns = w.clock_ns;
  if (w.pool->options->on_switch) w.pool->options->on_switch(f->index, true);
#if CRITPATH_FIBER_ASAN
  __sanitizer_start_switch_fiber(&w.asan_fake_stack, f->map + f->guard_bytes, f->map_bytes - f->guard_bytes);
#endif
#if CRITPATH_FIBER_TSAN
  __tsan_switch_to_fiber(f->tsan_fiber, 0);
#endif
  switch_to(w.ctx, f->ctx);
#if CRITPATH_FIBER_ASAN
  __sanitizer_finish_switch_fiber(w.asan_fake_stack, nullptr, nullptr);
#endif
  if (w.pool->options->on_switch) w.pool->options->on_switch(f->index, false);
  w.clock_ns = thread_cpu_ns();
  f->cpu_ns += w.clock_ns - f->resumed_cpu_ns;
  t_current = nullptr;
}

// What the scheduler does with `f` after it left; returns whether it polled (yielded).
bool settle(Worker& w, Fiber* f) {
  switch (f->leave) {
    case Fiber::Leave::kYield: w.run.push_back(f); return true;
    case Fiber::Leave::kFinish:
      drop_fiber(*f);
      --w.live;
      return false;
    case Fiber::Leave::kPark: {
      std::lock_guard<std::mutex> lock(w.mu);
      if (f->wake_pending) {
        f->wake_pending = false;
        w.run.push_back(f);
      } else {
        f->parked = true;
      }
      return false;
    }
  }
  return false;
}

void work(Worker& w) {
  t_worker = &w;
  w.clock_ns = thread_cpu_ns();
#if CRITPATH_FIBER_TSAN
  w.tsan_fiber = __tsan_get_current_fiber();
#endif
  size_t quiet = 0;  // yields in a row
  while (w.live > 0) {
    {
      std::unique_lock<std::mutex> lock(w.mu);
      for (Fiber* f : w.woken) w.run.push_back(f);
      if (!w.woken.empty()) quiet = 0;
      w.woken.clear();
      if (w.run.empty()) {
        w.cv.wait_for(lock, std::chrono::milliseconds(10), [&] { return !w.woken.empty(); });
        continue;
      }
    }
    Fiber* f = w.run.front();
    w.run.pop_front();
    if (!w.run.empty()) prefetch_stack(*w.run.front());
    resume(w, f);
    quiet = settle(w, f) ? quiet + 1 : 0;
    // Every runnable fiber polled without progress for a few rounds: the messages they wait
    // for come from other processes, which may need this core.
    if (quiet > 16 * w.run.size()) {
      sched_yield();
      quiet = 0;
    }
  }
  t_worker = nullptr;
}

void wake(Fiber* f) {
  Worker& w = *f->worker;
  std::lock_guard<std::mutex> lock(w.mu);
  if (f->parked) {
    f->parked = false;
    w.woken.push_back(f);
    w.cv.notify_one();
  } else {
    f->wake_pending = true;
  }
}

}  // namespace

void run(size_t n, const std::function<void(size_t)>& task, const PoolOptions& options) {
  if (n == 0) return;
  size_t workers = options.workers > 0 ? size_t(options.workers)
                                       : std::max<size_t>(1, std::thread::hardware_concurrency());
  workers = std::min(workers, n);
  const size_t stack = options.stack_bytes ? options.stack_bytes : kDefaultStackBytes;
  Pool pool{&task, &options};
  std::vector<Fiber> fibers(n);
  std::vector<std::unique_ptr<Worker>> ws;
  for (size_t k = 0; k < workers; ++k) {
    ws.push_back(std::make_unique<Worker>());
    ws.back()->pool = &pool;
  }
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    Worker& w = *ws[i * workers / n];
    fibers[i].index = i;
    fibers[i].worker = &w;
    if (!make_fiber(fibers[i], stack)) {  // out of address space: a thread of its own instead
      threads.emplace_back([&task, i] { task(i); });
      continue;
    }
    w.run.push_back(&fibers[i]);
    ++w.live;
  }
  for (size_t k = 1; k < workers; ++k) threads.emplace_back([&, k] { work(*ws[k]); });
  work(*ws[0]);
  for (std::thread& t : threads) t.join();
}

Fiber* current() { return t_current; }

void yield() {
  if (t_current) leave(t_current, Fiber::Leave::kYield);
}

bool relax(uint64_t& polls, uint64_t spin_limit, bool sleep) {
  ++polls;
  if (t_current) {
    leave(t_current, Fiber::Leave::kYield);
    return false;
  }
  const double crowd = g_ranks_per_core.load(std::memory_order_relaxed);
  if (!sleep || crowd > kNapCrowd) {
    if (polls > spin_limit) sched_yield();
    return false;
  }
  // Crowded cores: the rank waited for is most likely not running, spinning only delays it.
  // A core for every rank: poll as a blocking MPI call does, for kUncrowdedSpins polls at least.
  spin_limit = crowd > 1 ? 0 : std::max(spin_limit, kUncrowdedSpins);
  if (polls <= spin_limit) return false;
  nap(polls - spin_limit);
  return true;
}

void set_ranks_per_core(double ranks) { g_ranks_per_core.store(std::max(1.0, ranks)); }

void nap(uint64_t k) {
  const uint64_t ns = std::min(kNapLongestNs, kNapFirstNs << std::min<uint64_t>(k - 1, 20));
  const timespec ts = {time_t(ns / 1000000000u), long(ns % 1000000000u)};
  nanosleep(&ts, nullptr);
}

void call_blocking(const std::function<void()>& fn) {
  if (!t_current) {
    fn();
    return;
  }
  std::atomic<bool> done{false};
  std::thread t([&] {
    fn();
    done.store(true, std::memory_order_release);
  });
  uint64_t polls = 0;
  while (!done.load(std::memory_order_acquire)) relax(polls);
  t.join();
}

double cpu_seconds() {
  if (!t_current) return double(thread_cpu_ns()) * 1e-9;
  return double(t_current->cpu_ns + (thread_cpu_ns() - t_current->resumed_cpu_ns)) * 1e-9;
}

double polling_cpu_seconds() { return t_current ? t_current->polling_cpu_s : t_polling_cpu_s; }

PollClock::~PollClock() {
  if (t0_ < 0) return;
  (t_current ? t_current->polling_cpu_s : t_polling_cpu_s) += cpu_seconds() - t0_;
}

size_t max_stack_resident() { return g_max_stack_resident.load(); }

void WaitQueue::notify_all() {
  for (Fiber* f : fibers_) wake(f);
  fibers_.clear();
  cv_.notify_all();
}

void WaitQueue::wait_once(std::unique_lock<std::mutex>& lock) {
  Fiber* f = t_current;
  if (!f) {
    cv_.wait(lock);
    return;
  }
  fibers_.push_back(f);
  lock.unlock();
  leave(f, Fiber::Leave::kPark);
  lock.lock();
}

}  // namespace critpath::analyzer::engine::fiber
