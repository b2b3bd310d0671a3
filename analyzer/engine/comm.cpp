// critpath — analyzer/engine/comm.cpp: the analysis ranks over MPI, natively or hosted.
//
// Hosted mode in one picture (process p hosts locations 4..7 of a 16-location run, as fibers
// on its worker threads, fiber.h):
//
//   fiber(4) --\                      one nonblocking MPI call on HostedComm::procs
//   fiber(5) ---+-- rendezvous --->   (the processes hosting members of this communicator)
//   fiber(6) ---+   (in memory)       started by the last fiber to arrive, for all four, and
//   fiber(7) --/                      polled while it yields; the others are parked
//
// Reductions combine the members of a process first (MPI_Reduce_local), then across
// processes (MPI_Iallreduce). A broadcast moves the root's bytes once (MPI_Ibcast), a gather
// to every rank each member's bytes once per process (MPI_Iallgatherv); all-to-all, gather and
// scatter route only their non-empty pieces, per destination process one buffer, in one
// all-to-all of bytes over the hosting processes.
#include "analyzer/engine/comm.h"
#include "analyzer/engine/fiber.h"
#include "analyzer/engine/host_shm.h"
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
  fiber::WaitQueue waiters;
  std::map<Key, Pending> pending;
};

// Receives the next message with `tag` (MPI_ANY_TAG: any) from any source on `comm` if one
// has come: `got` says whether, `st` holds its envelope and `in` its bytes.
Status receive_waiting(MPI_Comm comm, int tag, bool& got, MPI_Status& st, std::vector<unsigned char>& in) {
  got = false;
  int flag = 0;
  if (PMPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st) != MPI_SUCCESS) return Status::kMpiError;
  if (!flag) return Status::kOk;
  int n = 0;
  PMPI_Get_count(&st, MPI_BYTE, &n);
  in.assign(size_t(std::max(n, 0)), 0);
  // On the segment the sender may be asleep until rung (host_shm::crowded): a rendezvous goes
  // on with its progress, so it is rung as the receive starts and now and then until it is
  // complete, and once more then (its send is complete: it may stop waiting for it).
  const bool rings = host_shm::ring(comm, st.MPI_SOURCE);
  MPI_Request r = MPI_REQUEST_NULL;
  if (PMPI_Irecv(in.data(), n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, &r) != MPI_SUCCESS)
    return Status::kMpiError;
  for (uint64_t polls = 0;;) {
    int done = 0;
    if (PMPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return Status::kMpiError;
    if (done) break;
    if (rings && polls % 16 == 15) host_shm::ring(comm, st.MPI_SOURCE);
    if (polls % 256 == 255 && watchdog_abandoned()) {
      (void)new std::vector<unsigned char>(std::move(in));  // MPI may still write it: left behind
      return Status::kMpiError;
    }
    fiber::relax(polls, 64, false);
  }
  if (rings) host_shm::ring(comm, st.MPI_SOURCE);
  got = true;
  return Status::kOk;
}

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
    size_t in_bytes = 0;
    void* out = nullptr;
    const std::vector<Comm::Piece>* pieces = nullptr;  // route()
    std::vector<Comm::Parcel>* parcels = nullptr;
    Comm* made = nullptr;
  };
  std::mutex mu;
  fiber::WaitQueue waiters;
  uint64_t generation = 0;
  int arrived = 0;
  Status result = Status::kOk;
  std::vector<Slot> slots;
  // Point-to-point messages between members hosted here (Comm::post), one box per member,
  // made when first used (most communicators never carry one: duplicates for collectives).
  struct Mailbox {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::pair<int, std::vector<unsigned char>>> q;  // (source rank, bytes)
    fiber::WaitQueue waiters;  // its member's fiber, parked in receive() (under mu)
    bool parked = false;       // under mu: parked until a message or the poller's role comes
    bool listed = false;       // under poll_mu: in `parked`

    // Files a message from `src` and wakes its member (a parked fiber or a waiting thread).
    void put(int src, std::vector<unsigned char>&& bytes) {
      {
        std::lock_guard<std::mutex> lock(mu);
        q.emplace_back(src, std::move(bytes));
        waiters.notify_all();
      }
      cv.notify_one();
    }
  };
  std::mutex mail_mu;
  std::vector<std::unique_ptr<Mailbox>> mail;
  // Messages from members hosted elsewhere travel on `p2p` (a duplicate of `procs` made with
  // it by hosted() and dup(): its only messages are these, so any tag matches one; the parts
  // of split() and create_group() have none and send on `procs`, each member probing its own
  // tag), tagged with their destination. One member
  // hosted here that waits for one (`poller`, -1: none) probes it for every member and files
  // what comes into their boxes; the others wait parked, listed in `parked` (indices into
  // locals) for the poller to hand its role on when its own message has come.
  MPI_Comm p2p = MPI_COMM_NULL;
  std::mutex poll_mu;
  int poller = -1;
  std::deque<size_t> parked;
  // The box of the i-th member hosted here (i < locals.size()).
  Mailbox& box(size_t i) {
    std::lock_guard<std::mutex> lock(mail_mu);
    if (!mail[i]) mail[i] = std::make_unique<Mailbox>();
    return *mail[i];
  }
  // Every process's members in process order, ascending within a process (`order`), and
  // where each process's run of them begins (`proc_first`, n_procs + 1 entries): the layout
  // of a gather over the processes.
  std::vector<int> order, proc_first;
  void finish() {
    mail.clear();
    mail.resize(locals.size());
    slots.resize(locals.size());
    proc_first.assign(size_t(n_procs) + 1, 0);
    for (int q : proc_of) ++proc_first[size_t(q) + 1];
    for (size_t q = 0; q < size_t(n_procs); ++q) proc_first[q + 1] += proc_first[q];
    order.assign(proc_of.size(), 0);
    std::vector<int> next(proc_first.begin(), proc_first.end() - 1);
    for (size_t r = 0; r < proc_of.size(); ++r) order[size_t(next[size_t(proc_of[r])]++)] = int(r);
  }

  // MPI_Allgatherv over the processes: this process's `bytes` of `mine`, process q's
  // counts[q] bytes, into `all` in process order. Alone: a copy.
  Status allgather_procs(const unsigned char* mine, size_t bytes, const std::vector<uint64_t>& counts,
                         std::vector<unsigned char>& all) const {
    if (procs == MPI_COMM_NULL) {
      all.assign(mine, mine + bytes);
      return Status::kOk;
    }
    std::vector<int> c(counts.size()), d(counts.size());
    uint64_t total = 0;
    for (size_t q = 0; q < counts.size(); ++q) {
      d[q] = int(total);
      c[q] = int(counts[q]);
      total += counts[q];
    }
    if (total > uint64_t(INT32_MAX)) return Status::kInvalidArgument;
    all.resize(size_t(total));
    static unsigned char dummy[64];
    return complete_nonblocking([&](MPI_Request* q) {
      return PMPI_Iallgatherv(bytes ? mine : dummy, int(bytes), MPI_BYTE, all.empty() ? dummy : all.data(),
                              c.data(), d.data(), MPI_BYTE, procs, q);
    });
  }

  // The driver of a gather to every process: every member's slot `in` (`in_bytes` each,
  // or `fixed` bytes each when fixed > 0), in rank order into `full`; at[r] is where rank r's
  // bytes begin, at[size] the end. Bytes moved: what the members contribute, once per
  // process (never a copy per member).
  Status gather_all(size_t fixed, std::vector<unsigned char>& full, std::vector<uint64_t>& at) const {
    const size_t n = proc_of.size();
    std::vector<uint64_t> sizes(n, fixed);  // in `order`
    if (fixed == 0) {
      std::vector<uint64_t> mine;
      for (const Slot& s : slots) mine.push_back(s.in_bytes);
      std::vector<uint64_t> per_proc(static_cast<size_t>(n_procs), 0);
      for (size_t q = 0; q < per_proc.size(); ++q)
        per_proc[q] = 8 * uint64_t(proc_first[q + 1] - proc_first[q]);
      std::vector<unsigned char> got;
      CRITPATH_FORWARD_IF_ERROR(allgather_procs(reinterpret_cast<const unsigned char*>(mine.data()),
                                                mine.size() * 8, per_proc, got));
      if (got.size() != n * 8) return Status::kMpiError;
      std::memcpy(sizes.data(), got.data(), got.size());
    }
    std::vector<unsigned char> block;
    for (const Slot& s : slots) {
      const auto* p = static_cast<const unsigned char*>(s.in);
      block.insert(block.end(), p, p + (fixed ? fixed : s.in_bytes));
    }
    std::vector<uint64_t> per_proc(size_t(n_procs), 0);
    for (size_t q = 0; q < per_proc.size(); ++q)
      for (int k = proc_first[q]; k < proc_first[q + 1]; ++k) per_proc[q] += sizes[size_t(k)];
    std::vector<unsigned char> got;
    CRITPATH_FORWARD_IF_ERROR(allgather_procs(block.data(), block.size(), per_proc, got));
    // From process order to rank order.
    std::vector<uint64_t> src(n + 1, 0);
    for (size_t k = 0; k < n; ++k) src[k + 1] = src[k] + sizes[k];
    if (src[n] != got.size()) return Status::kMpiError;
    std::vector<uint64_t> size_of(n);
    for (size_t k = 0; k < n; ++k) size_of[size_t(order[k])] = sizes[k];
    at.assign(n + 1, 0);
    for (size_t r = 0; r < n; ++r) at[r + 1] = at[r] + size_of[r];
    full.resize(got.size());
    for (size_t k = 0; k < n; ++k)
      if (sizes[k]) std::memcpy(full.data() + at[size_t(order[k])], got.data() + src[k], sizes[k]);
    return Status::kOk;
  }

  // The driver of a routed exchange: every member's pieces (slot `pieces`) to their comm
  // ranks' parcels (slot `parcels`), per destination process one buffer of records
  // [src u32][dst u32][bytes u64][payload] holding only what is sent.
  Status route_all() const {
    std::vector<std::vector<unsigned char>> to(static_cast<size_t>(n_procs));
    auto put = [](std::vector<unsigned char>& b, const void* v, size_t len) {
      const auto* q = static_cast<const unsigned char*>(v);
      b.insert(b.end(), q, q + len);
    };
    for (size_t i = 0; i < slots.size(); ++i) {
      const uint32_t src = uint32_t(locals[i]);
      for (const Comm::Piece& piece : *slots[i].pieces) {
        const uint32_t dst = uint32_t(piece.peer);
        if (proc_of[dst] == my_proc) {  // hosted here: straight into the parcel
          deliver(src, dst, piece.data, piece.bytes);
          continue;
        }
        std::vector<unsigned char>& b = to[size_t(proc_of[dst])];
        const uint64_t len = piece.bytes;
        put(b, &src, 4);
        put(b, &dst, 4);
        put(b, &len, 8);
        put(b, piece.data, piece.bytes);
      }
    }
    if (procs == MPI_COMM_NULL) return Status::kOk;
    std::vector<unsigned char> got;
    CRITPATH_FORWARD_IF_ERROR(swap_procs(to, got));
    size_t at = 0;
    while (got.size() - at >= 16) {
      uint32_t src, dst;
      uint64_t len;
      std::memcpy(&src, got.data() + at, 4);
      std::memcpy(&dst, got.data() + at + 4, 4);
      std::memcpy(&len, got.data() + at + 8, 8);
      at += 16;
      if (got.size() - at < len || src >= proc_of.size() || dst >= proc_of.size() ||
          !deliver(src, dst, got.data() + at, len))
        return Status::kMpiError;
      at += len;
    }
    return at == got.size() ? Status::kOk : Status::kMpiError;
  }

  // Into the parcels of member `dst` (hosted here): `len` bytes from `src`.
  bool deliver(uint32_t src, uint32_t dst, const unsigned char* data, size_t len) const {
    const auto li = std::lower_bound(locals.begin(), locals.end(), int(dst));
    if (li == locals.end() || *li != int(dst)) return false;
    slots[size_t(li - locals.begin())].parcels->push_back(
        {int(src), std::vector<unsigned char>(data, data + len)});
    return true;
  }

  // One all-to-all of byte buffers over the processes (to[q] to process q), into `got`.
  Status swap_procs(std::vector<std::vector<unsigned char>>& to, std::vector<unsigned char>& got) const {
    std::vector<int> scounts(to.size()), rcounts(to.size()), sdispls(to.size()), rdispls(to.size());
    std::vector<unsigned char> sbuf;
    for (size_t q = 0; q < to.size(); ++q) {
      if (sbuf.size() + to[q].size() > size_t(INT32_MAX)) return Status::kInvalidArgument;
      sdispls[q] = int(sbuf.size());
      scounts[q] = int(to[q].size());
      sbuf.insert(sbuf.end(), to[q].begin(), to[q].end());
      std::vector<unsigned char>().swap(to[q]);
    }
    const std::vector<int> ones(to.size(), 1);
    std::vector<int> at(to.size());
    for (size_t r = 0; r < at.size(); ++r) at[r] = int(r);
    if (alltoallv_p2p(scounts.data(), ones.data(), at.data(), rcounts.data(), ones.data(), at.data(), MPI_INT,
                      sizeof(int), procs) != Status::kOk)
      return Status::kMpiError;
    const long total = prefix_sums(rcounts, rdispls);
    if (total > INT32_MAX) return Status::kInvalidArgument;
    got.resize(size_t(total));
    static unsigned char dummy[64];
    return alltoallv_p2p(sbuf.empty() ? dummy : sbuf.data(), scounts.data(), sdispls.data(),
                         got.empty() ? dummy : got.data(), rcounts.data(), rdispls.data(), MPI_BYTE, 1,
                         procs);
  }

  HostedComm() = default;
  HostedComm(const HostedComm&) = delete;
  HostedComm& operator=(const HostedComm&) = delete;
  ~HostedComm() {
    if (p2p != MPI_COMM_NULL) PMPI_Comm_free(&p2p);
    if (procs != MPI_COMM_NULL) PMPI_Comm_free(&procs);
  }

  // Files every message waiting on `p2p` into its destination's box (the poller's work).
  Status drain(int tag0) {
    for (;;) {
      bool got = false;
      MPI_Status st;
      std::vector<unsigned char> in;
      CRITPATH_FORWARD_IF_ERROR(receive_waiting(p2p, MPI_ANY_TAG, got, st, in));
      if (!got) return Status::kOk;
      const auto at = std::lower_bound(locals.begin(), locals.end(), st.MPI_TAG - tag0);
      if (in.size() < 4 || at == locals.end() || *at != st.MPI_TAG - tag0) return Status::kMpiError;
      int32_t src = 0;
      std::memcpy(&src, in.data(), 4);
      box(size_t(at - locals.begin())).put(src, std::vector<unsigned char>(in.begin() + 4, in.end()));
    }
  }

  // The poller `me` is done: its role to the first member still parked, else to nobody.
  void hand_over(int me) {
    for (;;) {
      size_t k = 0;
      {
        std::lock_guard<std::mutex> lock(poll_mu);
        if (poller != me) return;
        if (parked.empty()) {
          poller = -1;
          return;
        }
        k = parked.front();
        parked.pop_front();
        mail[k]->listed = false;
      }
      Mailbox& b = box(k);
      std::lock_guard<std::mutex> lock(b.mu);
      if (!b.parked) continue;  // it took a message since it was listed
      {
        std::lock_guard<std::mutex> role(poll_mu);
        poller = int(k);
      }
      b.parked = false;
      b.waiters.notify_all();
      return;
    }
  }

  // Blocks until every member hosted here called it; the last one runs `drive` (which reads
  // and writes every slot) and all return its status.
  Status meet(int local, const Slot& slot, const std::function<Status()>& drive) {
    std::unique_lock<std::mutex> lock(mu);
    slots[size_t(local)] = slot;
    if (++arrived < int(locals.size())) {
      const uint64_t g = generation;
      waiters.wait(lock, [&] { return generation != g; });
      return result;
    }
    lock.unlock();
    const Status s = drive();
    lock.lock();
    result = s;
    arrived = 0;
    ++generation;
    waiters.notify_all();
    return s;
  }

  // A new state for the comm ranks of this one listed in `members`; `made` is the MPI
  // communicator over the processes hosting them (null when only this one does), `p2p` its
  // duplicate for point-to-point messages or null (they then share `made`); the new state
  // frees both.
  std::shared_ptr<HostedComm> derive(const std::vector<int>& members, MPI_Comm made, MPI_Comm p2p) const {
    auto h = std::make_shared<HostedComm>();
    h->registry = registry;
    h->procs = made;
    h->p2p = p2p;
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
    h->finish();
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
    if (PMPI_Comm_dup(procs, &h->p2p) != MPI_SUCCESS) return Status::kMpiError;
    PMPI_Comm_set_errhandler(h->p2p, MPI_ERRORS_RETURN);
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
  h->finish();
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
    traffic_ = std::move(o.traffic_);
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
//
// Each one round of the rank's traffic, which the new communicator shares (comm.h).

Status Comm::inherit(Status made, Comm& out) const {
  note(0, 0);
  if (made == Status::kOk) out.traffic_ = share_traffic();
  return made;
}

Status Comm::dup(Comm& out) const { return inherit(dup_made(out), out); }

Status Comm::split(int color, Comm& out) const { return inherit(split_made(color, out), out); }

Status Comm::create_group(const std::vector<int>& members, int tag, Comm& out) const {
  return inherit(create_group_made(members, tag, out), out);
}

Status Comm::dup_made(Comm& out) const {
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
    int rc = MPI_SUCCESS;
    MPI_Comm p2p = MPI_COMM_NULL;
    if (h.procs != MPI_COMM_NULL)
      fiber::call_blocking([&] {
        rc = PMPI_Comm_dup(h.procs, &made);
        if (rc == MPI_SUCCESS) rc = PMPI_Comm_dup(made, &p2p);
      });
    if (rc != MPI_SUCCESS) {
      if (made != MPI_COMM_NULL) PMPI_Comm_free(&made);
      return Status::kMpiError;
    }
    if (p2p != MPI_COMM_NULL) PMPI_Comm_set_errhandler(p2p, MPI_ERRORS_RETURN);
    std::vector<int> all(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) all[size_t(r)] = r;
    auto d = h.derive(all, made, p2p);
    for (size_t i = 0; i < h.locals.size(); ++i) *h.slots[i].made = member(d, h.locals[i], size_);
    return Status::kOk;
  });
}

