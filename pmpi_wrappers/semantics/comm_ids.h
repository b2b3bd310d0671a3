// critpath — pmpi_wrappers/semantics/comm_ids.h
//
// Communicator ids: the 32-bit `comm` field of every event. An id must be identical on all
// member ranks of a communicator and distinct from every other communicator of the run, so
// the analyzer can match messages and collectives across ranks without translating handles.
//
//   0 = MPI_COMM_WORLD, 1 = MPI_COMM_SELF (fixed, defs/definitions.h)
//   others: packed (leader, sequence) pair, agreed by one PMPI_Bcast on the new communicator
//
//        31                      rank_bits  rank_bits-1          0
//        +---------------------------------+---------------------+
//   id = |  sequence + 1                   |  leader world rank  |
//        +---------------------------------+---------------------+
//
//   leader    = world rank of the new communicator's rank 0
//   sequence  = how many communicators that leader created before (its own counter)
//   rank_bits = max(1, ceil(log2(world size)))
//
// (leader, sequence) pairs are unique, so ids are unique without any global agreement.
// sequence + 1 >= 1 keeps ids >= 2, away from WORLD and SELF. Limit: a leader wraps after
// 2^(32 - rank_bits) - 2 communicators (4 194 302 at 1024 ranks, 4094 at 2^20 ranks); ids
// may repeat after that (docs/mpi-coverage.md). 0xffffffff (kCommUnknown) is never produced.
//
// CommMap: handle -> {id, size, my rank, remote size}, read on every MPI call that takes a
// communicator.
// Reads are lock-free (two acquire loads in the common case); writes (creation and free, cold
// paths) take a mutex. MPI_COMM_WORLD never reaches the map (fast path in mpi_glue.h).
//
// Thread safety: all functions are thread-safe. Signal safety: find() only.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "pmpi_wrappers/semantics/handle_table.h"

namespace critpath::pmpi {

constexpr uint32_t kCommIdWorld = 0;
constexpr uint32_t kCommIdSelf = 1;
constexpr uint32_t kCommIdUnknown = 0xffffffffu;

// Bits for the leader's world rank: max(1, ceil(log2(world_size))). world_size >= 1.
constexpr unsigned comm_rank_bits(int world_size) {
  unsigned bits = 1;
  while (bits < 31 && (uint64_t(1) << bits) < uint64_t(world_size)) ++bits;
  return bits;
}

// Number of distinct sequence values per leader before ids repeat.
constexpr uint32_t comm_sequence_period(unsigned rank_bits) {
  return uint32_t((uint64_t(1) << (32 - rank_bits)) - 2);
}

// The id of the `sequence`-th communicator led by `leader_world_rank`.
// Requires: 0 <= leader_world_rank < 2^rank_bits. Never returns 0, 1 or kCommIdUnknown.
constexpr uint32_t pack_comm_id(int leader_world_rank, uint32_t sequence, unsigned rank_bits) {
  const uint64_t seq1 = uint64_t(sequence % comm_sequence_period(rank_bits)) + 1;
  return uint32_t((seq1 << rank_bits) | uint32_t(leader_world_rank));
}
constexpr int comm_id_leader(uint32_t id, unsigned rank_bits) {
  return int(id & ((uint32_t(1) << rank_bits) - 1));
}

// What the wrappers need to know about a communicator on every call.
struct CommView {
  uint32_t id = kCommIdUnknown;
  int32_t size = 0;         // number of ranks (of the local group, on an intercommunicator)
  int32_t rank = 0;         // this process's rank in it
  int32_t remote_size = 0;  // intercommunicators: ranks in the remote group; 0 otherwise
};

class CommMap {
 public:
  static constexpr uint32_t kCapacity = 4096;
  static constexpr uint32_t kMaxProbe = 64;

  constexpr CommMap() = default;
  CommMap(const CommMap&) = delete;
  CommMap& operator=(const CommMap&) = delete;

  // Lock-free. Returns false when the handle is not tracked.
  bool find(uint64_t handle, CommView& out) const {
    const uint64_t key = encode_key(handle);
    const uint32_t home = uint32_t(mix_key(key)) & (kCapacity - 1);
    for (uint32_t i = 0; i < kMaxProbe; ++i) {
      const Slot& s = slots_[(home + i) & (kCapacity - 1)];
      const uint64_t k = s.key.load(std::memory_order_acquire);
      if (k == key) {
        out.id = s.id.load(std::memory_order_relaxed);
        out.size = s.size.load(std::memory_order_relaxed);
        out.rank = s.rank.load(std::memory_order_relaxed);
        out.remote_size = s.remote_size.load(std::memory_order_relaxed);
        return true;
      }
      if (k == kEmptyKey) return false;
    }
    return false;
  }

  // Adds or replaces the entry for handle. Returns false when the probe window is full.
  bool insert(uint64_t handle, const CommView& v) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t key = encode_key(handle);
    const uint32_t home = uint32_t(mix_key(key)) & (kCapacity - 1);
    Slot* target = nullptr;
    for (uint32_t i = 0; i < kMaxProbe; ++i) {
      Slot& s = slots_[(home + i) & (kCapacity - 1)];
      const uint64_t k = s.key.load(std::memory_order_relaxed);
      if (k == key) {  // stale entry for a reused handle: replace in place
        target = &s;
        break;
      }
      if (!target && (k == kEmptyKey || k == kDeadKey)) target = &s;
      if (k == kEmptyKey) break;
    }
    if (!target) return false;
    // Hide the slot while its fields change; readers of this handle see "not found" briefly,
    // which only a program using a communicator during its own creation could observe.
    target->key.store(kDeadKey, std::memory_order_relaxed);
    target->id.store(v.id, std::memory_order_relaxed);
    target->size.store(v.size, std::memory_order_relaxed);
    target->rank.store(v.rank, std::memory_order_relaxed);
    target->remote_size.store(v.remote_size, std::memory_order_relaxed);
    target->key.store(key, std::memory_order_release);
    return true;
  }

  // Removes the entry for handle and returns its id (kCommIdUnknown when absent).
  uint32_t erase(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t key = encode_key(handle);
    const uint32_t home = uint32_t(mix_key(key)) & (kCapacity - 1);
    for (uint32_t i = 0; i < kMaxProbe; ++i) {
      Slot& s = slots_[(home + i) & (kCapacity - 1)];
      const uint64_t k = s.key.load(std::memory_order_relaxed);
      if (k == key) {
        const uint32_t id = s.id.load(std::memory_order_relaxed);
        s.key.store(kDeadKey, std::memory_order_release);
        return id;
      }
      if (k == kEmptyKey) break;
    }
    return kCommIdUnknown;
  }

  // Requires: no concurrent use (tests; a new session).
  void clear() {
    for (Slot& s : slots_) s.key.store(kEmptyKey, std::memory_order_relaxed);
  }

 private:
  static constexpr uint64_t kEmptyKey = 0;
  static constexpr uint64_t kDeadKey = 1;  // never an encoded key (bit 63 clear)
  struct Slot {
    std::atomic<uint64_t> key{kEmptyKey};
    std::atomic<uint32_t> id{0};
    std::atomic<int32_t> size{0};
    std::atomic<int32_t> rank{0};
    std::atomic<int32_t> remote_size{0};
  };
  Slot slots_[kCapacity];
  std::mutex mu_;
};

// Per-rank counter of communicators this rank led (was rank 0 of at creation).
class CommSequence {
 public:
  uint32_t next() { return next_.fetch_add(1, std::memory_order_relaxed); }
  void reset() { next_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> next_{0};
};

}  // namespace critpath::pmpi
