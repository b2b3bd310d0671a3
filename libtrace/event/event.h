// critpath — libtrace/event/event.h
//
// The event model: what a hook or wrapper records, in two forms.
//
//   hook/wrapper --(Slot, 16 B, raw TSC)--> raw chunk --(codec)--> compressed chunk
//                                                         |
//   analyzer <-----------(Event, decoded, absolute ticks)-+
//
// * `Slot` is the fixed 16-byte in-memory record written on the hot path. An event is one
//   head slot optionally followed by `nextra` payload slots (MPI events only), so the hot
//   path for ENTER/EXIT is one timestamp read plus one 16-byte store.
// * `Event` is the decoded, self-describing form the codec and every analysis pass use.
//
// EventKind values are part of the trace format (docs/trace-format.md): explicit and
// append-only. Never renumber; add new kinds at the end of their range.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace critpath::trace {

enum class EventKind : uint8_t {
  kInvalid = 0,
  // Regions (user, compiler-instrumented, and MPI calls themselves).
  kEnter = 1,  // region
  kExit = 2,   // region
  // Point-to-point. Peers are ranks in `comm`; comm is a critpath communicator id.
  kSend = 3,            // blocking send: peer, tag, comm, bytes
  kRecv = 4,            // blocking receive completed: peer (matched source), tag, comm, bytes
  kIsend = 5,           // nonblocking send posted: peer, tag, comm, bytes, request
  kIsendComplete = 6,   // nonblocking send completed: request
  kIrecvRequest = 7,    // nonblocking receive posted: request (peer/tag may be wildcards)
  kIrecv = 8,           // nonblocking receive completed: peer, tag, comm, bytes, request
  kRequestTest = 9,     // reserved: a test that completed nothing (counted, not recorded)
  kRequestCancel = 10,  // request cancelled: request
  // Collectives. BEGIN follows the call's ENTER, END precedes its EXIT.
  kCollBegin = 11,  // (no payload)
  kCollEnd = 12,    // op (region id of the MPI call), comm, root, bytes sent, bytes received
  // Nonblocking collectives: posted in the I* call, completed in a Wait/Test.
  kIcollPost = 13,      // op, comm, root, bytes sent, bytes received, request
  kIcollComplete = 14,  // request
  // 32..63: one-sided communication (window id in `comm`, target in `peer`).
  kRmaFirst = 32,
  kRmaWinCreate = 32,        // comm = window, root = parent comm id
  kRmaWinFree = 33,          // comm = window
  kRmaPut = 34,              // comm = window, peer = target, bytes
  kRmaGet = 35,              // comm = window, peer = target, bytes
  kRmaAccumulate = 36,       // comm = window, peer = target, bytes
  kRmaSync = 37,             // comm = window, op = sync kind, peer = target or -1, request = group id
  kRmaCollSync = 38,         // comm = window (fence and similar), op = sync kind
  kRmaRequestComplete = 39,  // comm = window, request: a request-based RMA op (MPI_Rput...)
                             // completed in a Wait/Test; same slot layout as the other RMA kinds
  kRmaLast = 63,
  // 64..: measurement control and metadata.
  kMeasurementOff = 64,  // recording paused (MPI_Pcontrol(0)); region = reason
  kMeasurementOn = 65,   // recording resumed
  kCounters = 66,        // hardware counter values, bytes = count of values following
  kCallsite = 67,        // call-site id for the next MPI ENTER: region = callsite id
  kKindEnd
};

// A human-readable name for dumps and diagnostics ("ENTER", "SEND", ...).
const char* to_string(EventKind kind);

// True for kinds that carry message/collective payload fields in `Event`.
constexpr bool is_p2p(EventKind k) {
  return k == EventKind::kSend || k == EventKind::kRecv || k == EventKind::kIsend || k == EventKind::kIrecv;
}

