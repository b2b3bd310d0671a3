// critpath — analyzer/engine/comm.cpp: the analysis ranks over MPI, natively or hosted.
//
// Hosted mode in one picture (process p hosts locations 4..7 of a 16-location run):
//
//   thread(4) --\                      one MPI call on HostedComm::procs
//   thread(5) ---+-- rendezvous --->   (the processes hosting members of this communicator)
//   thread(6) ---+   (in memory)       made by the last thread to arrive, for all four
//   thread(7) --/
//
// Reductions combine the members of a process first (MPI_Reduce_local), then across
// processes (MPI_Allreduce); everything else travels as per-rank byte blobs in one
// MPI_Alltoallv over the hosting processes.
#include "analyzer/engine/comm.h"
#include "analyzer/engine/watchdog.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "libtrace/clock/clock.h"

namespace critpath::analyzer::engine {
namespace {

Status ok(int rc) { return rc == MPI_SUCCESS ? Status::kOk : Status::kMpiError; }

// Without an MPI call for the types the engine uses: a local Comm runs without MPI_Init.
size_t extent_of(MPI_Datatype type) {
  struct DoubleInt {
    double v;
    int r;
  };
  if (type == MPI_DOUBLE || type == MPI_UINT64_T) return 8;
  if (type == MPI_INT) return sizeof(int);
  if (type == MPI_DOUBLE_INT) return sizeof(DoubleInt);
  if (type == MPI_BYTE || type == MPI_CHAR) return 1;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return size_t(extent);
}

// displs[i] = counts[0] + ... + counts[i - 1]; returns the sum of all counts (the callers
// refuse a sum past INT32_MAX: MPI counts are ints).
long prefix_sums(const std::vector<int>& counts, std::vector<int>& displs) {
  displs.assign(counts.size(), 0);
  long total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    displs[i] = int(total);
    total += counts[i];
  }
  return total;
}

// Creations of sub-communicators that are collective over their members only
// (create_group): the members hosted here meet in this process-wide table.
struct Registry {
  struct Pending {
    int arrived = 0;
    int collected = 0;
    bool done = false;
    Status status = Status::kOk;
    std::shared_ptr<HostedComm> made;
  };
  using Key = std::tuple<const HostedComm*, int, std::vector<int>>;
  std::mutex mu;
  std::condition_variable cv;
  std::map<Key, Pending> pending;
};

}  // namespace

// One communicator's state in one hosting process, shared by its members hosted here.
struct HostedComm {
  std::vector<int> proc_of;        // comm rank -> rank in `procs` (0 when procs is null)
  std::vector<int> locals;         // comm ranks hosted here, ascending
  MPI_Comm procs = MPI_COMM_NULL;  // the processes hosting members; null: only this one
  int n_procs = 1;
  int my_proc = 0;
  std::shared_ptr<Registry> registry;

  // The rendezvous: each member leaves its arguments in its slot; the last one drives.
  struct Slot {
    const void* in = nullptr;
    void* out = nullptr;
    const void* blobs_out = nullptr;  // const Comm::Blobs*
    void* blobs_in = nullptr;         // Comm::Blobs*
    int value = 0;
    Comm* made = nullptr;
  };
  std::mutex mu;
  std::condition_variable cv;
  uint64_t generation = 0;
  int arrived = 0;
  Status result = Status::kOk;
  std::vector<Slot> slots;
  // Point-to-point messages between members hosted here (Comm::post), one box per member.
  struct Mailbox {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::pair<int, std::vector<unsigned char>>> q;  // (source rank, bytes)
  };
  std::vector<std::unique_ptr<Mailbox>> mail;
  void make_mail() {
    mail.clear();
    for (size_t i = 0; i < locals.size(); ++i) mail.push_back(std::make_unique<Mailbox>());
  }

  HostedComm() = default;
  HostedComm(const HostedComm&) = delete;
  HostedComm& operator=(const HostedComm&) = delete;
  ~HostedComm() {
    if (procs != MPI_COMM_NULL) PMPI_Comm_free(&procs);
  }

  // Blocks until every member hosted here called it; the last one runs `drive` (which reads
  // and writes every slot) and all return its status.
  Status meet(int local, const Slot& slot, const std::function<Status()>& drive) {
    std::unique_lock<std::mutex> lock(mu);
    slots[size_t(local)] = slot;
    if (++arrived < int(locals.size())) {
      const uint64_t g = generation;
      cv.wait(lock, [&] { return generation != g; });
      return result;
    }
    lock.unlock();
    const Status s = drive();
    lock.lock();
    result = s;
    arrived = 0;
    ++generation;
    cv.notify_all();
    return s;
  }

  // A new state for the comm ranks of this one listed in `members`; `made` is the MPI
  // communicator over the processes hosting them (null when only this one does).
  std::shared_ptr<HostedComm> derive(const std::vector<int>& members, MPI_Comm made) const {
    auto h = std::make_shared<HostedComm>();
    h->registry = registry;
    h->procs = made;
    std::vector<int> ps;  // old process ranks, ascending
    for (int m : members) ps.push_back(proc_of[size_t(m)]);
    std::sort(ps.begin(), ps.end());
    ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
    h->n_procs = made == MPI_COMM_NULL ? 1 : int(ps.size());
    if (made != MPI_COMM_NULL) PMPI_Comm_rank(made, &h->my_proc);
    for (size_t r = 0; r < members.size(); ++r) {
      const int old_proc = proc_of[size_t(members[r])];
      const int p = int(std::lower_bound(ps.begin(), ps.end(), old_proc) - ps.begin());
      h->proc_of.push_back(made == MPI_COMM_NULL ? 0 : p);
      if (old_proc == my_proc) h->locals.push_back(int(r));
    }
    h->slots.resize(h->locals.size());
    h->make_mail();
    return h;
  }