Status Comm::split_made(int color, Comm& out) const {
  if (mpi_ != MPI_COMM_NULL) {
    MPI_Comm part = MPI_COMM_NULL;
    const int rc = PMPI_Comm_split(mpi_, color, rank_, &part);
    return adopt(rc, part, out);
  }
  if (!hosted_) {
    out = Comm();
    return Status::kOk;
  }
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.in = &color;
  slot.made = &out;
  return h.meet(local_, slot, [&] {
    std::vector<unsigned char> full;
    std::vector<uint64_t> at;
    CRITPATH_FORWARD_IF_ERROR(h.gather_all(sizeof(int), full, at));
    std::vector<int> colors(static_cast<size_t>(size_));
    std::memcpy(colors.data(), full.data(), full.size());
    // The ranks by (colour, rank); the parts' creations (collective over their processes) go
    // in ascending colour everywhere, so they never deadlock, each with its colour's index
    // among all colours as its tag.
    std::vector<int> by(static_cast<size_t>(size_));
    for (int r = 0; r < size_; ++r) by[size_t(r)] = r;
    std::stable_sort(by.begin(), by.end(),
                     [&](int a, int b) { return colors[size_t(a)] < colors[size_t(b)]; });
    std::vector<int> mine;
    for (int r : h.locals) mine.push_back(colors[size_t(r)]);
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    size_t at_by = 0, index = 0;  // the first rank of the colour, the colour's index
    for (int c : mine) {
      while (colors[size_t(by[at_by])] != c) {
        const int skipped = colors[size_t(by[at_by])];
        while (colors[size_t(by[at_by])] == skipped) ++at_by;
        ++index;
      }
      size_t end = at_by;
      while (end < by.size() && colors[size_t(by[end])] == c) ++end;
      const std::vector<int> members(by.begin() + long(at_by), by.begin() + long(end));
      CRITPATH_FORWARD_IF_ERROR(make_part(h, members, int(index % 32000)));
      at_by = end;
      ++index;
    }
    return Status::kOk;
  });
}

