// critpath — pmpi_wrappers/semantics/mpi_glue.h
//
// The MPI-aware half of the wrapper semantics: everything the generated wrappers
// (<build>/generated/mpi_wrappers.cpp) call besides PMPI and the record API.
//
//   MPI_x (generated) --guards, handle->id, bytes--> this header (inline, hot)
//                     --creation, completion, init--> mpi_glue.cpp, completion.cpp (cold-ish)
//                     --record_*()--> libtrace/runtime/recorder.h
//
// Guards. Every wrapper starts with one of two guards:
//   * simple    `t = ready_state(); if (!t || t->in_mpi) return PMPI_x(...)` — for calls
//               that only record (sends, receives, collectives, posts of nonblocking p2p);
//   * tracking  `t = recording_state(); if (!t && !track_unrecorded()) return PMPI_x(...)`
//               — for calls that must keep the request/message/communicator tables right
//               even while measurement is paused (MPI_Pcontrol(0)); with t == nullptr they
//               update the tables and record nothing.
// Before MPI_Init, after MPI_Finalize and with CRITPATH_ENABLE=0 both guards pass straight
// through: no table access, no extra MPI call.
//
// Hot-path rules (docs/style B4): nothing here allocates, locks, throws or prints, except the
// explicitly cold functions declared at the end (communicator creation, init).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <type_traits>

#include "libtrace/runtime/recorder.h"
#include "pmpi_wrappers/semantics/coll_bytes.h"
#include "pmpi_wrappers/semantics/comm_ids.h"
#include "pmpi_wrappers/semantics/counters.h"
#include "pmpi_wrappers/semantics/request_table.h"

