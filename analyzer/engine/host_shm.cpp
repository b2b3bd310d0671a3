// critpath — analyzer/engine/host_shm.cpp: the analysis communicator's small collectives in a
// segment shared by the ranks of one host (host_shm.h).
#include "analyzer/engine/host_shm.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <new>
#include <vector>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/fiber.h"
#include "analyzer/engine/watchdog.h"
#include "libtrace/clock/clock.h"

namespace critpath::analyzer::engine::host_shm {
namespace {

struct Header {
  uint64_t cookie = 0;
  uint32_t ranks = 0;
  alignas(64) std::atomic<uint32_t> count{0};  // ranks arrived at the current operation
  alignas(64) std::atomic<uint32_t> gen{0};    // operations completed: the futex word
  std::atomic<uint32_t> poisoned{0};           // a rank abandoned an operation
  // Ranks whose contribution to the current gather or exchange does not fit: the last to arrive
  // reads it (not every rank's slot or area, a page each) and clears it for the next operation.
  std::atomic<uint32_t> unfit{0};
  // The bytes taken of each set's pool of exchange areas (exchange()).
  alignas(64) std::atomic<uint64_t> pool_used[2] = {};
  // join(): the ranks that mapped the segment, and its verdict (kOpen until every rank mapped
  // it or one gave up waiting for that): the futex word of the join.
  std::atomic<uint32_t> joined{0};
  std::atomic<uint32_t> verdict{0};
  // Ranks whose wait for `gen` sleeps on their own bell (wait_for, posts under way): the rank
  // that completes an operation rings those (their Bell::on_bell) when this is not 0.
  alignas(64) std::atomic<uint32_t> bell_sleepers{0};
  alignas(64) unsigned char result[kSlotBytes];
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "futex words");

// A rank's bell (a cache line of its own): `rung`, the futex word of its point-to-point waits,
// which ring() bumps; `on_bell`, set while the rank waits for an operation's generation asleep
// on `rung` instead (wait_for with posts under way).
struct Bell {
  std::atomic<uint32_t> rung{0};
  std::atomic<uint32_t> on_bell{0};
};

// A rank's inbox (P <= kMatrixRanks): a ring of records that the other ranks append to and only
// it takes from, in the order they were reserved. `tail` is the senders' (reserved up to, a
// compare-and-swap), `head` the receiver's (taken up to); each counts bytes from the start, so
// the ring holds tail - head of them. A record is an 8-byte head (its word, 0 until the sender
// has written it, then its bytes and flags; the sender's rank), its bytes, padding to 8. A
// sender that finds the ring full sets its bit in `blocked` (and `any_blocked`): the receiver,
// having made room, rings those.
struct InboxHead {
  alignas(64) std::atomic<uint64_t> tail{0};
  alignas(64) std::atomic<uint64_t> head{0};
  std::atomic<uint32_t> any_blocked{0};
  std::atomic<uint64_t> blocked[kMatrixRanks / 64] = {};
};
struct Record {
  std::atomic<uint32_t> word;
  int32_t src;
};
static_assert(sizeof(Record) == 8, "records are 8-byte aligned");
// A record's word: kWritten once its bytes are in; kMore: a fragment of a message that goes on
// in the sender's next record; kSkip: nothing here up to the ring's end; kSize: the length of the
// message whose records follow (8 bytes), so that the receiver puts them together in one
// allocation. Its bytes from bit 4.
constexpr uint32_t kWritten = 1, kMore = 2, kSkip = 4, kSize = 8;
constexpr int kLengthShift = 4;

constexpr size_t kAlign = 64;
constexpr size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
constexpr size_t slots_at() { return round_up(sizeof(Header)); }
size_t bells_at(int P) { return slots_at() + size_t(P) * kSlotBytes; }
size_t lines_at(int P) { return bells_at(P) + size_t(P) * kAlign; }
size_t matrix_at(int P) { return lines_at(P) + size_t(P) * kAlign; }
size_t exchange_at(int P) {
  return matrix_at(P) + (P <= kMatrixRanks ? 2 * size_t(P) * size_t(P) * sizeof(int32_t) : 0);
}
// The exchange's two sets (exchange_at): each a pool of P x kSlotBytes, the areas' offsets in it
// (a u64 per rank), a bitmap row per rank.
size_t pool_bytes(int P) { return size_t(P) * kSlotBytes; }
size_t offsets_at(int P) { return exchange_at(P) + 2 * pool_bytes(P); }
// A rank's row of the exchange bitmap: a bit per rank that sent it a piece.
size_t row_words(int P) { return (size_t(P) + 63) / 64; }
size_t row_bytes(int P) { return round_up(row_words(P) * 8); }
// Aligned for InboxHead (the exchange's offsets before it are 8-byte words, P of them).
size_t inboxes_at(int P) {
  return round_up(
      exchange_at(P) +
      (P <= kMatrixRanks ? 2 * (pool_bytes(P) + round_up(size_t(P) * 8) + size_t(P) * row_bytes(P)) : 0));
}
// A rank's ring: 8 MiB over the ranks, between 16 and 256 KiB (a few pages each at 256 ranks,
// where the replays send each rank a few KiB in all; whole batches at a time between 2 ranks).
size_t ring_bytes(int P) {
  const size_t share = (size_t(8) << 20) / size_t(std::max(P, 1)) / 4096 * 4096;
  return std::clamp(share, size_t(16) << 10, size_t(256) << 10);
}
// The most one record carries (a longer message goes in several).
size_t fragment_bytes(int P) { return ring_bytes(P) / 4 - sizeof(Record); }
size_t inbox_bytes(int P) { return round_up(sizeof(InboxHead)) + ring_bytes(P); }
size_t segment_bytes(int P) { return inboxes_at(P) + (P <= kMatrixRanks ? size_t(P) * inbox_bytes(P) : 0); }

// join()'s verdicts.
constexpr uint32_t kOpen = 0, kJoined = 1, kGaveUp = 2;
// How long join() waits for every rank to map the segment before it gives up on it (every rank
// then goes to MPI): a rank that could not map it never arrives, and nothing tells the others.
// Far longer than the spread of the ranks leaving one collective, even 256 ranks on 2 cores.
constexpr uint64_t kJoinNs = 5000000000ull;

// A wait sleeps at most this long before it looks at the analysis deadline again (a wake-up is
// never lost: FUTEX_WAIT returns at once when the generation moved).
constexpr long kWaitNs = 20000000;
// Polls of the generation before the first sleep when the ranks do not outnumber the cores.
constexpr int kSpins = 4000;

struct State {
  unsigned char* base = nullptr;
  size_t bytes = 0;
  int rank = 0, size = 0;
  bool crowded = false;
  MPI_Group group = MPI_GROUP_NULL;       // the ranks attached, in order
  intptr_t epoch = 0;                     // of this attachment: congruence marks of earlier ones are stale
  testing::Reduce test_reduce = nullptr;  // testing::join(): serves every communicator, no MPI
  size_t test_elem = 0;
  Header* header() const { return reinterpret_cast<Header*>(base); }
  unsigned char* slot(int r) const { return base + slots_at() + size_t(r) * kSlotBytes; }
  // Rank r's line (kAlign bytes): a contribution that small goes there rather than to its slot,
  // so that the rank folding every contribution touches P / 64 pages, not one page per rank
  // (each a page fault in every process that comes to fold, at 256 ranks most of a phase's).
  unsigned char* line(int r) const { return base + lines_at(size) + size_t(r) * kAlign; }
  unsigned char* input(int r, size_t bytes) const { return bytes <= kAlign ? line(r) : slot(r); }
  Bell& bell_of(int r) const { return *reinterpret_cast<Bell*>(base + bells_at(size) + size_t(r) * kAlign); }
  std::atomic<uint32_t>& bell(int r) const { return bell_of(r).rung; }
  // The parity's set: its pool of exchange areas, rank r's area's offset in it, its bitmap row.
  unsigned char* pool(uint32_t parity) const {
    return base + exchange_at(size) + (parity & 1) * pool_bytes(size);
  }
  uint64_t& offset(uint32_t parity, int r) const {
    return reinterpret_cast<uint64_t*>(base + offsets_at(size) +
                                       (parity & 1) * round_up(size_t(size) * 8))[r];
  }
  std::atomic<uint64_t>* row(uint32_t parity, int r) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(base + offsets_at(size) + 2 * round_up(size_t(size) * 8) +
                                                    (size_t(parity & 1) * size_t(size) + size_t(r)) *
                                                        row_bytes(size));
  }
  InboxHead& inbox(int r) const {
    return *reinterpret_cast<InboxHead*>(base + inboxes_at(size) + size_t(r) * inbox_bytes(size));
  }
  unsigned char* ring_of(int r) const {
    return reinterpret_cast<unsigned char*>(&inbox(r)) + round_up(sizeof(InboxHead));
  }
  int32_t* matrix(uint32_t parity) const {
    return reinterpret_cast<int32_t*>(base + matrix_at(size)) +
           size_t(parity & 1) * size_t(size) * size_t(size);
  }
};
State g_state;
std::atomic<long> g_posts{0};   // count_posts()
std::function<void()> g_watch;  // watch_posts()
int g_keyval = MPI_KEYVAL_INVALID;
// serves()'s answers for this attachment by handle, so that an operation asks MPI for the mark
// only once per communicator (MPICH's attribute lookup was 8 % of the analysis's samples at
// 256 ranks); the mark's delete callback drops a freed communicator's (its handle may return).
struct Served {
  MPI_Comm comm;
  bool congruent;
};
std::vector<Served> g_served;
int forget_served(MPI_Comm comm, int, void*, void*) {
  g_served.erase(
      std::remove_if(g_served.begin(), g_served.end(), [&](const Served& s) { return s.comm == comm; }),
      g_served.end());
  return MPI_SUCCESS;
}
intptr_t g_epochs = 0;
unsigned char* g_offered = nullptr;  // rank 0's segment between offer() and attach()

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

void ring(int dest) {
  std::atomic<uint32_t>& b = g_state.bell(dest);
  b.fetch_add(1, std::memory_order_seq_cst);
  futex(&b, FUTEX_WAKE, 1, nullptr);
}

// The point-to-point messages through the inboxes (send, push, take). A message is queued until
// all of it is in its receiver's ring, in order per receiver; a receiver puts a sender's
// fragments together until the last.
struct Outgoing {
  int dest;
  std::vector<unsigned char> bytes;
  size_t done;   // bytes already in the ring
  bool started;  // a record written (its length, or an empty message's only one)
};
std::deque<Outgoing> g_out;
std::map<int, std::vector<unsigned char>> g_partial;  // by sender: fragments taken so far

bool has_inboxes() { return g_state.base && g_state.size <= kMatrixRanks; }

// A record's place in the ring: its head and its bytes, padded to 8 (sender and receiver alike).
size_t record_span(size_t n) { return sizeof(Record) + (n + 7) / 8 * 8; }

// Appends one record of `n` bytes to dest's ring, or returns false when it does not fit now
// (this rank then marked blocked there, to be rung once the receiver has made room).
bool put_record(int dest, const unsigned char* bytes, size_t n, uint32_t flags) {
  InboxHead& box = g_state.inbox(dest);
  unsigned char* ring = g_state.ring_of(dest);
  const size_t R = ring_bytes(g_state.size);
  const size_t need = record_span(n);
  uint64_t t = box.tail.load(std::memory_order_acquire);
  size_t skip = 0;
  for (bool marked = false;;) {
    const size_t at = size_t(t % R);
    skip = at + need > R ? R - at : 0;
    if (t + skip + need - box.head.load(std::memory_order_seq_cst) > R) {
      if (marked) return false;
      // Marked before a second look at `head`: either that look sees the room the receiver
      // made, or the receiver sees the mark after making it (both sequentially consistent).
      box.blocked[g_state.rank / 64].fetch_or(uint64_t(1) << (g_state.rank % 64), std::memory_order_seq_cst);
      box.any_blocked.store(1, std::memory_order_seq_cst);
      marked = true;
      t = box.tail.load(std::memory_order_acquire);
      continue;
    }
    if (box.tail.compare_exchange_weak(t, t + skip + need, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
      break;
  }
  if (skip) reinterpret_cast<Record*>(ring + t % R)->word.store(kWritten | kSkip, std::memory_order_release);
  Record* r = reinterpret_cast<Record*>(ring + (t + skip) % R);
  r->src = g_state.rank;
  if (n) std::memcpy(static_cast<void*>(r + 1), bytes, n);
  r->word.store(uint32_t(n) << kLengthShift | kWritten | flags, std::memory_order_release);
  return true;
}

// The queued messages into their receivers' rings as far as they fit, in order per receiver;
// each receiver written to rung. Whether any remain.
bool push_out() {
  const size_t frag = fragment_bytes(g_state.size);
  std::vector<int> blocked, wrote;
  for (auto it = g_out.begin(); it != g_out.end();) {
    Outgoing& o = *it;
    bool stuck = std::find(blocked.begin(), blocked.end(), o.dest) != blocked.end();
    while (!stuck && (!o.started || o.done < o.bytes.size())) {
      const uint64_t total = o.bytes.size();
      const bool sized = !o.started && total > frag;  // several records: their length first
      const size_t n = sized ? sizeof total : std::min(frag, size_t(total) - o.done);
      const unsigned char* from = sized ? reinterpret_cast<const unsigned char*>(&total)
                                        : o.bytes.data() + o.done;
      if (!put_record(o.dest, from, n, sized ? kSize : o.done + n < total ? kMore : 0)) {
        stuck = true;
        blocked.push_back(o.dest);
        break;
      }
      if (!sized) o.done += n;
      o.started = true;
      if (std::find(wrote.begin(), wrote.end(), o.dest) == wrote.end()) wrote.push_back(o.dest);
    }
    it = stuck ? it + 1 : g_out.erase(it);
  }
  for (const int d : wrote) ring(d);
  return !g_out.empty();
}

// After the generation moved (or the segment was poisoned): the ranks that wait for it asleep
// on their bells woken. Seen by a sleeper either way: it marks itself before it looks at the
// generation (sleep_on_bell), this looks at the marks after the generation moved, both in the
// single total order of sequentially consistent operations.
void ring_bell_sleepers(Header& h) {
  if (h.bell_sleepers.load(std::memory_order_seq_cst) == 0) return;
  for (int r = 0; r < g_state.size; ++r)
    if (g_state.bell_of(r).on_bell.load(std::memory_order_seq_cst)) ring(r);
}

// This rank abandons the operation under way: every later one fails on every rank.
Status poison(Header& h) {
  h.poisoned.store(1, std::memory_order_seq_cst);
  futex(&h.gen, FUTEX_WAKE, INT_MAX, nullptr);
  ring_bell_sleepers(h);
  return Status::kMpiError;
}

// Sleeps on this rank's bell until it leaves `seen`, the generation leaves g or kWaitNs pass.
void sleep_on_bell(Header& h, uint32_t g, uint32_t seen) {
  Bell& mine = g_state.bell_of(g_state.rank);
  mine.on_bell.store(1, std::memory_order_seq_cst);
  h.bell_sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (h.gen.load(std::memory_order_seq_cst) == g && !h.poisoned.load(std::memory_order_seq_cst)) {
    const timespec ts = {0, kWaitNs};
    futex(&mine.rung, FUTEX_WAIT, seen, &ts);
  }
  h.bell_sleepers.fetch_sub(1, std::memory_order_seq_cst);
  mine.on_bell.store(0, std::memory_order_relaxed);
}

// Until the generation leaves g: kOk, or kMpiError once the segment is poisoned or this rank
// abandons the operation (the deadline's grace passed: it poisons the segment then).
Status wait_for(Header& h, uint32_t g) {
  fiber::PollClock waiting;
  waiting.begin();
  for (int i = 0; !g_state.crowded && i < kSpins; ++i) {
    if (h.gen.load(std::memory_order_acquire) != g) return Status::kOk;
    cpu_relax();
  }
  uint64_t polls = 0;
  for (;;) {
    if (h.gen.load(std::memory_order_acquire) != g) return Status::kOk;
    if (h.poisoned.load(std::memory_order_relaxed)) return Status::kMpiError;
    if (g_posts.load(std::memory_order_relaxed) > 0 || !g_out.empty()) {
      // Messages this rank posted and MPI has not delivered: a large one may need this rank's
      // progress (a rendezvous protocol) before the rank it goes to can arrive here. Test them
      // (watch_posts), else probe (either drives MPI's progress); once all are delivered, sleep
      // on the generation. Crowded, between tests the rank sleeps on its bell, which the
      // receiver of a post rings while it receives and once it has (comm.cpp): a rank spinning
      // here would take the cores from the ranks it waits for, for as long as they take.
      // Messages queued for a full inbox alike: its receiver rings this rank once it made room.
      const uint32_t seen = g_state.bell(g_state.rank).load(std::memory_order_seq_cst);
      const bool queued = !g_out.empty() && push_out();
      if (g_watch) g_watch();
      if (g_posts.load(std::memory_order_relaxed) <= 0 && !queued) continue;
      if (g_state.crowded && (g_watch || g_posts.load(std::memory_order_relaxed) <= 0)) {
        sleep_on_bell(h, g, seen);
        if (watchdog_abandoned()) return poison(h);
        continue;
      }
      int flag = 0;
      if (!g_watch) PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      if ((fiber::relax(polls) || polls % 256 == 0) && watchdog_abandoned()) return poison(h);
      continue;
    }
    const timespec ts = {0, kWaitNs};
    futex(&h.gen, FUTEX_WAIT, g, &ts);
    if (h.gen.load(std::memory_order_acquire) != g) return Status::kOk;
    if (watchdog_abandoned()) return poison(h);
  }
}

// This rank's arrival at the current operation, its contribution written; the last rank to
// arrive runs combine() (every contribution is visible to it) before the others go on.
template <typename Combine>
Status arrive(Combine combine) {
  Header& h = *g_state.header();
  if (watchdog_expired() || h.poisoned.load(std::memory_order_relaxed)) return Status::kMpiError;
  const uint32_t g = h.gen.load(std::memory_order_acquire);
  if (h.count.fetch_add(1, std::memory_order_acq_rel) + 1 < uint32_t(g_state.size)) return wait_for(h, g);
  combine();
  // Every rank is past the operation before this one: its set of exchange areas is free.
  h.pool_used[(g + 1) & 1].store(0, std::memory_order_relaxed);
  h.count.store(0, std::memory_order_relaxed);
  h.gen.store(g + 1, std::memory_order_seq_cst);
  futex(&h.gen, FUTEX_WAKE, INT_MAX, nullptr);
  ring_bell_sleepers(h);
  return Status::kOk;
}

// The bytes of n elements of `type` when they fit a slot, else 0.
size_t slot_bytes(int n, MPI_Datatype type) {
  MPI_Aint lb = 0, extent = MPI_Aint(g_state.test_elem);
  if (n <= 0 || (!g_state.test_reduce && PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS) ||
      extent <= 0)
    return 0;
  const size_t bytes = size_t(n) * size_t(extent);
  return bytes <= kSlotBytes ? bytes : 0;
}

// acc = acc op slot(r) for r = 1 .. P - 1, acc starting as slot(0) (the operations are MPI's
// predefined ones, commutative: only the order of the folds matters, rank order here). Each
// prefix is handed to `each` (rank, acc).
template <typename Each>
void fold(unsigned char* acc, int n, MPI_Datatype type, MPI_Op op, size_t bytes, Each each) {
  std::memcpy(acc, g_state.input(0, bytes), bytes);
  each(0, acc);
  for (int r = 1; r < g_state.size; ++r) {
    if (g_state.test_reduce) g_state.test_reduce(g_state.input(r, bytes), acc, n);
    else PMPI_Reduce_local(g_state.input(r, bytes), acc, n, type, op);
    each(r, acc);
  }
}

void unmap() {
  g_served.clear();
  g_out.clear();
  g_partial.clear();
  if (g_state.base && g_state.bytes) munmap(g_state.base, g_state.bytes);
  if (g_state.group != MPI_GROUP_NULL) PMPI_Group_free(&g_state.group);
  g_state = State();
}

// Rank 0's segment, named in `name`: the header set up, nullptr when it cannot be made.
unsigned char* create(int P, char* name, size_t name_bytes, uint64_t& cookie) {
  cookie = clock::monotonic_ns() ^ (uint64_t(getpid()) << 32) ^ uintptr_t(name);
  std::snprintf(name, name_bytes, "/critpath-%d-%016llx", int(getpid()),
                static_cast<unsigned long long>(cookie));
  const int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return nullptr;
  void* m = MAP_FAILED;
  // Every page allocated now (not ftruncate's holes): on a full /dev/shm a hole would fault in
  // later as SIGBUS in the host application; here the segment is simply not made (MPI path).
  if (posix_fallocate(fd, 0, off_t(segment_bytes(P))) == 0)
    m = mmap(nullptr, segment_bytes(P), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    shm_unlink(name);
    return nullptr;
  }
  Header* h = new (m) Header();
  h->cookie = cookie;
  h->ranks = uint32_t(P);
  return static_cast<unsigned char*>(m);
}

// Another rank's mapping of rank 0's segment: nullptr unless it is the one announced.
unsigned char* open_existing(int P, const char* name, uint64_t cookie) {
  const int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0) return nullptr;
  struct stat st;
  void* m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && size_t(st.st_size) == segment_bytes(P))
    m = mmap(nullptr, segment_bytes(P), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return nullptr;
  const Header* h = static_cast<const Header*>(m);
  if (h->cookie != cookie || h->ranks != uint32_t(P)) {
    munmap(m, segment_bytes(P));
    return nullptr;
  }
  return static_cast<unsigned char*>(m);
}

}  // namespace

Offer offer(const Comm& comm) {
  detach();
  Offer o{};
  if (comm.native_handle() == MPI_COMM_NULL || comm.size() < 2 || comm.rank() != 0) return o;
  char name[sizeof o.words - sizeof(uint64_t)] = {};
  uint64_t cookie = 0;
  g_offered = create(comm.size(), name, sizeof name, cookie);
  if (!g_offered) return o;
  std::memcpy(o.words, name, sizeof name);
  o.words[kOfferWords - 1] = cookie;
  return o;
}

namespace {

// Until every rank has mapped the segment (kJoined) or one gave up waiting for that (kGaveUp):
// the first to see either decides it for all, the same verdict on every rank that mapped it.
uint32_t join_verdict(Header& h, int P) {
  if (h.joined.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(P)) {
    uint32_t open = kOpen;
    h.verdict.compare_exchange_strong(open, kJoined, std::memory_order_acq_rel);
    futex(&h.verdict, FUTEX_WAKE, INT_MAX, nullptr);
  }
  const uint64_t start = clock::monotonic_ns();
  for (;;) {
    const uint32_t v = h.verdict.load(std::memory_order_acquire);
    if (v != kOpen) return v;
    if (clock::monotonic_ns() - start > kJoinNs || watchdog_abandoned()) break;
    const timespec ts = {0, kWaitNs};
    if (futex(&h.verdict, FUTEX_WAIT, kOpen, &ts) < 0 && errno != ETIMEDOUT && errno != EAGAIN &&
        errno != EINTR)
      break;
  }
  uint32_t open = kOpen;
  h.verdict.compare_exchange_strong(open, kGaveUp, std::memory_order_acq_rel);
  futex(&h.verdict, FUTEX_WAKE, INT_MAX, nullptr);
  return h.verdict.load(std::memory_order_acquire);
}

}  // namespace

void attach(const Comm& comm, const Offer& offer, bool use, bool crowded) {
  const MPI_Comm c = comm.native_handle();
  const int P = comm.size(), me = comm.rank();
  char name[sizeof offer.words - sizeof(uint64_t)];
  std::memcpy(name, offer.words, sizeof name);
  name[sizeof name - 1] = 0;
  unsigned char* base = me == 0 ? g_offered : nullptr;
  g_offered = nullptr;
  if (!use || c == MPI_COMM_NULL || P < 2 || !name[0]) {
    if (base) {
      shm_unlink(name);
      munmap(base, segment_bytes(P));
    }
    return;
  }
  if (me != 0) base = open_existing(P, name, offer.words[kOfferWords - 1]);
  // Whether futexes work here (FUTEX_WAKE of nobody: 0 woken) and the congruence marks can be
  // kept (serves()): a rank without either stays away, and so every rank gives up.
  if (base && g_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_served, &g_keyval, nullptr) != MPI_SUCCESS)
    g_keyval = MPI_KEYVAL_INVALID;
  if (base && (g_keyval == MPI_KEYVAL_INVALID ||
               futex(&reinterpret_cast<Header*>(base)->gen, FUTEX_WAKE, 1, nullptr) < 0)) {
    munmap(base, segment_bytes(P));
    base = nullptr;
  }
  const uint32_t verdict = base ? join_verdict(*reinterpret_cast<Header*>(base), P) : kGaveUp;
  if (me == 0) shm_unlink(name);  // every rank has it mapped (or gave up): no name left behind
  if (verdict != kJoined) {
    if (base) munmap(base, segment_bytes(P));
    return;
  }
  g_state.base = base;
  g_state.bytes = segment_bytes(P);
  g_state.rank = me;
  g_state.size = P;
  g_state.crowded = crowded;
  g_state.epoch = ++g_epochs;
  PMPI_Comm_group(c, &g_state.group);
}

