// critpath — pmpi_wrappers/semantics/completion.cpp
//
// Wait/Test family bookkeeping (contract in completion.h). The claims taken in the
// constructor are what makes this safe under MPI_THREAD_MULTIPLE: see handle_table.h.
#include "pmpi_wrappers/semantics/completion.h"

#include <cstdlib>

#include "libtrace/runtime/log.h"
#include "pmpi_wrappers/semantics/counters.h"
#include "pmpi_wrappers/semantics/mpi_glue.h"
#include "pmpi_wrappers/semantics/request_table.h"

namespace critpath::pmpi {

namespace {
constexpr uint32_t kNoSlot = RequestTable::kNone;
}

Completion::Completion(runtime::ThreadState* t, uint32_t region, bool is_test, int count,
                       MPI_Request* reqs) noexcept
    : t_(t), region_(region), test_(is_test), n_(count > 0 && reqs ? count : 0), reqs_(reqs),
      slots_(stack_slots_) {
  runtime::t_state.in_mpi = 1;
  if (t_) {
    if (test_) t0_ = runtime::now();
    else runtime::record_enter(*t_, region_);
  }
  if (n_ > kStackRequests) {
    slots_ = static_cast<uint32_t*>(std::malloc(sizeof(uint32_t) * size_t(n_)));
    if (!slots_) {
      // Cannot remember the claims: leave these requests alone (their entries go stale and
      // are overwritten when the table reuses the slots; counted, one warning).
      log::warn_once("wrappers-alloc",
                     "out of memory tracking %d requests; some "
                     "nonblocking completions are not traced",
                     n_);
      count_untracked_request();
      n_ = 0;
      return;
    }
  }
  RequestTable& table = requests();
  const uint32_t owner = request_owner();
  for (int i = 0; i < n_; ++i) {
    slots_[i] = kNoSlot;
    if (reqs_[i] == MPI_REQUEST_NULL) continue;
    const uint32_t s = table.claim(handle_bits(reqs_[i]), owner);
    if (s == kNoSlot) continue;
    slots_[i] = s;
    ++claimed_;
    const RequestInfo& info = table.at(s);
    if (info.kind == RequestKind::kRecv || (info.flags & request_flag::kCancelRequested))
      needs_status_ = true;
  }
}

Completion::~Completion() {
  if (!finished_) close(false);  // a finish_* was skipped: never leave claims behind
  if (CRITPATH_UNLIKELY(slots_ != stack_slots_)) std::free(slots_);
  if (CRITPATH_UNLIKELY(heap_statuses_ != nullptr)) std::free(heap_statuses_);
}

MPI_Status* Completion::status(MPI_Status* app) noexcept {
  if (app != MPI_STATUS_IGNORE || !needs_status_) return app;
  return &stack_statuses_[0];
}

MPI_Status* Completion::statuses(MPI_Status* app) noexcept {
  if (app != MPI_STATUSES_IGNORE || !needs_status_) return app;
  if (n_ <= kStackRequests) return stack_statuses_;
  heap_statuses_ = static_cast<MPI_Status*>(std::malloc(sizeof(MPI_Status) * size_t(n_)));
  return heap_statuses_ ? heap_statuses_ : app;
}

void Completion::release(int i) noexcept {
  if (i < 0 || i >= n_ || slots_[i] == kNoSlot) return;
  requests().release(slots_[i]);
  slots_[i] = kNoSlot;
  --claimed_;
}

void Completion::drop(int i) noexcept {
  if (i < 0 || i >= n_ || slots_[i] == kNoSlot) return;
  RequestTable& table = requests();
  RequestInfo& info = table.at(slots_[i]);
  if (info.kind == RequestKind::kIdup) finish_idup(info.bytes, false);
  if (info.flags & request_flag::kPersistent) {
    info.flags &= uint8_t(
        ~(request_flag::kActive | request_flag::kRecorded | request_flag::kCancelRequested));
    info.id = 0;
    table.release(slots_[i]);
  } else {
    table.erase(slots_[i]);
  }
  slots_[i] = kNoSlot;
  --claimed_;
}

void Completion::complete(int i, const MPI_Status* st) noexcept {
  if (i < 0 || i >= n_ || slots_[i] == kNoSlot) return;
  RequestTable& table = requests();
  const RequestInfo& info = table.at(slots_[i]);
  if (!(info.flags & request_flag::kActive)) {  // inactive persistent: nothing happened
    release(i);
    return;
  }
  if (info.kind == RequestKind::kIdup) {  // define the new communicator, then the event
    const uint64_t state = info.bytes, id = info.id;
    const bool recorded = t_ && (info.flags & request_flag::kRecorded);
    table.erase(slots_[i]);
    slots_[i] = kNoSlot;
    --claimed_;
    finish_idup(state, true);
    if (recorded) runtime::record_request(*t_, trace::EventKind::kIcollComplete, id);
    return;
  }
  const bool have_status = st != MPI_STATUS_IGNORE && st != nullptr;
  if (t_ && (info.flags & request_flag::kRecorded)) {
    int cancelled = 0;
    if ((info.flags & request_flag::kCancelRequested) && have_status) PMPI_Test_cancelled(st, &cancelled);
    if (cancelled) {
      runtime::record_request(*t_, trace::EventKind::kRequestCancel, info.id);
    } else if (info.kind == RequestKind::kColl) {
      runtime::record_request(*t_, trace::EventKind::kIcollComplete, info.id);
    } else if (info.kind == RequestKind::kRma) {
      runtime::record_rma(*t_, trace::EventKind::kRmaRequestComplete, info.comm, -1, 0, 0, info.id, -1);
    } else if (info.kind == RequestKind::kSend) {
      runtime::record_request(*t_, trace::EventKind::kIsendComplete, info.id);
    } else if (have_status) {
      runtime::record_p2p(*t_, trace::EventKind::kIrecv, info.comm, st->MPI_SOURCE, st->MPI_TAG,
                          status_bytes(st), info.id);
    } else {
      runtime::record_p2p(*t_, trace::EventKind::kIrecv, info.comm, info.peer, info.tag, 0, info.id);
    }
  }
  drop(i);  // same bookkeeping as an error completion: inactive or erased
}

void Completion::open_events(bool completed) noexcept {
  if (t_ && test_ && completed) runtime::record_region(*t_, trace::EventKind::kEnter, region_, t0_);
}

void Completion::close(bool completed) noexcept {
  finished_ = true;
  for (int i = 0; claimed_ > 0 && i < n_; ++i) release(i);
  if (t_) {
    if (!test_ || completed) runtime::record_exit(*t_, region_);
    else count_test_without_completion(t_->location, runtime::now() - t0_);
  }
  runtime::t_state.in_mpi = 0;
}

void Completion::finish_one(int rc, const int* flag, MPI_Status* st) noexcept {
  const bool completed = receive_took_message(rc) && (!flag || *flag);
  open_events(completed);
  if (completed) complete(0, st);
  else if (rc != MPI_SUCCESS && n_ > 0 && reqs_[0] == MPI_REQUEST_NULL) drop(0);
  close(completed);
}

void Completion::finish_any(int rc, const int* index, const int* flag, MPI_Status* st) noexcept {
  const int idx = (index && *index != MPI_UNDEFINED) ? *index : -1;
  const bool completed = receive_took_message(rc) && (!flag || *flag) && idx >= 0;
  open_events(completed);
  if (completed) complete(idx, st);
  else if (rc != MPI_SUCCESS && idx >= 0 && idx < n_ && reqs_[idx] == MPI_REQUEST_NULL) drop(idx);
  // A wait that found no active request still ran: it keeps its ENTER/EXIT.
  close(completed || (!test_ && rc == MPI_SUCCESS));
}

void Completion::finish_all(int rc, const int* flag, MPI_Status* st) noexcept {
  const bool have_st = st != MPI_STATUSES_IGNORE && st != nullptr;
  if (rc == MPI_SUCCESS) {
    const bool completed = !flag || *flag;
    open_events(completed);
    if (completed)
      for (int i = 0; i < n_; ++i) complete(i, have_st ? &st[i] : MPI_STATUS_IGNORE);
    close(completed);
    return;
  }
  open_events(true);
  for (int i = 0; i < n_; ++i) {
    if (slots_[i] == kNoSlot) continue;
    if (rc == MPI_ERR_IN_STATUS && have_st) {
      const int e = st[i].MPI_ERROR;
      if (receive_took_message(e)) complete(i, &st[i]);
      else if (e != MPI_ERR_PENDING) drop(i);
    } else if (reqs_[i] == MPI_REQUEST_NULL) {
      drop(i);
    }
  }
  close(true);
}

void Completion::finish_some(int rc, const int* outcount, const int* indices, MPI_Status* st) noexcept {
  const bool have_st = st != MPI_STATUSES_IGNORE && st != nullptr;
  int done = 0;
  if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && outcount && *outcount != MPI_UNDEFINED)
    done = *outcount;
  open_events(done > 0);
  for (int k = 0; k < done; ++k) {
    const int i = indices[k];
    if (rc == MPI_ERR_IN_STATUS && have_st && !receive_took_message(st[k].MPI_ERROR)) drop(i);
    else complete(i, have_st ? &st[k] : MPI_STATUS_IGNORE);
  }
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
    for (int i = 0; i < n_; ++i)
      if (slots_[i] != kNoSlot && reqs_[i] == MPI_REQUEST_NULL) drop(i);
  close(done > 0 || (!test_ && rc == MPI_SUCCESS));
}

}  // namespace critpath::pmpi