namespace critpath::pmpi {

// ---- handles --------------------------------------------------------------------------
// An MPI handle's bits as a table key: MPICH handles are ints, Open MPI's are pointers.
template <class Handle>
CRITPATH_NOINSTR inline uint64_t handle_bits(Handle h) {
  if constexpr (std::is_pointer_v<Handle>) {
    return uint64_t(reinterpret_cast<uintptr_t>(h));
  } else {
    static_assert(std::is_integral_v<Handle>);
    return uint64_t(uint32_t(h));
  }
}

// ---- guards ---------------------------------------------------------------------------
// Measurement is tracking: recording or paused.
CRITPATH_NOINSTR inline bool tracking() {
  const uint8_t p = runtime::g_phase.load(std::memory_order_relaxed);
  return p == uint8_t(runtime::Phase::kRecording) || p == uint8_t(runtime::Phase::kPaused);
}

// The calling thread's state if this call may record (recording, buffer attached, not
// nested in another wrapper); nullptr otherwise.
CRITPATH_NOINSTR inline runtime::ThreadState* recording_state() {
  runtime::ThreadState* t = runtime::ready_state();
  return (t && !t->in_mpi) ? t : nullptr;
}

// For the tracking guard, after recording_state() returned nullptr: true when this call
// must still update the tables (paused, or this thread has no buffer) and is not nested.
CRITPATH_NOINSTR inline bool track_unrecorded() { return tracking() && !runtime::t_state.in_mpi; }

// The owner tag of the calling thread's request-table entries (handle_table.h, "Shared
// handles"): its location + 1 once it has a buffer, 0 before.
CRITPATH_NOINSTR inline uint32_t request_owner() {
  const runtime::ThreadState& t = runtime::t_state;
  return t.state == 1 ? uint32_t(t.location) + 1 : 0;
}

// Marks the thread as inside a wrapper for the scope (nested MPI calls made by the MPI
// library itself then pass through).
class InMpi {
 public:
  CRITPATH_NOINSTR InMpi() { runtime::t_state.in_mpi = 1; }
  CRITPATH_NOINSTR ~InMpi() { runtime::t_state.in_mpi = 0; }
  InMpi(const InMpi&) = delete;
  InMpi& operator=(const InMpi&) = delete;
};

// ---- communicators ------------------------------------------------------------------
// Set once by after_init() (before the phase allows any tracking), read-only afterwards.
// MPI_Session_init / MPI_Session_finalize: Sessions are not traced; a process that finalizes a
// session and never initialized the World Model is told once that it gets no report.
void note_session(uint32_t region);

struct WorldInfo {
  CommView world{kCommIdWorld, 1, 0};
  CommView self{kCommIdSelf, 1, 0};
  unsigned rank_bits = 1;
};
extern WorldInfo g_world;
CommMap& comm_map();

CommView comm_view_slow(MPI_Comm c);  // untracked handle: asks MPI for size and rank

// {id, size, rank} of a communicator. MPI_COMM_WORLD is one compare; others one lock-free
// table probe. Unknown handles get kCommIdUnknown (counted).
CRITPATH_NOINSTR inline CommView comm_view(MPI_Comm c) {
  if (CRITPATH_LIKELY(c == MPI_COMM_WORLD)) return g_world.world;
  CommView v;
  if (CRITPATH_LIKELY(comm_map().find(handle_bits(c), v))) return v;
  return comm_view_slow(c);
}
CRITPATH_NOINSTR inline uint32_t comm_id(MPI_Comm c) {
  if (CRITPATH_LIKELY(c == MPI_COMM_WORLD)) return kCommIdWorld;
  CommView v;
  if (CRITPATH_LIKELY(comm_map().find(handle_bits(c), v))) return v.id;
  count_unknown_comm();
  return kCommIdUnknown;
}

// ---- sizes ----------------------------------------------------------------------------
// Size of one element of a datatype in bytes; 0 when MPI cannot say.
// Requires: t is a valid datatype or MPI_DATATYPE_NULL (callers only pass significant
// arguments). Blocking sends size their message BEFORE the PMPI call, when an erroneous
// application argument has not been rejected yet: asking PMPI_Type_size_x about
// MPI_DATATYPE_NULL would raise the error on the library's default handler (fatal) instead
// of the communicator's, so the null handle is answered here (tests/mpi/corpus/errhandler.c).
//
// Fast path (no PMPI call for the common predefined types; about 50 instructions saved per
// send): MPICH's builtin datatype handles are the constants 0x4c00SSII with the element size
// SS in bits 8..15 (mpi.h; checked below for a few types); Open MPI's predefined handles are
// addresses of library objects, compared against the most common ones.
#if defined(MPICH)
namespace detail {
constexpr uint32_t kMpichBuiltinTypeMask = 0xff000000u;
constexpr uint32_t kMpichBuiltinType = 0x4c000000u;
constexpr uint64_t mpich_builtin_size(uint32_t h) { return (h >> 8) & 0xffu; }
static_assert((uint32_t(MPI_INT) & kMpichBuiltinTypeMask) == kMpichBuiltinType &&
                  mpich_builtin_size(uint32_t(MPI_INT)) == sizeof(int) &&
                  mpich_builtin_size(uint32_t(MPI_DOUBLE)) == sizeof(double) &&
                  mpich_builtin_size(uint32_t(MPI_CHAR)) == 1 &&
                  mpich_builtin_size(uint32_t(MPI_LONG_LONG)) == sizeof(long long) &&
                  (uint32_t(MPI_DATATYPE_NULL) & kMpichBuiltinTypeMask) != kMpichBuiltinType,
              "MPICH's builtin datatype handle encoding changed: drop the fast path");
}  // namespace detail
#endif
CRITPATH_NOINSTR inline uint64_t type_size(MPI_Datatype t) {
  if (CRITPATH_UNLIKELY(t == MPI_DATATYPE_NULL)) return 0;
#if defined(MPICH)
  const uint32_t h = uint32_t(t);
  if (CRITPATH_LIKELY((h & detail::kMpichBuiltinTypeMask) == detail::kMpichBuiltinType)) {
    const uint64_t size = detail::mpich_builtin_size(h);
    if (CRITPATH_LIKELY(size != 0)) return size;
  }
#elif defined(OPEN_MPI)
  if (t == MPI_INT || t == MPI_FLOAT) return 4;
  if (t == MPI_DOUBLE || t == MPI_LONG) return 8;
  if (t == MPI_BYTE || t == MPI_CHAR) return 1;
#endif
  MPI_Count size = 0;
  if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size < 0) return 0;
  return uint64_t(size);
}

// count x size; 0 for count <= 0 without asking MPI (the datatype may then be anything).
CRITPATH_NOINSTR inline uint64_t type_bytes(int count, MPI_Datatype t) {
  return count > 0 ? uint64_t(count) * type_size(t) : 0;
}