void detach() { unmap(); }

void count_posts(long delta) { g_posts.fetch_add(delta, std::memory_order_relaxed); }

void watch_posts(std::function<void()> sweep) { g_watch = std::move(sweep); }

bool serves(MPI_Comm comm) {
  if (!g_state.base || comm == MPI_COMM_NULL || fiber::current()) return false;
  if (g_state.test_reduce) return true;
  for (const Served& s : g_served)
    if (s.comm == comm) return s.congruent;
  void* value = nullptr;
  int flag = 0;
  PMPI_Comm_get_attr(comm, g_keyval, &value, &flag);
  const intptr_t mark = reinterpret_cast<intptr_t>(value);
  if (flag && mark / 2 == g_state.epoch) {
    g_served.push_back({comm, mark % 2 == 1});
    return mark % 2 == 1;
  }
  MPI_Group g = MPI_GROUP_NULL;
  int same = MPI_UNEQUAL;
  if (PMPI_Comm_group(comm, &g) == MPI_SUCCESS) {
    PMPI_Group_compare(g, g_state.group, &same);
    PMPI_Group_free(&g);
  }
  const bool congruent = same == MPI_IDENT;
  PMPI_Comm_set_attr(comm, g_keyval, reinterpret_cast<void*>(g_state.epoch * 2 + (congruent ? 1 : 0)));
  g_served.push_back({comm, congruent});  // after the set: replacing a stale mark calls forget_served
  return congruent;
}

