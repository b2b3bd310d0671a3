// critpath — tests/unit/analyzer/engine/fiber_test.cpp: engine::fiber without MPI: every task
// runs once, fibers stay on their worker, rendezvous through a WaitQueue (as hosted Comm's
// meet) and polling with relax() complete, thread_local state is swapped per fiber.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "analyzer/engine/fiber.h"

using namespace critpath::analyzer::engine;

TEST_CASE("fiber: every task runs once, pinned to its worker", "[engine][tsan]") {
  const size_t n = 100;
  // Catch2's assertions are not thread-safe: the fibers only record, the test checks after.
  std::vector<int> runs(n, 0), on_fiber(n, 0);
  std::vector<std::thread::id> first(n), later(n);
  fiber::PoolOptions o;
  o.workers = 3;
  fiber::run(
      n,
      [&](size_t i) {
        on_fiber[i] = fiber::current() != nullptr;
        first[i] = std::this_thread::get_id();
        for (int k = 0; k < 5; ++k) fiber::yield();
        later[i] = std::this_thread::get_id();
        ++runs[i];
      },
      o);
  std::set<std::thread::id> workers;
  for (size_t i = 0; i < n; ++i) {
    CHECK(runs[i] == 1);
    CHECK(on_fiber[i] == 1);
    CHECK(first[i] == later[i]);
    workers.insert(first[i]);
  }
  CHECK(workers.size() == 3);
  CHECK(fiber::current() == nullptr);
}

TEST_CASE("fiber: rendezvous of every fiber in rounds, across workers", "[engine][tsan]") {
  // A generation barrier as HostedComm::meet: the last to arrive opens the round.
  std::mutex mu;
  fiber::WaitQueue waiters;
  int arrived = 0;
  uint64_t generation = 0;
  const int n = 64, rounds = 20;
  std::atomic<int> order_errors{0};
  std::vector<int> done(n, 0);
  fiber::PoolOptions o;
  o.workers = 4;
  fiber::run(
      n,
      [&](size_t i) {
        for (int r = 0; r < rounds; ++r) {
          std::unique_lock<std::mutex> lock(mu);
          if (generation != uint64_t(r)) ++order_errors;
          if (++arrived < n) {
            const uint64_t g = generation;
            waiters.wait(lock, [&] { return generation != g; });
          } else {
            arrived = 0;
            ++generation;
            waiters.notify_all();
          }
        }
        done[i] = 1;
      },
      o);
  CHECK(order_errors == 0);
  CHECK(generation == uint64_t(rounds));
  for (int d : done) CHECK(d == 1);
}

TEST_CASE("fiber: a poller and a blocking call do not stall the worker's other fibers", "[engine][tsan]") {
  // One worker: fiber 0 polls a flag that fiber 1 sets only after a call made off the worker.
  std::atomic<bool> flag{false};
  std::atomic<bool> blocked_done{false};
  uint64_t polls = 0;  // checked after run(): Catch2's assertions are not thread-safe
  fiber::PoolOptions o;
  o.workers = 1;
  fiber::run(
      2,
      [&](size_t i) {
        if (i == 0) {
          while (!flag.load()) fiber::relax(polls);
        } else {
          fiber::call_blocking([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            blocked_done = true;
          });
          flag = true;
        }
      },
      o);
  CHECK(polls > 0);
  CHECK(blocked_done);
}

TEST_CASE("fiber: per-fiber state swapped in and out, CPU time per fiber", "[engine][tsan]") {
  thread_local int t_who = -1;
  std::vector<int> own(8);
  for (size_t i = 0; i < own.size(); ++i) own[i] = int(i);
  std::atomic<int> wrong{0};
  std::vector<double> cpu(own.size(), 0);
  fiber::PoolOptions o;
  o.workers = 2;
  o.on_switch = [&](size_t i, bool in) {
    if (in) {
      t_who = own[i];
    } else {
      own[i] = t_who;
      t_who = -1;
    }
  };
  fiber::run(
      own.size(),
      [&](size_t i) {
        const double c0 = fiber::cpu_seconds();
        volatile double x = 0;
        for (int k = 0; k < 10; ++k) {
          if (t_who != int(i)) ++wrong;
          for (int j = 0; j < 200000; ++j) x = x + j * 1e-9;
          fiber::yield();
        }
        cpu[i] = fiber::cpu_seconds() - c0;
      },
      o);
  CHECK(wrong == 0);
  for (double c : cpu) CHECK(c > 0);
  CHECK(fiber::max_stack_resident() > 0);
}

TEST_CASE("fiber: WaitQueue and relax on plain threads", "[engine][tsan]") {
  std::mutex mu;
  fiber::WaitQueue q;
  bool ready = false;
  std::thread t([&] {
    std::lock_guard<std::mutex> lock(mu);
    ready = true;
    q.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    q.wait(lock, [&] { return ready; });
  }
  t.join();
  uint64_t polls = 0;
  fiber::relax(polls);
  CHECK(polls == 1);
  fiber::run(0, [](size_t) {});
}

TEST_CASE("fiber: a plain thread's relax() spins, then sleeps ever longer", "[engine]") {
  // A core for every rank: kUncrowdedSpins polls at least before the first sleep, whatever the
  // caller's spin limit.
  fiber::set_ranks_per_core(1);
  uint64_t polls = 0;
  uint64_t slept = 0;
  for (uint64_t i = 0; i < fiber::kUncrowdedSpins; ++i) slept += fiber::relax(polls, 4);
  CHECK(slept == 0);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) CHECK(fiber::relax(polls, 4));  // 16, 32, 64 and 128 us at least
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  CHECK(polls == fiber::kUncrowdedSpins + 4);
  CHECK(us >= 240);
  // More ranks than cores: no spinning, it sleeps at the first poll.
  fiber::set_ranks_per_core(2);
  polls = 0;
  CHECK(fiber::relax(polls, 4));
  fiber::set_ranks_per_core(1);
}
