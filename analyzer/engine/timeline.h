// critpath — analyzer/engine/timeline.h
//
// The replay index of one rank: what the analyses need from its trace, in global time.
// Built by one forward scan (fused with the profile pass, which supplies call-path nodes):
//
//   events --> CallRecord per MPI call      (enter/exit, call-path node, region)
//          --> SendRecord per message sent  (peer as world rank, comm, tag, calls)
//          --> RecvRecord per message received (posting order kept for matching; a
//              blocking receive after a blocking probe is posted and completed by the probe)
//          --> CollRecord per collective instance, per communicator in call order
//
// Matching rule (exchange.h): MPI's non-overtaking order makes the k-th receive — in
// posting order — of (source, comm, tag), with wildcards already resolved from the status,
// match the k-th send of (destination, comm, tag). No per-message lockstep replay needed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "libtrace/defs/definitions.h"
#include "libtrace/event/event.h"

namespace critpath::analyzer {
class GlobalTime;  // engine/global_time.h
}  // namespace critpath::analyzer

namespace critpath::analyzer::engine {

constexpr uint32_t kNoCall = UINT32_MAX;

// Collective families for the wait-state patterns: the op region's defs::MpiSync (the spec's
// `sync`; a nonblocking collective has its blocking twin's, and is waited for at completion).
enum class CollKind : uint8_t {
  kBarrier,  // Barrier, Ibarrier
  kNxN,      // Allreduce, Allgather(v), Alltoall(v,w), Reduce_scatter(_block), neighbours; I*
  kOneToN,   // Bcast, Scatter(v); I*
  kNToOne,   // Reduce, Gather(v); I*
  kScan,     // Scan, Exscan; I*
  kOther,    // communicator constructors recorded as collectives, other MPI calls
};
CollKind coll_kind(defs::MpiSync sync);

// What a collective's byte totals (CollRecord::sent / received) tell of who sends data to whom.
enum class CollFlow : uint8_t {
  kEvery,     // a member that sends data sends it to every member that receives data (Barrier,
              // Allreduce, Allgather(v), Alltoall, Reduce_scatter(_block), rooted ones, scans)
  kPairwise,  // each pair of members has counts of its own, of which the trace holds only
              // whether some block to a rank is empty (CollRecord::some_block_empty)
              // (Alltoallv, Alltoallw; their I* and persistent forms)
  kNeighbor,  // from the topology's neighbours only (MPI_Neighbor_*, MPI_Ineighbor_*)
  kRemote,    // an intercommunicator's: data flows between its two groups only, and the
              // instance is synchronized over the local group (whose members exchange none)
};
// The flow of a non-intercommunicator collective named `mpi_name` ("MPI_Alltoallv", ...).
CollFlow coll_flow(const char* mpi_name);

// 24 bytes: MPI regions have the spec's ids (libtrace/defs: 1..999), so 16 bits hold them.
struct CallRecord {
  double enter = 0;  // global seconds
  double exit = 0;
  int32_t node = -1;      // local call-path node (profile)
  uint16_t region = 0;    // the MPI function's region id
  uint16_t location = 0;  // the thread that made the call (0: the one that called MPI_Init)
};
static_assert(sizeof(CallRecord) == 24, "a call record is 24 bytes");

// A message's size is not in its records: the call-path profile holds the bytes per call path,
// and no analysis of the replay index reads one message's (a message-bound run has millions of
// records; 20 and 24 bytes instead of 32 and 40).
struct SendRecord {
  int32_t peer = 0;  // world rank of the destination
  uint32_t comm = 0;
  int32_t tag = 0;
  uint32_t call = kNoCall;           // the call that sent (MPI_Send, MPI_Isend, ...)
  uint32_t complete_call = kNoCall;  // the call where the send completed
};
static_assert(sizeof(SendRecord) == 20, "a send record is 20 bytes");

struct RecvRecord {
  int32_t peer = 0;  // world rank of the source (resolved)
  uint32_t comm = 0;
  int32_t tag = 0;
  uint32_t post_call = kNoCall;      // MPI_Recv itself (or the probe before it), or the MPI_Irecv
  uint32_t complete_call = kNoCall;  // as post_call, or the Wait/Test that completed an MPI_Irecv
  uint32_t post_seq = 0;             // posting order on this rank (indices are 32-bit, as calls')
};
static_assert(sizeof(RecvRecord) == 24, "a receive record is 24 bytes");

struct CollRecord {
  uint32_t comm = 0;
  uint32_t op = 0;                   // region id of the MPI function
  CollKind kind = CollKind::kOther;  // coll_kind of op's MpiSync, looked up once per region
  CollFlow flow = CollFlow::kEvery;  // coll_flow of op's name, or kRemote on an intercommunicator
  int32_t root = -1;                 // rank in comm, or -1
  bool some_block_empty = false;     // an Alltoallv/w's other member sent this rank no data
                                     // (recorded as trace::kRootSomeBlockEmpty)
  uint32_t call = kNoCall;           // the collective call (or the I* call that posted it)
  uint32_t complete_call = kNoCall;  // == call for blocking ones; the Wait/Test otherwise
  uint64_t sent = 0, received = 0;
};

// One one-sided event of the rank (analyzer/passes/rma): what the call did on which window.
// `kind` is the call's defs::MpiRma role; a Win_start / Win_post writes one record per member
// of its group, an operation one per RMA event (a fetching accumulate: the origin bytes as
// kAccumulate, the result bytes as kGet).
struct RmaRecord {
  enum Op : uint8_t { kSync = 0, kPut = 1, kGet = 2, kAccumulate = 3 };
  uint32_t call = kNoCall;  // index in Timeline::calls
  uint32_t win = 0;         // window id (defs::WindowTable)
  int32_t peer = -1;        // target / group member as window rank; -1: none
  defs::MpiRma kind = defs::MpiRma::kNone;
  Op op = kSync;     // kSync for synchronization records
  uint8_t lock = 0;  // MPI_Win_lock: 1 exclusive, 2 shared
  uint64_t bytes = 0;
};

// Time between MPI calls on location 0, per call-path node (the delay analysis's time
// vectors): the gap before call k runs from the exit of the previous location-0 call (or the
// location's first event) to the enter of call k. Packed: 12 bytes, one per call in a loop.
struct __attribute__((packed)) GapEntry {
  int32_t node = -1;  // local call-path node
  double seconds = 0;
};
static_assert(sizeof(GapEntry) == 12, "a gap entry is 12 bytes");

// Every thread of the rank that called MPI is a location of its own (MPI_THREAD_MULTIPLE):
// its calls, messages and collectives are in the timeline like the main thread's. Calls are
// in call order per location, location after location; sends, receives (post_seq) and
// collectives are in time order across locations, which is the order MPI matches them in
// when threads share a communicator and tag (MPI defines none between threads).
struct Timeline {
  std::vector<CallRecord> calls;
  std::vector<SendRecord> sends;
  std::vector<RecvRecord> recvs;
  std::vector<CollRecord> colls;
  // One-sided: every RMA record in call order, and the window-collective instances (creation,
  // fences, free) per window in call order, as CollRecords whose `comm` is the window id (a
  // separate id space: never looked up as a communicator).
  std::vector<RmaRecord> rma;
  std::vector<CollRecord> win_colls;
  uint32_t init_call = kNoCall;      // MPI_Init / MPI_Init_thread
  uint32_t finalize_call = kNoCall;  // MPI_Finalize
  uint64_t unresolved_peers = 0;     // peers on unknown communicators
  uint16_t mpi_locations = 0;        // locations (threads) with at least one MPI call
  // Gaps (GapEntry) when TimelineBuilder::profile_gaps was set: the entries of call k's gap are
  // gaps[gap_begin[k] .. gap_begin[k + 1]) (gap_begin has calls.size() + 1 entries); empty
  // for calls of other locations.
  std::vector<uint32_t> gap_begin;
  std::vector<GapEntry> gaps;
};

// Builds a Timeline from the events of every location. Call begin_location() before each
// location's events, then feed every event with the call-path node the profile assigned
// (ENTER: the node entered; EXIT: the node left; others: the current node).
class TimelineBuilder {
 public:
  // to_global: raw ticks -> global seconds.
  // my_world_rank resolves MPI_COMM_SELF peers.
  // definitions: the traced rank's (regions, communicators); must outlive the builder.
  TimelineBuilder(std::function<double(uint64_t)> to_global, int32_t my_world_rank,
                  const defs::Definitions& definitions);
  // The same with the analysis's own time base (must outlive the builder): finish() converts
  // every call's two times through it inline, not through a std::function call each.
  TimelineBuilder(const GlobalTime& time, int32_t my_world_rank, const defs::Definitions& definitions);
  // Room for the records of a trace of `events` events: the calls (at most one per ENTER/EXIT
  // pair) and the gap profile's bounds (one per call); the sends, the receives and the gap
  // entries as blocking point-to-point calls make them (a third of the events each; more
  // regrow). No regrowth (no copies, no pages touched twice) up to those; the reservation is
  // address space only, its pages are touched as records arrive.
  void reserve(uint64_t events);
  // Also book the time between location 0's MPI calls per call-path node (Timeline::gaps);
  // `seconds_per_tick` converts raw tick differences.
  void profile_gaps(double seconds_per_tick) {
    gap_seconds_per_tick_ = seconds_per_tick;
    gaps_on_ = true;
    gap_here_ = location_ == 0;
  }
  void begin_location(uint16_t location);
  void on_event(const trace::Event& e, int32_t node);
  // on_event for a narrow event (trace::CompactEvent: only time, region and kind), inline:
  // an ENTER or EXIT, or a kind the index has nothing to do for. Forced: with on_enter and
  // on_exit inlined into it GCC keeps it out of line, a call per event (~110 instructions per
  // narrow event; 63.3M -> 61.7M in build_profile less zstd and decode, bench_chain 0.05).
  [[gnu::always_inline]] void on_narrow(uint64_t time, uint32_t region, trace::EventKind kind, int32_t node) {
    if (kind == trace::EventKind::kEnter) on_enter(time, region, node);
    else if (kind == trace::EventKind::kExit) on_exit(time, region);
    else gap_tick_outside(time);
    prev_node_ = node;  // active after this event: the next gap_tick books to it
  }
  // on_event for a wide event, the blocking send and receive inline (a message loop's every
  // wide event: on_event was a call per message, and a second dispatch on the kind).
  [[gnu::always_inline]] void on_wide(const trace::Event& e, int32_t node) {
    const trace::EventKind kind = e.kind;
    if (kind != trace::EventKind::kSend && kind != trace::EventKind::kRecv) [[unlikely]] {
      on_event(e, node);
      return;
    }
    gap_tick_outside(e.time);
    if (kind == trace::EventKind::kSend) append_send(e, open_top_, open_top_);
    else add_recv(e, open_top_);
    prev_node_ = node;
  }
  // node_remap: LocalProfile::node_remap (the call-path nodes of threads other than the main
  // one change in the profile's merge); empty: nodes are final.
  Timeline finish(const std::vector<int32_t>& node_remap = {});
  // Phase by phase (engine/window.h): the records since the start or the previous take, as a
  // Timeline of their own (indices from 0, finished as finish() finishes one), and the builder
  // goes on with empty ones. Only where no MPI call is open and no request is pending (a
  // window cut); requests still pending are forgotten. The gap profile's entries are the
  // window's (the gap after the cut belongs to the next window's first call). The count of
  // locations with MPI calls carries on; unresolved_peers counts per window.
  Timeline take_window();