bool barrier(MPI_Comm comm, Status& status) {
  if (!serves(comm)) return false;
  status = arrive([] {});
  return true;
}

bool allreduce(MPI_Comm comm, const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, int root,
               Status& status) {
  const size_t bytes = slot_bytes(n, type);
  if (!bytes || !serves(comm)) return false;
  std::memcpy(g_state.input(g_state.rank, bytes), in == MPI_IN_PLACE ? out : in, bytes);
  Header& h = *g_state.header();
  status = arrive([&] { fold(h.result, n, type, op, bytes, [](int, const unsigned char*) {}); });
  // The result stays until every rank has arrived at the next operation.
  if (status == Status::kOk && (root < 0 || root == g_state.rank)) std::memcpy(out, h.result, bytes);
  return true;
}

bool scan(MPI_Comm comm, const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, Status& status) {
  const size_t bytes = slot_bytes(n, type);
  if (!bytes || !serves(comm)) return false;
  std::memcpy(g_state.input(g_state.rank, bytes), in == MPI_IN_PLACE ? out : in, bytes);
  Header& h = *g_state.header();
  // Each rank's prefix replaces its contribution in its own slot, which only it writes next.
  status = arrive([&] {
    fold(h.result, n, type, op, bytes, [&](int r, const unsigned char* acc) {
      if (r > 0) std::memcpy(g_state.input(r, bytes), acc, bytes);
    });
  });
  if (status == Status::kOk) std::memcpy(out, g_state.input(g_state.rank, bytes), bytes);
  return true;
}

