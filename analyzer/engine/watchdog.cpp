// critpath — analyzer/engine/watchdog.cpp
#include "analyzer/engine/watchdog.h"
#include "analyzer/engine/fiber.h"
#include "analyzer/engine/host_shm.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

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

bool watchdog_abandoned() {
  if (!abandon_now()) return false;
  watchdog_expired();  // sticky from here on
  return true;
}

Status complete_all(std::vector<MPI_Request>& requests) {
  // Poll as a blocking call would (MPI libraries busy-poll too), then sleep ever longer
  // between tests once the wait is long (fiber::relax), reading the clock every 256 tests
  // while spinning (or yielding on a fiber) and at every test once sleeping.
  uint64_t polls = 0;
  fiber::PollClock waiting;
  for (uint64_t spins = 0;; ++spins) {
    int done = 0;
    if (PMPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return Status::kMpiError;
    if (done) return Status::kOk;
    waiting.begin();
    const bool slept = spins > 0 && fiber::relax(polls);  // a fiber lets its worker's other fibers run
    if ((slept || spins % 256 == 255) && watchdog_abandoned()) return Status::kMpiError;
  }
}

Status complete_nonblocking(const std::function<int(MPI_Request*)>& start) {
  if (watchdog_expired()) return Status::kMpiError;
  std::vector<MPI_Request> request(1, MPI_REQUEST_NULL);
  if (start(request.data()) != MPI_SUCCESS) return Status::kMpiError;
  return complete_all(request);
}

// The largest piece an alltoallv_p2p receive may sleep for (host_shm::complete_p2p): MPICH's
// shared-memory eager limit.
constexpr size_t kSleepingPieceBytes = 16384;

Status alltoallv_p2p(const void* send, const int* send_counts, const int* send_displs, void* recv,
                     const int* recv_counts, const int* recv_displs, MPI_Datatype type, size_t extent,
                     MPI_Comm comm) {
  if (watchdog_expired()) return Status::kMpiError;
  int me = 0, n = 1;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &n);
  const auto* in = static_cast<const unsigned char*>(send);
  auto* out = static_cast<unsigned char*>(recv);
  std::vector<MPI_Request> requests;
  std::vector<int> peers;  // of each request, for host_shm's rings
  requests.reserve(2 * size_t(n));
  for (int s = 0; s < n; ++s) {
    if (s == me || recv_counts[s] == 0) continue;
    peers.push_back(s);
    requests.push_back(MPI_REQUEST_NULL);
    if (PMPI_Irecv(out + size_t(recv_displs[s]) * extent, recv_counts[s], type, s, kAlltoallTag, comm,
                   &requests.back()) != MPI_SUCCESS)
      return Status::kMpiError;
  }
  const size_t receives = requests.size();
  for (int k = 1; k <= n; ++k) {
    const int d = (me + k) % n;  // a different first partner per rank
    if (d == me || send_counts[d] == 0) continue;
    peers.push_back(d);
    requests.push_back(MPI_REQUEST_NULL);
    if (PMPI_Isend(in + size_t(send_displs[d]) * extent, send_counts[d], type, d, kAlltoallTag, comm,
                   &requests.back()) != MPI_SUCCESS)
      return Status::kMpiError;
  }
  if (send_counts[me] > 0)
    std::memcpy(out + size_t(recv_displs[me]) * extent, in + size_t(send_displs[me]) * extent,
                size_t(send_counts[me]) * extent);
  // Sleeping between rings suits small pieces only: a large one moves through MPI's shared
  // memory in chunks, each needing the receiver's progress too (the 4-rank chain's walk, 1 to
  // 2 MB per piece, took 1.7 s instead of 1.05 with the receivers asleep between rings).
  bool small = true;
  for (int s = 0; s < n && small; ++s)
    small = s == me || size_t(recv_counts[s]) * extent <= kSleepingPieceBytes;
  Status shared = Status::kOk;
  if (small && host_shm::complete_p2p(comm, requests, peers, receives, shared)) return shared;
  return complete_all(requests);
}

}  // namespace critpath::analyzer::engine
