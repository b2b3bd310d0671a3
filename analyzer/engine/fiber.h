// critpath — analyzer/engine/fiber.h
//
// User-level fibers on a pool of worker threads, for critpath-analyze's hosted analysis ranks
// (comm.h): a process hosting 4,096 traced ranks runs them as 4,096 fibers on about one worker
// per core instead of 4,096 threads.
//
//   run(n, task, options)   task(i) for i in [0, n), each on its own fiber (on x86-64 a
//                           switch of the callee-saved registers, glibc ucontext elsewhere;
//                           an mmap'd stack with a guard page below it); fiber i runs on
//                           worker i * workers / n only (contiguous blocks, never migrating:
//                           thread_local state stays the fiber's worker's)
//   yield()                 back of the worker's run queue (a fiber polling MPI)
//   WaitQueue::wait()       parks the fiber until notify_all() (a rendezvous in memory)
//
// Scheduling is cooperative: a fiber runs until it yields, parks or returns, so a fiber must
// never block its worker thread on something another fiber has to do. Every wait of the
// engine's hosted operations therefore goes through relax() or a WaitQueue; both also serve
// plain threads (outside run()), which spin and yield the core or wait on a condition
// variable as before. Fiber switches are announced to ASan and TSan when built with them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace critpath::analyzer::engine::fiber {

struct Fiber;  // fiber.cpp

struct PoolOptions {
  int workers = 0;         // 0: std::thread::hardware_concurrency(); never more than n
  size_t stack_bytes = 0;  // usable stack per fiber; 0: kDefaultStackBytes
  // Called on the worker thread right after fiber i is resumed (true) and right before it
  // leaves its worker (false): per-fiber thread_local state is swapped in and out here.
  std::function<void(size_t, bool)> on_switch;
};

// Address space only (MAP_NORESERVE): only the pages a fiber touches become resident. The
// analysis of a location went at most 44 KiB deep on the golden traces (CRITPATH_VERBOSE=2 makes
// critpath-analyze say); the rest is headroom for deep call-path trees.
constexpr size_t kDefaultStackBytes = size_t(8) << 20;

// Runs task(i) for every i in [0, n) as fibers and returns when all have returned. A task
// must not throw (an escaping exception is caught and ends its fiber). With n == 0 nothing
// runs. Not reentrant: tasks must not call run().
void run(size_t n, const std::function<void(size_t)>& task, const PoolOptions& options = {});

// The calling fiber, nullptr on a plain thread.
Fiber* current();
// Lets the worker's other fibers run; on a plain thread, returns at once.
void yield();
// One poll of a wait loop (`polls` counts them): a fiber yields; a plain thread spins
// `spin_limit` polls (kUncrowdedSpins at least while every rank has a core of its own; none
// when the analysis ranks outnumber the cores: the rank waited for is most likely not
// running), then sleeps at each poll, ever longer (nap(polls - spin_limit)).
// Without `sleep`, or with more than kNapCrowd ranks per core, it gives the core away
// (sched_yield) after `spin_limit` polls instead: the replays' point-to-point messages
// (comm.cpp) form chains where a sleep at every hop adds up, and with that many ranks per core
// the sleeps only stretch the analysis (see nap()). True when it slept.
bool relax(uint64_t& polls, uint64_t spin_limit = 64, bool sleep = true);
// The k-th sleep (k >= 1) of a wait that found nothing for a while: kNapFirstNs doubling at
// each up to kNapLongestNs. A waiting rank so costs a few wake-ups per wait instead of
// polling without pause (with sched_yield, which the scheduler hands straight back). A wait
// overshoots its message by at most one sleep. Measured in situ (bench_wavefront, MPICH, 2
// cores): at 16 ranks the analysis's CPU per rank fell from about 53 to 22 ms. At 128 ranks
// per core sleeping saved nothing: the cores are busy with the waiting ranks anyway, each
// wake-up costing 20 to 40 us of CPU there (MPICH's progress looks at every local peer), and
// the sleeps stretched the collectives, which progress only while their ranks poll (the
// what-if replay then ran over its budget); hence kNapCrowd.
constexpr uint64_t kNapFirstNs = 16000, kNapLongestNs = 1000000;
constexpr double kNapCrowd = 32;
// With a core for every rank, a wait spins this many polls at least before its first sleep
// (some ms: a poll is a test of MPI requests). The exchanges of large messages go at the pace
// of their ranks' polls (MPI moves a rendezvous message's data inside them), and with 64 polls
// each protocol step waited for the peer's sleep to end: a 2-rank ping-pong's analysis
// (500k round trips) slept 20 ms of its 80 ms walk, 8 ms of its exchange and delay each, with
// both ranks asleep at once; spinning, 0.25 s instead of 0.29.
constexpr uint64_t kUncrowdedSpins = 65536;
void nap(uint64_t k);
// The analysis ranks per core on this host (the engine sets it in situ, once it knows; 1
// until then).
void set_ranks_per_core(double ranks);
// A blocking call that may wait for other processes (MPI_Comm_create_group): on a fiber it
// runs on a thread of its own while the fiber yields, so the worker's other fibers go on.
void call_blocking(const std::function<void()>& fn);
// CPU seconds the calling fiber has run so far (its worker's CLOCK_THREAD_CPUTIME_ID while it
// ran, and while the scheduler chose it: one clock reading per switch); on a plain thread,
// the thread's CPU time.
double cpu_seconds();
// The CPU seconds the calling fiber (on a plain thread: the thread) spent in the engine's wait
// loops polling for other ranks (watchdog.cpp's complete_all, comm.cpp's receive and reap):
// with more analysis ranks than cores that is where a rank's CPU goes while the others wait
// for a core, not its own work. A PollClock marks one wait loop: begin() at its first poll
// that found nothing (later calls keep the first), the destructor adds the CPU time since.
double polling_cpu_seconds();
class PollClock {
 public:
  PollClock() = default;
  PollClock(const PollClock&) = delete;
  PollClock& operator=(const PollClock&) = delete;
  ~PollClock();
  void begin() {
    if (t0_ < 0) t0_ = cpu_seconds();
  }

 private:
  double t0_ = -1;
};
// The deepest stack use of a finished fiber so far, in bytes (resident pages of its stack
// when it returned): to size kDefaultStackBytes.
size_t max_stack_resident();

// Fibers and threads waiting for a condition guarded by the caller's mutex, as a
// std::condition_variable (which a waiting fiber cannot use: it would block its worker).
class WaitQueue {
 public:
  // With `lock` held: returns once pred() holds (re-checked under the lock after each wake).
  template <typename Pred>
  void wait(std::unique_lock<std::mutex>& lock, Pred pred) {
    while (!pred()) wait_once(lock);
  }
  // With the waiters' mutex held: wakes every waiter.
  void notify_all();

 private:
  void wait_once(std::unique_lock<std::mutex>& lock);
  std::condition_variable cv_;
  std::vector<Fiber*> fibers_;  // parked; guarded by the caller's mutex
};

}  // namespace critpath::analyzer::engine::fiber