bool bcast(MPI_Comm comm, void* buf, size_t bytes, int root, Status& status) {
  if (bytes > kSlotBytes || !serves(comm)) return false;
  if (root == g_state.rank) std::memcpy(g_state.slot(root), buf, bytes);
  Header& h = *g_state.header();
  status = arrive([&] { std::memcpy(h.result, g_state.slot(root), bytes); });
  if (status == Status::kOk && root != g_state.rank) std::memcpy(buf, h.result, bytes);
  return true;
}

bool gather(MPI_Comm comm, const void* mine, size_t bytes, int root, std::vector<unsigned char>& all,
            std::vector<size_t>& sizes, Status& status) {
  if (!serves(comm)) return false;
  // A rank's line: the contribution's size, then its bytes when they fit there; a larger one
  // goes to its slot when it fits that.
  constexpr size_t kInline = kAlign - sizeof(uint64_t);
  const uint64_t mine_bytes = bytes;
  unsigned char* own = g_state.line(g_state.rank);
  std::memcpy(own, &mine_bytes, sizeof mine_bytes);
  Header& h = *g_state.header();
  if (bytes > kSlotBytes) h.unfit.fetch_add(1, std::memory_order_relaxed);
  else if (bytes)
    std::memcpy(bytes <= kInline ? own + sizeof mine_bytes : g_state.slot(g_state.rank), mine, bytes);
  status = arrive([&] {
    const uint32_t fits = h.unfit.load(std::memory_order_relaxed) == 0 ? 1 : 0;
    h.unfit.store(0, std::memory_order_relaxed);
    std::memcpy(h.result, &fits, sizeof fits);
  });
  if (status != Status::kOk) return true;
  uint32_t fits = 0;
  std::memcpy(&fits, h.result, sizeof fits);
  if (!fits) return false;  // the same answer on every rank: all go to MPI
  if (root < 0 || root == g_state.rank) {
    sizes.assign(size_t(g_state.size), 0);
    size_t total = 0;
    for (int r = 0; r < g_state.size; ++r) {
      uint64_t b = 0;
      std::memcpy(&b, g_state.line(r), sizeof b);
      sizes[size_t(r)] = size_t(b);
      total += size_t(b);
    }
    all.resize(total);
    size_t at = 0;
    for (int r = 0; r < g_state.size; ++r) {
      const size_t b = sizes[size_t(r)];
      if (b)
        std::memcpy(all.data() + at, b <= kInline ? g_state.line(r) + sizeof(uint64_t) : g_state.slot(r), b);
      at += b;
    }
  }
  status = arrive([] {});  // the lines and slots stay until every reader has them
  return true;
}