  // The processes hosting `members` as an MPI group of `procs`.
  Status proc_group(const std::vector<int>& members, MPI_Group& out) const {
    std::vector<int> ps;
    for (int m : members) ps.push_back(proc_of[size_t(m)]);
    std::sort(ps.begin(), ps.end());
    ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
    MPI_Group all;
    if (PMPI_Comm_group(procs, &all) != MPI_SUCCESS) return Status::kMpiError;
    const int rc = PMPI_Group_incl(all, int(ps.size()), ps.data(), &out);
    PMPI_Group_free(&all);
    return ok(rc);
  }

  bool spans_processes(const std::vector<int>& members) const {
    if (procs == MPI_COMM_NULL) return false;
    for (int m : members)
      if (proc_of[size_t(m)] != my_proc) return true;
    return false;
  }
};

void Comm::locations_of(int n_locations, int n_procs, int proc, int& first, int& count) {
  const int base = n_locations / n_procs, extra = n_locations % n_procs;
  count = base + (proc < extra ? 1 : 0);
  first = proc * base + std::min(proc, extra);
}

Status Comm::adopt(int rc, MPI_Comm made, Comm& out) {
  if (rc != MPI_SUCCESS || made == MPI_COMM_NULL) return Status::kMpiError;
  Comm c;
  c.mpi_ = made;
  PMPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
  PMPI_Comm_rank(made, &c.rank_);
  PMPI_Comm_size(made, &c.size_);
  out = std::move(c);
  return Status::kOk;
}

Comm Comm::member(std::shared_ptr<HostedComm> h, int rank, int size) {
  Comm c;
  c.local_ = int(std::find(h->locals.begin(), h->locals.end(), rank) - h->locals.begin());
  c.hosted_ = std::move(h);
  c.rank_ = rank;
  c.size_ = size;
  return c;
}

Status Comm::native(MPI_Comm comm, Comm& out) {
  MPI_Comm dup = MPI_COMM_NULL;
  // Nonblocking, so that CRITPATH_ANALYSIS_TIMEOUT covers it (watchdog.h). The handle lives on
  // the heap: abandoned at the deadline, MPI may still write it later (it is leaked then).
  auto* made = new MPI_Comm(MPI_COMM_NULL);
  const Status s = complete_nonblocking([&](MPI_Request* q) { return PMPI_Comm_idup(comm, made, q); });
  if (s != Status::kOk) return Status::kMpiError;
  dup = *made;
  delete made;
  return adopt(MPI_SUCCESS, dup, out);
}

Status Comm::borrow(MPI_Comm comm, Comm& out) {
  if (comm == MPI_COMM_NULL) return Status::kInvalidArgument;
  Comm c;
  if (PMPI_Comm_rank(comm, &c.rank_) != MPI_SUCCESS || PMPI_Comm_size(comm, &c.size_) != MPI_SUCCESS)
    return Status::kMpiError;
  c.mpi_ = comm;
  c.borrowed_ = true;
  out = std::move(c);
  return Status::kOk;
}

bool Comm::app_number(int& out) const {
  if (mpi_ == MPI_COMM_NULL) return false;
  int* appnum = nullptr;
  int flag = 0;
  if (PMPI_Comm_get_attr(mpi_, MPI_APPNUM, &appnum, &flag) != MPI_SUCCESS || !flag || !appnum) return false;
  out = *appnum;
  return true;
}

Status Comm::library_version(std::string& out) {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (PMPI_Get_library_version(buf, &len) != MPI_SUCCESS) return Status::kMpiError;
  out.assign(buf, size_t(len));
  return Status::kOk;
}

Status Comm::hosted(MPI_Comm procs, int n_locations, std::vector<Comm>& mine) {
  int P = 1, me = 0;
  PMPI_Comm_size(procs, &P);
  PMPI_Comm_rank(procs, &me);
  if (n_locations < P) return Status::kInvalidArgument;
  auto h = std::make_shared<HostedComm>();
  h->registry = std::make_shared<Registry>();
  if (P > 1) {
    if (PMPI_Comm_dup(procs, &h->procs) != MPI_SUCCESS) return Status::kMpiError;
    PMPI_Comm_set_errhandler(h->procs, MPI_ERRORS_RETURN);
  }
  h->n_procs = P;
  h->my_proc = me;
  for (int p = 0; p < P; ++p) {
    int first = 0, count = 0;
    locations_of(n_locations, P, p, first, count);
    for (int l = first; l < first + count; ++l) {
      h->proc_of.push_back(P > 1 ? p : 0);
      if (p == me) h->locals.push_back(l);
    }
  }
  h->slots.resize(h->locals.size());
  h->make_mail();
  mine.clear();
  for (int r : h->locals) mine.push_back(member(h, r, n_locations));
  return Status::kOk;
}

