// critpath — analyzer/otf2/otf2_export.cpp
//
// Three phases, each rank in lockstep through OTF2's collective calls (otf2_support.h):
//
//   1. events      every rank writes its threads' events with its own ids (region ids,
//                  communicator and window ids, its RMA groups), collecting what they refer to
//   2. unification the ranks' definitions (JSON) go to rank 0, which gives every distinct
//                  region, group, communicator, window and metric one global id, writes
//                  traces.def, and sends each rank the global ids of its own
//   3. mappings    every rank writes its locations' .def files: OTF2 mapping tables from its
//                  ids to the global ones, which every OTF2 reader applies to the events
//
// A failure on one rank never leaves the others waiting: every collective step is taken by
// all ranks, errors are carried to the end and agreed there.
#include "analyzer/otf2/otf2_export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analyzer/engine/global_time.h"
#include "analyzer/otf2/otf2_support.h"
#include "critpath_version.h"
#include "libtrace/buffer/trace_reader.h"

namespace critpath::analyzer::otf2 {
namespace {

using nlohmann::json;
using K = trace::EventKind;

// A rank's ids that its events use and that need a global id (phase 2).
struct LocalRefs {
  std::set<uint32_t> regions;                // entered (and call-site) regions
  std::vector<std::vector<int32_t>> groups;  // RmaGroupSync members, world ranks; id = index
  std::map<std::vector<int32_t>, uint32_t> group_ids;
  uint32_t group(const std::vector<int32_t>& members) {
    auto [it, fresh] = group_ids.emplace(members, uint32_t(groups.size()));
    if (fresh) groups.push_back(members);
    return it->second;
  }
};

// Local string ids of ProgramBegin: 0 the executable, 1.. its arguments.
constexpr uint32_t kStringExecutable = 0;
constexpr uint32_t kLocalMetric = 0;
// Matching ids of RMA operations that are not request based (those use critpath's request
// ids, small counters): their own range, so the two never meet.
constexpr uint64_t kFirstMatchingId = uint64_t(1) << 62;
// Time stamps: picoseconds since a whole second `base` that every rank agrees on (the earliest
// event's, rounded down), so that ticks below a nanosecond keep their order (2^64 ps: 213 days).
constexpr uint64_t kTicksPerSecond = 1000000000000ull;

struct ThreadSummary {
  uint16_t thread = 0;
  uint64_t events = 0;
  uint64_t first = UINT64_MAX, last = 0;
};

// Writes one location's events. Feed every event in order with put(), then finish().
class LocationWriter {
 public:
  LocationWriter(OTF2_EvtWriter* w, const LocationTrace& loc, const GlobalTime& time, double base_s,
                 LocalRefs& refs, bool main_thread)
      : w_(w), defs_(*loc.definitions), run_(loc.run), time_(time), base_s_(base_s), refs_(refs),
        main_(main_thread) {
    const std::vector<std::string> names = defs_.counter_names();
    ncounters_ = names.size();
  }

