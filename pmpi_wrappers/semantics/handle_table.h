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
//          kLive --insert of the same key (superseding)--> kBusy --> kLive
//
// A *claim* gives one thread exclusive use of an entry (MPI forbids two threads completing
// the same request at once, so claims never contend in a correct program).
//
// Shared handles. MPI may hand the SAME handle value to several live requests: both MPICH
// (ch4) and Open MPI return one static "already complete" request for every send that
// completed inside MPI_Isend. Entries therefore carry an `owner` tag (the posting thread):
//   * Within one owner a handle maps to one entry: an insert supersedes the owner's live
//     entry with the same key. That entry is stale either way: MPI reuses a handle value
//     only after the request behind it was freed, and a shared handle's older posts completed
//     at their post, so a completion of the handle is the newest post's. A program leaking
//     thousands of such sends thus neither fills the probe window nor hands a later Wait a
//     leaked send's id (tests/mpi/wrappers/wrap_leak.c); a superseded send never gets a
//     completion event, and the analyzer completes it at its post, when it did complete.
//   * claim(handle, owner) takes that owner's entry, so under MPI_THREAD_MULTIPLE each thread
//     completes its own posts (tests/mpi/wrappers/wrap_threads.c); another owner's entry
//     only when it is the handle's one entry and the handle was never seen superseding (a
//     request posted on one thread and completed on another).
// Claiming before the PMPI completion call matters: once MPI_Wait has freed a handle, another
// thread may be handed the same handle value by MPI_Isend and insert it before we erase ours;
// a claimed entry is invisible to lookups and never superseded, so the new entry is the only
// one found.
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

  // Adds handle -> value (live, unclaimed) for `owner` (claim()'s preference; kAnyOwner:
  // none). In order of preference the entry goes
  //   1. over the owner's live entry with the same key (superseded: see "Shared handles";
  //      owner kAnyOwner: any live entry with the key),
  //   2. into a free slot within kMaxProbe of the home slot,
  //   3. over another owner's live entry with the same key (the window is full of live or
  //      claimed entries; a shared handle's entries are all stale but the newest).
  // A claimed entry is never touched (its Wait is running). Returns false, storing nothing,
  // only when the window holds no free slot and no live entry with this key: the table is
  // (locally) full.
  bool insert(uint64_t handle, const Value& value, uint32_t owner = kAnyOwner) {
    const uint64_t key = encode_key(handle);
    const uint32_t home = home_of(key);
    if (supersede(home, key, owner, owner, value)) {
      remember_shared(key);
      return true;
    }
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
    if (!supersede(home, key, kAnyOwner, owner, value)) return false;
    remember_shared(key);
    return true;
  }

  // Finds the live entry for handle and claims it. Returns its slot index, or kNone when the
  // handle is not in the table (never inserted, already erased, or claimed by someone else).
  // owner != kAnyOwner: the entry inserted with that owner; failing that, another owner's
  // entry only when it is the one entry with the key and the key never superseded a live
  // entry (a request posted on one thread and completed on another). A shared handle's
  // entries each belong to a send of their owner's that completed at its post, so none is
  // another owner's to take. Costs a second probe sequence only when the owner has none.
  uint32_t claim(uint64_t handle, uint32_t owner = kAnyOwner) {
    const uint64_t key = encode_key(handle);
    if (owner == kAnyOwner) return claim_key(key, kAnyOwner);
    const uint32_t idx = claim_key(key, owner);
    return idx != kNone || is_shared(key) ? idx : claim_sole(key);
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
    for (std::atomic<uint64_t>& k : shared_) k.store(0, std::memory_order_relaxed);
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

  // Replaces the first live entry with `key` (and owner `match`, unless kAnyOwner) in probe
  // order by (value, owner). False when there is none. An entry lies before the chain's first
  // kEmpty slot (slots never return to kEmpty), so the search stops there.
  bool supersede(uint32_t home, uint64_t key, uint32_t match, uint32_t owner, const Value& value) {
    for (uint32_t i = 0; i < kMaxProbe; ++i) {
      Slot& s = slots_[(home + i) & kMask];
      uint32_t st = s.state.load(std::memory_order_acquire);
      if (st == kEmpty) return false;
      if (st != kLive || s.key.load(std::memory_order_relaxed) != key) continue;
      if (match != kAnyOwner && s.owner.load(std::memory_order_relaxed) != match) continue;
      if (!s.state.compare_exchange_strong(st, kBusy, std::memory_order_acquire)) continue;
      // The slot may have been claimed, erased and refilled between the checks and the CAS.
      if (s.key.load(std::memory_order_relaxed) != key ||
          (match != kAnyOwner && s.owner.load(std::memory_order_relaxed) != match)) {
        s.state.store(kLive, std::memory_order_release);
        continue;
      }
      s.owner.store(owner, std::memory_order_relaxed);
      s.value = value;
      s.state.store(kLive, std::memory_order_release);
      return true;
    }
    return false;
  }

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

  // Keys seen superseding a live entry: shared handles (or, rarely, a handle whose request
  // was freed unseen). Never taken from another owner. A handful of values
  // at most (MPI's static "complete" requests); past kSharedKeys, new ones go unremembered.
  static constexpr uint32_t kSharedKeys = 16;
  void remember_shared(uint64_t key) {
    for (std::atomic<uint64_t>& k : shared_) {
      uint64_t v = k.load(std::memory_order_relaxed);
      if (v == key) return;
      if (v == 0 && (k.compare_exchange_strong(v, key, std::memory_order_relaxed) || v == key)) return;
    }
  }
  bool is_shared(uint64_t key) const {
    for (const std::atomic<uint64_t>& k : shared_) {
      const uint64_t v = k.load(std::memory_order_relaxed);
      if (v == key) return true;
      if (v == 0) return false;
    }
    return false;
  }

  // Claims the live entry with `key` if no other slot holds the key (live, claimed or being
  // written); kNone otherwise.
  uint32_t claim_sole(uint64_t key) {
    const uint32_t home = home_of(key);
    uint32_t found = kNone;
    for (uint32_t i = 0; i < kMaxProbe; ++i) {
      const uint32_t idx = (home + i) & kMask;
      const Slot& s = slots_[idx];
      const uint32_t st = s.state.load(std::memory_order_acquire);
      if (st == kEmpty) break;
      if (st == kDead || s.key.load(std::memory_order_relaxed) != key) continue;
      if (st != kLive || found != kNone) return kNone;
      found = idx;
    }
    if (found == kNone) return kNone;
    Slot& s = slots_[found];
    uint32_t st = kLive;
    if (!s.state.compare_exchange_strong(st, kClaimed, std::memory_order_acq_rel)) return kNone;
    if (s.key.load(std::memory_order_relaxed) == key) return found;
    s.state.store(kLive, std::memory_order_release);
    return kNone;
  }

  Slot slots_[kCapacity];
  std::atomic<uint64_t> shared_[kSharedKeys] = {};  // remember_shared(); 0 = unused
};

}  // namespace critpath::pmpi
