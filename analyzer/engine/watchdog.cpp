// critpath — analyzer/engine/watchdog.cpp
#include "analyzer/engine/watchdog.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "libtrace/clock/clock.h"

namespace critpath::analyzer::engine {
namespace {

std::atomic<uint64_t> g_deadline_ns{0};  // CLOCK_MONOTONIC; 0: none
std::atomic<uint64_t> g_abandon_ns{0};   // the deadline plus the grace
std::atomic<bool> g_expired{false};

bool abandon_now() {
  const uint64_t at = g_abandon_ns.load(std::memory_order_relaxed);
  return at != 0 && clock::monotonic_ns() >= at;
}

}  // namespace

void watchdog_start(double seconds) {
  g_expired.store(false);
  if (seconds <= 0) {
    watchdog_stop();
    return;
  }
  const double grace = std::min(30.0, std::max(1.0, 0.05 * seconds));
  const uint64_t now = clock::monotonic_ns();
  g_deadline_ns.store(now + uint64_t(seconds * 1e9));
  g_abandon_ns.store(now + uint64_t((seconds + grace) * 1e9));
}

void watchdog_stop() {
  g_deadline_ns.store(0);
  g_abandon_ns.store(0);
}

bool watchdog_expired() {
  if (g_expired.load(std::memory_order_relaxed)) return true;
  const uint64_t deadline = g_deadline_ns.load(std::memory_order_relaxed);
  if (deadline == 0 || clock::monotonic_ns() < deadline) return false;
  g_expired.store(true);
  return true;
}

Status complete_nonblocking(const std::function<int(MPI_Request*)>& start) {
  if (watchdog_expired()) return Status::kMpiError;
  MPI_Request request = MPI_REQUEST_NULL;
  if (start(&request) != MPI_SUCCESS) return Status::kMpiError;
  // Poll as a blocking call would (MPI libraries busy-poll too), yielding the core between
  // tests once the wait is long, and reading the clock only every 256 tests.
  for (uint64_t spins = 0;; ++spins) {
    int done = 0;
    if (PMPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return Status::kMpiError;
    if (done) return Status::kOk;
    if (spins > 1024) sched_yield();
    if (spins % 256 == 255 && abandon_now()) {
      watchdog_expired();  // sticky from here on
      return Status::kMpiError;
    }
  }
}

}  // namespace critpath::analyzer::engine
