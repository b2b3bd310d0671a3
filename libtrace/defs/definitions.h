// critpath — libtrace/defs/definitions.h
//
// What the ids inside events mean: regions (functions, user regions, MPI calls) and
// communicators. Events carry only small integer ids; these tables name them. They are
// per-rank while recording and unified across ranks at finalize (analyzer/), so that
// rank 0 can name every call path of every rank.
//
// Region ids:   0 invalid | 1..999 MPI functions (stable spec ids, pmpi_wrappers/spec)
//               1000 the synthetic root "main" | 1001..1023 reserved | 1024.. defined at run time
// Communicator ids: 0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, others assigned at creation so that
// every member rank records the same id (pmpi_wrappers/semantics/comm_ids).
//
// One traced rank's tables form a Definitions. The recording side (libtrace, pmpi_wrappers,
// compiler_hooks) defines into the process-wide one, current(), through the free functions
// regions(), comms(), windows() and set_counter_names(). The analysis reads a Definitions it
// is given instead: critpath-analyze loads several ranks' definitions into one process.
//
// Thread safety: all functions are thread-safe (a mutex; only cold paths define things).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace critpath::defs {

enum class RegionKind : uint8_t {
  kUser = 0,        // critpath_region_define / CRITPATH_REGION_BEGIN
  kFunction = 1,    // compiler-instrumented function
  kMpi = 2,         // an MPI call
  kArtificial = 3,  // synthetic (the root)
  kCallsite = 4,    // a call site of MPI calls (compiler_hooks/callsite.h): the program
                    // counters of the innermost application frames, named "file:line" at
                    // finalize; a call-path node between the caller and the MPI call
};
const char* to_string(RegionKind k);

// What an MPI call is, for the analyses (RegionDef::mpi). It comes from the call's entry in
// pmpi_wrappers/spec/mpi.toml (keys class, sync, root, completion, lifecycle, rma, with per-group
// defaults); the generator emits it in the region table (generated_regions.h) and MPI_Init
// defines the MPI regions with it. The analyzer reads it instead of parsing names. All kNone
// for regions that are not MPI calls. The values are stored in kept traces
// (analyzer/session/trace_archive.cpp): never renumber, only append.
enum class MpiClass : uint8_t {  // the mpi_* time hierarchy (docs/metrics.md)
  kNone = 0,
  kP2p = 1,         // sends, receives, Wait*/Test*, probes, persistent requests, cancel/free
  kCollective = 2,  // blocking, nonblocking and neighbourhood collectives, MPI_Reduce_local
  kRma = 3,         // one-sided: windows, their synchronization, RMA operations
  kManagement = 4,  // everything else: MPI_Init/Finalize, communicators, groups, topologies
};
// How a collective's members wait for each other.
enum class MpiSync : uint8_t {
  kNone = 0,     // not a synchronizing collective (default)
  kBarrier = 1,  // MPI_Barrier, MPI_Ibarrier: Wait at Barrier
  kNxN = 2,      // every member needs every other (Allreduce, Alltoall(v,w), Allgather(v),
                 // Reduce_scatter(_block), neighbourhood collectives; their I* twins): Wait at NxN
  kOneToN = 3,   // the root sends to all (Bcast, Scatter(v), I*): Late Broadcast
  kNToOne = 4,   // all send to the root (Reduce, Gather(v), I*): Early Reduce
  kScan = 5,     // member r needs members 0..r (Scan, Exscan, I*): Early Scan
  kOther = 6,    // collective over a communicator, but no wait-state pattern applies
                 // (communicator and window constructors, MPI_Comm_free, MPI_Win_fence)
};
// The role of the `root` argument of a rooted collective.
enum class MpiRoot : uint8_t {
  kNone = 0,    // no root argument
  kSource = 1,  // the root is the only sender (kOneToN)
  kSink = 2,    // the root is the only receiver (kNToOne)
};
// Calls that complete requests.
enum class MpiCompletion : uint8_t {
  kNone = 0,
  kWait = 1,  // MPI_Wait, Waitall, Waitany, Waitsome: block until completion
  kTest = 2,  // MPI_Test, Testall, Testany, Testsome: poll (no Late Sender, as in Scalasca)
};
enum class MpiLifecycle : uint8_t {
  kNone = 0,
  kInit = 1,      // MPI_Init, MPI_Init_thread
  kFinalize = 2,  // MPI_Finalize
};
enum class MpiRma : uint8_t {  // the role of a one-sided call (the spec's `rma`)
  kNone = 0,
  kComm = 1,        // an RMA operation: Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
                    // Compare_and_swap and the request-based R* forms (mpi_rma_comm)
  kCreate = 2,      // MPI_Win_create, _allocate, _allocate_shared, _create_dynamic
  kFree = 3,        // MPI_Win_free
  kFence = 4,       // MPI_Win_fence
  kStart = 5,       // MPI_Win_start: opens an access epoch (PSCW)
  kComplete = 6,    // MPI_Win_complete: closes it
  kPost = 7,        // MPI_Win_post: opens an exposure epoch
  kWait = 8,        // MPI_Win_wait: closes it, blocking
  kTest = 9,        // MPI_Win_test: closes it when it succeeds (recorded only then)
  kLock = 10,       // MPI_Win_lock
  kUnlock = 11,     // MPI_Win_unlock
  kLockAll = 12,    // MPI_Win_lock_all
  kUnlockAll = 13,  // MPI_Win_unlock_all
  kFlush = 14,      // MPI_Win_flush, MPI_Win_flush_local (one target)
  kFlushAll = 15,   // MPI_Win_flush_all, MPI_Win_flush_local_all
  kOther = 16,      // MPI_Win_sync, attach, detach and other window calls (mpi_rma_sync)
};
struct MpiSemantics {
  MpiClass cls = MpiClass::kNone;
  MpiSync sync = MpiSync::kNone;
  MpiRoot root = MpiRoot::kNone;
  MpiCompletion completion = MpiCompletion::kNone;
  MpiLifecycle lifecycle = MpiLifecycle::kNone;
  MpiRma rma = MpiRma::kNone;
  bool operator==(const MpiSemantics&) const = default;
};

