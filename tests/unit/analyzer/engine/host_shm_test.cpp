// critpath — tests/unit/analyzer/engine/host_shm_test.cpp: engine::host_shm without MPI, forked
// processes as the ranks of one segment (host_shm::testing): many rounds of every collective
// back to back (two all-to-alls of counts in a row, reductions in rank order, gathers that fit
// and one that does not, sparse exchanges, one of them too large), with and without spinning,
// arrivals shuffled by short sleeps; a rank that never arrives (the others give up after the
// deadline's grace and poison the segment: the late rank's next operation fails); the
// point-to-point rings; a crowded rank whose posts are under way asleep on its bell in a
// collective, woken by a ring to test them and by the rank that completes the operation; the
// point-to-point messages through the inboxes (empty to larger than a ring: whole and in order
// per sender, crowded and not).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/engine/host_shm.h"
#include "analyzer/engine/watchdog.h"

using namespace critpath;
namespace shm = critpath::analyzer::engine::host_shm;

namespace {

constexpr size_t kMessage = 240;

// inout = inout * 16 + in per element: not commutative, so the result spells the fold's order.
void append_digit(const void* in, void* inout, int n) {
  for (int i = 0; i < n; ++i) {
    int64_t a = 0, b = 0;
    std::memcpy(&a, static_cast<const unsigned char*>(in) + 8 * i, 8);
    std::memcpy(&b, static_cast<unsigned char*>(inout) + 8 * i, 8);
    b = b * 16 + a;
    std::memcpy(static_cast<unsigned char*>(inout) + 8 * i, &b, 8);
  }
}

// The digits first, first + 1, ..., last (hexadecimal, each + 1) folded in that order.
int64_t digits(int first, int last, int64_t scale) {
  int64_t v = 0;
  for (int r = first; r <= last; ++r) v = v * 16 + (r + 1) * scale;
  return v;
}

// P forked ranks run body(rank, message) on a fresh segment; each rank's failure message (empty:
// none) comes back. A rank still running after `limit_s` is killed (its message says so).
template <typename Body>
std::vector<std::string> run_ranks(int P, bool crowded, double limit_s, Body body) {
  const size_t seg = shm::testing::segment_bytes(P);
  const size_t bytes = seg + size_t(P) * kMessage;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  shm::testing::init_segment(m, P);
  char* messages = static_cast<char*>(m) + seg;
  std::memset(messages, 0, size_t(P) * kMessage);
  std::vector<pid_t> pids;
  for (int r = 0; r < P; ++r) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      shm::testing::join(m, r, P, crowded, 8, append_digit);
      std::string why = body(r);
      shm::detach();
      std::snprintf(messages + size_t(r) * kMessage, kMessage, "%s", why.c_str());
      _exit(0);
    }
    pids.push_back(pid);
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> out(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) {
    int st = 0;
    for (;;) {
      if (waitpid(pids[size_t(r)], &st, WNOHANG) == pids[size_t(r)]) break;
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
        kill(pids[size_t(r)], SIGKILL);
        waitpid(pids[size_t(r)], &st, 0);
        out[size_t(r)] = "killed: still running after the time limit";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (out[size_t(r)].empty()) out[size_t(r)] = messages + size_t(r) * kMessage;
  }
  munmap(m, bytes);
  return out;
}

// Every rank's failure message is empty.
void check_ranks(const std::vector<std::string>& got) {
  for (size_t r = 0; r < got.size(); ++r) {
    INFO("rank " << r);
    CHECK(got[r] == "");
  }
}

std::string fail(const char* what, int round, long got, long want) {
  char b[kMessage];
  std::snprintf(b, sizeof b, "round %d: %s: %ld, expected %ld", round, what, got, want);
  return b;
}

// A sparse exchange: rank r sends round % 7 + d bytes of value r + d to rank (r + d) % P for
// d = 1, 2 (d = 2 only in odd rounds; one piece to itself every third round). Every 16th round
// rank 0's piece to rank 1 is 1.5 slots, more than its share of the pool, and still served;
// four rounds later every rank's is a slot, more than the pool, and every rank hears "go to MPI".
std::string exchange_round(int me, int P, int round) {
  const MPI_Comm c = MPI_COMM_WORLD;
  Status s = Status::kOk;
  auto size_of = [round](int from, int d) {
    if (d == 1 && round % 16 == 12) return shm::kSlotBytes;
    return d == 1 && from == 0 && round % 16 == 8 ? shm::kSlotBytes * 3 / 2 : size_t(round % 7 + d);
  };
  std::vector<std::vector<unsigned char>> bufs;
  std::vector<analyzer::engine::Comm::Piece> out;
  for (int d : {0, 1, 2}) {
    if ((d == 0 && round % 3 != 0) || (d == 2 && round % 2 == 0) || (d > 0 && d % P == 0)) continue;
    const size_t bytes = size_of(me, d);
    bufs.emplace_back(bytes, static_cast<unsigned char>(me + d));
    out.push_back({(me + d) % P, bufs.back().data(), bytes});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.peer < b.peer; });
  std::vector<analyzer::engine::Comm::Parcel> in;
  const bool served = shm::exchange(c, out, in, s);
  if (round % 16 == 12) return served ? fail("oversized exchange served", round, 1, 0) : "";
  if (!served || s != Status::kOk) return fail("exchange ran", round, long(s), 0);
  std::vector<std::pair<int, int>> want;  // (source, d), ascending by source
  for (int d : {0, 1, 2}) {
    if ((d == 0 && round % 3 != 0) || (d == 2 && round % 2 == 0) || (d > 0 && d % P == 0)) continue;
    want.push_back({((me - d) % P + P) % P, d});
  }
  std::sort(want.begin(), want.end());
  if (in.size() != want.size()) return fail("exchange parcels", round, long(in.size()), long(want.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    const auto [src, d] = want[i];
    if (in[i].peer != src) return fail("exchange source", round, in[i].peer, src);
    if (in[i].bytes != std::vector<unsigned char>(size_of(src, d), static_cast<unsigned char>(src + d)))
      return fail("exchange bytes from", round, src, long(size_of(src, d)));
  }
  return "";
}

// One round of every operation on rank me of P: a failure message, or empty.
std::string round_of_everything(int me, int P, int round) {
  const MPI_Comm c = MPI_COMM_WORLD;  // any communicator: a joined segment serves each
  Status s = Status::kOk;
  // Arrivals in a different order each round: some ranks come late.
  if ((round + me) % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds((round * 7 + me) % 40));
  // Two all-to-alls of counts back to back, then a third after a reduction.
  for (int k = 0; k < 3; ++k) {
    if (k == 2) {
      // Two elements (in the ranks' lines), or every other round twelve (in their slots).
      const int n = round % 2 ? 12 : 2;
      int64_t v[12];
      for (int i = 0; i < n; ++i) v[i] = (i + 1) * (me + 1);
      if (!shm::allreduce(c, MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, -1, s) || s != Status::kOk)
        return fail("allreduce ran", round, long(s), 0);
      if (v[0] != digits(0, P - 1, 1))
        return fail("allreduce, rank order", round, long(v[0]), long(digits(0, P - 1, 1)));
      for (int i = 1; i < n; ++i)
        if (v[i] != digits(0, P - 1, i + 1))
          return fail("allreduce, element", round, long(v[i]), long(digits(0, P - 1, i + 1)));
    }
    std::vector<int> send(static_cast<size_t>(P)), recv(static_cast<size_t>(P), -1);
    for (int d = 0; d < P; ++d) send[size_t(d)] = round * 100000 + k * 10000 + me * 100 + d;
    if (!shm::alltoall_int(c, send.data(), recv.data(), s) || s != Status::kOk)
      return fail("alltoall_int ran", round, long(s), 0);
    for (int src = 0; src < P; ++src)
      if (recv[size_t(src)] != round * 100000 + k * 10000 + src * 100 + me)
        return fail("alltoall_int", round, recv[size_t(src)], round * 100000 + k * 10000 + src * 100 + me);
  }
  // Reduce to one root: only it has the result.
  const int root = round % P;
  int64_t in = me + 1, out = -7;
  if (!shm::allreduce(c, &in, &out, 1, MPI_INT64_T, MPI_SUM, root, s) || s != Status::kOk)
    return fail("reduce ran", round, long(s), 0);
  if (out != (me == root ? digits(0, P - 1, 1) : -7))
    return fail("reduce", round, long(out), long(digits(0, P - 1, 1)));
  // Inclusive scan: rank me has the fold of ranks 0 .. me.
  if (!shm::scan(c, &in, &out, 1, MPI_INT64_T, MPI_SUM, s) || s != Status::kOk)
    return fail("scan ran", round, long(s), 0);
  if (out != digits(0, me, 1)) return fail("scan", round, long(out), long(digits(0, me, 1)));
  // Broadcast from another root.
  const int from = (round + 1) % P;
  std::vector<unsigned char> b(100, me == from ? static_cast<unsigned char>(round) : 0xff);
  if (!shm::bcast(c, b.data(), b.size(), from, s) || s != Status::kOk)
    return fail("bcast ran", round, long(s), 0);
  for (unsigned char x : b)
    if (x != static_cast<unsigned char>(round)) return fail("bcast", round, x, round & 0xff);
  // Gathers of varying sizes (rank r: r + round % 5 bytes of value r, 100 more for odd ranks
  // every third round: beyond a rank's line, in its slot), to all and to a root.
  const auto gathered = [round](int r) {
    return size_t(r + round % 5 + (round % 3 == 1 && r % 2 ? 100 : 0));
  };
  for (int to : {-1, root}) {
    std::vector<unsigned char> mine(gathered(me), static_cast<unsigned char>(me)), all;
    std::vector<size_t> sizes;
    if (!shm::gather(c, mine.data(), mine.size(), to, all, sizes, s) || s != Status::kOk)
      return fail("gather ran", round, long(s), 0);
    if (to >= 0 && to != me) continue;
    size_t at = 0;
    for (int r = 0; r < P; ++r) {
      if (sizes.size() != size_t(P) || sizes[size_t(r)] != gathered(r))
        return fail("gather size", round, sizes.size() == size_t(P) ? long(sizes[size_t(r)]) : -1,
                    long(gathered(r)));
      for (size_t i = 0; i < sizes[size_t(r)]; ++i)
        if (all[at + i] != r) return fail("gather bytes", round, all[at + i], r);
      at += sizes[size_t(r)];
    }
    if (all.size() != at) return fail("gather total", round, long(all.size()), long(at));
  }
  // A contribution that does not fit a slot: every rank hears "go to MPI".
  if (round % 16 == 0) {
    std::vector<unsigned char> mine(me == 1 ? shm::kSlotBytes + 1 : 4, 1), all;
    std::vector<size_t> sizes;
    if (shm::gather(c, mine.data(), mine.size(), -1, all, sizes, s))
      return fail("oversized gather served", round, 1, 0);
  }
  if (std::string why = exchange_round(me, P, round); !why.empty()) return why;
  if (!shm::barrier(c, s) || s != Status::kOk) return fail("barrier", round, long(s), 0);
  return "";
}

}  // namespace