// split()'s driver: the part of `members` (ascending), to the slots of its members hosted here.
Status Comm::make_part(HostedComm& h, const std::vector<int>& members, int tag) {
  MPI_Comm made = MPI_COMM_NULL;
  if (h.spans_processes(members)) {
    MPI_Group g;
    CRITPATH_FORWARD_IF_ERROR(h.proc_group(members, g));
    int rc = MPI_SUCCESS;
    fiber::call_blocking([&] { rc = PMPI_Comm_create_group(h.procs, g, tag, &made); });
    PMPI_Group_free(&g);
    if (rc != MPI_SUCCESS) return Status::kMpiError;
    PMPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
  }
  auto d = h.derive(members, made, MPI_COMM_NULL);
  for (size_t i = 0; i < h.locals.size(); ++i) {
    const auto m = std::lower_bound(members.begin(), members.end(), h.locals[i]);
    if (m == members.end() || *m != h.locals[i]) continue;
    *h.slots[i].made = member(d, int(m - members.begin()), int(members.size()));
  }
  return Status::kOk;
}

Status Comm::create_group_made(const std::vector<int>& members, int tag, Comm& out) const {
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
  reg.waiters.wait(lock, [&] {
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
        int rc = MPI_SUCCESS;
        fiber::call_blocking([&] { rc = PMPI_Comm_create_group(h.procs, g, tag, &made); });
        PMPI_Group_free(&g);
        if (rc != MPI_SUCCESS) s = Status::kMpiError;
        else PMPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
      }
    }
    lock.lock();
    p.status = s;
    if (s == Status::kOk) p.made = h.derive(members, made, MPI_COMM_NULL);
    p.done = true;
    reg.waiters.notify_all();
  } else {
    reg.waiters.wait(lock, [&] { return p.done; });
  }
  const Status s = p.status;
  if (s == Status::kOk) out = member(p.made, int(me - members.begin()), int(members.size()));
  if (++p.collected == expected) {
    reg.pending.erase(key);
    reg.waiters.notify_all();
  }
  return s;
}