constexpr uint32_t kInvalidRegion = 0;
constexpr uint32_t kLastMpiRegion = 999;
constexpr uint32_t kRootRegion = 1000;
constexpr uint32_t kFirstDynamicRegion = 1024;

// The lock of the visit_signal_safe() functions: tried for about a second, never waited for.
bool try_lock_signal_safe(std::mutex& m);
// f(value) for every value of `map` under `mu`, taken with try_lock_signal_safe; false, and no
// call, when it stays taken.
template <class Map, class F>
bool visit_map_signal_safe(std::mutex& mu, const Map& map, F& f) {
  if (!try_lock_signal_safe(mu)) return false;
  for (const auto& entry : map) f(entry.second);
  mu.unlock();
  return true;
}

struct RegionDef {
  uint32_t id = 0;
  std::string name;
  RegionKind kind = RegionKind::kUser;
  std::string file;   // source file where known
  uint32_t line = 0;  // source line where known
  // Visits and ticks that happened but were not recorded as events (compiler_hooks'
  // automatic runtime filter); the profile pass adds them to the region's call paths.
  uint64_t unrecorded_visits = 0;
  uint64_t unrecorded_ticks = 0;
  bool auto_filtered = false;  // the automatic runtime filter stopped recording it
  MpiSemantics mpi;            // RegionKind::kMpi only (see MpiSemantics); kNone otherwise
};

