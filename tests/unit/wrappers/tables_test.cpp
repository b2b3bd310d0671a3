// critpath — tests/unit/wrappers/tables_test.cpp: request/message/communicator tracking
// (pmpi_wrappers/semantics/{handle_table,request_table,comm_ids,counters}.h) with sentinel
// handle values, no MPI.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "pmpi_wrappers/semantics/comm_ids.h"
#include "pmpi_wrappers/semantics/counters.h"
#include "pmpi_wrappers/semantics/handle_table.h"
#include "pmpi_wrappers/semantics/request_table.h"

using namespace critpath::pmpi;

namespace {
using SmallTable = ClaimTable<RequestInfo, 8>;  // 256 slots

RequestInfo info_with_id(uint64_t id) {
  RequestInfo r;
  r.id = id;
  return r;
}
}  // namespace

TEST_CASE("claim table: insert, claim, release, erase", "[semantics]") {
  auto t = std::make_unique<SmallTable>();
  CHECK(t->claim(0x44000001) == SmallTable::kNone);
  REQUIRE(t->insert(0x44000001, info_with_id(7)));
  const uint32_t s = t->claim(0x44000001);
  REQUIRE(s != SmallTable::kNone);
  CHECK(t->at(s).id == 7);
  CHECK(t->claim(0x44000001) == SmallTable::kNone);  // claimed entries are invisible
  t->at(s).id = 8;
  t->release(s);
  const uint32_t s2 = t->claim(0x44000001);
  REQUIRE(s2 == s);
  CHECK(t->at(s2).id == 8);
  t->erase(s2);
  CHECK(t->claim(0x44000001) == SmallTable::kNone);
  CHECK(t->size() == 0);
}

TEST_CASE("claim table: a reused handle inserted while the old entry is claimed", "[semantics]") {
  // Thread A claims handle H before PMPI_Wait; MPI frees H and thread B's MPI_Isend gets H
  // again and inserts it; A then erases its own entry. Only B's entry may remain.
  auto t = std::make_unique<SmallTable>();
  const uint64_t h = 0x7f00dead0000ull;
  REQUIRE(t->insert(h, info_with_id(1)));
  const uint32_t a = t->claim(h);
  REQUIRE(a != SmallTable::kNone);
  REQUIRE(t->insert(h, info_with_id(2)));
  const uint32_t b = t->claim(h);  // a lookup now finds B's entry, not A's
  REQUIRE(b != SmallTable::kNone);
  CHECK(b != a);
  CHECK(t->at(b).id == 2);
  t->release(b);
  t->erase(a);
  const uint32_t again = t->claim(h);
  REQUIRE(again == b);
  CHECK(t->at(again).id == 2);
}

TEST_CASE("claim table: distinct handles, tombstones reused, bounded probing", "[semantics]") {
  auto t = std::make_unique<SmallTable>();
  for (uint64_t h = 1; h <= 200; ++h) REQUIRE(t->insert(h * 4096, info_with_id(h)));
  CHECK(t->size() == 200);
  for (uint64_t h = 1; h <= 200; ++h) {
    const uint32_t s = t->claim(h * 4096);
    REQUIRE(s != SmallTable::kNone);
    CHECK(t->at(s).id == h);
    if (h % 2) t->erase(s);
    else t->release(s);
  }
  CHECK(t->size() == 100);
  for (uint64_t h = 1000; h < 1100; ++h) REQUIRE(t->insert(h * 4096, info_with_id(h)));
  CHECK(t->size() == 200);
  // Fill up: inserts eventually fail (never overwrite, never loop forever).
  uint64_t h = 5000;
  while (t->insert(h * 4096, info_with_id(h))) ++h;
  CHECK(t->size() <= SmallTable::kCapacity);
  CHECK(t->size() > 200);
  t->clear();
  CHECK(t->size() == 0);
}

