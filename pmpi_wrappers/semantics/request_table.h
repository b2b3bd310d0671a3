// critpath — pmpi_wrappers/semantics/request_table.h
//
// Request and message tracking: what an MPI_Request / MPI_Message handle stands for between
// the call that creates it and the call that completes it.
//
//   MPI_Isend/Irecv/Imrecv ----insert----> requests() ----claim----> Wait/Test family
//   MPI_*_init  (persistent, inactive) -->             <--claim----  MPI_Start/Startall
//   MPI_Mprobe/Improbe -----insert-------> messages() ---claim/erase-> MPI_Mrecv/Imrecv
//
// Request ids (the `request` field of events) are a per-rank counter starting at 1, so an
// ISEND/IRECV_REQUEST and its completion carry the same small number; a persistent request
// gets a fresh id on every MPI_Start. Pure C++ (no MPI); the MPI side is mpi_glue.h.
//
// Thread safety: all functions are thread-safe (MPI_THREAD_MULTIPLE: a request may be
// created on one thread and completed on another). Signal safety: none.
#pragma once

#include <atomic>
#include <cstdint>

#include "pmpi_wrappers/semantics/handle_table.h"

namespace critpath::pmpi {

enum class RequestKind : uint8_t {
  kSend = 1,  // completion records ISEND_COMPLETE
  kRecv = 2,  // completion records IRECV with the matched source, tag and size
  kColl = 3,  // nonblocking collective: completion records ICOLL_COMPLETE
  kRma = 4,   // request-based RMA (MPI_Rput...): completion records RMA_REQUEST_COMPLETE
              // with the window id kept in `comm`
  kIdup = 5,  // MPI_Comm_idup: completion records ICOLL_COMPLETE and defines the new
              // communicator; `bytes` holds the IdupState* (mpi_glue.cpp)
};

namespace request_flag {
constexpr uint8_t kPersistent = 1;       // MPI_*_init: survives completion (inactive)
constexpr uint8_t kActive = 2;           // started (always set for non-persistent requests)
constexpr uint8_t kRecorded = 4;         // the post event of this activation was recorded
constexpr uint8_t kCancelRequested = 8;  // MPI_Cancel was called on this activation
}  // namespace request_flag

//   0        8         16     20     24   25    26    28       32
//   +--------+---------+------+------+----+-----+-----+--------+
//   | id u64 | bytes   | peer | tag  |kind|flags| pad | comm   |
//   +--------+---------+------+------+----+-----+-----+--------+
struct RequestInfo {
  uint64_t id = 0;     // request id of the current activation (0: inactive persistent)
  uint64_t bytes = 0;  // sends: count x type size (receives take the size from the status)
  int32_t peer = 0;    // rank in comm as passed (receives: may be MPI_ANY_SOURCE)
  int32_t tag = 0;
  RequestKind kind = RequestKind::kSend;
  uint8_t flags = 0;
  uint32_t comm = 0;  // critpath communicator id
};
static_assert(sizeof(RequestInfo) == 32);

// A matched message (MPI_Mprobe/MPI_Improbe) waiting for MPI_Mrecv/MPI_Imrecv.
struct MessageInfo {
  uint32_t comm = 0;
};

// 16384 outstanding requests (persistent ones included) per process; past that (or when 64
// slots around a handle's home slot are all taken), new requests are not tracked (counted
// in untracked_requests(), one warning). A handle MPI hands out again supersedes its stale
// entry (handle_table.h, "Shared handles") and takes no room.
using RequestTable = ClaimTable<RequestInfo, 14>;
using MessageTable = ClaimTable<MessageInfo, 10>;

// The process-wide tables (semantics_state.cpp); constant-initialised, so the inline
// accessors compile to an address.
namespace detail {
extern constinit RequestTable g_requests;
extern constinit MessageTable g_messages;

// Request ids are handed to each thread in blocks of kIdBlock from one process-wide counter,
// so the common path is a thread-local increment instead of an atomic read-modify-write
// (about 20 cycles saved per nonblocking post). A single thread gets 1, 2, 3, ... as before;
// threads interleave by blocks. `generation` invalidates every thread's block when
// reset_request_tracking() restarts the ids.
constexpr uint64_t kIdBlock = 64;
struct IdBlock {
  uint64_t next;
  uint64_t end;
  uint32_t generation;
};
extern constinit std::atomic<uint32_t> g_id_generation;
extern constinit thread_local IdBlock t_ids __attribute__((tls_model("initial-exec")));
uint64_t refill_request_ids();  // cold: takes a fresh block, returns its first id
}  // namespace detail

inline RequestTable& requests() { return detail::g_requests; }
inline MessageTable& messages() { return detail::g_messages; }

// Next request id of this rank: unique within the process, increasing on each thread (1, 2,
// 3, ... on a single thread). Thread-safe, lock-free; an atomic only once per kIdBlock ids.
// (GCC 12's UBSan takes this initial-exec thread-local for a null pointer in the unit tests'
// executable: the null check is off here, for ./test.sh --sanitize.)
__attribute__((no_sanitize("null"))) inline uint64_t next_request_id() {
  detail::IdBlock& b = detail::t_ids;
  if (__builtin_expect(
          b.next < b.end && b.generation == detail::g_id_generation.load(std::memory_order_relaxed), 1))
    return b.next++;
  return detail::refill_request_ids();
}

// Requires: no concurrent use. Empties both tables and restarts ids at 1 (tests, MPI_Init).
void reset_request_tracking();

}  // namespace critpath::pmpi