// ---- collectives ------------------------------------------------------------------------

Status Comm::barrier() const {
  note(0, 0);
  Status shared = Status::kOk;
  if (mpi_ != MPI_COMM_NULL && !borrowed_ && host_shm::barrier(mpi_, shared)) return shared;
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
  const size_t bytes = size_t(n) * extent_of(type);
  note(bytes, bytes);
  if (mpi_ != MPI_COMM_NULL && borrowed_)
    return PMPI_Allreduce(MPI_IN_PLACE, inout, n, type, op, mpi_) == MPI_SUCCESS ? Status::kOk
                                                                                 : Status::kMpiError;
  Status shared = Status::kOk;
  if (mpi_ != MPI_COMM_NULL && host_shm::allreduce(mpi_, inout, inout, n, type, op, -1, shared))
    return shared;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking(
        [&](MPI_Request* q) { return PMPI_Iallreduce(MPI_IN_PLACE, inout, n, type, op, mpi_, q); });
  if (!hosted_) return Status::kOk;
  return allreduce_hosted(inout, inout, n, type, op);
}

Status Comm::allreduce_hosted(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op) const {
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.in = in;
  slot.out = out;
  return h.meet(local_, slot, [&] {
    const size_t bytes = size_t(n) * extent_of(type);
    // Combine this process's members in rank order, then the processes.
    std::vector<unsigned char> acc(bytes), tmp(bytes);
    std::memcpy(acc.data(), h.slots.back().in, bytes);
    for (size_t i = h.slots.size() - 1; i-- > 0;) {
      std::memcpy(tmp.data(), h.slots[i].in, bytes);
      if (PMPI_Reduce_local(acc.data(), tmp.data(), n, type, op) != MPI_SUCCESS) return Status::kMpiError;
      acc.swap(tmp);
    }
    if (h.procs != MPI_COMM_NULL && complete_nonblocking([&](MPI_Request* q) {
                                      return PMPI_Iallreduce(MPI_IN_PLACE, acc.data(), n, type, op, h.procs,
                                                             q);
                                    }) != Status::kOk)
      return Status::kMpiError;
    for (const HostedComm::Slot& s : h.slots)
      if (s.out) std::memcpy(s.out, acc.data(), bytes);
    return Status::kOk;
  });
}

Status Comm::reduce(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, int root) const {
  if (n == 0) return Status::kOk;
  const size_t bytes = size_t(n) * extent_of(type);
  note(bytes, rank_ == root ? bytes : 0);
  Status shared = Status::kOk;
  if (mpi_ != MPI_COMM_NULL && !borrowed_ && host_shm::allreduce(mpi_, in, out, n, type, op, root, shared))
    return shared;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking(
        [&](MPI_Request* q) { return PMPI_Ireduce(in, out, n, type, op, root, mpi_, q); });
  if (!hosted_) {
    std::memmove(out, in, bytes);
    return Status::kOk;
  }
  // The members' inputs read in place, the result written only to the root's (thousands of
  // members per process at scale: no copy of each one's input, nor of the result, to fault in).
  return allreduce_hosted(in, rank_ == root ? out : nullptr, n, type, op);
}

Status Comm::scan(const void* in, void* out, int n, MPI_Datatype type, MPI_Op op) const {
  if (n == 0) return Status::kOk;
  const size_t bytes = size_t(n) * extent_of(type);
  note(bytes, bytes);
  Status shared = Status::kOk;
  if (mpi_ != MPI_COMM_NULL && !borrowed_ && host_shm::scan(mpi_, in, out, n, type, op, shared))
    return shared;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking([&](MPI_Request* q) { return PMPI_Iscan(in, out, n, type, op, mpi_, q); });
  if (!hosted_) {
    std::memmove(out, in, bytes);
    return Status::kOk;
  }
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.in = in;
  slot.out = out;
  return h.meet(local_, slot, [&] {
    // Every member's input once per process; acc = x0 op x1 op ... op x_r, folded in rank
    // order, handed to each member hosted here on the way.
    std::vector<unsigned char> full;
    std::vector<uint64_t> at;
    CRITPATH_FORWARD_IF_ERROR(h.gather_all(bytes, full, at));
    std::vector<unsigned char> acc(full.begin(), full.begin() + long(bytes)), next(bytes);
    size_t i = 0;
    for (int r = 0; r < size_ && i < h.locals.size(); ++r) {
      if (r > 0) {
        std::memcpy(next.data(), full.data() + at[size_t(r)], bytes);
        if (PMPI_Reduce_local(acc.data(), next.data(), n, type, op) != MPI_SUCCESS) return Status::kMpiError;
        acc.swap(next);
      }
      if (h.locals[i] == r) std::memcpy(h.slots[i++].out, acc.data(), bytes);
    }
    return Status::kOk;
  });
}