class RegionTable {
 public:
  RegionTable();
  // Returns the id of the region called `name` of this kind, defining it on first use.
  uint32_t define(std::string_view name, RegionKind kind, std::string_view file = {}, uint32_t line = 0);
  // Defines a region under a fixed id (MPI functions, the root). Idempotent; a region defined
  // without MPI semantics gets them from a later call that gives them.
  void define_fixed(uint32_t id, std::string_view name, RegionKind kind, MpiSemantics mpi = {});
  // The MPI semantics of a region (all kNone for an unknown id or a non-MPI region); cheaper
  // than get(): no strings are copied.
  MpiSemantics mpi(uint32_t id) const;
  // The table's own copy of a region's name; valid for the life of the table, which for
  // regions() is the process (regions are never removed). nullptr for an unknown id.
  const char* stable_name(uint32_t id) const;
  // Copy of one definition; an unknown id yields a RegionDef named "region#<id>".
  RegionDef get(uint32_t id) const;
  std::vector<RegionDef> snapshot() const;
  // f(const RegionDef&) for every region, under the table's lock (f must not call the table):
  // a look at every region with no copy of their strings.
  template <class F>
  void for_each(F&& f) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& entry : by_id_) f(entry.second);
  }
  // Gives region `id` its final name and source location (compiler_hooks: functions first
  // defined as "0x<addr>" and call sites as "callsite#<n>" are named at finalize). The old
  // name no longer finds the region; the new one finds it unless another region already owns
  // that name (names of renamed regions need not be unique). Invalidates stable_name(id).
  // Requires: no thread holds a stable_name() pointer of this region. Unknown id: no-op.
  void rename(uint32_t id, std::string_view name, std::string_view file = {}, uint32_t line = 0);
  // Adds visits/ticks that were measured but not recorded (see RegionDef). Unknown id: no-op.
  void add_unrecorded(uint32_t id, uint64_t visits, uint64_t ticks, bool auto_filtered);
  // For a partial trace written at a fault (runtime/sigsafe.h): calls f(const RegionDef&) for
  // every region without allocating; false, and no call, when the lock stays taken.
  template <class F>
  bool visit_signal_safe(F&& f) const {
    return visit_map_signal_safe(mu_, by_id_, f);
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint32_t> by_name_;
  std::unordered_map<uint32_t, RegionDef> by_id_;
  uint32_t next_ = kFirstDynamicRegion;
};
constexpr uint32_t kCommWorld = 0;
constexpr uint32_t kCommSelf = 1;
constexpr uint32_t kCommUnknown = 0xffffffffu;

struct CommDef {
  uint32_t id = kCommUnknown;
  std::vector<int32_t> members;  // world rank of each comm rank, in comm-rank order
  std::vector<int32_t> remote;   // intercommunicators: the remote group's world ranks
  uint32_t parent = kCommUnknown;
  std::string created_by;     // "MPI_COMM_WORLD", "MPI_Comm_split", ...
  std::vector<int32_t> dims;  // Cartesian topology, if any
  std::vector<int32_t> periods;
  bool freed = false;
};

// A thread-safe table of definitions keyed by their `id`, for any Def with `id` and `freed`
// members (communicators, windows). Header-only: the methods are small and cold.
template <typename Def>
class DefTable {
 public:
  // Replaces an existing definition with the same id.
  void define(Def def) {
    std::lock_guard<std::mutex> lock(mu_);
    by_id_[def.id] = std::move(def);
  }
  void mark_freed(uint32_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_id_.find(id);
    if (it != by_id_.end()) it->second.freed = true;
  }
  bool find(uint32_t id, Def& out) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return false;
    out = it->second;
    return true;
  }
  std::vector<Def> snapshot() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Def> out;
    for (const auto& [id, def] : by_id_) out.push_back(def);
    return out;
  }
  // As RegionTable::visit_signal_safe.
  template <class F>
  bool visit_signal_safe(F&& f) const {
    return visit_map_signal_safe(mu_, by_id_, f);
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, Def> by_id_;
};

using CommTable = DefTable<CommDef>;
CommTable& comms();

// The members of definition `id` in `table` (world ranks in rank order; empty for an unknown
// id), looked up once and then served from `cache`: replays ask for them per event.
template <typename Def>
const std::vector<int32_t>& cached_members(const DefTable<Def>& table, uint32_t id,
                                           std::unordered_map<uint32_t, std::vector<int32_t>>& cache) {
  auto it = cache.find(id);
  if (it == cache.end()) {
    Def d;
    std::vector<int32_t> m;
    if (table.find(id, d)) m = std::move(d.members);
    it = cache.emplace(id, std::move(m)).first;
  }
  return it->second;
}