 private:
  // A peer as a world rank: MPI_COMM_WORLD's answer inline (every message of most runs), the
  // others out of line.
  [[gnu::always_inline]] int32_t world_rank(uint32_t comm, int32_t peer) {
    return comm == defs::kCommWorld ? peer : world_rank_slow(comm, peer);
  }
  int32_t world_rank_slow(uint32_t comm, int32_t peer);
  // A region's class: 1 not MPI, 2 MPI, 3 a blocking probe (MPI_Probe, MPI_Mprobe), 4 the
  // initialization (MpiLifecycle::kInit), 5 MPI_Finalize (kFinalize); every class from 2 on is MPI.
  // A region id beyond 16 bits (CallRecord::region) is no MPI function's: class 1.
  enum : uint8_t { kNotMpi = 1, kMpi = 2, kBlockingProbe = 3, kMpiInit = 4, kMpiFinalize = 5 };
  uint8_t region_class(uint32_t region) {  // every ENTER and EXIT asks: the known answers inline
    if (region < mpi_flat_.size() && mpi_flat_[region] != 0) return mpi_flat_[region];
    return region_class_slow(region);
  }
  uint8_t region_class_slow(uint32_t region);
  bool is_mpi(uint32_t region) { return region_class(region) >= kMpi; }
  bool is_blocking_probe(uint32_t region) { return region_class(region) == kBlockingProbe; }