Status Comm::bcast(void* buf, size_t bytes, int root) const {
  if (bytes == 0) return Status::kOk;
  note(rank_ == root ? bytes : 0, rank_ == root ? 0 : bytes);
  if (mpi_ != MPI_COMM_NULL && borrowed_)
    return PMPI_Bcast(buf, int(bytes), MPI_BYTE, root, mpi_) == MPI_SUCCESS ? Status::kOk : Status::kMpiError;
  Status shared = Status::kOk;
  if (mpi_ != MPI_COMM_NULL && host_shm::bcast(mpi_, buf, bytes, root, shared)) return shared;
  if (mpi_ != MPI_COMM_NULL)
    return complete_nonblocking(
        [&](MPI_Request* q) { return PMPI_Ibcast(buf, int(bytes), MPI_BYTE, root, mpi_, q); });
  if (!hosted_) return Status::kOk;
  if (bytes > size_t(INT32_MAX)) return Status::kInvalidArgument;
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.out = buf;
  return h.meet(local_, slot, [&] {
    // The root's bytes once to every process, then to each member hosted here.
    std::vector<unsigned char> b(bytes);
    const auto li = std::lower_bound(h.locals.begin(), h.locals.end(), root);
    if (li != h.locals.end() && *li == root)
      std::memcpy(b.data(), h.slots[size_t(li - h.locals.begin())].out, bytes);
    if (h.procs != MPI_COMM_NULL && complete_nonblocking([&](MPI_Request* q) {
                                      return PMPI_Ibcast(b.data(), int(bytes), MPI_BYTE,
                                                         h.proc_of[size_t(root)], h.procs, q);
                                    }) != Status::kOk)
      return Status::kMpiError;
    for (const HostedComm::Slot& s : h.slots) std::memcpy(s.out, b.data(), bytes);
    return Status::kOk;
  });
}

Status Comm::allgather(const void* mine, size_t bytes, void* all) const {
  note(bytes, bytes * size_t(size_));
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
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.in = mine;
  slot.in_bytes = bytes;  // none: gather_all's variable form, which moves nothing
  slot.out = all;
  return h.meet(local_, slot, [&] {
    std::vector<unsigned char> full;
    std::vector<uint64_t> at;
    CRITPATH_FORWARD_IF_ERROR(h.gather_all(bytes, full, at));
    for (const HostedComm::Slot& s : h.slots) std::memcpy(s.out, full.data(), full.size());
    return Status::kOk;
  });
}

Status Comm::allgatherv(const void* mine, int n, size_t elem_bytes, std::vector<unsigned char>& all) const {
  const auto* p = static_cast<const unsigned char*>(mine);
  all.clear();
  if (mpi_ == MPI_COMM_NULL && !hosted_) {
    note(size_t(n) * elem_bytes, size_t(n) * elem_bytes);
    all.assign(p, p + size_t(n) * elem_bytes);
    return Status::kOk;
  }
  if (mpi_ == MPI_COMM_NULL) {
    HostedComm& h = *hosted_;
    HostedComm::Slot slot;
    slot.in = mine;
    slot.in_bytes = size_t(n) * elem_bytes;
    slot.out = &all;
    const Status s = h.meet(local_, slot, [&] {
      std::vector<unsigned char> full;
      std::vector<uint64_t> at;
      CRITPATH_FORWARD_IF_ERROR(h.gather_all(0, full, at));
      for (const HostedComm::Slot& t : h.slots) *static_cast<std::vector<unsigned char>*>(t.out) = full;
      return Status::kOk;
    });
    note(size_t(n) * elem_bytes, all.size());
    return s;
  }
  std::vector<int> counts(static_cast<size_t>(size_), 0), displs;
  const int bytes = n * int(elem_bytes);
  std::vector<size_t> sizes;
  Status shared = Status::kOk;
  if (!borrowed_ && host_shm::gather(mpi_, mine, size_t(bytes), -1, all, sizes, shared)) {
    note(size_t(bytes), all.size());
    return shared;
  }
  if (complete_nonblocking([&](MPI_Request* q) {
        return PMPI_Iallgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, mpi_, q);
      }) != Status::kOk)
    return Status::kMpiError;
  const long total = prefix_sums(counts, displs);
  note(size_t(bytes), size_t(std::max(0L, total)));
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
  // Hosted, or natively over the host's segment (one operation, the counts with the blocks):
  // the non-empty blocks as pieces.
  if (mpi_ == MPI_COMM_NULL || !borrowed_) {
    std::vector<Piece> out;
    size_t at = 0;
    for (int d = 0; d < size_; ++d) {
      const size_t b = size_t(send_counts[size_t(d)]) * elem_bytes;
      if (b) out.push_back({d, p + at, b});
      at += b;
    }
    std::vector<Parcel> in;
    Status s = Status::kOk;
    const bool routed = mpi_ == MPI_COMM_NULL ? (s = route(out, in), true)
                                              : host_shm::exchange(mpi_, out, in, s);
    if (routed) {
      CRITPATH_FORWARD_IF_ERROR(s);
      recv.clear();
      recv_counts.assign(static_cast<size_t>(size_), 0);
      for (Parcel& parcel : in) {
        recv.insert(recv.end(), parcel.bytes.begin(), parcel.bytes.end());
        recv_counts[size_t(parcel.peer)] += int(parcel.bytes.size() / elem_bytes);
      }
      note(at, recv.size());
      return Status::kOk;
    }
  }
  Status shared = Status::kOk;
  if (!recv_counts_known) {
    recv_counts.assign(static_cast<size_t>(size_), 0);
    if (!borrowed_ && host_shm::alltoall_int(mpi_, send_counts.data(), recv_counts.data(), shared)) {
      if (shared != Status::kOk) return shared;
    } else {
      const std::vector<int> ones(static_cast<size_t>(size_), 1);
      std::vector<int> at(static_cast<size_t>(size_));
      for (int r = 0; r < size_; ++r) at[size_t(r)] = r;
      if (alltoallv_p2p(send_counts.data(), ones.data(), at.data(), recv_counts.data(), ones.data(),
                        at.data(), MPI_INT, sizeof(int), mpi_) != Status::kOk)
        return Status::kMpiError;
    }
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
  note(size_t(s) * elem_bytes, size_t(r) * elem_bytes);
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

Status Comm::exchange(const std::vector<Piece>& out, std::vector<Parcel>& in,
                      const std::vector<Piece>* expect) const {
  std::vector<Piece> pieces;
  pieces.reserve(out.size());
  uint64_t sent = 0;
  for (const Piece& piece : out) {
    if (piece.peer < 0 || piece.peer >= size_) return Status::kInvalidArgument;
    if (!piece.bytes) continue;
    pieces.push_back(piece);
    sent += piece.bytes;
  }
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.peer < b.peer; });
  for (size_t i = 1; i < pieces.size(); ++i)
    if (pieces[i].peer == pieces[i - 1].peer) return Status::kInvalidArgument;
  if (expect)
    for (const Piece& e : *expect)
      if (e.peer < 0 || e.peer >= size_) return Status::kInvalidArgument;
  if (mpi_ != MPI_COMM_NULL) return exchange_native(pieces, in, expect);
  CRITPATH_FORWARD_IF_ERROR(route(pieces, in));
  uint64_t received = 0;
  for (const Parcel& parcel : in) received += parcel.bytes.size();
  note(sent, received);
  return Status::kOk;
}