TEST_CASE("claim table: concurrent posts and completions on two threads", "[semantics][tsan]") {
  // Producer inserts handles, consumer claims and erases them; every handle is completed once.
  auto t = std::make_unique<ClaimTable<RequestInfo, 10>>();
  constexpr uint64_t kN = 20000;
  // As MPI does, a handle value is handed out again only after its request completed: the
  // producer stays fewer than 300 posts (300 handle values) ahead of the consumer.
  std::atomic<uint64_t> posted{0};
  std::atomic<uint64_t> progress{0};
  std::atomic<uint64_t> completed{0};
  std::thread producer([&] {
    for (uint64_t i = 1; i <= kN; ++i) {
      while (i - progress.load(std::memory_order_acquire) > 300) std::this_thread::yield();
      while (!t->insert(0x1000 + (i % 300), info_with_id(i))) std::this_thread::yield();
      posted.store(i, std::memory_order_release);
    }
  });
  std::thread consumer([&] {
    uint64_t seen = 0;
    while (seen < kN) {
      const uint64_t p = posted.load(std::memory_order_acquire);
      for (uint64_t k = 0; k < 300 && seen < p; ++k) {
        const uint32_t s = t->claim(0x1000 + ((seen + 1) % 300));
        if (s == ClaimTable<RequestInfo, 10>::kNone) break;
        CHECK(t->at(s).id == seen + 1);
        t->erase(s);
        ++seen;
        progress.store(seen, std::memory_order_release);
      }
      std::this_thread::yield();
    }
    completed.store(seen);
  });
  producer.join();
  consumer.join();
  CHECK(completed.load() == kN);
  CHECK(t->size() == 0);
}

TEST_CASE("request ids count from 1 and reset", "[semantics]") {
  reset_request_tracking();
  CHECK(next_request_id() == 1);
  CHECK(next_request_id() == 2);
  REQUIRE(requests().insert(42, info_with_id(3)));
  REQUIRE(messages().insert(43, MessageInfo{5}));
  reset_request_tracking();
  CHECK(requests().claim(42) == RequestTable::kNone);
  CHECK(messages().claim(43) == MessageTable::kNone);
  CHECK(next_request_id() == 1);
  reset_request_tracking();
}