// Bytes a completed receive delivered, from its status. Both libraries keep the received
// size in bytes in public fields of MPI_Status (mpi.h): MPICH as count_lo plus
// count_hi_and_cancelled >> 1 (bit 0 is the cancelled flag), Open MPI as _ucount. Reading
// them saves a PMPI_Get_elements_x call (~115 instructions) per receive; a status type
// without those fields falls back to the call.
template <class Status>
concept MpichStatus = requires(const Status& s) {
  s.count_lo;
  s.count_hi_and_cancelled;
};
template <class Status>
concept OmpiStatus = requires(const Status& s) {
  s._ucount;
};
template <class Status>
CRITPATH_NOINSTR inline uint64_t status_bytes_of(const Status* st) {
  if constexpr (MpichStatus<Status>) {
    const uint64_t hi = uint64_t(uint32_t(st->count_hi_and_cancelled) >> 1);
    return (hi << 32) | uint64_t(uint32_t(st->count_lo));
  } else if constexpr (OmpiStatus<Status>) {
    return uint64_t(st->_ucount);
  } else {
    MPI_Count n = 0;
    if (PMPI_Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0) return 0;
    return uint64_t(n);
  }
}
CRITPATH_NOINSTR inline uint64_t status_bytes(const MPI_Status* st) { return status_bytes_of(st); }

// Whether a receive that ended with `rc` took a message: it succeeded, or it failed with
// MPI_ERR_TRUNCATE (the message was consumed; the status names its source, tag and the bytes
// that fit), which an application under MPI_ERRORS_RETURN sees and goes on from.
CRITPATH_NOINSTR inline bool receive_took_message(int rc) {
  if (rc == MPI_SUCCESS) return true;
  int cls = MPI_SUCCESS;
  return PMPI_Error_class(rc, &cls) == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE;
}

CRITPATH_NOINSTR inline bool is_in_place(const void* sendbuf, const void* recvbuf) {
  return sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE;
}

// ---- recording helpers (mpi_glue.cpp) ---------------------------------------------------
// Nonblocking posts. Require: the PMPI call succeeded and peer != MPI_PROC_NULL.
void post_isend(runtime::ThreadState& t, MPI_Request request, uint32_t comm, int peer, int tag,
                uint64_t bytes);
void post_irecv(runtime::ThreadState& t, MPI_Request request, uint32_t comm, int peer, int tag);
// MPI_Imrecv: the message's entry is consumed even when t == nullptr (paused).
void post_imrecv(runtime::ThreadState* t, MPI_Request request, MPI_Message message);

// Persistent requests: MPI_*_init (inactive, no event) and MPI_Start/Startall (a fresh
// request id and the post event per activation). t == nullptr: track, record nothing.
void track_persistent(MPI_Request request, RequestKind kind, uint32_t comm, int peer, int tag,
                      uint64_t bytes);
void start_requests(runtime::ThreadState* t, int count, const MPI_Request* requests);

// MPI_Cancel (after success: the completion will check MPI_Test_cancelled) and
// MPI_Request_free (after success: the request is forgotten; an active one will never
// produce a completion event).
void cancel_request(MPI_Request request);
void free_request(MPI_Request request);

// Matched probes. take_message_comm() consumes the entry; kCommIdUnknown if absent.
void track_message(MPI_Message message, MPI_Comm comm);
uint32_t take_message_comm(MPI_Message message);

// Probe family: records EXIT (blocking probes; ENTER was recorded before the call) or, for
// MPI_Iprobe/MPI_Improbe, ENTER(t0)+EXIT only when a message was found (else counted), and
// tracks the matched message of MPI_Mprobe/MPI_Improbe.
void finish_probe(runtime::ThreadState* t, uint32_t region, uint64_t t0, bool is_test, int rc,
                  const int* flag, const MPI_Message* message, MPI_Comm comm);

// Collectives: this rank's bytes under the rule (coll_bytes.h). root: the root argument of
// rooted collectives (MPI_ROOT counts as the root, MPI_PROC_NULL as no data: intercommunicator
// forms), -1 otherwise. Neighbourhood rules ask the communicator's topology for the degrees.
struct CollCall {
  CollRule rule = CollRule::kNone;
  int root = -1;
  bool in_place = false;
  int sendcount = 0;
  int recvcount = 0;
  const int* sendcounts = nullptr;
  const int* recvcounts = nullptr;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  const MPI_Datatype* sendtypes = nullptr;
  const MPI_Datatype* recvtypes = nullptr;
};
CollBytes coll_call_bytes(const CommView& cv, MPI_Comm comm, const CollCall& c);

// Blocking collectives: COLL_END with this rank's bytes. rc != MPI_SUCCESS records zero
// bytes (the arguments may be invalid).
void finish_coll(runtime::ThreadState& t, int rc, uint32_t region, MPI_Comm comm, CollRule rule, int root,
                 bool in_place, int sendcount, int recvcount, const int* sendcounts, const int* recvcounts,
                 MPI_Datatype sendtype, MPI_Datatype recvtype, const MPI_Datatype* sendtypes,
                 const MPI_Datatype* recvtypes);