Status Comm::exchange_native(const std::vector<Piece>& pieces, std::vector<Parcel>& in,
                             const std::vector<Piece>* expect) const {
  std::vector<int> counts(static_cast<size_t>(size_), 0);
  // Pieces that lie one after the other in memory (one buffer cut by destination, or a single
  // piece) go out from where they are; others are copied into one buffer first.
  bool contiguous = true;
  size_t total = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].bytes > size_t(INT32_MAX)) return Status::kInvalidArgument;
    counts[size_t(pieces[i].peer)] = int(pieces[i].bytes);
    contiguous &= i == 0 || pieces[i].data == pieces[i - 1].data + pieces[i - 1].bytes;
    total += pieces[i].bytes;
  }
  std::vector<unsigned char> send;
  if (!contiguous) {
    send.reserve(total);
    for (const Piece& piece : pieces) send.insert(send.end(), piece.data, piece.data + piece.bytes);
  }
  const unsigned char* from = contiguous ? (pieces.empty() ? nullptr : pieces[0].data) : send.data();
  std::vector<unsigned char> recv;
  std::vector<int> recv_counts;
  if (expect) {
    recv_counts.assign(static_cast<size_t>(size_), 0);
    for (const Piece& e : *expect) {
      if (e.bytes > size_t(INT32_MAX)) return Status::kInvalidArgument;
      recv_counts[size_t(e.peer)] = int(e.bytes);
    }
  }
  CRITPATH_FORWARD_IF_ERROR(alltoallv(from, counts, 1, recv, recv_counts, expect != nullptr));
  // Every source's bytes copied into its parcel but the first source's, which lie at the start
  // of `recv`: when they are at least half of it, that parcel takes `recv` itself, cut to them
  // (no copy of a single source's bytes; the capacity it keeps is at most twice its size).
  in.clear();
  size_t at = 0, first = SIZE_MAX;
  for (size_t s = 0; s < recv_counts.size(); ++s) {
    const size_t n = size_t(recv_counts[s]);
    if (!n) continue;
    if (at == 0 && 2 * n >= recv.size()) {
      first = in.size();
      in.push_back({int(s), {}});
    } else {
      in.push_back(
          {int(s), std::vector<unsigned char>(recv.begin() + long(at), recv.begin() + long(at + n))});
    }
    at += n;
  }
  if (first != SIZE_MAX) {
    recv.resize(size_t(recv_counts[size_t(in[first].peer)]));
    in[first].bytes = std::move(recv);
  }
  return Status::kOk;
}

Status Comm::gatherv(const void* mine, int n, size_t elem_bytes, int root, std::vector<unsigned char>& all,
                     std::vector<int>& counts, std::vector<int>& displs) const {
  const bool at_root = rank_ == root;
  counts.assign(at_root ? size_t(size_) : 0, 0);
  displs.assign(counts.size(), 0);
  all.clear();
  const auto* p = static_cast<const unsigned char*>(mine);
  const size_t bytes = size_t(n) * elem_bytes;
  if (mpi_ == MPI_COMM_NULL) {
    std::vector<Piece> out;
    if (bytes) out.push_back({root, p, bytes});
    std::vector<Parcel> in;
    CRITPATH_FORWARD_IF_ERROR(route(out, in));
    note(bytes, 0);
    if (!at_root) return Status::kOk;
    for (Parcel& parcel : in) {
      counts[size_t(parcel.peer)] = int(parcel.bytes.size() / elem_bytes);
      all.insert(all.end(), parcel.bytes.begin(), parcel.bytes.end());
    }
    for (int s = 1; s < size_; ++s) displs[size_t(s)] = displs[size_t(s - 1)] + counts[size_t(s - 1)];
    note(0, all.size(), false);
    return Status::kOk;
  }
  std::vector<size_t> sizes;
  Status shared = Status::kOk;
  if (!borrowed_ && host_shm::gather(mpi_, mine, bytes, root, all, sizes, shared)) {
    for (size_t r = 0; at_root && r < sizes.size(); ++r) {
      counts[r] = int(sizes[r] / elem_bytes);
      if (r > 0) displs[r] = displs[r - 1] + counts[r - 1];
    }
    note(bytes, all.size());
    return shared;
  }
  if (complete_nonblocking([&](MPI_Request* q) {
        return PMPI_Igather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, mpi_, q);
      }) != Status::kOk)
    return Status::kMpiError;
  std::vector<int> byte_counts(counts.size()), byte_displs(counts.size());
  long total = 0;
  if (at_root) {
    for (int r = 0; r < size_; ++r) {
      displs[size_t(r)] = int(total);
      byte_displs[size_t(r)] = int(total * long(elem_bytes));
      byte_counts[size_t(r)] = counts[size_t(r)] * int(elem_bytes);
      total += counts[size_t(r)];
    }
    all.resize(size_t(total) * elem_bytes);
  }
  note(bytes, size_t(total) * elem_bytes);
  return complete_nonblocking([&](MPI_Request* q) {
    return PMPI_Igatherv(mine, n * int(elem_bytes), MPI_BYTE, all.data(), byte_counts.data(),
                         byte_displs.data(), MPI_BYTE, root, mpi_, q);
  });
}