bool alltoall_int(MPI_Comm comm, const int* send, int* recv, Status& status) {
  if (!g_state.base || g_state.size > kMatrixRanks || !serves(comm)) return false;
  const size_t P = size_t(g_state.size), me = size_t(g_state.rank);
  // Operation k uses matrix k % 2: a rank writes it for k + 2 only after every rank arrived at
  // k + 1, so after each read its column of k.
  int32_t* m = g_state.matrix(g_state.header()->gen.load(std::memory_order_acquire));
  for (size_t d = 0; d < P; ++d) m[me * P + d] = send[d];
  status = arrive([] {});
  if (status == Status::kOk)
    for (size_t s = 0; s < P; ++s) recv[s] = m[s * P + me];
  return true;
}

// An exchange area: [n u32][u32 0][dest u32 x n, ascending][end u32 x n][payloads], piece i's
// bytes from the previous piece's end (0 for the first) to its own, relative to the payloads: a
// receiver finds its piece by a binary search (a dense all-to-all sends to every rank). A rank
// with pieces reserves its area in the set's pool, P x kSlotBytes shared by the ranks: one rank
// with more than kSlotBytes goes through the segment as long as all together fit (else every
// rank goes to MPI, whose all-to-all costs each rank a connection to every peer), and the areas
// are packed, a receiver's reads on few pages.
namespace {
constexpr size_t kAreaHeader = 8;
}  // namespace