Comm& Comm::operator=(Comm&& o) noexcept {
  if (this != &o) {
    if (mpi_ != MPI_COMM_NULL && !borrowed_) PMPI_Comm_free(&mpi_);
    mpi_ = o.mpi_;
    borrowed_ = o.borrowed_;
    hosted_ = std::move(o.hosted_);
    local_ = o.local_;
    rank_ = o.rank_;
    size_ = o.size_;
    posts_ = std::move(o.posts_);
    o.mpi_ = MPI_COMM_NULL;
    o.borrowed_ = false;
    o.hosted_.reset();
    o.rank_ = 0;
    o.size_ = 1;
  }
  return *this;
}

Comm::~Comm() {
  if (mpi_ != MPI_COMM_NULL && !borrowed_) PMPI_Comm_free(&mpi_);
}

// ---- new communicators ----------------------------------------------------------------

Status Comm::dup(Comm& out) const {
  if (mpi_ != MPI_COMM_NULL && borrowed_) {  // the application's communicator: see borrowed_
    MPI_Comm made = MPI_COMM_NULL;
    const int rc = PMPI_Comm_dup(mpi_, &made);
    return adopt(rc, made, out);
  }
  if (mpi_ != MPI_COMM_NULL) return native(mpi_, out);
  if (!hosted_) {
    out = Comm();
    return Status::kOk;
  }
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.made = &out;
  return h.meet(local_, slot, [&] {
    MPI_Comm made = MPI_COMM_NULL;
    if (h.procs != MPI_COMM_NULL && PMPI_Comm_dup(h.procs, &made) != MPI_SUCCESS) return Status::kMpiError;
    std::vector<int> all(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) all[size_t(r)] = r;
    auto d = h.derive(all, made);
    for (size_t i = 0; i < h.locals.size(); ++i) *h.slots[i].made = member(d, h.locals[i], size_);
    return Status::kOk;
  });
}

Status Comm::split(int color, Comm& out) const {
  if (mpi_ != MPI_COMM_NULL) {
    MPI_Comm part = MPI_COMM_NULL;
    const int rc = PMPI_Comm_split(mpi_, color, rank_, &part);
    return adopt(rc, part, out);
  }
  if (!hosted_) {
    out = Comm();
    return Status::kOk;
  }
  std::vector<int> colors(static_cast<size_t>(size_));
  CRITPATH_FORWARD_IF_ERROR(allgather(&color, sizeof color, colors.data()));
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.made = &out;
  return h.meet(local_, slot, [&] {
    // Every process creates the parts it hosts members of, in ascending colour: the same
    // order everywhere, so the creations (collective over their processes) never deadlock.
    std::vector<int> mine;
    for (int r : h.locals) mine.push_back(colors[size_t(r)]);
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    for (size_t k = 0; k < mine.size(); ++k) {
      std::vector<int> members;
      for (int r = 0; r < size_; ++r)
        if (colors[size_t(r)] == mine[k]) members.push_back(r);
      MPI_Comm made = MPI_COMM_NULL;
      if (h.spans_processes(members)) {
        MPI_Group g;
        CRITPATH_FORWARD_IF_ERROR(h.proc_group(members, g));
        const int rc = PMPI_Comm_create_group(h.procs, g, int(k % 32000), &made);
        PMPI_Group_free(&g);
        if (rc != MPI_SUCCESS) return Status::kMpiError;
        PMPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
      }
      auto d = h.derive(members, made);
      for (size_t i = 0; i < h.locals.size(); ++i) {
        if (colors[size_t(h.locals[i])] != mine[k]) continue;
        const int r = h.locals[i];
        const int new_rank = int(std::find(members.begin(), members.end(), r) - members.begin());
        *h.slots[i].made = member(d, new_rank, int(members.size()));
      }
    }
    return Status::kOk;
  });
}

Status Comm::create_group(const std::vector<int>& members, int tag, Comm& out) const {
  const auto me = std::find(members.begin(), members.end(), rank_);
  if (me == members.end()) return Status::kInvalidArgument;
  if (mpi_ != MPI_COMM_NULL) {
    MPI_Group all, g;
    PMPI_Comm_group(mpi_, &all);
    PMPI_Group_incl(all, int(members.size()), members.data(), &g);
    MPI_Comm made = MPI_COMM_NULL;
    const int rc = PMPI_Comm_create_group(mpi_, g, tag, &made);
    PMPI_Group_free(&g);
    PMPI_Group_free(&all);
    return adopt(rc, made, out);
  }
  if (!hosted_) {
    out = Comm();
    return Status::kOk;
  }
  // Hosted: the members hosted here meet in the registry; the last one creates.
  HostedComm& h = *hosted_;
  Registry& reg = *h.registry;
  int expected = 0;
  for (int m : members) expected += h.proc_of[size_t(m)] == h.my_proc ? 1 : 0;
  const Registry::Key key{&h, tag, members};
  std::unique_lock<std::mutex> lock(reg.mu);
  // A finished creation with the same key still being collected: wait until it is gone.
  reg.cv.wait(lock, [&] {
    auto it = reg.pending.find(key);
    return it == reg.pending.end() || !it->second.done;
  });
  Registry::Pending& p = reg.pending[key];
  if (++p.arrived == expected) {
    lock.unlock();
    MPI_Comm made = MPI_COMM_NULL;
    Status s = Status::kOk;
    if (h.spans_processes(members)) {
      MPI_Group g;
      s = h.proc_group(members, g);
      if (s == Status::kOk) {
        const int rc = PMPI_Comm_create_group(h.procs, g, tag, &made);
        PMPI_Group_free(&g);
        if (rc != MPI_SUCCESS) s = Status::kMpiError;
        else PMPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
      }
    }
    lock.lock();
    p.status = s;
    if (s == Status::kOk) p.made = h.derive(members, made);
    p.done = true;
    reg.cv.notify_all();
  } else {
    reg.cv.wait(lock, [&] { return p.done; });
  }
  const Status s = p.status;
  if (s == Status::kOk) out = member(p.made, int(me - members.begin()), int(members.size()));
  if (++p.collected == expected) {
    reg.pending.erase(key);
    reg.cv.notify_all();
  }
  return s;
}

