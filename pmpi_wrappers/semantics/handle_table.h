// critpath — pmpi_wrappers/semantics/handle_table.h
//
// Lock-free maps from MPI handle bits to per-handle state, used by the wrappers to remember
// what a request, message or communicator handle stands for between two MPI calls:
//
//   MPI_Isend --insert(handle, info)--> ClaimTable --claim(handle)--> MPI_Wait* --erase
//
// Pure C++ (no MPI): keys are the handle's bits widened to 64 bits (see mpi_glue.h), so the
// tables are unit-tested with sentinel keys.
//
// Layout: a fixed power-of-two array of slots, open addressing with linear probing bounded
// by kMaxProbe. Nothing is ever allocated: the table lives in zero-initialised static storage.
//
//   slot:  +-----------+-----------+----------------+
//          | state u32 | owner u32 | key u64        |  value (trivially copyable)
//          +-----------+-----------+----------------+
//   state: kEmpty --insert--> kBusy --> kLive <--claim/release--> kClaimed --erase--> kDead
//          kDead --insert--> kBusy ...   (kDead is a tombstone: probing continues past it)
//
// A *claim* gives one thread exclusive use of an entry (MPI forbids two threads completing
// the same request at once, so claims never contend in a correct program).
//
// Shared handles. MPI may hand the SAME handle value to several live requests: both MPICH
// (ch4) and Open MPI (pml ucx) return one static "already complete" request for every send
// that completed inside MPI_Isend. Entries therefore carry an `owner` tag (the posting
// thread); claim(handle, owner) takes an entry of that owner first and any entry with the
// key otherwise, so under MPI_THREAD_MULTIPLE each thread completes its own posts
// (tests/mpi/wrappers/wrap_threads.c). Among one owner's entries with a shared handle the
// first in probe order is taken: all of them completed at their post, so only which of
// their ids the completion event carries can differ. Claiming before
// the PMPI completion call matters: once MPI_Wait has freed a handle, another thread may be
// handed the same handle value by MPI_Isend and insert it before we erase ours; a claimed
// entry is invisible to lookups, so the new entry is the only one found.
//
// Thread safety: every operation is safe from any thread. Signal safety: none.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace critpath::pmpi {

// Tag bit that keeps an encoded key non-zero (0 means "empty" in CommMap). MPI handles are
// 32-bit integers (MPICH) or user-space pointers (< 2^57, Open MPI): bit 63 is always free.
constexpr uint64_t kKeyTag = 1ull << 63;
constexpr uint64_t encode_key(uint64_t handle_bits) { return handle_bits | kKeyTag; }