// Nonblocking collectives, after a successful post: a fresh request id, ICOLL_POST(op,
// comm, root, bytes, id) and a tracked request whose completion records ICOLL_COMPLETE(id).
void post_icoll(runtime::ThreadState& t, MPI_Request request, uint32_t region, MPI_Comm comm,
                const CollCall& c);

// ---- one-sided -------------------------------------------------------------------------
// Window handle -> {window id, size of the window's group, my rank}. Windows critpath did
// not see being created map to kCommIdUnknown.
CommMap& win_map();
CRITPATH_NOINSTR inline uint32_t win_id(MPI_Win w) {
  CommView v;
  if (CRITPATH_LIKELY(win_map().find(handle_bits(w), v))) return v.id;
  count_unknown_comm();
  return kCommIdUnknown;
}
// RMA communication (MPI_Put ... MPI_Compare_and_swap and the request-based forms): one
// event of `kind` (RMA_PUT / RMA_GET / RMA_ACCUMULATE) with origin bytes, and for the
// fetching forms a second RMA_GET with the result bytes (result_bytes >= 0). request: the
// request-based forms' request (MPI_REQUEST_NULL otherwise); tracked so that its completion
// records RMA_REQUEST_COMPLETE. target == MPI_PROC_NULL records nothing.
void record_rma_comm(runtime::ThreadState& t, trace::EventKind kind, uint32_t region, MPI_Win win, int target,
                     uint64_t origin_bytes, int64_t result_bytes, const MPI_Request* request);
// Synchronisation: RMA_SYNC(peer = target or -1, root = lock type: 1 exclusive, 2 shared,
// 0 otherwise) or, for collective ones (fence), RMA_COLL_SYNC.
void record_rma_sync(runtime::ThreadState& t, uint32_t region, MPI_Win win, int target, int lock_type,
                     bool collective);
// MPI_Win_post/MPI_Win_start: one RMA_SYNC per group member, peer = its rank in the window.
void record_rma_group_sync(runtime::ThreadState& t, uint32_t region, MPI_Win win, MPI_Group group);
// After a successful window constructor (collective over comm): agree on the window id
// (one PMPI_Bcast on comm, like communicators), define it in defs::windows(), map the
// handle and, when recording, write RMA_WIN_CREATE(window, op = region, bytes = local size,
// root = comm id).
void track_new_win(runtime::ThreadState* t, MPI_Comm comm, MPI_Win win, uint32_t region,
                   uint64_t local_bytes);
// Before MPI_Win_free (the handle is still valid): the window id; after success
// untrack_win() forgets the handle.
void untrack_win(MPI_Win freed_handle, uint32_t id);

// ---- cold paths (mpi_glue.cpp) ------------------------------------------------------------
// After a successful communicator constructor: agree on the new communicator's id with one
// PMPI_Bcast on it (two on an intercommunicator: one per direction), define it in
// defs::comms() (members, remote group, Cartesian dims/periods) and map the handle. newcomm
// may be MPI_COMM_NULL (MPI_UNDEFINED color, non-member of MPI_Comm_create): nothing to do.
void track_new_comm(MPI_Comm parent, MPI_Comm newcomm, uint32_t creator_region);
// MPI_Comm_idup: the id cannot be agreed on the new communicator before completion (a
// blocking call there could deadlock), so the parent's rank 0 sends it with a PMPI_Ibcast
// on the parent posted right after the idup; the completion of the idup request waits for
// it and defines the communicator. Records ICOLL_POST(op, parent) when t != nullptr.
void post_idup(runtime::ThreadState* t, MPI_Comm parent, MPI_Comm* newcomm, MPI_Request request,
               uint32_t region);
// Called by the Wait/Test family for a kIdup request (state = RequestInfo::bytes):
// completed = true defines the new communicator; false (error) only releases the state.
void finish_idup(uint64_t state, bool completed);
// After a successful MPI_Comm_free: forget the handle (MPI reuses handles) and mark the id
// freed in defs::comms().
void untrack_comm(MPI_Comm freed_handle);

// After a successful PMPI_Init/PMPI_Init_thread: registers the MPI regions, starts the
// session (runtime::session_init), then — when the session is recording — sets up
// MPI_COMM_WORLD and MPI_COMM_SELF tracking. provided == nullptr: asks PMPI_Query_thread.
void after_init(uint64_t t_enter, uint32_t region, const int* provided);

}  // namespace critpath::pmpi