  void put(const trace::Event& e) {
    if (!begun_) begin(ts(e.time));
    // A COUNTERS event follows the ENTER/EXIT it belongs to; Score-P writes the Metric first.
    if (have_held_) {
      have_held_ = false;
      if (e.kind == K::kCounters && e.time == held_.time) {
        metric(ts(e.time), e);
        region_event(held_);
        return;
      }
      region_event(held_);
    }
    const uint64_t t = ts(e.time);
    // A blocking send's SEND is recorded once the call has succeeded (a failed call sent
    // nothing); Score-P writes MpiSend where the send begins: at the event before it, the
    // call's Enter (or whatever ran inside the call before the send finished).
    const uint64_t before = prev_t_;
    prev_t_ = std::max(prev_t_, t);
    if (acc_.active && e.kind != K::kRmaGet) flush_accumulate();
    if (group_.active && e.kind != K::kRmaSync) flush_group();
    switch (e.kind) {
      case K::kEnter:
      case K::kExit:
        held_ = e;
        have_held_ = true;
        break;
      case K::kCallsite:
        mpi_of(e.region);  // marks it used
        check(OTF2_EvtWriter_Enter(w_, nullptr, t, e.region));
        open_callsites_.push_back(e.region);
        pending_callsite_ = true;
        break;
      case K::kSend:
        check(OTF2_EvtWriter_MpiSend(w_, nullptr, before != 0 ? before : t, uint32_t(e.peer), e.comm,
                                     uint32_t(e.tag), e.bytes));
        break;
      case K::kRecv:
        check(OTF2_EvtWriter_MpiRecv(w_, nullptr, t, uint32_t(e.peer), e.comm, uint32_t(e.tag), e.bytes));
        break;
      case K::kIsend:
        check(OTF2_EvtWriter_MpiIsend(w_, nullptr, t, uint32_t(e.peer), e.comm, uint32_t(e.tag), e.bytes,
                                      e.request));
        break;
      case K::kIsendComplete: check(OTF2_EvtWriter_MpiIsendComplete(w_, nullptr, t, e.request)); break;
      case K::kIrecvRequest: check(OTF2_EvtWriter_MpiIrecvRequest(w_, nullptr, t, e.request)); break;
      case K::kIrecv:
        check(OTF2_EvtWriter_MpiIrecv(w_, nullptr, t, uint32_t(e.peer), e.comm, uint32_t(e.tag), e.bytes,
                                      e.request));
        break;
      case K::kRequestTest: check(OTF2_EvtWriter_MpiRequestTest(w_, nullptr, t, e.request)); break;
      case K::kRequestCancel: check(OTF2_EvtWriter_MpiRequestCancelled(w_, nullptr, t, e.request)); break;
      case K::kCollBegin: check(OTF2_EvtWriter_MpiCollectiveBegin(w_, nullptr, t)); break;
      case K::kCollEnd:
        check(OTF2_EvtWriter_MpiCollectiveEnd(w_, attributes(e.root), t, op_of(e.region), e.comm,
                                              root_of(e.root), e.bytes, e.bytes_received));
        break;
      case K::kIcollPost:
        // OTF2 carries the operation at completion: keep it until then.
        icoll_[e.request] = e;
        check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w_, nullptr, t, e.request));
        break;
      case K::kIcollComplete: {
        auto it = icoll_.find(e.request);
        if (it == icoll_.end()) break;  // posted before recording started
        const trace::Event& p = it->second;
        check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w_, attributes(p.root), t, op_of(p.region), p.comm,
                                                           root_of(p.root), p.bytes, p.bytes_received,
                                                           e.request));
        icoll_.erase(it);
        break;
      }
      case K::kMeasurementOff:
        check(OTF2_EvtWriter_MeasurementOnOff(w_, nullptr, t, OTF2_MEASUREMENT_OFF));
        break;
      case K::kMeasurementOn:
        check(OTF2_EvtWriter_MeasurementOnOff(w_, nullptr, t, OTF2_MEASUREMENT_ON));
        break;
      case K::kCounters: metric(t, e); break;  // not after an ENTER/EXIT: on its own
      default:
        if (e.kind >= K::kRmaFirst && e.kind <= K::kRmaLast) rma(t, e);
        break;
    }
  }

  // Closes what is still open: held events, call sites, the program.
  void finish() {
    if (have_held_) {
      have_held_ = false;
      region_event(held_);
    }
    if (acc_.active) flush_accumulate();
    if (group_.active) flush_group();
    while (!open_callsites_.empty()) {
      check(OTF2_EvtWriter_Leave(w_, nullptr, last_, open_callsites_.back()));
      open_callsites_.pop_back();
    }
    if (main_ && begun_) check(OTF2_EvtWriter_ProgramEnd(w_, nullptr, last_, OTF2_UNDEFINED_INT64));
  }

  OTF2_ErrorCode error() const { return error_; }
  uint64_t first() const { return first_; }
  uint64_t last() const { return last_; }

 private:
  struct Frame {
    uint32_t region = 0;
    defs::MpiSemantics mpi;
    bool callsite = false;  // a call-site region encloses this MPI call: leave it too
  };
  struct PendingOp {
    uint32_t win;
    int32_t peer;
    uint64_t id;
  };

  // The OTF2 time stamp (ps since the base) of a tick value. OTF2 refuses a time stamp smaller
  // than the one before it on the location: one that the correction (or the clock) put a
  // little earlier is written at the previous one's time.
  uint64_t ts(uint64_t ticks) {
    const long long ps = std::llround((time_.seconds(ticks) - base_s_) * double(kTicksPerSecond));
    last_ = std::max(last_, ps > 0 ? uint64_t(ps) : 0);
    return last_;
  }
  void check(OTF2_ErrorCode c) {
    if (c != OTF2_SUCCESS && error_ == OTF2_SUCCESS) error_ = c;
  }

  void begin(uint64_t t) {
    begun_ = true;
    first_ = t;
    if (!main_) return;
    std::vector<OTF2_StringRef> args;
    for (size_t i = 0; i < run_.args.size(); ++i) args.push_back(OTF2_StringRef(1 + i));
    check(OTF2_EvtWriter_ProgramBegin(w_, nullptr, t, kStringExecutable, uint32_t(args.size()),
                                      args.empty() ? nullptr : args.data()));
  }

  // A region's semantics, looked up once; the first lookup also marks the region used (it
  // needs a global definition). Region ids are dense: a flat table, a map for outliers.
  const defs::MpiSemantics& mpi_of(uint32_t region) {
    constexpr uint32_t kFlat = 1u << 20;
    if (region < kFlat) {
      if (region >= flat_.size()) flat_.resize(std::max<size_t>(size_t(region) + 1, 2 * flat_.size()));
      std::optional<defs::MpiSemantics>& f = flat_[region];
      if (!f) {
        f = defs_.regions.mpi(region);
        refs_.regions.insert(region);
      }
      return *f;
    }
    auto it = mpi_.find(region);
    if (it == mpi_.end()) {
      it = mpi_.emplace(region, defs_.regions.mpi(region)).first;
      refs_.regions.insert(region);
    }
    return it->second;
  }
  const std::string& name_of(uint32_t region) {
    auto it = names_.find(region);
    if (it == names_.end()) it = names_.emplace(region, defs_.regions.get(region).name).first;
    return it->second;
  }
  OTF2_CollectiveOp op_of(uint32_t region) { return collective_op(name_of(region)); }
  static uint32_t root_of(int32_t root) { return root < 0 ? OTF2_COLLECTIVE_ROOT_NONE : uint32_t(root); }
  // A collective's attributes: CRITPATH::SOME_BLOCK_EMPTY where the recorded root says so, else
  // none. The list is emptied again before it is handed out (OTF2 writes all it holds).
  OTF2_AttributeList* attributes(int32_t root) {
    if (root != trace::kRootSomeBlockEmpty) return nullptr;
    if (!attrs_) attrs_.reset(OTF2_AttributeList_New());
    if (!attrs_) return nullptr;
    OTF2_AttributeList_RemoveAllAttributes(attrs_.get());
    OTF2_AttributeList_AddUint8(attrs_.get(), kSomeBlockEmptyRef, 1);
    return attrs_.get();
  }

  void region_event(const trace::Event& e) {
    const uint64_t t = ts(e.time);
    if (e.kind == K::kEnter) {
      check(OTF2_EvtWriter_Enter(w_, nullptr, t, e.region));
      Frame f;
      f.region = e.region;
      f.mpi = mpi_of(e.region);
      f.callsite = pending_callsite_;
      pending_callsite_ = false;
      frames_.push_back(f);
      // Window collectives: critpath records no begin event, Score-P brackets them.
      if (f.mpi.rma == defs::MpiRma::kCreate || f.mpi.rma == defs::MpiRma::kFree ||
          f.mpi.rma == defs::MpiRma::kFence)
        check(OTF2_EvtWriter_RmaCollectiveBegin(w_, nullptr, t));
      return;
    }
    mpi_of(e.region);  // an exit whose enter was not recorded still names a defined region
    check(OTF2_EvtWriter_Leave(w_, nullptr, t, e.region));
    size_t i = frames_.size();
    while (i > 0 && frames_[i - 1].region != e.region) --i;
    if (i == 0) return;  // an exit without its enter (user regions closed out of order)
    const bool callsite = frames_[i - 1].callsite;
    frames_.resize(i - 1);
    if (callsite && !open_callsites_.empty()) {
      check(OTF2_EvtWriter_Leave(w_, nullptr, t, open_callsites_.back()));
      open_callsites_.pop_back();
    }
  }

  void metric(uint64_t t, const trace::Event& e) {
    const size_t n = std::min<size_t>(e.bytes, trace::kMaxCounters);
    if (n == 0 || n != ncounters_) return;  // no names for them: nothing a reader could use
    OTF2_Type types[trace::kMaxCounters];
    OTF2_MetricValue values[trace::kMaxCounters];
    for (size_t k = 0; k < n; ++k) {
      types[k] = OTF2_TYPE_UINT64;
      values[k].unsigned_int = e.counters[k];
    }
    check(OTF2_EvtWriter_Metric(w_, nullptr, t, kLocalMetric, uint8_t(n), types, values));
  }

  // The MPI call the event belongs to (the innermost open frame), or none.
  defs::MpiRma role() const { return frames_.empty() ? defs::MpiRma::kNone : frames_.back().mpi.rma; }
  uint32_t call_region() const { return frames_.empty() ? 0 : frames_.back().region; }

  // World ranks of window ranks (RmaGroupSync groups are groups of MPI_COMM_WORLD ranks).
  int32_t world_of(uint32_t win, int32_t peer) {
    const std::vector<int32_t>& m = defs::cached_members(defs_.windows, win, win_members_);
    return peer >= 0 && size_t(peer) < m.size() ? m[size_t(peer)] : -1;
  }

  void complete_ops(uint64_t t, uint32_t win, int32_t peer /* -1: all */) {
    size_t keep = 0;
    for (size_t i = 0; i < ops_.size(); ++i) {
      const PendingOp& p = ops_[i];
      if (p.win == win && (peer < 0 || p.peer == peer))
        check(OTF2_EvtWriter_RmaOpCompleteBlocking(w_, nullptr, t, win, p.id));
      else ops_[keep++] = p;
    }
    ops_.resize(keep);
  }

  uint64_t matching_id(const trace::Event& e) {
    if (e.request != 0) return e.request;  // request based (MPI_Rput ...): completed by its request
    const uint64_t id = next_id_++;
    ops_.push_back({e.comm, e.peer, id});
    return id;
  }

  void flush_accumulate() {
    acc_.active = false;
    const trace::Event& a = acc_.e;
    check(OTF2_EvtWriter_RmaAtomic(w_, nullptr, ts(a.time), a.comm, uint32_t(a.peer),
                                   OTF2_RMA_ATOMIC_TYPE_ACCUMULATE, a.bytes, 0, matching_id(a)));
  }

  void flush_group() {
    group_.active = false;
    const uint32_t g = refs_.group(group_.members);
    (group_.kind == defs::MpiRma::kStart ? access_ : exposure_)[group_.win] = g;
    check(OTF2_EvtWriter_RmaGroupSync(w_, nullptr, group_.time, OTF2_RMA_SYNC_LEVEL_PROCESS, group_.win, g));
  }

  void rma(uint64_t t, const trace::Event& e) {
    const uint32_t win = e.comm;
    const uint32_t undefined = OTF2_UNDEFINED_UINT32;
    const uint32_t peer = e.peer < 0 ? undefined : uint32_t(e.peer);
    switch (e.kind) {
      case K::kRmaWinCreate:
        check(OTF2_EvtWriter_RmaWinCreate(w_, nullptr, t, win));
        check(OTF2_EvtWriter_RmaCollectiveEnd(w_, nullptr, t, op_of(call_region()),
                                              OTF2_RMA_SYNC_LEVEL_PROCESS, win, OTF2_COLLECTIVE_ROOT_NONE, 0,
                                              0));
        break;
      case K::kRmaWinFree:
        complete_ops(t, win, -1);
        check(OTF2_EvtWriter_RmaWinDestroy(w_, nullptr, t, win));
        check(OTF2_EvtWriter_RmaCollectiveEnd(w_, nullptr, t, OTF2_COLLECTIVE_OP_DESTROY_HANDLE,
                                              OTF2_RMA_SYNC_LEVEL_PROCESS, win, OTF2_COLLECTIVE_ROOT_NONE, 0,
                                              0));
        break;
      case K::kRmaCollSync:  // MPI_Win_fence
        complete_ops(t, win, -1);
        check(OTF2_EvtWriter_RmaCollectiveEnd(w_, nullptr, t, OTF2_COLLECTIVE_OP_BARRIER,
                                              OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, win,
                                              OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
        break;
      case K::kRmaPut:
        check(OTF2_EvtWriter_RmaPut(w_, nullptr, t, win, peer, e.bytes, matching_id(e)));
        break;
      case K::kRmaAccumulate:
        // A fetching form (Get_accumulate, Fetch_and_op, Compare_and_swap) follows with an
        // RMA_GET of the result bytes: both make one RmaAtomic.
        acc_.active = true;
        acc_.e = e;
        break;
      case K::kRmaGet:
        if (acc_.active && acc_.e.comm == win && acc_.e.peer == e.peer) {
          acc_.active = false;
          const OTF2_RmaAtomicType type = name_of(call_region()) == "MPI_Compare_and_swap"
                                              ? OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP
                                              : OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE;
          check(OTF2_EvtWriter_RmaAtomic(w_, nullptr, ts(acc_.e.time), win, peer, type, acc_.e.bytes, e.bytes,
                                         matching_id(acc_.e)));
          break;
        }
        if (acc_.active) flush_accumulate();
        check(OTF2_EvtWriter_RmaGet(w_, nullptr, t, win, peer, e.bytes, matching_id(e)));
        break;
      case K::kRmaRequestComplete:
        check(OTF2_EvtWriter_RmaOpCompleteNonBlocking(w_, nullptr, t, win, e.request));
        break;
      case K::kRmaSync: sync(t, e, peer); break;
      default: break;
    }
  }

  void sync(uint64_t t, const trace::Event& e, uint32_t peer) {
    const uint32_t win = e.comm;
    const uint32_t all = OTF2_UNDEFINED_UINT32;
    const OTF2_RmaSyncLevel full = OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY;
    switch (role()) {
      case defs::MpiRma::kStart:
      case defs::MpiRma::kPost:
        // One record per group member: one RmaGroupSync of the whole group.
        if (!group_.active) {
          group_.active = true;
          group_.kind = role();
          group_.win = win;
          group_.time = t;
          group_.members.clear();
        }
        group_.members.push_back(world_of(win, e.peer));
        break;
      case defs::MpiRma::kComplete: {
        complete_ops(t, win, -1);
        auto it = access_.find(win);
        check(OTF2_EvtWriter_RmaGroupSync(w_, nullptr, t, full, win,
                                          it == access_.end() ? refs_.group({}) : it->second));
        break;
      }
      case defs::MpiRma::kWait:
      case defs::MpiRma::kTest: {
        auto it = exposure_.find(win);
        check(OTF2_EvtWriter_RmaGroupSync(w_, nullptr, t, full, win,
                                          it == exposure_.end() ? refs_.group({}) : it->second));
        break;
      }
      case defs::MpiRma::kLock:
        check(OTF2_EvtWriter_RmaRequestLock(w_, nullptr, t, win, peer, 0,
                                            e.root == 1 ? OTF2_LOCK_EXCLUSIVE : OTF2_LOCK_SHARED));
        break;
      case defs::MpiRma::kLockAll:
        check(OTF2_EvtWriter_RmaRequestLock(w_, nullptr, t, win, all, 0, OTF2_LOCK_SHARED));
        break;
      case defs::MpiRma::kUnlock:
        complete_ops(t, win, e.peer);
        check(OTF2_EvtWriter_RmaReleaseLock(w_, nullptr, t, win, peer, 0));
        break;
      case defs::MpiRma::kUnlockAll:
        complete_ops(t, win, -1);
        check(OTF2_EvtWriter_RmaReleaseLock(w_, nullptr, t, win, all, 0));
        break;
      case defs::MpiRma::kFlush:
      case defs::MpiRma::kFlushAll:
        complete_ops(t, win, role() == defs::MpiRma::kFlush ? e.peer : -1);
        check(OTF2_EvtWriter_RmaSync(w_, nullptr, t, win, role() == defs::MpiRma::kFlush ? peer : all,
                                     OTF2_RMA_SYNC_TYPE_MEMORY));
        break;
      default:  // MPI_Win_sync and other window calls
        check(OTF2_EvtWriter_RmaSync(w_, nullptr, t, win, peer, OTF2_RMA_SYNC_TYPE_MEMORY));
        break;
    }
  }

  struct ListDeleter {
    void operator()(OTF2_AttributeList* l) const { OTF2_AttributeList_Delete(l); }
  };
  OTF2_EvtWriter* w_;
  std::unique_ptr<OTF2_AttributeList, ListDeleter> attrs_;
  const defs::Definitions& defs_;
  const RunInfo& run_;
  const GlobalTime& time_;
  const double base_s_;
  LocalRefs& refs_;
  const bool main_;
  size_t ncounters_ = 0;
  OTF2_ErrorCode error_ = OTF2_SUCCESS;
  bool begun_ = false;
  uint64_t first_ = 0, last_ = 0;
  trace::Event held_;
  bool have_held_ = false;
  uint64_t prev_t_ = 0;  // the latest time stamp put() has seen (a SEND takes the one before it)
  bool pending_callsite_ = false;
  std::vector<uint32_t> open_callsites_;
  std::vector<Frame> frames_;
  std::vector<std::optional<defs::MpiSemantics>> flat_;
  std::unordered_map<uint32_t, defs::MpiSemantics> mpi_;
  std::unordered_map<uint32_t, std::string> names_;
  std::unordered_map<uint64_t, trace::Event> icoll_;
  std::unordered_map<uint32_t, std::vector<int32_t>> win_members_;
  std::unordered_map<uint32_t, uint32_t> access_, exposure_;  // window -> its epoch's group
  std::vector<PendingOp> ops_;
  uint64_t next_id_ = kFirstMatchingId;
  struct {
    bool active = false;
    trace::Event e;
  } acc_;
  struct {
    bool active = false;
    defs::MpiRma kind = defs::MpiRma::kNone;
    uint32_t win = 0;
    uint64_t time = 0;
    std::vector<int32_t> members;
  } group_;
};

// ---- phase 2: the ranks' definitions and their unification on rank 0 -----------------------

// Definitions by id (a DefTable snapshot comes in hash order).
template <typename Def>
std::vector<Def> sorted(std::vector<Def> v) {
  std::sort(v.begin(), v.end(), [](const Def& a, const Def& b) { return a.id < b.id; });
  return v;
}

// What rank r sends rank 0. Regions carry their OTF2 style already (RegionStyle).
json describe_rank(const LocationTrace& loc, const LocalRefs& refs,
                   const std::vector<ThreadSummary>& threads) {
  const defs::Definitions& d = *loc.definitions;
  json j;
  j["rank"] = loc.run.rank;
  j["host"] = loc.run.host;
  j["cpus"] = loc.run.cpus;
  j["appnum"] = loc.run.appnum;
  j["exe"] = loc.run.executable;
  j["args"] = loc.run.args;
  json th = json::array();
  for (const ThreadSummary& t : threads) th.push_back({t.thread, t.events, t.first, t.last});
  j["threads"] = std::move(th);
  json regions = json::array();
  for (uint32_t id : refs.regions) {
    const defs::RegionDef r = d.regions.get(id);
    const RegionStyle s = region_style(r);
    regions.push_back({r.name, int(r.kind), r.file, r.line, int(s.role), int(s.paradigm)});
  }
  j["regions"] = std::move(regions);
  // The hooks' estimate for unrecorded visits: (index in refs.regions, visits, seconds, auto).
  json unrecorded = json::array();
  size_t i = 0;
  for (uint32_t id : refs.regions) {  // the order of j["regions"]
    const defs::RegionDef r = d.regions.get(id);
    if (r.unrecorded_visits > 0 || r.unrecorded_ticks > 0)
      unrecorded.push_back({i, r.unrecorded_visits, loc.run.conv.ticks_to_seconds(r.unrecorded_ticks),
                            r.auto_filtered ? 1 : 0});
    ++i;
  }
  j["unrecorded"] = std::move(unrecorded);
  json comms = json::array();
  for (const defs::CommDef& c : sorted(d.comms.snapshot()))
    comms.push_back({c.id, c.parent, c.created_by, c.members, c.remote});
  j["comms"] = std::move(comms);
  json wins = json::array();
  for (const defs::WindowDef& w : sorted(d.windows.snapshot())) wins.push_back({w.id, w.comm, w.created_by});
  j["windows"] = std::move(wins);
  j["groups"] = refs.groups;
  j["counters"] = d.counter_names();  // defined even when unused: the metrics exist, zero
  j["start_utc"] = loc.run.start_utc;
  return j;
}

// Rank 0's view of the whole archive: every global definition, and per rank the global ids of
// what it sent, in the order it sent them (its mapping tables).
class Unifier {
 public:
  // The COMM_LOCATIONS group is the first group: every COMM_GROUP indexes into it, and
  // readers want it defined first (location i is rank i, Score-P's convention).
  explicit Unifier(int ranks) : maps_(size_t(ranks)) {
    std::vector<int32_t> all(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) all[size_t(r)] = r;
    group(all, OTF2_GROUP_TYPE_COMM_LOCATIONS);
  }

  void add(const json& j) {
    const int r = j.at("rank").get<int>();
    Ranked& m = maps_.at(size_t(r));
    ranks_.push_back(j);
    host_of_.push_back(j.at("host").get<std::string>());
    // Strings of ProgramBegin: the executable, then the arguments.
    m.strings.push_back(string(j.at("exe").get<std::string>()));
    for (const auto& a : j.at("args")) m.strings.push_back(string(a.get<std::string>()));
    for (const auto& x : j.at("regions")) {
      const auto key = std::make_tuple(x.at(0).get<std::string>(), x.at(1).get<int>(),
                                       x.at(2).get<std::string>(), x.at(3).get<uint32_t>());
      auto [it, fresh] = regions_.emplace(key, uint32_t(region_list_.size()));
      if (fresh) region_list_.push_back(x);
      m.regions.push_back(it->second);
    }
    for (const auto& c : j.at("comms")) {
      const uint32_t id = c.at(0).get<uint32_t>();
      m.comm_ids.push_back(id);
      if (!comms_.count(id)) comms_[id] = c;
    }
    for (const auto& w : j.at("windows")) {
      const uint32_t id = w.at(0).get<uint32_t>();
      m.win_ids.push_back(id);
      if (!wins_.count(id)) wins_[id] = w;
    }
    for (const auto& g : j.at("groups")) m.groups.push_back(group(g.get<std::vector<int32_t>>()));
    const std::vector<std::string> counters = j.at("counters").get<std::vector<std::string>>();
    if (!counters.empty()) {
      auto [it, fresh] = metric_classes_.emplace(counters, uint32_t(metric_classes_.size()));
      m.metric = it->second;
    }
    if (r == 0) start_utc_ = j.at("start_utc").get<std::string>();
    for (const auto& t : j.at("threads")) {
      if (t.at(2).get<uint64_t>() == UINT64_MAX) continue;  // no events
      t0_ = std::min(t0_, t.at(2).get<uint64_t>());
      t1_ = std::max(t1_, t.at(3).get<uint64_t>());
    }
  }

  // Gives communicators, groups and windows their global ids. Call after every rank was
  // added, before write() and mapping_of().
  void assign(int nranks) {
    assign_comms(nranks);
    for (const auto& [id, wd] : wins_) win_ref_.emplace(id, uint32_t(win_ref_.size()));
  }

  // Writes traces.def: the strings (which come first in the file), then the rest.
  OTF2_ErrorCode write(OTF2_GlobalDefWriter* w) {
    const DefStrings ds = intern_strings();
    FirstError check;
    check(OTF2_GlobalDefWriter_WriteClockProperties(w, kTicksPerSecond, t0_ == UINT64_MAX ? 0 : t0_,
                                                    t0_ == UINT64_MAX ? 0 : t1_ - t0_ + 1, realtime()));
    for (size_t i = 0; i < strings_.size(); ++i)
      check(OTF2_GlobalDefWriter_WriteString(w, OTF2_StringRef(i), strings_[i].c_str()));
    check(OTF2_GlobalDefWriter_WriteParadigm(w, OTF2_PARADIGM_MPI, ds.mpi_name, OTF2_PARADIGM_CLASS_PROCESS));
    check(OTF2_GlobalDefWriter_WriteAttribute(w, kSomeBlockEmptyRef, ds.block_empty_name, ds.block_empty_text,
                                              OTF2_TYPE_UINT8));
    write_processes(w, ds, check);
    write_regions_and_comms(w, ds, check);
    write_counters(w, ds, check);
    return check.err;
  }

  // Rank r's global ids, in the order describe_rank() listed its ids: regions, communicators,
  // windows, groups, then the metric class and the strings (counts are known to rank r).
  std::vector<uint64_t> mapping_of(int r) const {
    const Ranked& m = maps_.at(size_t(r));
    std::vector<uint64_t> out(m.regions.begin(), m.regions.end());
    for (uint32_t id : m.comm_ids) out.push_back(comm_ref_.at(id));
    for (uint32_t id : m.win_ids) out.push_back(win_ref_.at(id));
    for (uint32_t g : m.groups) out.push_back(g);
    out.push_back(m.metric);
    for (uint32_t s : m.strings) out.push_back(s);
    return out;
  }

 private:
  struct Ranked {
    std::vector<uint32_t> regions, comm_ids, win_ids, groups, strings;
    uint32_t metric = OTF2_UNDEFINED_METRIC;
  };
  struct Group {
    OTF2_GroupType type;
    std::vector<uint64_t> members;
  };

  // The first error of a sequence of OTF2 calls.
  struct FirstError {
    OTF2_ErrorCode err = OTF2_SUCCESS;
    void operator()(OTF2_ErrorCode c) {
      if (c != OTF2_SUCCESS && err == OTF2_SUCCESS) err = c;
    }
  };
  // The string refs write() uses, interned before anything is written.
  struct DefStrings {
    OTF2_StringRef machine, machine_class, node_class, empty, mpi_name, count_unit;
    OTF2_StringRef cpus_name, appnum_name, unrecorded_name, block_empty_name, block_empty_text;
    std::map<std::string, uint32_t> nodes;                          // host -> system tree node
    std::vector<OTF2_StringRef> cpus_of, appnum_of, unrecorded_of;  // per entry of ranks_
  };

  // write()'s steps. Every string of the definitions, in the order of their refs.
  DefStrings intern_strings() {
    DefStrings ds;
    ds.machine = string("Linux");
    ds.machine_class = string("machine");
    ds.node_class = string("node");
    for (const std::string& h : host_of_) ds.nodes.emplace(h.empty() ? "unknown" : h, 0);
    uint32_t next_node = 1;
    for (auto& [h, id] : ds.nodes) {
      id = next_node++;
      string(h);
    }
    for (const json& j : ranks_) string("MPI Rank " + std::to_string(j.at("rank").get<int>()));
    for (const json& j : ranks_)
      for (const auto& t : j.at("threads"))
        string(t.at(0).get<int>() == 0 ? "Master thread" : "Thread " + std::to_string(t.at(0).get<int>()));
    for (const json& x : region_list_) {
      string(x.at(0).get<std::string>());
      string(x.at(2).get<std::string>());
    }
    for (const auto& [id, c] : comms_) string(comm_name(c));
    for (const auto& [id, wd] : wins_) string(wd.at(2).get<std::string>());
    for (const auto& [names, id] : metric_classes_)
      for (const std::string& n : names) string(n);
    ds.empty = string("");
    ds.mpi_name = string("MPI");
    ds.count_unit = string("#");
    ds.cpus_name = string(kPropertyCpus);
    ds.appnum_name = string(kPropertyAppnum);
    ds.unrecorded_name = string(kPropertyUnrecorded);
    ds.block_empty_name = string(kAttributeSomeBlockEmpty);
    ds.block_empty_text = string("1: this rank's Alltoallv/w lacked the block of some member");
    for (const json& j : ranks_) {
      ds.appnum_of.push_back(string(std::to_string(j.value("appnum", 0))));
      std::string u;
      const Ranked& m = maps_.at(size_t(j.at("rank").get<int>()));
      for (const auto& x : j.value("unrecorded", json::array())) {
        const size_t i = x.at(0).get<size_t>();
        if (i >= m.regions.size()) continue;
        char item[96];
        std::snprintf(item, sizeof item, "%u:%llu:%.17g:%d;", m.regions[i],
                      (unsigned long long)x.at(1).get<uint64_t>(), x.at(2).get<double>(), x.at(3).get<int>());
        u += item;
      }
      ds.unrecorded_of.push_back(u.empty() ? OTF2_UNDEFINED_STRING : string(u));
      std::string list;
      for (const auto& c : j.at("cpus")) list += (list.empty() ? "" : ",") + std::to_string(c.get<int>());
      ds.cpus_of.push_back(list.empty() ? OTF2_UNDEFINED_STRING : string(list));
    }
    return ds;
  }

  // The system tree (the machine, one node per host), one process per rank with its
  // properties, its threads the locations (Score-P's ids: otf2_support.h).
  void write_processes(OTF2_GlobalDefWriter* w, const DefStrings& ds, FirstError& check) {
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, ds.machine, ds.machine_class,
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    check(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(w, 0, OTF2_SYSTEM_TREE_DOMAIN_MACHINE));
    for (const auto& [h, id] : ds.nodes) {
      check(OTF2_GlobalDefWriter_WriteSystemTreeNode(w, id, string(h), ds.node_class, 0));
      check(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(w, id, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY));
    }
    for (const json& j : ranks_) {
      const int r = j.at("rank").get<int>();
      const std::string& h = host_of_[&j - ranks_.data()];
      check(OTF2_GlobalDefWriter_WriteLocationGroup(
          w, OTF2_LocationGroupRef(r), string("MPI Rank " + std::to_string(r)),
          OTF2_LOCATION_GROUP_TYPE_PROCESS, ds.nodes.at(h.empty() ? "unknown" : h),
          OTF2_UNDEFINED_LOCATION_GROUP));
      if (ds.cpus_of[&j - ranks_.data()] != OTF2_UNDEFINED_STRING) {
        OTF2_AttributeValue v;
        v.stringRef = ds.cpus_of[&j - ranks_.data()];
        check(OTF2_GlobalDefWriter_WriteLocationGroupProperty(w, OTF2_LocationGroupRef(r), ds.cpus_name,
                                                              OTF2_TYPE_STRING, v));
      }
      OTF2_AttributeValue a;
      a.stringRef = ds.appnum_of[&j - ranks_.data()];
      check(OTF2_GlobalDefWriter_WriteLocationGroupProperty(w, OTF2_LocationGroupRef(r), ds.appnum_name,
                                                            OTF2_TYPE_STRING, a));
      if (ds.unrecorded_of[&j - ranks_.data()] != OTF2_UNDEFINED_STRING) {
        a.stringRef = ds.unrecorded_of[&j - ranks_.data()];
        check(OTF2_GlobalDefWriter_WriteLocationGroupProperty(w, OTF2_LocationGroupRef(r), ds.unrecorded_name,
                                                              OTF2_TYPE_STRING, a));
      }
    }
    for (const json& j : ranks_) {
      const int r = j.at("rank").get<int>();
      for (const auto& t : j.at("threads")) {
        const int th = t.at(0).get<int>();
        check(OTF2_GlobalDefWriter_WriteLocation(
            w, location_id(r, uint16_t(th)),
            string(th == 0 ? "Master thread" : "Thread " + std::to_string(th)), OTF2_LOCATION_TYPE_CPU_THREAD,
            t.at(1).get<uint64_t>(), OTF2_LocationGroupRef(r)));
      }
    }
  }

  // Regions, groups, communicators, windows.
  void write_regions_and_comms(OTF2_GlobalDefWriter* w, const DefStrings& ds, FirstError& check) {
    for (size_t i = 0; i < region_list_.size(); ++i) {
      const json& x = region_list_[i];
      const OTF2_StringRef name = string(x.at(0).get<std::string>());
      const std::string file = x.at(2).get<std::string>();
      check(OTF2_GlobalDefWriter_WriteRegion(w, OTF2_RegionRef(i), name, name, ds.empty,
                                             OTF2_RegionRole(x.at(4).get<int>()),
                                             OTF2_Paradigm(x.at(5).get<int>()), OTF2_REGION_FLAG_NONE,
                                             file.empty() ? OTF2_UNDEFINED_STRING : string(file),
                                             x.at(3).get<uint32_t>(), x.at(3).get<uint32_t>()));
    }
    // Groups: the locations of the MPI ranks first (rank i is location i), then the rest.
    for (size_t i = 0; i < group_list_.size(); ++i) {
      const Group& g = group_list_[i];
      check(OTF2_GlobalDefWriter_WriteGroup(w, OTF2_GroupRef(i), ds.empty, g.type, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, uint32_t(g.members.size()),
                                            g.members.empty() ? nullptr : g.members.data()));
    }
    for (uint32_t id : comm_order_) {
      const json& c = comms_.at(id);
      const uint32_t parent = c.at(1).get<uint32_t>();
      const OTF2_CommRef p = comm_ref_.count(parent) && parent != id ? comm_ref_.at(parent)
                                                                     : OTF2_UNDEFINED_COMM;
      if (c.at(4).empty()) {
        check(OTF2_GlobalDefWriter_WriteComm(w, comm_ref_.at(id), string(comm_name(c)), comm_group_.at(id), p,
                                             OTF2_COMM_FLAG_NONE));
      } else {
        check(OTF2_GlobalDefWriter_WriteInterComm(w, comm_ref_.at(id), string(comm_name(c)),
                                                  comm_group_.at(id), remote_group_.at(id),
                                                  OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
      }
    }
    for (const auto& [id, wd] : wins_) {
      const uint32_t comm = wd.at(1).get<uint32_t>();
      check(OTF2_GlobalDefWriter_WriteRmaWin(w, win_ref_.at(id), string(wd.at(2).get<std::string>()),
                                             comm_ref_.count(comm) ? comm_ref_.at(comm) : OTF2_UNDEFINED_COMM,
                                             OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS));
    }
  }

  // Hardware counters: one member per name, one strictly synchronous class per set.
  void write_counters(OTF2_GlobalDefWriter* w, const DefStrings& ds, FirstError& check) {
    std::map<std::string, uint32_t> members;
    for (const auto& [names, id] : metric_classes_)
      for (const std::string& n : names)
        if (members.emplace(n, uint32_t(members.size())).second)
          check(OTF2_GlobalDefWriter_WriteMetricMember(
              w, members.at(n), string(n), ds.empty, OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START,
              OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, ds.count_unit));
    for (const auto& [names, id] : metric_classes_) {
      std::vector<OTF2_MetricMemberRef> m;
      for (const std::string& n : names) m.push_back(members.at(n));
      check(OTF2_GlobalDefWriter_WriteMetricClass(w, id, uint8_t(m.size()), m.data(),
                                                  OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU));
    }
  }

  OTF2_StringRef string(const std::string& s) {
    auto [it, fresh] = string_ids_.emplace(s, uint32_t(strings_.size()));
    if (fresh) strings_.push_back(s);
    return it->second;
  }
  uint32_t group(const std::vector<int32_t>& world_ranks, OTF2_GroupType type = OTF2_GROUP_TYPE_COMM_GROUP) {
    std::vector<uint64_t> m;
    for (int32_t r : world_ranks) m.push_back(r < 0 ? OTF2_UNDEFINED_UINT64 : uint64_t(r));
    auto [it, fresh] = group_ids_.emplace(std::make_pair(int(type), m), uint32_t(group_list_.size()));
    if (fresh) group_list_.push_back({type, m});
    return it->second;
  }
  static std::string comm_name(const json& c) {
    const uint32_t id = c.at(0).get<uint32_t>();
    if (id == defs::kCommWorld) return "MPI_COMM_WORLD";
    if (id == defs::kCommSelf) return "MPI_COMM_SELF";
    return c.at(2).get<std::string>() + " " + std::to_string(id);
  }

  // Communicator refs: parents before children (readers resolve them in order).
  void assign_comms(int nranks) {
    std::vector<int32_t> all(static_cast<size_t>(nranks));
    for (int r = 0; r < nranks; ++r) all[size_t(r)] = r;
    std::set<uint32_t> done;
    std::function<void(uint32_t)> visit = [&](uint32_t id) {
      if (done.count(id) || !comms_.count(id)) return;
      done.insert(id);
      const uint32_t parent = comms_.at(id).at(1).get<uint32_t>();
      if (parent != id) visit(parent);
      comm_ref_[id] = uint32_t(comm_order_.size());
      comm_order_.push_back(id);
    };
    if (!comms_.count(defs::kCommWorld))
      comms_[defs::kCommWorld] = json{defs::kCommWorld, defs::kCommUnknown, "MPI_COMM_WORLD", json(all),
                                      json::array()};
    for (const auto& [id, c] : comms_) visit(id);
    for (uint32_t id : comm_order_) {
      const json& c = comms_.at(id);
      if (id == defs::kCommSelf) comm_group_[id] = group({}, OTF2_GROUP_TYPE_COMM_SELF);
      else comm_group_[id] = group(c.at(3).get<std::vector<int32_t>>());
      if (!c.at(4).empty()) remote_group_[id] = group(c.at(4).get<std::vector<int32_t>>());
    }
  }

  uint64_t realtime() const {
    std::tm tm{};
    if (start_utc_.size() < 19 || !strptime(start_utc_.c_str(), "%Y-%m-%dT%H:%M:%S", &tm))
      return OTF2_UNDEFINED_TIMESTAMP;
    const time_t t = timegm(&tm);
    return t < 0 ? OTF2_UNDEFINED_TIMESTAMP : uint64_t(t) * 1000000000ull;
  }

  std::vector<json> ranks_;
  std::vector<std::string> host_of_;
  std::vector<Ranked> maps_;
  std::vector<std::string> strings_;
  std::map<std::string, uint32_t> string_ids_;
  std::map<std::tuple<std::string, int, std::string, uint32_t>, uint32_t> regions_;
  std::vector<json> region_list_;
  std::vector<Group> group_list_;
  std::map<std::pair<int, std::vector<uint64_t>>, uint32_t> group_ids_;
  std::map<uint32_t, json> comms_, wins_;
  std::vector<uint32_t> comm_order_;
  std::map<uint32_t, uint32_t> comm_ref_, comm_group_, remote_group_, win_ref_;
  std::map<std::vector<std::string>, uint32_t> metric_classes_;
  std::string start_utc_;
  uint64_t t0_ = UINT64_MAX, t1_ = 0;
};

// Every rank's `ok`, ANDed. A failed exchange counts as a failure.
bool all_ok(const engine::Comm& ranks, bool ok) {
  int v = ok ? 0 : 1;
  if (ranks.allreduce(&v, 1, MPI_INT, MPI_MAX) != Status::kOk) return false;
  return v == 0;
}

// The mapping table of one kind: local ids -> global ids.
OTF2_ErrorCode write_mapping(OTF2_DefWriter* w, OTF2_MappingType type, const std::vector<uint64_t>& local,
                             const uint64_t* global) {
  if (local.empty()) return OTF2_SUCCESS;
  OTF2_IdMap* map = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, local.size());
  if (map == nullptr) return OTF2_ERROR_MEM_ALLOC_FAILED;
  for (size_t i = 0; i < local.size(); ++i) OTF2_IdMap_AddIdPair(map, local[i], global[i]);
  const OTF2_ErrorCode c = OTF2_DefWriter_WriteMappingTable(w, type, map);
  OTF2_IdMap_Free(map);
  return c;
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
const OTF2_FlushCallbacks kFlush = {pre_flush, nullptr};

// CRITPATH::CLOCK_CORRECTION: "linear" (offsets to rank 0 interpolated between MPI_Init and
// MPI_Finalize), "shared" (one host: one CLOCK_MONOTONIC, nothing to correct) or "none".
std::string clock_property(const RunInfo& run) {
  if (GlobalTime::corrected(run)) return "linear";
  return run.size > 1 && run.all_on_one_host ? "shared" : "none";
}

// One rank's export, as export_location's phases share it.
struct Export {
  const LocationTrace& location;
  const engine::Comm& ranks;
  OTF2_Archive* archive = nullptr;
  std::string err;  // the first failure

  const trace::ChunkStore& store() const { return *location.chunks; }
  void fail(const std::string& what) {
    if (err.empty()) err = what;
  }
  void step(OTF2_ErrorCode c, const char* what) {
    if (c != OTF2_SUCCESS) fail(std::string(what) + ": " + describe(c));
  }
};

// Phase 1: events, on a time base all ranks agree on. Collective.
void write_events(Export& x, LocalRefs& refs, std::vector<ThreadSummary>& threads) {
  const GlobalTime time(x.location.run);
  double base_s = 1e300;
  for (uint16_t t : x.store().locations()) {
    trace::TraceReader reader(x.store(), t);
    trace::Event e;
    reader.seek_begin();
    if (reader.next(e)) base_s = std::min(base_s, time.seconds(e.time));
  }
  if (x.ranks.allreduce(&base_s, 1, MPI_DOUBLE, MPI_MIN) != Status::kOk)
    x.fail("agreeing on the time base failed");
  base_s = base_s < 1e300 ? std::floor(base_s) : 0.0;
  x.step(OTF2_Archive_OpenEvtFiles(x.archive), "opening the event files");
  try {
    for (uint16_t t : x.store().locations()) {
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(x.archive, location_id(x.location.run.rank, t));
      if (w == nullptr) {
        x.fail("no event writer: " + take_last_error());
        continue;
      }
      LocationWriter lw(w, x.location, time, base_s, refs, t == 0);
      trace::TraceReader reader(x.store(), t);
      trace::Event e;
      reader.seek_begin();
      while (reader.next(e)) lw.put(e);
      lw.finish();
      if (reader.status() != Status::kOk)
        x.fail(std::string("the trace does not decode: ") + to_string(reader.status()));
      if (lw.error() != OTF2_SUCCESS) x.fail("writing events: " + describe(lw.error()));
      ThreadSummary s;
      s.thread = t;
      OTF2_EvtWriter_GetNumberOfEvents(w, &s.events);
      if (s.events > 0) {
        s.first = lw.first();
        s.last = lw.last();
      }
      threads.push_back(s);
      x.step(OTF2_Archive_CloseEvtWriter(x.archive, w), "closing an event writer");
    }
  } catch (const std::exception& ex) {
    x.fail(std::string("writing events: ") + ex.what());
  }
  x.step(OTF2_Archive_CloseEvtFiles(x.archive), "closing the event files");
}

// Phase 2: unification on rank 0; `mapping` receives this rank's global ids. Collective;
// false when the exchange failed.
bool unify_definitions(Export& x, const LocalRefs& refs, const std::vector<ThreadSummary>& threads,
                       std::vector<uint64_t>& mapping) {
  bool exchanged = false;
  try {
    const std::string mine = describe_rank(x.location, refs, threads).dump();
    std::vector<unsigned char> all;
    std::vector<int> counts, displs;
    if (x.ranks.gatherv(mine.data(), int(mine.size()), 1, 0, all, counts, displs) == Status::kOk) {
      std::vector<std::vector<uint64_t>> maps;
      std::vector<int> map_counts;
      std::vector<uint64_t> flat;
      std::unique_ptr<Unifier> unifier;
      if (x.ranks.rank() == 0) {
        unifier = std::make_unique<Unifier>(x.ranks.size());
        for (int r = 0; r < x.ranks.size(); ++r)
          unifier->add(json::parse(all.begin() + displs[size_t(r)],
                                   all.begin() + displs[size_t(r)] + counts[size_t(r)]));
        unifier->assign(x.ranks.size());
        OTF2_GlobalDefWriter* gw = OTF2_Archive_GetGlobalDefWriter(x.archive);
        if (gw == nullptr) {
          x.fail("no global definition writer: " + take_last_error());
        } else {
          x.step(unifier->write(gw), "writing the global definitions");
          x.step(OTF2_Archive_CloseGlobalDefWriter(x.archive, gw), "closing the global definitions");
        }
        for (int r = 0; r < x.ranks.size(); ++r) {
          std::vector<uint64_t> m = unifier->mapping_of(r);
          map_counts.push_back(int(m.size()));
          flat.insert(flat.end(), m.begin(), m.end());
        }
      }
      std::vector<unsigned char> bytes;
      if (x.ranks.scatterv(flat.data(), map_counts, sizeof(uint64_t), 0, bytes) == Status::kOk) {
        mapping.resize(bytes.size() / sizeof(uint64_t));
        if (!bytes.empty()) std::memcpy(mapping.data(), bytes.data(), bytes.size());
        exchanged = true;
      }
    }
  } catch (const std::exception& ex) {
    x.fail(std::string("unifying the definitions: ") + ex.what());
  }
  if (!exchanged) x.fail("the definitions exchange failed");
  return exchanged;
}

// Phase 3: the mapping tables of every location of this rank.
void write_mappings(Export& x, const LocalRefs& refs, const std::vector<ThreadSummary>& threads,
                    const std::vector<uint64_t>& mapping, bool exchanged) {
  x.step(OTF2_Archive_OpenDefFiles(x.archive), "opening the definition files");
  try {
    const defs::Definitions& d = *x.location.definitions;
    std::vector<uint64_t> regions(refs.regions.begin(), refs.regions.end()), comms, wins, groups, strings;
    for (const defs::CommDef& c : sorted(d.comms.snapshot())) comms.push_back(c.id);
    for (const defs::WindowDef& w : sorted(d.windows.snapshot())) wins.push_back(w.id);
    for (size_t g = 0; g < refs.groups.size(); ++g) groups.push_back(g);
    for (size_t s = 0; s <= x.location.run.args.size(); ++s) strings.push_back(s);
    const size_t need = regions.size() + comms.size() + wins.size() + groups.size() + 1 + strings.size();
    if (exchanged && mapping.size() != need) x.fail("the definitions exchange returned a wrong mapping");
    for (const ThreadSummary& t : threads) {
      OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(x.archive, location_id(x.location.run.rank, t.thread));
      if (w == nullptr) {
        x.fail("no definition writer: " + take_last_error());
        continue;
      }
      if (mapping.size() == need) {
        const uint64_t* g = mapping.data();
        x.step(write_mapping(w, OTF2_MAPPING_REGION, regions, g), "region mapping");
        g += regions.size();
        x.step(write_mapping(w, OTF2_MAPPING_COMM, comms, g), "communicator mapping");
        g += comms.size();
        x.step(write_mapping(w, OTF2_MAPPING_RMA_WIN, wins, g), "window mapping");
        g += wins.size();
        x.step(write_mapping(w, OTF2_MAPPING_GROUP, groups, g), "group mapping");
        g += groups.size();
        if (*g != OTF2_UNDEFINED_METRIC)
          x.step(write_mapping(w, OTF2_MAPPING_METRIC, {kLocalMetric}, g), "metric mapping");
        ++g;
        x.step(write_mapping(w, OTF2_MAPPING_STRING, strings, g), "string mapping");
      }
      x.step(OTF2_Archive_CloseDefWriter(x.archive, w), "closing a definition writer");
    }
  } catch (const std::exception& ex) {
    x.fail(std::string("writing the mapping tables: ") + ex.what());
  }
  x.step(OTF2_Archive_CloseDefFiles(x.archive), "closing the definition files");
}

}  // namespace

Status export_location(const LocationTrace& location, const engine::Comm& ranks, const std::string& dir,
                       std::string& error) {
  install_error_hook();
  const RunInfo& run = location.run;
  Export x{location, ranks, nullptr, {}};
  try {
    x.archive = OTF2_Archive_Open(dir.c_str(), kArchiveName, OTF2_FILEMODE_WRITE, 1024 * 1024,
                                  4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  } catch (...) {
  }
  if (x.archive == nullptr) x.fail("cannot open the archive: " + take_last_error());
  if (!all_ok(ranks, x.archive != nullptr)) {
    error = x.err.empty() ? "another rank cannot open the archive" : x.err;
    if (x.archive) OTF2_Archive_Close(x.archive);
    return Status::kIoError;
  }
  OTF2_CollectiveContext context;
  context.comm = &ranks;
  x.step(OTF2_Archive_SetFlushCallbacks(x.archive, &kFlush, nullptr), "flush callbacks");
  x.step(OTF2_Archive_SetCollectiveCallbacks(x.archive, collectives(), nullptr, &context, nullptr),
         "collective callbacks");
  x.step(OTF2_Archive_SetCreator(x.archive, "critpath " CRITPATH_VERSION), "creator");
  x.step(OTF2_Archive_SetDescription(x.archive, ("critpath trace of " + run.executable).c_str()),
         "description");
  x.step(OTF2_Archive_SetMachineName(x.archive, "Linux"), "machine name");
  LocalRefs refs;
  std::vector<ThreadSummary> threads;
  write_events(x, refs, threads);
  std::vector<uint64_t> mapping;
  const bool exchanged = unify_definitions(x, refs, threads, mapping);
  write_mappings(x, refs, threads, mapping, exchanged);
  x.step(OTF2_Archive_SetProperty(x.archive, kPropertyVersion, CRITPATH_VERSION, true), "property");
  x.step(OTF2_Archive_SetProperty(x.archive, kPropertyTimestamps, "global", true), "property");
  x.step(OTF2_Archive_SetProperty(x.archive, kPropertyClock, clock_property(run).c_str(), true), "property");
  x.step(OTF2_Archive_Close(x.archive), "closing the archive");
  const bool ok = all_ok(ranks, x.err.empty());
  if (!ok) error = x.err.empty() ? "another rank failed" : x.err;
  return ok ? Status::kOk : Status::kIoError;
}

}  // namespace critpath::analyzer::otf2