TEST_CASE("host_shm: every collective, many rounds back to back, folds in rank order", "[engine]") {
  for (bool crowded : {false, true}) {
    for (int P : {2, 3, 5}) {
      INFO("P " << P << (crowded ? ", sleeping at once" : ", spinning first"));
      const std::vector<std::string> got = run_ranks(P, crowded, 60.0, [P](int me) {
        for (int round = 0; round < 300; ++round) {
          std::string why = round_of_everything(me, P, round);
          if (!why.empty()) return why;
        }
        return std::string();
      });
      check_ranks(got);
    }
  }
}

TEST_CASE("host_shm: a rank that never arrives: the others give up, later operations fail", "[engine]") {
  // Ranks 0 and 1 wait at a barrier that rank 2 joins only after they gave up (deadline 0.05 s,
  // then the grace of 1 s); rank 2's own deadline is not armed: only the poison stops it.
  const std::vector<std::string> got = run_ranks(3, true, 30.0, [](int me) -> std::string {
    const MPI_Comm c = MPI_COMM_WORLD;
    Status s = Status::kOk;
    if (me == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      if (!shm::barrier(c, s)) return "late barrier not served";
      return s == Status::kMpiError ? "" : "late barrier succeeded on a poisoned segment";
    }
    analyzer::engine::watchdog_start(0.05);
    const auto t0 = std::chrono::steady_clock::now();
    if (!shm::barrier(c, s)) return "barrier not served";
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s != Status::kMpiError) return "barrier completed without rank 2";
    if (waited < 1.0 || waited > 2.0)
      return "gave up after " + std::to_string(waited) + " s, not after the grace";
    int64_t v = 1;
    if (!shm::allreduce(c, MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, -1, s) || s != Status::kMpiError)
      return "an operation after the abandoned one did not fail";
    analyzer::engine::watchdog_stop();
    return "";
  });
  check_ranks(got);
}