// ---- collectives ------------------------------------------------------------------------

Status Comm::barrier() const {
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking([&](MPI_Request* q) { return PMPI_Ibarrier(mpi_, q); });
  if (!hosted_) return Status::kOk;
  HostedComm& h = *hosted_;
  return h.meet(local_, {}, [&] {
    return h.procs == MPI_COMM_NULL
               ? Status::kOk
               : complete_nonblocking([&](MPI_Request* q) { return PMPI_Ibarrier(h.procs, q); });
  });
}

Status Comm::allreduce(void* inout, int n, MPI_Datatype type, MPI_Op op) const {
  if (n == 0) return Status::kOk;
  if (mpi_ != MPI_COMM_NULL && borrowed_)
    return PMPI_Allreduce(MPI_IN_PLACE, inout, n, type, op, mpi_) == MPI_SUCCESS ? Status::kOk
                                                                                 : Status::kMpiError;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking(
        [&](MPI_Request* q) { return PMPI_Iallreduce(MPI_IN_PLACE, inout, n, type, op, mpi_, q); });
  if (!hosted_) return Status::kOk;
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.out = inout;
  return h.meet(local_, slot, [&] {
    const size_t bytes = size_t(n) * extent_of(type);
    // Combine this process's members in rank order, then the processes.
    std::vector<unsigned char> acc(bytes), tmp(bytes);
    std::memcpy(acc.data(), h.slots.back().out, bytes);
    for (size_t i = h.slots.size() - 1; i-- > 0;) {
      std::memcpy(tmp.data(), h.slots[i].out, bytes);
      if (PMPI_Reduce_local(acc.data(), tmp.data(), n, type, op) != MPI_SUCCESS) return Status::kMpiError;
      acc.swap(tmp);
    }
    if (h.procs != MPI_COMM_NULL && complete_nonblocking([&](MPI_Request* q) {
                                      return PMPI_Iallreduce(MPI_IN_PLACE, acc.data(), n, type, op, h.procs,
                                                             q);
                                    }) != Status::kOk)
      return Status::kMpiError;
    for (const HostedComm::Slot& s : h.slots) std::memcpy(s.out, acc.data(), bytes);
    return Status::kOk;
  });
}

Status Comm::reduce(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, int root) const {
  if (n == 0) return Status::kOk;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking(
        [&](MPI_Request* q) { return PMPI_Ireduce(in, out, n, type, op, root, mpi_, q); });
  const size_t bytes = size_t(n) * extent_of(type);
  if (!hosted_) {
    std::memmove(out, in, bytes);
    return Status::kOk;
  }
  std::vector<unsigned char> v(static_cast<const unsigned char*>(in),
                               static_cast<const unsigned char*>(in) + bytes);
  CRITPATH_FORWARD_IF_ERROR(allreduce(v.data(), n, type, op));
  if (rank_ == root) std::memcpy(out, v.data(), bytes);
  return Status::kOk;
}

Status Comm::scan(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op) const {
  if (n == 0) return Status::kOk;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking([&](MPI_Request* q) { return PMPI_Iscan(in, out, n, type, op, mpi_, q); });
  const size_t bytes = size_t(n) * extent_of(type);
  if (!hosted_) {
    std::memmove(out, in, bytes);
    return Status::kOk;
  }
  Blobs send(static_cast<size_t>(size_)), recv;
  const auto* p = static_cast<const unsigned char*>(in);
  for (int d = rank_; d < size_; ++d) send[size_t(d)].assign(p, p + bytes);
  CRITPATH_FORWARD_IF_ERROR(exchange(send, recv));
  // acc = x0 op x1 op ... op x_rank, folded in rank order.
  std::vector<unsigned char> acc = recv[0];
  for (int s = 1; s <= rank_; ++s) {
    std::vector<unsigned char> next = recv[size_t(s)];
    if (next.size() != bytes || acc.size() != bytes) return Status::kMpiError;
    if (PMPI_Reduce_local(acc.data(), next.data(), n, type, op) != MPI_SUCCESS) return Status::kMpiError;
    acc.swap(next);
  }
  if (acc.size() != bytes) return Status::kMpiError;
  std::memcpy(out, acc.data(), bytes);
  return Status::kOk;
}