// ---------------------------------------------------------------------------------------
// Raw hot-path record.
//
//   byte  0         8     9        10       12          16
//         +---------+-----+--------+--------+-----------+
//   head  | tsc u64 |kind | nextra | flags  | arg u32   |    arg = region / comm / op
//         +---------+-----+--------+--------+-----------+
//   extra | w0 u64            | w1 u64                  |    payload words (MPI events)
//         +-------------------+-------------------------+
//
// Payload per kind (nextra, then the words):
//   ENTER/EXIT              0
//   SEND/RECV               1  w0 = peer(lo32) | tag(hi32), w1 = bytes            arg = comm
//   ISEND/IRECV             2  as SEND, then w0 = request, w1 = 0                 arg = comm
//   ISEND_COMPLETE,
//   IRECV_REQUEST, CANCEL,
//   ICOLL_COMPLETE          1  w0 = request, w1 = 0                               arg = 0
//   COLL_BEGIN              0
//   COLL_END                2  w0 = op(lo32) | root(hi32), w1 = bytes sent;
//                              w0 = bytes received, w1 = request (0)              arg = comm
//   ICOLL_POST              2  as COLL_END, request in the second w1              arg = comm
//   RMA_*                   2  w0 = peer(lo32) | op(hi32), w1 = bytes;
//                              w0 = request/group, w1 = root                      arg = window
//   MEASUREMENT_OFF/ON      0                                                     arg = reason
//   COUNTERS                n  values packed two per slot                         arg = count
//   CALLSITE                0                                                     arg = id
struct alignas(16) Slot {
  uint64_t tsc;
  uint8_t kind;
  uint8_t nextra;
  uint16_t flags;
  uint32_t arg;
};
static_assert(sizeof(Slot) == 16, "the hot path relies on 16-byte slots");
static_assert(std::is_trivially_copyable_v<Slot>);

struct alignas(16) ExtraSlot {
  uint64_t w0;
  uint64_t w1;
};
static_assert(sizeof(ExtraSlot) == 16);

// The largest event in slots (head + payload); raw chunks keep this much tail room so a
// writer never checks space before writing, only after.
constexpr unsigned kMaxEventSlots = 1 + 8;  // COUNTERS with up to 16 values
constexpr unsigned kMaxCounters = 16;

// COLL_END / ICOLL_POST root of an MPI_Alltoallv / MPI_Alltoallw (and their I* forms) on an
// intracommunicator in which some other member's block to this rank is empty (a zero count
// or a zero-size type): no root, as -1, and this rank does not receive from every member.
constexpr int32_t kRootSomeBlockEmpty = -2;

// ---------------------------------------------------------------------------------------
// Decoded event. Fields not used by a kind are zero. `time` is in raw clock ticks (the
// clock module converts ticks to seconds); it is absolute, not a delta.
struct Event {
  uint64_t time = 0;
  uint32_t region = 0;  // ENTER/EXIT region; COLL_END/ICOLL_POST op; RMA/sync op; CALLSITE id
  uint32_t comm = 0;    // communicator id (window id for RMA)
  int32_t peer = 0;     // P2P peer / RMA target (rank in comm)
  int32_t tag = 0;
  int32_t root = 0;  // collectives: root rank in comm, or -1 (kRootSomeBlockEmpty)
  uint16_t flags = 0;
  EventKind kind = EventKind::kInvalid;
  uint8_t reserved = 0;
  uint64_t bytes = 0;                    // P2P bytes; collective bytes sent; RMA bytes; COUNTERS count
  uint64_t bytes_received = 0;           // collectives
  uint64_t request = 0;                  // critpath request id (not the MPI handle)
  uint64_t counters[kMaxCounters] = {};  // COUNTERS values (count in `bytes`)

  friend bool operator==(const Event& a, const Event& b) { return std::memcmp(&a, &b, sizeof(Event)) == 0; }
};
// operator== compares bytes: keep Event free of padding holes that could hold garbage.
static_assert(sizeof(Event) == 8 + 4 * 5 + 4 + 8 * 3 + 8 * kMaxCounters, "Event must stay padding-free");

}  // namespace critpath::trace