TEST_CASE("host_shm: a ring bumps the destination's word and wakes its sleep", "[engine]") {
  const std::vector<std::string> got = run_ranks(2, true, 30.0, [](int me) -> std::string {
    const MPI_Comm c = MPI_COMM_WORLD;
    Status s = Status::kOk;
    for (int i = 0; i < 50; ++i) {
      const uint32_t seen = shm::rings();
      if (!shm::barrier(c, s) || s != Status::kOk) return "barrier";
      if (me == 0) {
        if (!shm::ring(c, 1)) return "ring not served";
        if (shm::ring(c, 2) || shm::ring(c, -1)) return "a ring to a rank outside the segment";
      } else {
        if (!shm::sleep_until_rung(c, seen)) return "sleep not served";
        while (shm::rings() == seen) shm::sleep_until_rung(c, seen);
        if (shm::rings() != seen + 1) return fail("rings", i, long(shm::rings() - seen), 1);
      }
      if (me == 0 && shm::rings() != seen) return fail("rank 0 rung", i, long(shm::rings() - seen), 0);
    }
    return shm::barrier(c, s) && s == Status::kOk ? "" : "last barrier";
  });
  check_ranks(got);
}

namespace {

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// What the ranks of the posts test share besides the segment (MAP_SHARED before the fork).
struct PostsShared {
  std::atomic<int> delivered{0};  // rank 1's post: its receiver has it
  std::atomic<int> tests{0};      // rank 1's tests of its posts (its watch_posts sweep)
  std::atomic<int> round{-1};     // rank 1 has gone to wait in the barrier of this round
  double arrived[16] = {};        // when rank 1 went to wait, per round
};

}  // namespace