Status Comm::bcast(void* buf, size_t bytes, int root) const {
  if (bytes == 0) return Status::kOk;
  if (mpi_ != MPI_COMM_NULL && borrowed_)
    return PMPI_Bcast(buf, int(bytes), MPI_BYTE, root, mpi_) == MPI_SUCCESS ? Status::kOk : Status::kMpiError;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking(
        [&](MPI_Request* q) { return PMPI_Ibcast(buf, int(bytes), MPI_BYTE, root, mpi_, q); });
  if (!hosted_) return Status::kOk;
  Blobs send(static_cast<size_t>(size_)), recv;
  if (rank_ == root) {
    const auto* p = static_cast<const unsigned char*>(buf);
    for (auto& b : send) b.assign(p, p + bytes);
  }
  CRITPATH_FORWARD_IF_ERROR(exchange(send, recv));
  if (recv[size_t(root)].size() != bytes) return Status::kMpiError;
  std::memcpy(buf, recv[size_t(root)].data(), bytes);
  return Status::kOk;
}

Status Comm::allgather(const void* mine, size_t bytes, void* all) const {
  if (mpi_ != MPI_COMM_NULL && borrowed_)
    return PMPI_Allgather(mine, int(bytes), MPI_BYTE, all, int(bytes), MPI_BYTE, mpi_) == MPI_SUCCESS
               ? Status::kOk
               : Status::kMpiError;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking([&](MPI_Request* q) {
      return PMPI_Iallgather(mine, int(bytes), MPI_BYTE, all, int(bytes), MPI_BYTE, mpi_, q);
    });
  if (!hosted_) {
    std::memmove(all, mine, bytes);
    return Status::kOk;
  }
  Blobs send(static_cast<size_t>(size_)), recv;
  const auto* p = static_cast<const unsigned char*>(mine);
  for (auto& b : send) b.assign(p, p + bytes);
  CRITPATH_FORWARD_IF_ERROR(exchange(send, recv));
  for (int s = 0; s < size_; ++s) {
    if (recv[size_t(s)].size() != bytes) return Status::kMpiError;
    std::memcpy(static_cast<unsigned char*>(all) + size_t(s) * bytes, recv[size_t(s)].data(), bytes);
  }
  return Status::kOk;
}

Status Comm::allgatherv(const void* mine, int n, size_t elem_bytes, std::vector<unsigned char>& all) const {
  const auto* p = static_cast<const unsigned char*>(mine);
  all.clear();
  if (mpi_ == MPI_COMM_NULL) {
    Blobs out(static_cast<size_t>(size_), std::vector<unsigned char>(p, p + size_t(n) * elem_bytes)), in;
    if (hosted_) {
      CRITPATH_FORWARD_IF_ERROR(exchange(out, in));
    } else {
      in = std::move(out);
    }
    for (const auto& b : in) all.insert(all.end(), b.begin(), b.end());
    return Status::kOk;
  }
  std::vector<int> counts(static_cast<size_t>(size_), 0), displs;
  const int bytes = n * int(elem_bytes);
  if (complete_nonblocking([&](MPI_Request* q) {
        return PMPI_Iallgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, mpi_, q);
      }) != Status::kOk)
    return Status::kMpiError;
  const long total = prefix_sums(counts, displs);
  if (total > INT32_MAX) return Status::kInvalidArgument;
  all.resize(size_t(total));
  static unsigned char dummy[64];
  return complete_nonblocking([&](MPI_Request* q) {
    return PMPI_Iallgatherv(bytes ? mine : dummy, bytes, MPI_BYTE, all.empty() ? dummy : all.data(),
                            counts.data(), displs.data(), MPI_BYTE, mpi_, q);
  });
}

Status Comm::alltoallv(const void* send, const std::vector<int>& send_counts, size_t elem_bytes,
                       std::vector<unsigned char>& recv, std::vector<int>& recv_counts,
                       bool recv_counts_known) const {
  const auto* p = static_cast<const unsigned char*>(send);
  if (mpi_ == MPI_COMM_NULL) {
    Blobs out(static_cast<size_t>(size_)), in;
    size_t at = 0;
    for (int d = 0; d < size_; ++d) {
      const size_t b = size_t(send_counts[size_t(d)]) * elem_bytes;
      out[size_t(d)].assign(p + at, p + at + b);
      at += b;
    }
    if (hosted_) {
      CRITPATH_FORWARD_IF_ERROR(exchange(out, in));
    } else {
      in = std::move(out);
    }
    recv.clear();
    recv_counts.assign(static_cast<size_t>(size_), 0);
    for (int s = 0; s < size_; ++s) {
      recv.insert(recv.end(), in[size_t(s)].begin(), in[size_t(s)].end());
      recv_counts[size_t(s)] = int(in[size_t(s)].size() / elem_bytes);
    }
    return Status::kOk;
  }
  if (!recv_counts_known) {
    recv_counts.assign(static_cast<size_t>(size_), 0);
    const std::vector<int> ones(static_cast<size_t>(size_), 1);
    std::vector<int> at(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) at[size_t(r)] = r;
    if (alltoallv_p2p(send_counts.data(), ones.data(), at.data(), recv_counts.data(), ones.data(), at.data(),
                      MPI_INT, sizeof(int), mpi_) != Status::kOk)
      return Status::kMpiError;
  }
  // Counts and displacements in elements of a contiguous type: at most 2^31 - 1 elements.
  MPI_Datatype type;
  if (PMPI_Type_contiguous(int(elem_bytes), MPI_BYTE, &type) != MPI_SUCCESS ||
      PMPI_Type_commit(&type) != MPI_SUCCESS)
    return Status::kMpiError;
  std::vector<int> sdispls(static_cast<size_t>(size_)), rdispls(static_cast<size_t>(size_));
  long s = 0, r = 0;
  for (size_t d = 0; d < size_t(size_); ++d) {
    sdispls[d] = int(s);
    rdispls[d] = int(r);
    s += send_counts[d];
    r += recv_counts[d];
  }
  if (s > INT32_MAX || r > INT32_MAX) {
    PMPI_Type_free(&type);
    return Status::kInvalidArgument;
  }
  recv.resize(size_t(r) * elem_bytes);
  static unsigned char dummy[64];
  const Status st = alltoallv_p2p(s ? send : dummy, send_counts.data(), sdispls.data(),
                                  r ? recv.data() : dummy, recv_counts.data(), rdispls.data(), type,
                                  elem_bytes, mpi_);
  PMPI_Type_free(&type);
  return st;
}

