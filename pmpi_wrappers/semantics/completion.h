// critpath — pmpi_wrappers/semantics/completion.h
//
// The Wait/Test family: one Completion object per call, on the wrapper's stack.
//
//   Completion c(t, region, is_test, n, requests);   claims the tracked entries; ENTER
//   st = c.status(app) / c.statuses(app);            a status to pass to PMPI (see below)
//   rc = PMPI_Waitall(n, requests, st);
//   c.finish_all(rc, flag, st);                      completion events, untrack, EXIT
//
// Events per completed request (only if its post was recorded and we are recording):
//   send -> ISEND_COMPLETE(req)     recv -> IRECV(matched source, tag, bytes, req)
//   cancelled (MPI_Cancel + MPI_Test_cancelled) -> REQUEST_CANCEL(req)
//   nonblocking collective, MPI_Comm_idup -> ICOLL_COMPLETE(req) (idup: after defining the
//   new communicator, which waits for the id's PMPI_Ibcast; mpi_glue.h)
//   request-based RMA -> RMA_REQUEST_COMPLETE(window, req)
// Completed persistent requests become inactive (kept); others are erased.
//
// Test calls (is_test) write nothing until they know the outcome: if something completed,
// ENTER is written with the timestamp taken at the call's entry, then the completion
// events and EXIT; if nothing completed, nothing is written and the call is counted
// (counters.h). Index semantics follow MPI: Waitany/Testany report one index (MPI_UNDEFINED:
// no active request), Waitsome/Testsome `outcount` indices with statuses in the same order,
// Waitall/Testall all of them; MPI_ERR_IN_STATUS is resolved per request through the
// statuses' MPI_ERROR (MPI_ERR_PENDING = still pending). A request that completed with an
// error is untracked without an event, but for a receive truncated (MPI_ERR_TRUNCATE): it
// took its message and completes as a successful one does.
//
// Statuses. A receive's matched source, tag and size come from its status. When the
// application passes MPI_STATUS(ES)_IGNORE and a tracked receive (or cancelled request) is
// among the requests, status()/statuses() return an internal status array instead: a stack
// array for up to kStackRequests requests, a heap buffer beyond (the only allocation on a
// wrapper path; if it fails, the receive is recorded with its posted peer/tag and 0 bytes).
// The application's own statuses are passed through untouched.
//
// Thread safety: one object per call; the tables it uses are thread-safe. No exceptions.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "libtrace/runtime/recorder.h"

namespace critpath::pmpi {

class Completion {
 public:
  static constexpr int kStackRequests = 16;

  // t: the recording thread state, or nullptr to track without recording (paused).
  // Marks the thread in_mpi and, for waits with t != nullptr, records ENTER(region).
  Completion(runtime::ThreadState* t, uint32_t region, bool is_test, int count, MPI_Request* reqs) noexcept;
  ~Completion();
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // The status pointer to pass to PMPI in place of the application's `app`.
  MPI_Status* status(MPI_Status* app) noexcept;    // single-status calls
  MPI_Status* statuses(MPI_Status* app) noexcept;  // array calls (count statuses)

  // Exactly one finish_* per object, after the PMPI call. `st` is what status()/statuses()
  // returned. flag: the test's output flag (nullptr for waits).
  void finish_one(int rc, const int* flag, MPI_Status* st) noexcept;
  void finish_any(int rc, const int* index, const int* flag, MPI_Status* st) noexcept;
  void finish_all(int rc, const int* flag, MPI_Status* st) noexcept;
  void finish_some(int rc, const int* outcount, const int* indices, MPI_Status* st) noexcept;

 private:
  void complete(int i, const MPI_Status* st) noexcept;  // events + untrack
  void drop(int i) noexcept;                            // completed with an error: untrack
  void release(int i) noexcept;                         // still pending: unclaim
  void open_events(bool completed) noexcept;            // deferred ENTER of tests
  void close(bool completed) noexcept;                  // release the rest, EXIT or count

  runtime::ThreadState* t_;
  uint32_t region_;
  bool test_;
  bool needs_status_ = false;
  bool finished_ = false;
  int n_;
  int claimed_ = 0;
  MPI_Request* reqs_;
  uint64_t t0_ = 0;
  uint32_t* slots_;
  MPI_Status* heap_statuses_ = nullptr;
  uint32_t stack_slots_[kStackRequests];
  MPI_Status stack_statuses_[kStackRequests];
};

}  // namespace critpath::pmpi