bool exchange(MPI_Comm comm, const std::vector<Comm::Piece>& pieces, std::vector<Comm::Parcel>& in,
              Status& status) {
  if (!g_state.base || g_state.size > kMatrixRanks || !serves(comm)) return false;
  Header& h = *g_state.header();
  const int P = g_state.size, me = g_state.rank;
  // Operation k uses set k % 2, as alltoall_int's matrices: written again for k + 2 only after
  // every rank arrived at k + 1, after each read its pieces of k and cleared its row.
  const uint32_t parity = h.gen.load(std::memory_order_acquire);
  size_t need = pieces.empty() ? 0 : kAreaHeader + 8 * pieces.size();
  for (const Comm::Piece& p : pieces) need += p.bytes;
  const uint64_t at = need ? h.pool_used[parity & 1].fetch_add(round_up(need), std::memory_order_relaxed) : 0;
  if (at + need > pool_bytes(P)) {
    h.unfit.fetch_add(1, std::memory_order_relaxed);
    need = 0;  // nothing written: every rank goes to MPI
  }
  unsigned char* own = g_state.pool(parity) + at;
  g_state.offset(parity, me) = at;
  const uint32_t n = need ? uint32_t(pieces.size()) : 0, zero = 0;
  if (n) {
    std::memcpy(own, &n, 4);
    std::memcpy(own + 4, &zero, 4);
  }
  unsigned char* payload = own + kAreaHeader + 8 * size_t(n);
  uint32_t end = 0;
  for (size_t i = 0; i < n; ++i) {
    const Comm::Piece& p = pieces[i];
    const uint32_t dest = uint32_t(p.peer);
    if (p.bytes) std::memcpy(payload + end, p.data, p.bytes);  // an empty piece may have no data
    end += uint32_t(p.bytes);
    std::memcpy(own + kAreaHeader + 4 * i, &dest, 4);
    std::memcpy(own + kAreaHeader + 4 * (size_t(n) + i), &end, 4);
    g_state.row(parity, p.peer)[size_t(me) / 64].fetch_or(uint64_t(1) << (me % 64),
                                                          std::memory_order_relaxed);
  }
  status = arrive([&] {
    const uint32_t all = h.unfit.load(std::memory_order_relaxed) == 0 ? 1 : 0;
    h.unfit.store(0, std::memory_order_relaxed);
    std::memcpy(h.result, &all, 4);
  });
  // This rank's row cleared whatever the outcome: only its senders of this operation set it.
  std::atomic<uint64_t>* row = g_state.row(parity, me);
  const size_t words = row_words(P);
  std::vector<uint64_t> senders(words);
  for (size_t w = 0; w < words; ++w) senders[w] = row[w].exchange(0, std::memory_order_relaxed);
  if (status != Status::kOk) return true;
  uint32_t all = 0;
  std::memcpy(&all, h.result, 4);
  if (!all) return false;  // the same answer on every rank: all go to MPI
  in.clear();
  for (size_t w = 0; w < words; ++w)
    for (uint64_t bits = senders[w]; bits; bits &= bits - 1) {
      const int src = int(w * 64) + __builtin_ctzll(bits);
      const unsigned char* a = g_state.pool(parity) + g_state.offset(parity, src);
      uint32_t records = 0;
      std::memcpy(&records, a, 4);
      const auto* dests = reinterpret_cast<const uint32_t*>(a + kAreaHeader);
      const size_t i = size_t(std::lower_bound(dests, dests + records, uint32_t(me)) - dests);
      if (i == records || dests[i] != uint32_t(me)) continue;  // (cannot be: it marked this rank)
      uint32_t from = 0, to = 0;
      if (i > 0) std::memcpy(&from, a + kAreaHeader + 4 * (size_t(records) + i - 1), 4);
      std::memcpy(&to, a + kAreaHeader + 4 * (size_t(records) + i), 4);
      const unsigned char* bytes = a + kAreaHeader + 8 * size_t(records);
      in.push_back({src, std::vector<unsigned char>(bytes + from, bytes + to)});
    }
  return true;
}