Status Comm::gatherv(const void* mine, int n, size_t elem_bytes, int root, std::vector<unsigned char>& all,
                     std::vector<int>& counts, std::vector<int>& displs) const {
  const bool at_root = rank_ == root;
  counts.assign(at_root ? size_t(size_) : 0, 0);
  displs.assign(counts.size(), 0);
  all.clear();
  const auto* p = static_cast<const unsigned char*>(mine);
  if (mpi_ == MPI_COMM_NULL) {
    Blobs out(static_cast<size_t>(size_)), in;
    out[size_t(root)].assign(p, p + size_t(n) * elem_bytes);
    if (hosted_) {
      CRITPATH_FORWARD_IF_ERROR(exchange(out, in));
    } else {
      in = std::move(out);
    }
    if (!at_root) return Status::kOk;
    for (int s = 0; s < size_; ++s) {
      displs[size_t(s)] = int(all.size() / elem_bytes);
      counts[size_t(s)] = int(in[size_t(s)].size() / elem_bytes);
      all.insert(all.end(), in[size_t(s)].begin(), in[size_t(s)].end());
    }
    return Status::kOk;
  }
  if (complete_nonblocking([&](MPI_Request* q) {
        return PMPI_Igather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, mpi_, q);
      }) != Status::kOk)
    return Status::kMpiError;
  std::vector<int> byte_counts(counts.size()), byte_displs(counts.size());
  if (at_root) {
    long total = 0;
    for (int r = 0; r < size_; ++r) {
      displs[size_t(r)] = int(total);
      byte_displs[size_t(r)] = int(total * long(elem_bytes));
      byte_counts[size_t(r)] = counts[size_t(r)] * int(elem_bytes);
      total += counts[size_t(r)];
    }
    all.resize(size_t(total) * elem_bytes);
  }
  return complete_nonblocking([&](MPI_Request* q) {
    return PMPI_Igatherv(mine, n * int(elem_bytes), MPI_BYTE, all.data(), byte_counts.data(),
                         byte_displs.data(), MPI_BYTE, root, mpi_, q);
  });
}

Status Comm::scatterv(const void* all, const std::vector<int>& counts, size_t elem_bytes, int root,
                      std::vector<unsigned char>& mine) const {
  const bool at_root = rank_ == root;
  const auto* p = static_cast<const unsigned char*>(all);
  if (mpi_ == MPI_COMM_NULL) {
    Blobs out(static_cast<size_t>(size_)), in;
    if (at_root) {
      size_t at = 0;
      for (int d = 0; d < size_; ++d) {
        const size_t b = size_t(counts[size_t(d)]) * elem_bytes;
        out[size_t(d)].assign(p + at, p + at + b);
        at += b;
      }
    }
    if (hosted_) {
      CRITPATH_FORWARD_IF_ERROR(exchange(out, in));
    } else {
      in = std::move(out);
    }
    mine = std::move(in[size_t(root)]);
    return Status::kOk;
  }
  int n = 0;
  if (complete_nonblocking([&](MPI_Request* q) {
        return PMPI_Iscatter(counts.data(), 1, MPI_INT, &n, 1, MPI_INT, root, mpi_, q);
      }) != Status::kOk)
    return Status::kMpiError;
  std::vector<int> byte_counts, byte_displs;
  if (at_root) {
    long at = 0;
    for (int c : counts) {
      byte_displs.push_back(int(at));
      byte_counts.push_back(c * int(elem_bytes));
      at += long(c) * long(elem_bytes);
    }
  }
  mine.resize(size_t(n) * elem_bytes);
  static unsigned char dummy[64];
  return complete_nonblocking([&](MPI_Request* q) {
    return PMPI_Iscatterv(all, byte_counts.data(), byte_displs.data(), MPI_BYTE,
                          mine.empty() ? dummy : mine.data(), int(mine.size()), MPI_BYTE, root, mpi_, q);
  });
}

// ---- hosted exchange --------------------------------------------------------------------