TEST_CASE("communicator ids: packing, uniqueness, limits", "[semantics]") {
  CHECK(comm_rank_bits(1) == 1);
  CHECK(comm_rank_bits(2) == 1);
  CHECK(comm_rank_bits(3) == 2);
  CHECK(comm_rank_bits(1024) == 10);
  CHECK(comm_rank_bits(1025) == 11);
  CHECK(comm_sequence_period(10) == 4194302u);
  CHECK(comm_sequence_period(20) == 4094u);
  // Never WORLD, SELF or unknown, even for the largest leader and sequence.
  for (int p : {1, 2, 3, 7, 1024, 1 << 20}) {
    const unsigned bits = comm_rank_bits(p);
    for (uint32_t seq : {0u, 1u, comm_sequence_period(bits) - 1, comm_sequence_period(bits)}) {
      for (int leader : {0, p - 1}) {
        const uint32_t id = pack_comm_id(leader, seq, bits);
        CHECK(id != kCommIdWorld);
        CHECK(id != kCommIdSelf);
        CHECK(id != kCommIdUnknown);
        CHECK(comm_id_leader(id, bits) == leader);
      }
    }
  }
  CHECK(pack_comm_id(0, 0, 1) == 2);  // the first split of a 2-rank run (tests rely on it)
  // Distinct (leader, sequence) pairs give distinct ids within the period.
  std::vector<uint32_t> ids;
  for (int leader = 0; leader < 5; ++leader)
    for (uint32_t seq = 0; seq < 50; ++seq) ids.push_back(pack_comm_id(leader, seq, 3));
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

TEST_CASE("communicator map: find, replace, erase", "[semantics]") {
  auto m = std::make_unique<CommMap>();
  CommView v;
  CHECK_FALSE(m->find(0x84000002, v));
  REQUIRE(m->insert(0x84000002, CommView{7, 3, 1}));
  REQUIRE(m->find(0x84000002, v));
  CHECK(v.id == 7);
  CHECK(v.size == 3);
  CHECK(v.rank == 1);
  REQUIRE(m->insert(0x84000002, CommView{9, 2, 0}));  // handle reused: replaced
  REQUIRE(m->find(0x84000002, v));
  CHECK(v.id == 9);
  CHECK(m->erase(0x84000002) == 9);
  CHECK_FALSE(m->find(0x84000002, v));
  CHECK(m->erase(0x84000002) == kCommIdUnknown);
  for (uint64_t h = 0; h < 1000; ++h)
    REQUIRE(m->insert(0x7f0000000000ull + h * 64, CommView{uint32_t(h + 2), 1, 0}));
  for (uint64_t h = 0; h < 1000; h += 7) {
    REQUIRE(m->find(0x7f0000000000ull + h * 64, v));
    CHECK(v.id == h + 2);
  }
}

TEST_CASE("counters sum over thread slots", "[semantics]") {
  reset_counters();
  count_test_without_completion(0, 10);
  count_test_without_completion(3, 5);
  count_test_without_completion(259, 1);  // wraps onto slot 3
  count_probe_without_message(1);
  count_untracked_request();
  count_unknown_comm();
  CHECK(test_calls_without_completion() == 3);
  CHECK(test_ticks_without_completion() == 16);
  CHECK(probe_calls_without_message() == 1);
  CHECK(untracked_requests() == 1);
  CHECK(unknown_comm_uses() == 1);
  reset_counters();
  CHECK(test_calls_without_completion() == 0);
}

// MPICH and Open MPI return one static handle for every send that completed inside
// MPI_Isend, so several threads' live entries may share a key: each owner gets its own back
// first, and an owner's new post supersedes its previous entry for the key.
TEST_CASE("claim table: shared handles prefer the owner's entry", "[semantics]") {
  auto t = std::make_unique<SmallTable>();
  constexpr uint64_t kShared = 0x6c000001;
  REQUIRE(t->insert(kShared, info_with_id(1), /*owner=*/1));
  REQUIRE(t->insert(kShared, info_with_id(2), /*owner=*/2));
  REQUIRE(t->insert(kShared, info_with_id(3), /*owner=*/1));  // supersedes id 1
  CHECK(t->size() == 2);
  const uint32_t a = t->claim(kShared, 2);
  REQUIRE(a != SmallTable::kNone);
  CHECK(t->at(a).id == 2);
  t->erase(a);
  // owner 2 has none left, and the handle is known shared: owner 1's entry is not its own
  CHECK(t->claim(kShared, 2) == SmallTable::kNone);
  const uint32_t b = t->claim(kShared, 1);
  REQUIRE(b != SmallTable::kNone);
  CHECK(t->at(b).id == 3);
  t->erase(b);
  CHECK(t->claim(kShared, 1) == SmallTable::kNone);
  CHECK(t->claim(kShared) == SmallTable::kNone);
}

// A thread that waits for a shared handle twice (two sends complete at their post) must not
// take another thread's entry: that thread's next Wait would complete a stranger's id.
TEST_CASE("claim table: another owner's entry only when unambiguous", "[semantics]") {
  auto t = std::make_unique<SmallTable>();
  constexpr uint64_t kShared = 0x6c000001, kReal = 0x6c0000f0, kOther = 0x6c0000f4;
  REQUIRE(t->insert(kShared, info_with_id(1), 1));
  REQUIRE(t->insert(kShared, info_with_id(2), 2));
  CHECK(t->claim(kShared, 3) == SmallTable::kNone);  // two owners' entries: ambiguous
  const uint32_t a = t->claim(kShared, 1);
  REQUIRE(a != SmallTable::kNone);
  CHECK(t->claim(kShared, 1) == SmallTable::kNone);  // owner 2's is not the only one
  t->erase(a);
  REQUIRE(t->insert(kReal, info_with_id(7), 2));  // posted on thread 2, completed on thread 1
  const uint32_t b = t->claim(kReal, 1);
  REQUIRE(b != SmallTable::kNone);
  CHECK(t->at(b).id == 7);
  t->erase(b);
  // Owner 2 posts kOther twice (both complete at the post): a shared handle from then on,
  // whose last entry owner 1 must not take, although it is the only one.
  REQUIRE(t->insert(kOther, info_with_id(8), 2));
  REQUIRE(t->insert(kOther, info_with_id(9), 2));
  CHECK(t->claim(kOther, 1) == SmallTable::kNone);
  const uint32_t c = t->claim(kOther, 2);
  REQUIRE(c != SmallTable::kNone);
  CHECK(t->at(c).id == 9);
  t->clear();
  REQUIRE(t->insert(kOther, info_with_id(10), 2));  // a new session forgets shared handles
  CHECK(t->claim(kOther, 1) != SmallTable::kNone);
}

// A program that never waits for thousands of sends completed at their post (one shared
// handle): the table keeps one entry per owner, never fails, and a later Wait gets the
// newest post's id.
TEST_CASE("claim table: a leaked shared handle takes one slot per owner", "[semantics]") {
  auto t = std::make_unique<SmallTable>();
  constexpr uint64_t kShared = 0x6c000001;
  for (uint64_t id = 1; id <= 5000; ++id) REQUIRE(t->insert(kShared, info_with_id(id), 1));
  CHECK(t->size() == 1);
  for (uint32_t owner = 2; owner <= 5; ++owner)
    for (uint64_t k = 1; k <= 300; ++k) REQUIRE(t->insert(kShared, info_with_id(owner * 1000 + k), owner));
  CHECK(t->size() == 5);
  for (uint32_t owner = 5; owner >= 2; --owner) {
    const uint32_t s = t->claim(kShared, owner);
    REQUIRE(s != SmallTable::kNone);
    CHECK(t->at(s).id == owner * 1000 + 300);
    t->erase(s);
  }
  const uint32_t s = t->claim(kShared, 1);
  REQUIRE(s != SmallTable::kNone);
  CHECK(t->at(s).id == 5000);
  // A claimed entry (its Wait is running) is never superseded.
  REQUIRE(t->insert(kShared, info_with_id(5001), 1));
  CHECK(t->at(s).id == 5000);
  CHECK(t->size() == 2);
  t->erase(s);
}

TEST_CASE("claim table: only a full probe window fails an insert", "[semantics]") {
  auto t = std::make_unique<SmallTable>();
  constexpr uint64_t kShared = 0x6c000001;
  REQUIRE(t->insert(kShared, info_with_id(1), 1));
  // Fill the table with other keys until no free slot is left anywhere near kShared.
  uint64_t h = 1;
  uint32_t failures = 0;
  while (failures < 1000) {
    if (!t->insert(h * 4096, info_with_id(h), 1)) ++failures;
    ++h;
  }
  CHECK(t->size() > SmallTable::kCapacity - SmallTable::kMaxProbe);
  // Another owner's post of the shared handle still finds room: over owner 1's stale entry.
  REQUIRE(t->insert(kShared, info_with_id(2), 2));
  CHECK(t->claim(kShared, 1) == SmallTable::kNone);  // now known shared: not owner 1's
  const uint32_t s = t->claim(kShared, 2);
  REQUIRE(s != SmallTable::kNone);
  CHECK(t->at(s).id == 2);
  t->release(s);
  CHECK_FALSE(t->insert(0x12345678, info_with_id(3), 1));  // a new key: no room
}

TEST_CASE("request ids: per-thread blocks stay unique and restart at reset", "[semantics][tsan]") {
  reset_request_tracking();
  CHECK(next_request_id() == 1);
  CHECK(next_request_id() == 2);
  constexpr int kThreads = 4, kIds = 1000;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> pool;
  for (int i = 0; i < kThreads; ++i)
    pool.emplace_back([&got, i] {
      for (int k = 0; k < kIds; ++k) got[size_t(i)].push_back(next_request_id());
    });
  for (auto& th : pool) th.join();
  std::vector<uint64_t> all;
  for (auto& v : got) {
    CHECK(std::is_sorted(v.begin(), v.end()));  // increasing on each thread
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  CHECK(all.front() > 2);
  reset_request_tracking();
  CHECK(next_request_id() == 1);
}