namespace {

// Rings the destinations of the sends still pending (requests [first, n)).
void ring_pending(const std::vector<MPI_Request>& requests, const std::vector<int>& peers, size_t first) {
  for (size_t i = first; i < requests.size(); ++i)
    if (requests[i] != MPI_REQUEST_NULL) ring(peers[i]);
}

}  // namespace

bool ring(MPI_Comm comm, int dest) {
  if (!serves(comm) || dest < 0 || dest >= g_state.size) return false;
  ring(dest);
  return true;
}

bool carries(MPI_Comm comm) { return has_inboxes() && serves(comm); }

void send(int dest, std::vector<unsigned char>&& bytes) {
  g_out.push_back({dest, std::move(bytes), 0, false});
  push_out();
}

bool push() { return !g_out.empty() && push_out(); }

namespace {

// The senders that found this inbox full, rung now that it has room.
void ring_blocked(InboxHead& box) {
  box.any_blocked.store(0, std::memory_order_seq_cst);
  for (int w = 0; w * 64 < g_state.size; ++w)
    for (uint64_t bits = box.blocked[w].exchange(0, std::memory_order_seq_cst); bits; bits &= bits - 1)
      ring(w * 64 + __builtin_ctzll(bits));
}

}  // namespace

bool take(int& src, std::vector<unsigned char>& bytes) {
  if (!has_inboxes()) return false;
  InboxHead& box = g_state.inbox(g_state.rank);
  unsigned char* ring = g_state.ring_of(g_state.rank);
  const size_t R = ring_bytes(g_state.size);
  uint64_t h = box.head.load(std::memory_order_relaxed);
  bool freed = false, got = false;
  while (!got && h != box.tail.load(std::memory_order_acquire)) {
    Record* r = reinterpret_cast<Record*>(ring + h % R);
    const uint32_t w = r->word.load(std::memory_order_acquire);
    if (!(w & kWritten)) break;  // reserved, being written: its sender rings once it is
    size_t span = R - size_t(h % R);
    if (!(w & kSkip)) {
      const size_t n = w >> kLengthShift;
      span = record_span(n);
      const int from = r->src;
      const unsigned char* p = reinterpret_cast<const unsigned char*>(r + 1);
      const auto part = g_partial.find(from);
      if (w & kSize) {
        uint64_t total = 0;
        std::memcpy(&total, p, std::min(n, sizeof total));
        g_partial[from].reserve(size_t(total));
      } else if (w & kMore) {
        std::vector<unsigned char>& acc = part == g_partial.end() ? g_partial[from] : part->second;
        acc.insert(acc.end(), p, p + n);
      } else {  // a message's last record
        if (part == g_partial.end()) {
          bytes.assign(p, p + n);
        } else {
          part->second.insert(part->second.end(), p, p + n);
          bytes = std::move(part->second);
          g_partial.erase(part);
        }
        src = from;
        got = true;
      }
    }
    // Zeros for the records to come: a word not yet written reads 0 wherever it falls.
    std::memset(static_cast<void*>(r), 0, span);
    h += span;
    box.head.store(h, std::memory_order_seq_cst);
    freed = true;
  }
  if (freed && box.any_blocked.load(std::memory_order_seq_cst)) ring_blocked(box);
  return got;
}