Status Comm::exchange(const Blobs& out, Blobs& in) const {
  HostedComm& h = *hosted_;
  in.assign(static_cast<size_t>(size_), {});
  HostedComm::Slot slot;
  slot.blobs_out = &out;
  slot.blobs_in = &in;
  return h.meet(local_, slot, [&] {
    // Per destination process: records [src u32][dst u32][bytes u64][payload].
    auto put = [](std::vector<unsigned char>& b, const void* v, size_t n) {
      const auto* q = static_cast<const unsigned char*>(v);
      b.insert(b.end(), q, q + n);
    };
    std::vector<std::vector<unsigned char>> to(static_cast<size_t>(h.n_procs));
    for (size_t i = 0; i < h.slots.size(); ++i) {
      const auto& blobs = *static_cast<const Blobs*>(h.slots[i].blobs_out);
      const uint32_t src = uint32_t(h.locals[i]);
      for (size_t d = 0; d < blobs.size(); ++d) {
        if (blobs[d].empty()) continue;
        auto& b = to[size_t(h.proc_of[d])];
        const uint32_t dst = uint32_t(d);
        const uint64_t len = blobs[d].size();
        put(b, &src, 4);
        put(b, &dst, 4);
        put(b, &len, 8);
        put(b, blobs[d].data(), blobs[d].size());
      }
    }
    std::vector<unsigned char> got;
    if (h.procs == MPI_COMM_NULL) {
      got = std::move(to[0]);
    } else {
      std::vector<int> scounts(static_cast<size_t>(h.n_procs)), rcounts(scounts.size());
      std::vector<int> sdispls(scounts.size()), rdispls(scounts.size());
      std::vector<unsigned char> sbuf;
      for (size_t q = 0; q < to.size(); ++q) {
        if (sbuf.size() + to[q].size() > size_t(INT32_MAX)) return Status::kInvalidArgument;
        sdispls[q] = int(sbuf.size());
        scounts[q] = int(to[q].size());
        sbuf.insert(sbuf.end(), to[q].begin(), to[q].end());
      }
      const std::vector<int> ones(scounts.size(), 1);
      std::vector<int> at(scounts.size());
      for (size_t r = 0; r < at.size(); ++r) at[r] = int(r);
      if (alltoallv_p2p(scounts.data(), ones.data(), at.data(), rcounts.data(), ones.data(), at.data(),
                        MPI_INT, sizeof(int), h.procs) != Status::kOk)
        return Status::kMpiError;
      const long total = prefix_sums(rcounts, rdispls);
      if (total > INT32_MAX) return Status::kInvalidArgument;
      got.resize(size_t(total));
      static unsigned char dummy[64];
      if (alltoallv_p2p(sbuf.empty() ? dummy : sbuf.data(), scounts.data(), sdispls.data(),
                        got.empty() ? dummy : got.data(), rcounts.data(), rdispls.data(), MPI_BYTE, 1,
                        h.procs) != Status::kOk)
        return Status::kMpiError;
    }
    // Deliver: the slots of this process's members are indexed by position in `locals`.
    size_t at = 0;
    while (got.size() - at >= 16) {
      uint32_t src, dst;
      uint64_t len;
      std::memcpy(&src, got.data() + at, 4);
      std::memcpy(&dst, got.data() + at + 4, 4);
      std::memcpy(&len, got.data() + at + 8, 8);
      at += 16;
      if (got.size() - at < len) return Status::kMpiError;
      const auto li = std::lower_bound(h.locals.begin(), h.locals.end(), int(dst));
      if (li == h.locals.end() || *li != int(dst) || src >= uint32_t(size_)) return Status::kMpiError;
      auto& blobs = *static_cast<Blobs*>(h.slots[size_t(li - h.locals.begin())].blobs_in);
      blobs[src].assign(got.data() + at, got.data() + at + len);
      at += len;
    }
    return Status::kOk;
  });
}

// ---- point to point ---------------------------------------------------------------------
//
// Native: MPI_Isend / MPI_Iprobe on the private duplicate, one tag. Hosted: a member hosted in
// the same process gets the bytes in its mailbox; one hosted elsewhere through the hosting
// processes' communicator, tag kP2pTag0 + destination rank (so each member's thread probes
// for its own), the source rank in a 4-byte header. Past CRITPATH_ANALYSIS_TIMEOUT (watchdog.h)
// nothing is posted and every wait gives up; posted sends still pending are left behind.

namespace {
constexpr int kP2pTag = 30001;  // native
constexpr int kP2pTag0 = 1000;  // hosted: + destination rank (MPI guarantees tags to 32767)

// Waits between polls: spin briefly (a message is often on its way), then yield the core
// (analysis ranks may outnumber cores: MPICH's busy polling would starve the sender).
void backoff(unsigned& polls) {
  if (++polls > 64) std::this_thread::yield();
}
}  // namespace

struct Comm::Posts {
  std::vector<MPI_Request> reqs;
  std::vector<std::vector<unsigned char>> bufs;  // reqs[i]'s bytes (their heap blocks never move)
};

Status Comm::post_mpi(MPI_Comm comm, int dest, int tag, std::vector<unsigned char>&& bytes) const {
  if (!posts_) posts_ = std::make_shared<Posts>();
  Posts& p = *posts_;
  if (p.reqs.size() >= 256) CRITPATH_FORWARD_IF_ERROR(reap(false, 0));
  if (bytes.size() > size_t(INT32_MAX)) return Status::kInvalidArgument;
  p.bufs.push_back(std::move(bytes));
  const std::vector<unsigned char>& b = p.bufs.back();
  MPI_Request r = MPI_REQUEST_NULL;
  if (PMPI_Isend(b.data(), int(b.size()), MPI_BYTE, dest, tag, comm, &r) != MPI_SUCCESS) {
    p.bufs.pop_back();
    return Status::kMpiError;
  }
  p.reqs.push_back(r);
  return Status::kOk;
}