// 64-bit mix (the murmur3 finaliser): handles are structured (MPICH) or aligned (Open MPI),
// so their low bits alone hash badly.
constexpr uint64_t mix_key(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

template <class Value, unsigned kLog2Capacity>
class ClaimTable {
  static_assert(std::is_trivially_copyable_v<Value>);

 public:
  static constexpr uint32_t kCapacity = 1u << kLog2Capacity;
  static constexpr uint32_t kMaxProbe = 64;
  static constexpr uint32_t kNone = 0xffffffffu;
  static constexpr uint32_t kAnyOwner = 0xffffffffu;

  constexpr ClaimTable() = default;
  ClaimTable(const ClaimTable&) = delete;
  ClaimTable& operator=(const ClaimTable&) = delete;

  // Adds handle -> value (live, unclaimed). Does not look for an existing entry with the same
  // key: MPI hands out a handle only after the previous owner of that value was freed.
  // Returns false, storing nothing, when no slot within kMaxProbe of the home slot is free.
  // owner: tag for claim()'s preference (kAnyOwner: none).
  bool insert(uint64_t handle, const Value& value, uint32_t owner = kAnyOwner) {
    const uint64_t key = encode_key(handle);
    const uint32_t home = home_of(key);
    for (uint32_t i = 0; i < kMaxProbe; ++i) {
      Slot& s = slots_[(home + i) & kMask];
      uint32_t st = s.state.load(std::memory_order_relaxed);
      if ((st == kEmpty || st == kDead) &&
          s.state.compare_exchange_strong(st, kBusy, std::memory_order_acquire)) {
        s.key.store(key, std::memory_order_relaxed);
        s.owner.store(owner, std::memory_order_relaxed);
        s.value = value;
        s.state.store(kLive, std::memory_order_release);
        return true;
      }
    }
    return false;
  }

  // Finds the live entry for handle and claims it. Returns its slot index, or kNone when the
  // handle is not in the table (never inserted, already erased, or claimed by someone else).
  // owner != kAnyOwner: an entry inserted with that owner is preferred (see "Shared
  // handles"); costs a second probe sequence only when the entry has another owner.
  uint32_t claim(uint64_t handle, uint32_t owner = kAnyOwner) {
    const uint64_t key = encode_key(handle);
    if (owner != kAnyOwner) {
      const uint32_t idx = claim_key(key, owner);
      if (idx != kNone) return idx;
    }
    return claim_key(key, kAnyOwner);
  }

  // Requires: slot was returned by claim() and not yet released or erased.
  Value& at(uint32_t slot) { return slots_[slot].value; }
  // Requires: claimed by the caller. The entry becomes visible again.
  void release(uint32_t slot) { slots_[slot].state.store(kLive, std::memory_order_release); }
  // Requires: claimed by the caller. The entry is removed (the slot becomes a tombstone).
  void erase(uint32_t slot) { slots_[slot].state.store(kDead, std::memory_order_release); }

  // Number of live or claimed entries (a scan; for tests and end-of-run statistics).
  uint32_t size() const {
    uint32_t n = 0;
    for (const Slot& s : slots_) {
      const uint32_t st = s.state.load(std::memory_order_relaxed);
      n += (st == kLive || st == kClaimed);
    }
    return n;
  }

  // Requires: no concurrent use. Forgets every entry (tests; a new MPI session).
  void clear() {
    for (Slot& s : slots_) s.state.store(kEmpty, std::memory_order_relaxed);
  }

 private:
  static constexpr uint32_t kMask = kCapacity - 1;
  enum : uint32_t { kEmpty = 0, kBusy = 1, kLive = 2, kClaimed = 3, kDead = 4 };
  struct Slot {
    std::atomic<uint32_t> state{kEmpty};
    std::atomic<uint32_t> owner{kAnyOwner};  // in what was padding: the slot stays the same size
    std::atomic<uint64_t> key{0};
    Value value{};
  };
  static uint32_t home_of(uint64_t key) { return uint32_t(mix_key(key)) & kMask; }

  // Claims the first live entry with `key` (and `owner`, unless kAnyOwner) in probe order.
  uint32_t claim_key(uint64_t key, uint32_t owner) {
    const uint32_t home = home_of(key);
    for (uint32_t i = 0; i < kMaxProbe; ++i) {
      const uint32_t idx = (home + i) & kMask;
      Slot& s = slots_[idx];
      uint32_t st = s.state.load(std::memory_order_acquire);
      if (st == kEmpty) return kNone;  // slots never return to kEmpty: the chain ends here
      if (st != kLive || s.key.load(std::memory_order_relaxed) != key) continue;
      if (owner != kAnyOwner && s.owner.load(std::memory_order_relaxed) != owner) continue;
      if (!s.state.compare_exchange_strong(st, kClaimed, std::memory_order_acq_rel)) continue;
      // The slot may have been erased and refilled between the checks and the CAS.
      if (s.key.load(std::memory_order_relaxed) == key &&
          (owner == kAnyOwner || s.owner.load(std::memory_order_relaxed) == owner))
        return idx;
      s.state.store(kLive, std::memory_order_release);
    }
    return kNone;
  }

  Slot slots_[kCapacity];
};

}  // namespace critpath::pmpi