Status Comm::scatterv(const void* all, const std::vector<int>& counts, size_t elem_bytes, int root,
                      std::vector<unsigned char>& mine) const {
  const bool at_root = rank_ == root;
  const auto* p = static_cast<const unsigned char*>(all);
  size_t sent = 0;
  if (at_root)
    for (int c : counts) sent += size_t(c) * elem_bytes;
  if (mpi_ == MPI_COMM_NULL) {
    std::vector<Piece> out;
    if (at_root) {
      size_t at = 0;
      for (int d = 0; d < size_; ++d) {
        const size_t b = size_t(counts[size_t(d)]) * elem_bytes;
        if (b) out.push_back({d, p + at, b});
        at += b;
      }
    }
    std::vector<Parcel> in;
    CRITPATH_FORWARD_IF_ERROR(route(out, in));
    mine.clear();
    for (Parcel& parcel : in)
      if (parcel.peer == root) mine = std::move(parcel.bytes);
    note(sent, mine.size());
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
  note(sent, mine.size());
  static unsigned char dummy[64];
  return complete_nonblocking([&](MPI_Request* q) {
    return PMPI_Iscatterv(all, byte_counts.data(), byte_displs.data(), MPI_BYTE,
                          mine.empty() ? dummy : mine.data(), int(mine.size()), MPI_BYTE, root, mpi_, q);
  });
}

// ---- hosted exchange --------------------------------------------------------------------

Status Comm::route(const std::vector<Piece>& out, std::vector<Parcel>& in) const {
  in.clear();
  if (!hosted_) {  // alone: everything is for this rank
    for (const Piece& piece : out)
      in.push_back({0, std::vector<unsigned char>(piece.data, piece.data + piece.bytes)});
    return Status::kOk;
  }
  HostedComm& h = *hosted_;
  HostedComm::Slot slot;
  slot.pieces = &out;
  slot.parcels = &in;
  CRITPATH_FORWARD_IF_ERROR(h.meet(local_, slot, [&] { return h.route_all(); }));
  std::stable_sort(in.begin(), in.end(), [](const Parcel& a, const Parcel& b) { return a.peer < b.peer; });
  return Status::kOk;
}

// ---- point to point ---------------------------------------------------------------------
//
// Native: MPI_Isend / MPI_Iprobe on the private duplicate, one tag. Hosted: a member hosted in
// the same process gets the bytes in its mailbox; one hosted elsewhere through the hosting
// processes' point-to-point duplicate (HostedComm::p2p; without one, their communicator), tag
// kP2pTag0 + destination rank, the source rank in a 4-byte header: on fibers with a p2p
// duplicate one waiting member per process probes for all (receive_polled), otherwise each
// member probes for its own tag. Past CRITPATH_ANALYSIS_TIMEOUT (watchdog.h)
// nothing is posted and every wait gives up; posted sends still pending are left behind.

namespace {
constexpr int kP2pTag = 30001;  // native
constexpr int kP2pTag0 = 1000;  // hosted: + destination rank (MPI guarantees tags to 32767)

// Waits between polls: spin briefly (a message is often on its way), then yield the core
// (analysis ranks may outnumber cores: MPICH's busy polling would starve the sender); never
// sleep (fiber::relax: a replay's messages form chains). On a fiber: let the worker's other
// fibers run (fiber.h).
void backoff(uint64_t& polls) { fiber::relax(polls, 64, false); }
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
  host_shm::count_posts(1);
  // A rank of the segment: its waits there go on with these posts (a rendezvous needs this
  // rank's progress), and the destination's wait wakes.
  if (host_shm::ring(comm, dest))
    host_shm::watch_posts([w = std::weak_ptr<Posts>(posts_)] {
      if (const std::shared_ptr<Posts> q = w.lock()) {
        const Status swept = sweep(*q);  // a failure shows at the next reap
        (void)swept;
      }
    });
  return Status::kOk;
}

Status Comm::sweep(Posts& p) {
  size_t kept = 0;
  Status s = Status::kOk;
  for (size_t i = 0; i < p.reqs.size(); ++i) {
    int done = 0;
    if (s == Status::kOk && PMPI_Test(&p.reqs[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      s = Status::kMpiError;
    if (done) continue;
    if (kept != i) {
      p.reqs[kept] = p.reqs[i];
      p.bufs[kept] = std::move(p.bufs[i]);
    }
    ++kept;
  }
  host_shm::count_posts(long(kept) - long(p.reqs.size()));
  p.reqs.resize(kept);
  p.bufs.resize(kept);
  return s;
}

Status Comm::reap(bool all, double timeout_s) const {
  if (!posts_) return Status::kOk;
  Posts& p = *posts_;
  const uint64_t deadline = clock::monotonic_ns() + uint64_t(std::max(0.0, timeout_s) * 1e9);
  uint64_t polls = 0;
  fiber::PollClock waiting;  // from the first poll that finds nothing
  // Crowded on the segment: asleep between tests until a receiver rings (receive_waiting).
  const bool sleeps = all && host_shm::crowded() && mpi_ != MPI_COMM_NULL;
  for (;;) {
    const uint32_t rung = host_shm::rings();  // before the test: a ring after it wakes the sleep
    CRITPATH_FORWARD_IF_ERROR(sweep(p));
    if (!all || p.reqs.empty()) return Status::kOk;
    if (clock::monotonic_ns() > deadline || watchdog_expired()) return Status::kMpiError;
    waiting.begin();
    if (!sleeps || !host_shm::sleep_until_rung(mpi_, rung)) backoff(polls);
  }
}

// The segment's inboxes (host_shm::carries): `look` until it says done (kMpiError past
// `deadline`), sleeping until rung between looks when crowded, else spinning and yielding.
template <typename Look>
Status Comm::wait_inbox(uint64_t deadline, Look look) const {
  uint64_t polls = 0;
  fiber::PollClock waiting;  // from the first look that finds nothing
  for (;;) {
    const uint32_t rung = host_shm::rings();  // before the look: a ring after it wakes the sleep
    if (look()) return Status::kOk;
    if (clock::monotonic_ns() > deadline || watchdog_expired()) return Status::kMpiError;
    waiting.begin();
    if (!host_shm::crowded() || !host_shm::sleep_until_rung(mpi_, rung)) backoff(polls);
  }
}

Status Comm::post(int dest, std::vector<unsigned char>&& bytes) const {
  if (dest < 0 || dest >= size_ || dest == rank_) return Status::kInvalidArgument;
  note(bytes.size(), 0, false);
  if (watchdog_expired()) return Status::kMpiError;  // CRITPATH_ANALYSIS_TIMEOUT passed
  if (host_shm::carries(mpi_)) {
    host_shm::send(dest, std::move(bytes));
    return Status::kOk;
  }
  if (mpi_ != MPI_COMM_NULL) return post_mpi(mpi_, dest, kP2pTag, std::move(bytes));
  if (!hosted_) return Status::kInvalidArgument;
  HostedComm& h = *hosted_;
  if (h.procs == MPI_COMM_NULL || h.proc_of[size_t(dest)] == h.my_proc) {
    const auto at = std::lower_bound(h.locals.begin(), h.locals.end(), dest);  // ascending
    if (at == h.locals.end() || *at != dest) return Status::kInvalidArgument;
    HostedComm::Mailbox& m = h.box(size_t(at - h.locals.begin()));
    m.put(rank_, std::move(bytes));
    return Status::kOk;
  }
  std::vector<unsigned char> framed(4 + bytes.size());
  const int32_t src = rank_;
  std::memcpy(framed.data(), &src, 4);
  if (!bytes.empty()) std::memcpy(framed.data() + 4, bytes.data(), bytes.size());
  return post_mpi(h.p2p != MPI_COMM_NULL ? h.p2p : h.procs, h.proc_of[size_t(dest)], kP2pTag0 + dest,
                  std::move(framed));
}

Status Comm::receive(int& src, std::vector<unsigned char>& bytes, double timeout_s) const {
  const uint64_t deadline = clock::monotonic_ns() + uint64_t(std::max(0.0, timeout_s) * 1e9);
  if (host_shm::carries(mpi_)) {
    // A rank waiting for a message pushes its own queued ones at every look (a receiver of
    // them may be what it waits for).
    return wait_inbox(deadline, [&] {
      if (host_shm::take(src, bytes)) {
        note(0, bytes.size(), false);
        return true;
      }
      host_shm::push();
      return false;
    });
  }
  MPI_Comm comm = mpi_;
  int tag = kP2pTag;
  HostedComm::Mailbox* box = nullptr;
  if (comm == MPI_COMM_NULL) {
    if (!hosted_ || size_t(local_) >= hosted_->mail.size()) return Status::kInvalidArgument;
    if (hosted_->p2p != MPI_COMM_NULL && fiber::current()) return receive_polled(src, bytes, deadline);
    comm = hosted_->p2p != MPI_COMM_NULL ? hosted_->p2p : hosted_->procs;
    tag = kP2pTag0 + rank_;
    box = &hosted_->box(size_t(local_));
  }
  uint64_t polls = 0;
  uint32_t last_rung = 0;
  bool probed = false;
  fiber::PollClock waiting;  // from the first poll that finds nothing
  for (;;) {
    const uint32_t rung = host_shm::rings();  // before the probe: a ring after it wakes the sleep below
    if (box) {
      std::unique_lock<std::mutex> lock(box->mu);
      // No other process: only the box can deliver (a fiber polls instead: backoff() below).
      if (box->q.empty() && comm == MPI_COMM_NULL && !fiber::current())
        box->cv.wait_for(lock, std::chrono::milliseconds(5), [&] { return !box->q.empty(); });
      if (!box->q.empty()) {
        src = box->q.front().first;
        bytes = std::move(box->q.front().second);
        box->q.pop_front();
        note(0, bytes.size(), false);
        return Status::kOk;
      }
    }
    if (comm != MPI_COMM_NULL) {
      bool got = false;
      MPI_Status st;
      std::vector<unsigned char> in;
      CRITPATH_FORWARD_IF_ERROR(receive_waiting(comm, tag, got, st, in));
      if (got) {
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
        note(0, bytes.size(), false);
        return Status::kOk;
      }
    }
    if (clock::monotonic_ns() > deadline || watchdog_expired()) return Status::kMpiError;
    // Its own posts under way may need this rank's progress: tested now and then, or at every
    // poll when it sleeps between polls.
    const bool crowded = !box && host_shm::crowded();
    if (posts_ && !posts_->reqs.empty() && (crowded || (polls & 63) == 0))
      CRITPATH_FORWARD_IF_ERROR(reap(false, 0));
    waiting.begin();
    // On the segment: sleep until a sender rings (or, crowded, the receiver of a post under
    // way: receive_waiting), once two probes since the last ring found nothing (a probe's own
    // progress may bring in a message that only the next probe sees).
    const bool again = probed && rung == last_rung;
    probed = true;
    last_rung = rung;
    if (box || (!crowded && posts_ && !posts_->reqs.empty()) || !again ||
        !host_shm::sleep_until_rung(comm, rung))
      backoff(polls);
  }
}

// Hosted on a fiber, members hosted elsewhere: waits parked unless no other member polls
// (HostedComm::poller); the poller files every member's messages and yields between probes.
Status Comm::receive_polled(int& src, std::vector<unsigned char>& bytes, uint64_t deadline) const {
  HostedComm& h = *hosted_;
  const int me = local_;
  HostedComm::Mailbox& box = h.box(size_t(me));
  uint64_t polls = 0;
  bool probed = false;
  fiber::PollClock waiting;  // from the first poll that finds nothing
  for (;;) {
    std::unique_lock<std::mutex> lock(box.mu);
    if (!box.q.empty()) {
      src = box.q.front().first;
      bytes = std::move(box.q.front().second);
      box.q.pop_front();
      lock.unlock();
      h.hand_over(me);
      note(0, bytes.size(), false);
      return Status::kOk;
    }
    bool polling = false;
    {
      std::lock_guard<std::mutex> role(h.poll_mu);
      if (h.poller < 0) h.poller = me;
      polling = h.poller == me;
      if (!polling && !box.listed) {
        box.listed = true;
        h.parked.push_back(size_t(me));
      }
    }
    if (!polling) {
      waiting.begin();
      box.parked = true;
      box.waiters.wait(lock, [&] { return !box.q.empty() || !box.parked; });
      box.parked = false;
      continue;
    }
    lock.unlock();
    Status s = Status::kOk;
    if (probed) {
      if (clock::monotonic_ns() > deadline || watchdog_expired()) s = Status::kMpiError;
      if (s == Status::kOk && posts_ && !posts_->reqs.empty() && (polls & 63) == 0) s = reap(false, 0);
      waiting.begin();
      if (s == Status::kOk) backoff(polls);
    }
    probed = true;
    if (s == Status::kOk) s = h.drain(kP2pTag0);
    if (s != Status::kOk) {
      h.hand_over(me);
      return s;
    }
  }
}

Status Comm::complete_posts(double timeout_s) const {
  // Through the inboxes, delivered once all of each is in its receiver's ring (a full one rings
  // this rank when its receiver made room).
  if (host_shm::carries(mpi_))
    CRITPATH_FORWARD_IF_ERROR(wait_inbox(clock::monotonic_ns() + uint64_t(std::max(0.0, timeout_s) * 1e9),
                                         [] { return !host_shm::push(); }));
  return reap(true, timeout_s);
}

}  // namespace critpath::analyzer::engine