bool crowded() { return g_state.base && g_state.crowded; }

uint32_t rings() { return g_state.base ? g_state.bell(g_state.rank).load(std::memory_order_acquire) : 0; }

bool sleep_until_rung(MPI_Comm comm, uint32_t seen) {
  if (!serves(comm)) return false;
  const timespec ts = {0, kWaitNs};
  futex(&g_state.bell(g_state.rank), FUTEX_WAIT, seen, &ts);
  return true;
}

bool complete_p2p(MPI_Comm comm, std::vector<MPI_Request>& requests, const std::vector<int>& peers,
                  size_t receives, Status& status) {
  if (!serves(comm) || peers.size() != requests.size()) return false;
  status = Status::kOk;
  ring_pending(requests, peers, receives);
  std::atomic<uint32_t>& mine = g_state.bell(g_state.rank);
  std::vector<int> done(requests.size());
  uint64_t polls = 0;
  fiber::PollClock waiting;
  for (int spins = 0;; ++spins) {
    const uint32_t seen = mine.load(std::memory_order_acquire);
    int n = 0;
    if (PMPI_Testsome(int(requests.size()), requests.data(), &n, done.data(), MPI_STATUSES_IGNORE) !=
        MPI_SUCCESS) {
      status = Status::kMpiError;
      return true;
    }
    if (n == MPI_UNDEFINED) return true;  // every request complete
    bool sending = false, receiving = false;
    for (size_t i = 0; i < requests.size(); ++i)
      if (requests[i] != MPI_REQUEST_NULL) (i < receives ? receiving : sending) = true;
    if (!sending && !receiving) return true;
    waiting.begin();
    // The deadline: every 256 polls, and at every sleep (below) once the spinning is over.
    if ((spins % 256 == 255 || g_state.crowded || spins >= kSpins) && watchdog_abandoned()) {
      status = Status::kMpiError;
      return true;
    }
    if (sending) {  // polls
      if (++polls % 16 == 0) ring_pending(requests, peers, receives);
      fiber::relax(polls);
      continue;
    }
    if (!g_state.crowded && spins < kSpins) {
      cpu_relax();
      continue;
    }
    const timespec ts = {0, kWaitNs};
    futex(&mine, FUTEX_WAIT, seen, &ts);
  }
}

namespace testing {

size_t segment_bytes(int P) { return host_shm::segment_bytes(P); }

void init_segment(void* base, int P) {
  std::memset(base, 0, segment_bytes(P));
  Header* h = new (base) Header();
  h->ranks = uint32_t(P);
}

void join(void* base, int rank, int P, bool crowded, size_t elem_bytes, Reduce reduce) {
  unmap();
  g_state.base = static_cast<unsigned char*>(base);
  g_state.bytes = 0;  // not this module's mapping: detach() leaves it
  g_state.rank = rank;
  g_state.size = P;
  g_state.crowded = crowded;
  g_state.test_reduce = reduce;
  g_state.test_elem = elem_bytes;
}

}  // namespace testing

}  // namespace critpath::analyzer::engine::host_shm