TEST_CASE("host_shm: crowded, a rank with posts under way sleeps on its bell in a collective", "[engine]") {
  void* m = mmap(nullptr, sizeof(PostsShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  auto* sh = new (m) PostsShared();
  constexpr int kRounds = 9;
  const std::vector<std::string> got = run_ranks(3, true, 60.0, [sh](int me) -> std::string {
    const MPI_Comm c = MPI_COMM_WORLD;
    Status s = Status::kOk;
    if (me == 1) {
      shm::watch_posts([sh] {
        sh->tests.fetch_add(1);
        if (sh->delivered.exchange(0) == 1) shm::count_posts(-1);
      });
      // Round 0: its post is delivered 100 ms into the barrier (a ring says so), the others
      // arrive 100 ms later: it sleeps throughout, testing once per ring or timeout (kWaitNs,
      // 20 ms), not polling.
      shm::count_posts(1);
      sh->round.store(0);
      if (!shm::barrier(c, s) || s != Status::kOk) return "barrier with a post";
      if (sh->tests.load() > 20)
        return fail("tests of its posts while asleep, at most", 0, sh->tests.load(), 20);
      // Later rounds: the post stays under way; the barrier completes 2 ms after rank 1 went to
      // sleep, and the rank completing it rings rank 1 (not the timeout, 20 ms later).
      shm::count_posts(1);
      std::vector<double> late;
      for (int round = 1; round < kRounds; ++round) {
        sh->arrived[round] = now_s();
        sh->round.store(round);
        if (!shm::barrier(c, s) || s != Status::kOk) return fail("barrier, round", round, long(s), 0);
        late.push_back(now_s() - sh->arrived[round]);
      }
      std::sort(late.begin(), late.end());
      if (late[late.size() / 2] > 0.012)
        return "woken " + std::to_string(late[late.size() / 2] * 1e3) +
               " ms after its barrier's start, median";
      shm::count_posts(-1);
    } else {
      while (sh->round.load() < 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (me == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        sh->delivered.store(1);
        if (!shm::ring(c, 1)) return "ring not served";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (!shm::barrier(c, s) || s != Status::kOk) return "barrier, round 0";
      for (int round = 1; round < kRounds; ++round) {
        while (sh->round.load() < round) std::this_thread::sleep_for(std::chrono::microseconds(100));
        while (now_s() < sh->arrived[round] + 0.002)
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        if (me == 2) std::this_thread::sleep_for(std::chrono::microseconds(200));  // the last to arrive
        if (!shm::barrier(c, s) || s != Status::kOk) return fail("barrier, round", round, long(s), 0);
      }
    }
    return shm::barrier(c, s) && s == Status::kOk ? "" : "last barrier";
  });
  check_ranks(got);
  munmap(m, sizeof(PostsShared));
}

namespace {

// Message k from `from` to `to`: its size cycles through empty, a few bytes, a record's worth
// and more than a ring holds; its bytes spell (from, to, k, index).
std::vector<unsigned char> inbox_message(int from, int to, int k) {
  static const size_t kSizes[] = {0, 1, 13, 4096, 70000, 300000, 8};
  std::vector<unsigned char> m(kSizes[size_t(k) % (sizeof kSizes / sizeof kSizes[0])]);
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = static_cast<unsigned char>(from * 31 + to * 17 + k * 7 + int(i));
  return m;
}

}  // namespace

TEST_CASE("host_shm: messages through the inboxes arrive whole and in order per sender", "[engine]") {
  constexpr int kPerPeer = 15;
  // 3 ranks: the segment's parts before the inboxes end off a 64-byte boundary (UBSan checks
  // the inboxes' alignment in the sanitizer build).
  for (const int P : {3, 4})
    for (const bool crowded : {false, true}) {
      INFO("ranks " << P << ", crowded " << crowded);
      const std::vector<std::string> got = run_ranks(P, crowded, 60.0, [crowded, P](int me) -> std::string {
        const MPI_Comm c = MPI_COMM_WORLD;
        if (!shm::carries(c)) return "not carried";
        for (int k = 0; k < kPerPeer; ++k)
          for (int d = 1; d < P; ++d) shm::send((me + d) % P, inbox_message(me, (me + d) % P, k));
        std::vector<int> next(size_t(P), 0);
        for (int taken = 0; taken < kPerPeer * (P - 1);) {
          const uint32_t seen = shm::rings();
          int src = -1;
          std::vector<unsigned char> bytes;
          if (shm::take(src, bytes)) {
            if (src < 0 || src >= P || src == me) return fail("source", taken, src, -1);
            if (bytes != inbox_message(src, me, next[size_t(src)]))
              return fail("message from rank", next[size_t(src)], src, long(bytes.size()));
            ++next[size_t(src)];
            ++taken;
            continue;
          }
          shm::push();
          if (crowded) shm::sleep_until_rung(c, seen);
          else std::this_thread::yield();
        }
        while (shm::push()) std::this_thread::yield();  // the queued rest, received by the others
        Status s = Status::kOk;
        if (!shm::barrier(c, s) || s != Status::kOk) return "barrier";
        int src = -1;
        std::vector<unsigned char> bytes;
        return shm::take(src, bytes) ? "a message too many" : "";
      });
      check_ranks(got);
    }
}