  std::function<double(uint64_t)> to_global_;
  const GlobalTime* time_ = nullptr;  // set: used instead of to_global_
  const defs::Definitions& defs_;
  Timeline t_;
  // The stack of open MPI calls (normally depth <= 1): its top in open_top_ (kNoCall: none)
  // with its region in open_region_ (kNoRegion: none) and class in open_class_, the calls
  // below it in open_outer_, so that the ENTER and EXIT of an unnested call touch no vector.
  static constexpr uint32_t kNoRegion = UINT32_MAX;  // no MPI region's id (those are < 2^16)
  uint32_t open_top_ = kNoCall;
  uint32_t open_region_ = kNoRegion;
  uint8_t open_class_ = 0;
  std::vector<uint32_t> open_outer_;
  void clear_open() {
    open_top_ = kNoCall;
    open_region_ = kNoRegion;
    open_outer_.clear();
  }
  std::unordered_map<uint64_t, uint32_t> isend_by_req_;                     // request -> send index
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> irecv_post_;  // req -> (call, seq)
  std::unordered_map<uint64_t, uint32_t> icoll_by_req_;                     // request -> coll index
  std::unordered_map<uint32_t, std::vector<int32_t>> peers_;  // comm -> world ranks its p2p peers name
  std::vector<uint8_t> mpi_flat_;                             // region -> 0 unknown, else region_class
  std::unordered_map<uint32_t, uint8_t> mpi_region_;          // regions beyond the flat table
  std::unordered_map<uint32_t, std::pair<CollKind, CollFlow>> coll_kind_;  // op region -> kind, flow
  std::unordered_map<uint32_t, bool> inter_;                               // comm -> intercommunicator
  // This location's last blocking probe, until the receive that follows it (kNoCall: none).
  uint32_t probe_call_ = kNoCall;
  // The probe that the open call follows directly (kNoCall: none): its receive's post and end.
  uint32_t probe_for_open_ = kNoCall;
  // The receives a probe posted and completed: (index in recvs, the receive's own call).
  std::vector<std::pair<uint32_t, uint32_t>> probed_;
  void unprobe_shared_receives();
  // on_event's steps; `cur`: the open MPI call (kNoCall: none).
  // An MPI call's ENTER and the EXIT of the open call, inline (once per MPI call each); what
  // only a run's first call, a nested call or the lifecycle calls need is out of line.
  [[gnu::always_inline]] void open_call(uint64_t time, uint32_t region, int32_t node, uint8_t cls) {
    if (gaps_on_) close_gap(time);
    if (!location_has_mpi_) [[unlikely]]
      first_mpi_call();
    if (open_top_ != kNoCall) [[unlikely]]
      open_outer_.push_back(open_top_);
    open_top_ = uint32_t(ncalls_);
    open_region_ = region;
    open_class_ = cls;
    CallRecord& c = append_counted(t_.calls, ncalls_);
    c.enter = c.exit = hold_ticks(time);
    c.node = node;
    c.region = uint16_t(region);  // an MPI region: below 2^16 (region_class)
    c.location = location_;
    // A probe speaks only for the receive of the call right after it (a probe followed by other
    // calls, or by a receive from MPI_PROC_NULL that records nothing, speaks for none).
    probe_for_open_ = probe_call_;
    probe_call_ = kNoCall;
  }
  [[gnu::always_inline]] void close_call(uint64_t time) {
    const uint32_t idx = open_top_;
    t_.calls[idx].exit = hold_ticks(time);
    // The gap after the call starts here (gap_tick_outside: no tick inside a call).
    if (gap_here_) last_ticks_ = time;
    probe_for_open_ = kNoCall;
    if (open_class_ != kMpi || !open_outer_.empty()) [[unlikely]] {
      close_call_rare(idx);
      return;
    }
    // No call below it (tested above): clear_open's open_outer_.clear() has nothing to do, and
    // stayed a call per MPI call in the decode loop.
    open_top_ = kNoCall;
    open_region_ = kNoRegion;
  }
  void close_call_rare(uint32_t idx);  // a lifecycle call or a probe, or a nested call's outer one
  void first_mpi_call();
  [[gnu::always_inline]] void on_enter(uint64_t time, uint32_t region, int32_t node) {
    const uint8_t cls = region_class(region);
    if (cls >= kMpi) open_call(time, region, node, cls);
    else gap_tick_outside(time);
  }
  [[gnu::always_inline]] void on_exit(uint64_t time, uint32_t region) {
    if (region == open_region_) close_call(time);
    else gap_tick_outside(time);
  }
  // v.push_back() of a default record, returned to be filled, for the calls, the sends, the
  // receives, the gaps and their bounds, whose vectors run ahead of their records while the
  // timeline is built: [0, n) are records, [n, size()) default ones made a block at a time
  // (finish() cuts them off). emplace_back stayed a call in the decode loop (engine/profile.cpp:
  // GCC's inlining budget is spent there), one per record (the gaps': 25 instructions each).
  template <class T>
  [[gnu::always_inline]] static T& append_counted(std::vector<T>& v, size_t& n) {
    // Pointers compared, not counts: a vector's size divides by the record's size (a multiply
    // for the 24-byte calls and receives).
    if (v.data() + n == std::to_address(v.end())) [[unlikely]]
      extend(v);
    return v[n++];
  }
  // Within the reservation a block (its pages touched as records arrive), beyond it doubling.
  template <class T>
  [[gnu::noinline]] static void extend(std::vector<T>& v) {
    constexpr size_t kBlock = 4096;
    const size_t room = v.capacity() - v.size();
    v.resize(v.size() + (room > 0 ? std::min(room, kBlock) : v.size() + kBlock));
  }
  size_t ncalls_ = 0;      // records in t_.calls (append_counted)
  size_t nsends_ = 0;      // records in t_.sends
  size_t nrecvs_ = 0;      // records in t_.recvs
  size_t ngap_begin_ = 0;  // entries in t_.gap_begin
  size_t ngaps_ = 0;       // entries in t_.gaps
  // While the timeline is built its calls hold their raw tick times in the bits of enter and
  // exit; finish() converts them to global seconds in one loop (no conversion per event).
  static double hold_ticks(uint64_t ticks) {
    double d;
    std::memcpy(&d, &ticks, sizeof d);
    return d;
  }
  void add_send(const trace::Event& e, uint32_t cur);
  // A send's record (its call `cur`, completed in `complete`), unless its peer is unknown;
  // returns whether it was recorded.
  [[gnu::always_inline]] bool append_send(const trace::Event& e, uint32_t cur, uint32_t complete) {
    const int32_t peer = world_rank(e.comm, e.peer);
    if (peer < 0) return false;
    SendRecord& s = append_counted(t_.sends, nsends_);
    s.peer = peer;
    s.comm = e.comm;
    s.tag = e.tag;
    s.call = cur;
    s.complete_call = complete;
    return true;
  }
  // A blocking receive (RECV): posted and completed by `cur`, or by the blocking probe right
  // before it.
  [[gnu::always_inline]] void add_recv(const trace::Event& e, uint32_t cur) {
    RecvRecord r;
    r.peer = world_rank(e.comm, e.peer);
    r.comm = e.comm;
    r.tag = e.tag;
    // After a blocking probe the message had arrived when the probe returned: the probe
    // is where the receiver waited for it, so it posts and completes the receive.
    r.post_call = r.complete_call = probe_for_open_ != kNoCall ? probe_for_open_ : cur;
    r.post_seq = post_seq_++;
    if (r.peer >= 0 && probe_for_open_ != kNoCall) [[unlikely]]
      probed_.push_back({uint32_t(nrecvs_), cur});
    probe_for_open_ = kNoCall;
    if (r.peer >= 0) append_counted(t_.recvs, nrecvs_) = r;
  }
  void add_irecv(const trace::Event& e, uint32_t cur);
  void add_coll(const trace::Event& e, uint32_t cur);  // a collective or its nonblocking post
  void on_rma(const trace::Event& e, uint32_t cur);
  uint32_t post_seq_ = 0;
  int32_t me_ = 0;
  uint16_t location_ = 0;
  bool location_has_mpi_ = false;
  // Gap profiling (location 0): the node active since the previous event, its tick time, and
  // the current gap's ticks per node (a slot per node, and the nodes touched). Only the time
  // outside MPI calls is booked, so an event inside a call ticks nothing: the gap after a call
  // starts at its EXIT (close_call), and the ENTER of the next one closes it (close_gap).
  // Forced inline: once on_narrow is inlined into the decode loop (engine/profile.cpp) GCC
  // keeps it out of line, a call per event.
  [[gnu::always_inline]] void gap_tick_outside(uint64_t time) {
    if (open_top_ == kNoCall && gap_here_) gap_tick(time);
  }
  [[gnu::always_inline]] void gap_tick(uint64_t time) {
    // The interval since the previous event belongs to prev_node_ unless an MPI call was open.
    // Per node a slot (nodes are dense), and the list of nodes touched in this gap.
    if (open_top_ == kNoCall && prev_node_ >= 0 && time > last_ticks_) {
      const size_t n = size_t(prev_node_);
      if (n >= gap_ticks_.size()) grow_gap_ticks(n);
      if (gap_ticks_[n] == 0) {
        if (gap_ntouched_ == gap_touched_.size()) grow_gap_touched();
        gap_touched_[gap_ntouched_++] = prev_node_;
      }
      gap_ticks_[n] += time - last_ticks_;
    }
    last_ticks_ = time;
  }
  [[gnu::noinline]] void grow_gap_ticks(size_t n) {
    gap_ticks_.resize(std::max(n + 1, 2 * gap_ticks_.size()), 0);
  }
  [[gnu::noinline]] void grow_gap_touched() { gap_touched_.resize(2 * gap_touched_.size() + 16); }
  // The gap before a call closes at its ENTER (at `time`): its entries are the nodes touched
  // since the previous call's EXIT, this ENTER's own interval included. A gap of that interval
  // alone (no event between the two calls: a message loop's every gap) is booked at once.
  [[gnu::always_inline]] void close_gap(uint64_t time) {
    append_counted(t_.gap_begin, ngap_begin_) = uint32_t(ngaps_);
    if (!gap_here_) return;
    if (gap_ntouched_ == 0) [[likely]] {
      // Every slot of gap_ticks_ is zero: the interval's ticks are the entry's.
      if (open_top_ == kNoCall && prev_node_ >= 0 && time > last_ticks_) {
        GapEntry& g = append_counted(t_.gaps, ngaps_);
        g.node = prev_node_;
        g.seconds = double(time - last_ticks_) * gap_seconds_per_tick_;
      }
      last_ticks_ = time;
      return;
    }
    gap_tick(time);
    flush_gap();
  }
  [[gnu::noinline]] void flush_gap() {
    for (size_t i = 0; i < gap_ntouched_; ++i) {
      const int32_t n = gap_touched_[i];
      GapEntry& g = append_counted(t_.gaps, ngaps_);
      g.node = n;
      g.seconds = double(gap_ticks_[size_t(n)]) * gap_seconds_per_tick_;
      gap_ticks_[size_t(n)] = 0;
    }
    gap_ntouched_ = 0;
  }
  bool gaps_on_ = false;
  bool gap_here_ = false;  // gaps_on_ and location 0
  double gap_seconds_per_tick_ = 0;
  uint64_t last_ticks_ = UINT64_MAX;  // none yet: no time is later
  int32_t prev_node_ = -1;
  std::vector<uint64_t> gap_ticks_;
  // The nodes touched in this gap: gap_touched_[0, gap_ntouched_), storage that only grows (a
  // push_back per gap stayed a call in the decode loop, GCC's inlining budget spent there).
  std::vector<int32_t> gap_touched_;
  size_t gap_ntouched_ = 0;
};

}  // namespace critpath::analyzer::engine