// The world ranks that communicator `id`'s point-to-point peer ranks name, in rank order: its
// members, or on an intercommunicator the remote group's (a send's destination and a
// receive's source are ranks of the remote group there). Empty for an unknown id.
inline std::vector<int32_t> p2p_peers(const CommTable& table, uint32_t id) {
  CommDef d;
  if (!table.find(id, d)) return {};
  return d.remote.empty() ? std::move(d.members) : std::move(d.remote);
}

// One-sided windows (pmpi_wrappers: MPI_Win_create/allocate/allocate_shared/create_dynamic).
// Window ids are agreed like communicator ids (equal on all members, unique in the run) but
// form their own id space: RMA events carry them in their `comm` field.
struct WindowDef {
  uint32_t id = kCommUnknown;
  uint32_t comm = kCommUnknown;  // id of the communicator the window was created over
  std::vector<int32_t> members;  // world rank of each window rank, in comm-rank order
  std::string created_by;        // "MPI_Win_create", "MPI_Win_allocate", ...
  bool freed = false;
};

using WindowTable = DefTable<WindowDef>;

// How the rank's kFunction regions came about (compiler_hooks; docs/instrumentation.md).
// Set once by compiler_hooks when recording stops; report.json's "instrumentation".
struct Instrumentation {
  bool gcc = false;   // -finstrument-functions hooks ran while recording
  bool xray = false;  // XRay sleds were patched (critpath-cc/-cxx --xray)
  // XRay: functions with sleds in the executable. GCC: functions whose hooks ran while
  // recording (GCC mode cannot know the functions never called).
  uint64_t instrumented = 0;
  uint64_t patched = 0;            // XRay: functions patched when recording started
  uint64_t unpatched = 0;          // XRay: patched, then unpatched because the automatic filter dropped them
  uint64_t filtered = 0;           // left out by CRITPATH_FILTER (XRay: never patched)
  uint64_t auto_filtered = 0;      // dropped by the automatic filter (XRay: these are the unpatched)
  uint64_t sites_patched_out = 0;  // GCC: hook call sites of (auto-)filtered functions made jumps
};

// The definitions of one traced rank: everything the ids in its events refer to.
struct Definitions {
  Definitions() = default;
  Definitions(const Definitions&) = delete;
  Definitions& operator=(const Definitions&) = delete;

  RegionTable regions;
  CommTable comms;
  WindowTable windows;

  // Names of the hardware counters carried by the rank's COUNTERS events, in value order
  // ("PAPI_TOT_INS", ...). Set once by compiler_hooks before recording starts; read by the
  // profile pass. Thread-safe.
  void set_counter_names(std::vector<std::string> names);
  std::vector<std::string> counter_names() const;

  // The compiler instrumentation's figures (compiler_hooks sets them at recording stop;
  // critpath-analyze from the kept trace). Thread-safe.
  void set_instrumentation(const Instrumentation& info);
  Instrumentation instrumentation() const;
  // As RegionTable::visit_signal_safe: f(const std::vector<std::string>& counter_names,
  // const Instrumentation&).
  template <class F>
  bool visit_signal_safe(F&& f) const {
    if (!try_lock_signal_safe(counter_mu_)) return false;
    f(counter_names_, instrumentation_);
    counter_mu_.unlock();
    return true;
  }

 private:
  mutable std::mutex counter_mu_;
  std::vector<std::string> counter_names_;
  Instrumentation instrumentation_;  // requires counter_mu_
};

// This process's own rank, as it records: never destroyed (definitions happen during exit).
Definitions& current();
// Shorthands for current()'s members, for the recording side.
RegionTable& regions();
CommTable& comms();
WindowTable& windows();
void set_counter_names(std::vector<std::string> names);
std::vector<std::string> counter_names();
void set_instrumentation(const Instrumentation& info);

}  // namespace critpath::defs