Status Comm::reap(bool all, double timeout_s) const {
  if (!posts_) return Status::kOk;
  Posts& p = *posts_;
  const uint64_t deadline = clock::monotonic_ns() + uint64_t(std::max(0.0, timeout_s) * 1e9);
  unsigned polls = 0;
  for (;;) {
    size_t kept = 0;
    for (size_t i = 0; i < p.reqs.size(); ++i) {
      int done = 0;
      if (PMPI_Test(&p.reqs[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return Status::kMpiError;
      if (done) continue;
      if (kept != i) {
        p.reqs[kept] = p.reqs[i];
        p.bufs[kept] = std::move(p.bufs[i]);
      }
      ++kept;
    }
    p.reqs.resize(kept);
    p.bufs.resize(kept);
    if (!all || kept == 0) return Status::kOk;
    if (clock::monotonic_ns() > deadline || watchdog_expired()) return Status::kMpiError;
    backoff(polls);
  }
}

Status Comm::post(int dest, std::vector<unsigned char>&& bytes) const {
  if (dest < 0 || dest >= size_ || dest == rank_) return Status::kInvalidArgument;
  if (watchdog_expired()) return Status::kMpiError;  // CRITPATH_ANALYSIS_TIMEOUT passed
  if (mpi_ != MPI_COMM_NULL) return post_mpi(mpi_, dest, kP2pTag, std::move(bytes));
  if (!hosted_) return Status::kInvalidArgument;
  HostedComm& h = *hosted_;
  if (h.procs == MPI_COMM_NULL || h.proc_of[size_t(dest)] == h.my_proc) {
    const size_t i = size_t(std::find(h.locals.begin(), h.locals.end(), dest) - h.locals.begin());
    if (i >= h.mail.size()) return Status::kInvalidArgument;
    HostedComm::Mailbox& m = *h.mail[i];
    {
      std::lock_guard<std::mutex> lock(m.mu);
      m.q.emplace_back(rank_, std::move(bytes));
    }
    m.cv.notify_one();
    return Status::kOk;
  }
  std::vector<unsigned char> framed(4 + bytes.size());
  const int32_t src = rank_;
  std::memcpy(framed.data(), &src, 4);
  if (!bytes.empty()) std::memcpy(framed.data() + 4, bytes.data(), bytes.size());
  return post_mpi(h.procs, h.proc_of[size_t(dest)], kP2pTag0 + dest, std::move(framed));
}

Status Comm::receive(int& src, std::vector<unsigned char>& bytes, double timeout_s) const {
  const uint64_t deadline = clock::monotonic_ns() + uint64_t(std::max(0.0, timeout_s) * 1e9);
  MPI_Comm comm = mpi_;
  int tag = kP2pTag;
  HostedComm::Mailbox* box = nullptr;
  if (comm == MPI_COMM_NULL) {
    if (!hosted_ || size_t(local_) >= hosted_->mail.size()) return Status::kInvalidArgument;
    comm = hosted_->procs;
    tag = kP2pTag0 + rank_;
    box = hosted_->mail[size_t(local_)].get();
  }
  unsigned polls = 0;
  for (;;) {
    if (box) {
      std::unique_lock<std::mutex> lock(box->mu);
      if (box->q.empty() && comm == MPI_COMM_NULL)  // no other process: only the box can deliver
        box->cv.wait_for(lock, std::chrono::milliseconds(5), [&] { return !box->q.empty(); });
      if (!box->q.empty()) {
        src = box->q.front().first;
        bytes = std::move(box->q.front().second);
        box->q.pop_front();
        return Status::kOk;
      }
    }
    if (comm != MPI_COMM_NULL) {
      int flag = 0;
      MPI_Status st;
      if (PMPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st) != MPI_SUCCESS) return Status::kMpiError;
      if (flag) {
        int n = 0;
        PMPI_Get_count(&st, MPI_BYTE, &n);
        std::vector<unsigned char> in(size_t(std::max(n, 0)));
        if (PMPI_Recv(in.data(), n, MPI_BYTE, st.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
          return Status::kMpiError;
        if (box) {  // hosted: the sender's rank travels in the header
          if (in.size() < 4) return Status::kMpiError;
          int32_t s = 0;
          std::memcpy(&s, in.data(), 4);
          src = s;
          bytes.assign(in.begin() + 4, in.end());
        } else {
          src = st.MPI_SOURCE;
          bytes = std::move(in);
        }
        return Status::kOk;
      }
    }
    if (clock::monotonic_ns() > deadline || watchdog_expired()) return Status::kMpiError;
    if (posts_ && !posts_->reqs.empty() && (polls & 63) == 0) CRITPATH_FORWARD_IF_ERROR(reap(false, 0));
    backoff(polls);
  }
}

Status Comm::complete_posts(double timeout_s) const { return reap(true, timeout_s); }

}  // namespace critpath::analyzer::engine
