// critpath — analyzer/otf2/otf2_import.cpp
//
//   open()    global definitions -> State (strings, regions, groups, communicators, windows,
//             locations, metrics); the ranks: MPI_COMM_WORLD's locations (the COMM_LOCATIONS
//             group of the MPI paradigm, else one per process location group; without any
//             MPI, the master thread of the one process); which communicators and windows
//             are MPI's (the others counted), their members checked
//   select()  the selected ranks' local definitions: OTF2 applies their mapping tables and
//             clock offsets to the events from then on
//   load()    one rank: definitions built in a fixed order (the same ids on every rank), then
//             each location's events through a Builder into chunks
//
// The Builder turns Score-P's records back into critpath's (the reverse of otf2_export.cpp):
// a Metric before an Enter/Leave becomes a COUNTERS after it, MPI collective records inside
// MPI_Init/MPI_Finalize (Score-P's communicator creation) are dropped, a nonblocking
// collective's post waits for its completion record (which alone names the operation), RMA
// records become RMA_* events by the role of the MPI call they are in.
#include "analyzer/otf2/otf2_import.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "analyzer/otf2/otf2_support.h"
#include "libtrace/buffer/codec.h"
#include "libtrace/defs/demangle.h"
#include "pmpi_wrappers/generated_regions.h"

namespace critpath::analyzer::otf2 {

// ---- Skipped --------------------------------------------------------------------------------

void Skipped::to_array(uint64_t (&a)[kFields]) const {
  const uint64_t v[kFields] = {thread_locations, accelerator_locations, metric_locations, other_comms,
                               other_windows,    threading_events,      io_events,        sampling_events,
                               parameter_events, metric_events,         other_events,     open_icolls,
                               other_records};
  std::copy(v, v + kFields, a);
}

void Skipped::from_array(const uint64_t (&a)[kFields]) {
  uint64_t* f[kFields] = {&thread_locations, &accelerator_locations, &metric_locations, &other_comms,
                          &other_windows,    &threading_events,      &io_events,        &sampling_events,
                          &parameter_events, &metric_events,         &other_events,     &open_icolls,
                          &other_records};
  for (int i = 0; i < kFields; ++i) *f[i] = a[i];
}

bool Skipped::empty() const {
  uint64_t a[kFields];
  to_array(a);
  return std::all_of(a, a + kFields, [](uint64_t v) { return v == 0; });
}

std::string Skipped::describe() const {
  static const char* const kWhat[kFields] = {
      "thread locations (OpenMP, pthreads: critpath analyses the MPI thread of each rank)",
      "GPU/accelerator locations",
      "metric locations",
      "communicators of other paradigms (CUDA, OpenMP, SHMEM, ...)",
      "RMA windows of other paradigms (CUDA's memory copies)",
      "OpenMP/thread records",
      "I/O records",
      "sampling/calling-context records",
      "parameter records",
      "metric records other than the strictly synchronous counters",
      "unknown records",
      "nonblocking collectives never completed",
      "records on other paradigms' communicators and windows"};
  uint64_t a[kFields];
  to_array(a);
  std::string out;
  for (int i = 0; i < kFields; ++i)
    if (a[i]) out += (out.empty() ? "" : ", ") + std::to_string(a[i]) + " " + kWhat[i];
  return out.empty() ? out : "otf2: skipped what critpath does not analyse: " + out;
}

namespace {

constexpr uint32_t kUndefined32 = OTF2_UNDEFINED_UINT32;

struct RegionInfo {
  uint32_t name = kUndefined32, file = kUndefined32;
  uint32_t line = 0;
  OTF2_RegionRole role = OTF2_REGION_ROLE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
};
struct GroupInfo {
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  std::vector<uint64_t> members;
};
struct CommInfo {
  uint32_t name = kUndefined32, group = kUndefined32, group_b = kUndefined32, parent = kUndefined32;
  bool inter = false;
  // Derived in open(): an MPI communicator (its groups of the MPI paradigm), and the sizes a
  // peer or root of its events must stay below (remote: an intercommunicator's other group).
  bool mpi = false;
  size_t size = 0, remote_size = 0;
};
struct WinInfo {
  uint32_t name = kUndefined32, comm = kUndefined32;
  bool mpi = false;  // over an MPI communicator (derived in open())
};
struct LocationInfo {
  OTF2_LocationType type = OTF2_LOCATION_TYPE_UNKNOWN;
  uint32_t group = kUndefined32;
};
struct LocationGroupInfo {
  OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_UNKNOWN;
  uint32_t node = kUndefined32;
  uint32_t cpus = kUndefined32;  // string: critpath's CRITPATH::CPUS property
};
struct MetricClassInfo {
  std::vector<uint32_t> members;
  OTF2_MetricOccurrence occurrence = OTF2_METRIC_ASYNCHRONOUS;
};

// The spec's MPI functions by name (pmpi_wrappers/spec/mpi.toml, generated_regions.h).
const pmpi::GeneratedRegion* spec_region(const std::string& name) {
  static const std::unordered_map<std::string, const pmpi::GeneratedRegion*> by_name = [] {
    std::unordered_map<std::string, const pmpi::GeneratedRegion*> m;
    for (const pmpi::GeneratedRegion& r : pmpi::generated_regions()) m.emplace(r.name, &r);
    return m;
  }();
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

std::string take_string(char* s) {
  std::string out = s ? s : "";
  std::free(s);
  return out;
}

}  // namespace

struct ArchiveReader::State {
  OTF2_Reader* reader = nullptr;
  std::string anchor;
  std::string error;  // the first failure inside a callback
  uint64_t resolution = 1000000000ull, offset = 0, realtime = OTF2_UNDEFINED_TIMESTAMP;
  std::unordered_map<uint32_t, std::string> strings;
  std::map<uint32_t, RegionInfo> regions;
  std::map<uint32_t, GroupInfo> groups;
  std::map<uint32_t, CommInfo> comms;
  std::map<uint32_t, WinInfo> wins;
  std::map<uint64_t, LocationInfo> locations;
  std::map<uint32_t, LocationGroupInfo> location_groups;
  std::map<uint32_t, uint32_t> node_names;  // system tree node -> its name
  struct GroupProperty {
    uint32_t group, name, value;  // string refs (strings may come later in the file)
  };
  std::vector<GroupProperty> group_properties;
  std::map<uint32_t, uint32_t> attribute_names;  // event attribute -> its name string
  std::map<uint32_t, uint32_t> metric_member_names;
  std::map<uint32_t, OTF2_Type> metric_member_types;
  std::map<uint32_t, MetricClassInfo> metric_classes;
  bool critpath = false;
  std::string creator;
  std::map<OTF2_Paradigm, uint32_t> paradigm_names;  // Paradigm definitions: name strings
  // Derived in open().
  std::vector<std::vector<uint64_t>> rank_locations;  // rank -> its MPI thread, then others
  std::unordered_map<uint64_t, int> rank_of_location;
  uint32_t world = kUndefined32, self = kUndefined32;
  uint32_t counter_class = kUndefined32;
  std::vector<std::string> counter_names;
  Skipped skipped;
  bool without_mpi = false;  // no MPI in the archive: one process's master thread is rank 0
  int first = 0, count = 0;
  bool selected = false;

  void fail(const std::string& why) {
    if (error.empty()) error = why;
  }
  const std::string& str(uint32_t ref) const {
    static const std::string empty;
    auto it = strings.find(ref);
    return it == strings.end() ? empty : it->second;
  }
  // Time stamps -> critpath ticks: the archive's own ticks since its global offset (the run's
  // TickConverter turns them into nanoseconds with the archive's resolution).
  uint64_t ticks(OTF2_TimeStamp t) const { return t > offset ? t - offset : 0; }
  // World ranks of a communicator group (COMM_GROUP members index MPI_COMM_WORLD's locations).
  std::vector<int32_t> ranks_of(uint32_t group, int me) const {
    std::vector<int32_t> out;
    auto it = groups.find(group);
    if (it == groups.end()) return out;
    const GroupInfo& g = it->second;
    if (g.type == OTF2_GROUP_TYPE_COMM_SELF) return {me};
    for (uint64_t m : g.members) {
      if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS || g.type == OTF2_GROUP_TYPE_LOCATIONS) {
        auto r = rank_of_location.find(m);
        out.push_back(r == rank_of_location.end() ? -1 : r->second);
      } else {
        out.push_back(m < uint64_t(rank_locations.size()) ? int32_t(m) : -1);
      }
    }
    return out;
  }
  // The critpath id of a communicator: MPI_COMM_WORLD 0, MPI_COMM_SELF 1, others past them.
  uint32_t comm_id(uint32_t ref) const {
    if (ref == world) return defs::kCommWorld;
    if (ref == self) return defs::kCommSelf;
    auto it = comms.find(ref);
    if (it == comms.end() || !it->second.mpi) return defs::kCommUnknown;
    return ref + 2;
  }
  // The communicator of an MPI record: nullptr for another paradigm's (the caller counts the
  // record and drops it); an undefined one is kept as critpath's "unknown" (the export writes
  // a communicator critpath did not know so). A peer or root that names no member is kept as
  // recorded: an MPI call that failed with MPI_ERR_RANK or MPI_ERR_ROOT under
  // MPI_ERRORS_RETURN is recorded so, and the analysis treats it as it does in situ (no
  // message, no collective partner).
  const CommInfo* record_comm(uint32_t ref, bool& foreign) const {
    foreign = false;
    auto it = comms.find(ref);
    if (it == comms.end()) return nullptr;
    if (!it->second.mpi) {
      foreign = true;
      return nullptr;
    }
    return &it->second;
  }
};

namespace {

using State = ArchiveReader::State;

// Runs a callback's body on the reader's user data (a State or a Builder): an exception never
// crosses OTF2's C frames; it stops the reading, its message kept as the error.
template <typename T, typename F>
OTF2_CallbackCode guard(void* user, F f) {
  auto* t = static_cast<T*>(user);
  try {
    f(*t);
    return OTF2_CALLBACK_SUCCESS;
  } catch (const std::exception& e) {
    t->fail(e.what());
  } catch (...) {
    t->fail("internal error");
  }
  return OTF2_CALLBACK_INTERRUPT;
}
template <typename F>
OTF2_CallbackCode def_guard(void* user, F f) {
  return guard<State>(user, f);
}

void register_global_callbacks(OTF2_GlobalDefReaderCallbacks* c) {
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(
      c, [](void* u, uint64_t resolution, uint64_t offset, uint64_t, uint64_t realtime) {
        return def_guard(u, [&](State& s) {
          s.resolution = resolution ? resolution : 1;
          s.offset = offset;
          s.realtime = realtime;
        });
      });
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(c, [](void* u, OTF2_StringRef self, const char* text) {
    return def_guard(u, [&](State& s) { s.strings[self] = text ? text : ""; });
  });
  OTF2_GlobalDefReaderCallbacks_SetParadigmCallback(
      c, [](void* u, OTF2_Paradigm paradigm, OTF2_StringRef name, OTF2_ParadigmClass) {
        return def_guard(u, [&](State& s) { s.paradigm_names[paradigm] = name; });
      });
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(
      c, [](void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef,
            OTF2_SystemTreeNodeRef) { return def_guard(u, [&](State& s) { s.node_names[self] = name; }); });
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(
      c, [](void* u, OTF2_LocationGroupRef self, OTF2_StringRef, OTF2_LocationGroupType type,
            OTF2_SystemTreeNodeRef node, OTF2_LocationGroupRef) {
        return def_guard(u, [&](State& s) {
          s.location_groups[self].type = type;
          s.location_groups[self].node = node;
        });
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupPropertyCallback(
      c, [](void* u, OTF2_LocationGroupRef group, OTF2_StringRef name, OTF2_Type type,
            OTF2_AttributeValue value) {
        return def_guard(u, [&](State& s) {
          if (type == OTF2_TYPE_STRING) s.group_properties.push_back({group, name, value.stringRef});
        });
      });
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(
      c, [](void* u, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_Type type) {
        return def_guard(u, [&](State& s) {
          if (type == OTF2_TYPE_UINT8) s.attribute_names[self] = name;
        });
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      c, [](void* u, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType type, uint64_t,
            OTF2_LocationGroupRef group) {
        return def_guard(u, [&](State& s) { s.locations[self] = {type, group}; });
      });
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      c, [](void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
            OTF2_RegionRole role, OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef file, uint32_t line,
            uint32_t) {
        return def_guard(u, [&](State& s) { s.regions[self] = {name, file, line, role, paradigm}; });
      });
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
      c, [](void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm paradigm,
            OTF2_GroupFlag, uint32_t n, const uint64_t* members) {
        return def_guard(u, [&](State& s) {
          GroupInfo g;
          g.type = type;
          g.paradigm = paradigm;
          if (members) g.members.assign(members, members + n);
          s.groups[self] = std::move(g);
        });
      });
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(
      c, [](void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef parent,
            OTF2_CommFlag) {
        return def_guard(u, [&](State& s) {
          CommInfo ci;
          ci.name = name;
          ci.group = group;
          ci.parent = parent;
          s.comms[self] = ci;
        });
      });
  OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(
      c, [](void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef a, OTF2_GroupRef b,
            OTF2_CommRef common, OTF2_CommFlag) {
        return def_guard(u, [&](State& s) {
          CommInfo ci;
          ci.name = name;
          ci.group = a;
          ci.group_b = b;
          ci.parent = common;
          ci.inter = true;
          s.comms[self] = ci;
        });
      });
  OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(
      c, [](void* u, OTF2_RmaWinRef self, OTF2_StringRef name, OTF2_CommRef comm, OTF2_RmaWinFlag) {
        return def_guard(u, [&](State& s) { s.wins[self] = {name, comm}; });
      });
}

// register_global_callbacks' second half: the metrics (hardware counters).
void register_metric_callbacks(OTF2_GlobalDefReaderCallbacks* c) {
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(
      c, [](void* u, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_MetricType,
            OTF2_MetricMode, OTF2_Type type, OTF2_Base, int64_t, OTF2_StringRef) {
        return def_guard(u, [&](State& s) {
          s.metric_member_names[self] = name;
          s.metric_member_types[self] = type;
        });
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(
      c, [](void* u, OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef* members,
            OTF2_MetricOccurrence occurrence, OTF2_RecorderKind) {
        return def_guard(u, [&](State& s) {
          MetricClassInfo m;
          if (members) m.members.assign(members, members + n);
          m.occurrence = occurrence;
          s.metric_classes[self] = std::move(m);
        });
      });
}

// ---- one location's events -> critpath events -> chunks ---------------------------------------

constexpr size_t kChunkSlots = 16384;

class Builder {
 public:
  Builder(const State& s, int rank, uint16_t thread, trace::ChunkStore& store,
          const std::unordered_map<uint32_t, uint32_t>& regions, const defs::Definitions& defs,
          Skipped& skipped)
      : s_(s), rank_(rank), thread_(thread), store_(store), regions_(regions), defs_(defs), skipped_(skipped),
        compressor_(1) {
    for (const auto& [ref, name] : s.attribute_names)
      if (s.str(name) == kAttributeSomeBlockEmpty) block_empty_ = ref;
  }

  // ---- the OTF2 records -----------------------------------------------------------------------
  void enter(OTF2_TimeStamp t, OTF2_RegionRef ref) {
    const uint64_t now = at(t);
    const uint32_t region = region_of(ref);
    if (thread_ == 0 && !started_) {
      // Every rank's trace hangs under the root region "main" (critpath writes it itself).
      started_ = true;
      if (region != defs::kRootRegion) {
        emit(simple(trace::EventKind::kEnter, now, defs::kRootRegion));
        synthetic_root_ = true;
      }
    }
    started_ = true;
    Frame f;
    f.region = region;
    const RegionFacts& facts = facts_of(region);
    f.mpi = facts.mpi;
    if (facts.callsite) {
      // A call site of critpath's: the CALLSITE event before the MPI call's ENTER.
      f.callsite = true;
      frames_.push_back(f);
      emit(simple(trace::EventKind::kCallsite, now, region));
      return;
    }
    if (f.mpi.lifecycle == defs::MpiLifecycle::kInit && init_at_ == UINT64_MAX) init_at_ = now;
    if (f.mpi.lifecycle == defs::MpiLifecycle::kFinalize && finalize_at_ == UINT64_MAX) finalize_at_ = now;
    frames_.push_back(f);
    region_event(trace::EventKind::kEnter, t, now, region);
  }

  void leave(OTF2_TimeStamp t, OTF2_RegionRef ref) {
    const uint64_t now = at(t);
    const uint32_t region = region_of(ref);
    size_t i = frames_.size();
    while (i > 0 && frames_[i - 1].region != region) --i;
    if (i > 0 && frames_[i - 1].callsite) {  // its CALLSITE stood for it already
      frames_.erase(frames_.begin() + long(i - 1));
      return;
    }
    if (i > 0) {
      const Frame& f = frames_[i - 1];
      // Score-P's MPI_Win_flush writes only operation completions: their target is the flush's.
      if ((f.mpi.rma == defs::MpiRma::kFlush || f.mpi.rma == defs::MpiRma::kFlushAll) && !f.rma_written)
        emit(rma_event(trace::EventKind::kRmaSync, now, f.flush_win,
                       f.mpi.rma == defs::MpiRma::kFlush ? f.flush_target : -1));
      frames_.resize(i - 1);
    }
    region_event(trace::EventKind::kExit, t, now, region);
  }

  void metric(OTF2_TimeStamp t, OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types,
              const OTF2_MetricValue* values) {
    flush_counters();
    if (metric != s_.counter_class || n != s_.counter_names.size() || n > trace::kMaxCounters) {
      ++skipped_.metric_events;
      return;
    }
    trace::Event e;
    e.kind = trace::EventKind::kCounters;
    e.time = at(t);
    e.bytes = n;
    for (uint8_t k = 0; k < n; ++k)
      e.counters[k] = types[k] == OTF2_TYPE_DOUBLE ? uint64_t(values[k].floating_point)
                                                   : values[k].unsigned_int;
    // Score-P writes a Metric before the Enter/Leave it belongs to; critpath after it.
    pending_counters_ = e;
    pending_counters_at_ = t;
    have_counters_ = true;
  }

  void p2p(trace::EventKind kind, OTF2_TimeStamp t, uint32_t peer, OTF2_CommRef comm, uint32_t tag,
           uint64_t bytes, uint64_t request) {
    mpi_comm(comm);
    trace::Event e = simple(kind, at(t), 0);
    e.peer = peer == kUndefined32 ? -1 : int32_t(peer);
    e.comm = s_.comm_id(comm);
    e.tag = int32_t(tag);
    e.bytes = bytes;
    e.request = request;
    emit(e);
  }

  void request(trace::EventKind kind, OTF2_TimeStamp t, uint64_t request) {
    trace::Event e = simple(kind, at(t), 0);
    e.request = request;
    emit(e);
  }

  void coll_begin(OTF2_TimeStamp t) {
    if (in_lifecycle()) return;  // Score-P's communicator creation inside MPI_Init/Finalize
    emit(simple(trace::EventKind::kCollBegin, at(t), 0));
  }

  void coll_end(OTF2_TimeStamp t, OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received,
                const OTF2_AttributeList* attrs) {
    if (in_lifecycle()) return;
    mpi_comm(comm);
    trace::Event e = simple(trace::EventKind::kCollEnd, at(t), mpi_call());
    e.comm = s_.comm_id(comm);
    e.root = root_of(root, attrs);
    e.bytes = sent;
    e.bytes_received = received;
    emit(e);
  }

  // The post of a nonblocking collective: its operation comes with the completion.
  void icoll_request(OTF2_TimeStamp t, uint64_t request) {
    trace::Event e = simple(trace::EventKind::kIcollPost, at(t), mpi_call());
    e.request = request;
    flush_counters();
    open_icolls_[request] = held_.size();
    held_.push_back(e);
  }

  void icoll_complete(OTF2_TimeStamp t, OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received,
                      uint64_t request, const OTF2_AttributeList* attrs) {
    mpi_comm(comm);
    auto it = open_icolls_.find(request);
    if (it != open_icolls_.end()) {
      trace::Event& post = held_[it->second];
      post.comm = s_.comm_id(comm);
      post.root = root_of(root, attrs);
      post.bytes = sent;
      post.bytes_received = received;
      open_icolls_.erase(it);
    }
    this->request(trace::EventKind::kIcollComplete, t, request);
  }

  void measurement(OTF2_TimeStamp t, OTF2_MeasurementMode mode) {
    emit(simple(
        mode == OTF2_MEASUREMENT_ON ? trace::EventKind::kMeasurementOn : trace::EventKind::kMeasurementOff,
        at(t), 0));
  }

  void program(OTF2_StringRef name, uint32_t n, const OTF2_StringRef* args) {
    if (thread_ != 0) return;
    executable_ = s_.str(name);
    args_.clear();
    for (uint32_t i = 0; args && i < n; ++i) args_.push_back(s_.str(args[i]));
  }

  // ---- RMA ---------------------------------------------------------------------------------
  void win_create(OTF2_TimeStamp t, OTF2_RmaWinRef win) {
    if (foreign_window(win)) return;
    trace::Event e = rma_event(trace::EventKind::kRmaWinCreate, at(t), win, -1);
    auto w = s_.wins.find(win);
    e.root = int32_t(w == s_.wins.end() ? defs::kCommUnknown : s_.comm_id(w->second.comm));
    emit(e);
  }
  void win_destroy(OTF2_TimeStamp t, OTF2_RmaWinRef win) {
    if (foreign_window(win)) return;
    trace::Event e = rma_event(trace::EventKind::kRmaWinFree, at(t), win, -1);
    e.root = -1;
    emit(e);
  }
  void rma_collective_end(OTF2_TimeStamp t, OTF2_RmaWinRef win) {
    if (foreign_window(win)) return;
    if (role() == defs::MpiRma::kFence) emit(rma_event(trace::EventKind::kRmaCollSync, at(t), win, -1));
  }
  void group_sync(OTF2_TimeStamp t, OTF2_RmaSyncLevel level, OTF2_RmaWinRef win, OTF2_GroupRef group) {
    if (foreign_window(win)) return;
    switch (role()) {
      case defs::MpiRma::kStart:
      case defs::MpiRma::kPost: {
        // One RMA_SYNC per member, as window rank (critpath records them so).
        const std::vector<int32_t>& members = window_members(win);
        for (int32_t world : s_.ranks_of(group, rank_)) {
          auto at_ = std::find(members.begin(), members.end(), world);
          emit(rma_event(trace::EventKind::kRmaSync, at(t), win,
                         at_ == members.end() ? -1 : int32_t(at_ - members.begin())));
        }
        break;
      }
      case defs::MpiRma::kTest:
        if (level == OTF2_RMA_SYNC_LEVEL_NONE) break;  // an MPI_Win_test that completed nothing
        [[fallthrough]];
      case defs::MpiRma::kComplete:
      case defs::MpiRma::kWait: emit(rma_event(trace::EventKind::kRmaSync, at(t), win, -1)); break;
      default: break;
    }
  }
  void lock(OTF2_TimeStamp t, OTF2_RmaWinRef win, uint32_t remote, OTF2_LockType type) {
    if (foreign_window(win)) return;
    const defs::MpiRma r = role();
    if ((r != defs::MpiRma::kLock && r != defs::MpiRma::kLockAll) || frames_.back().rma_written) return;
    trace::Event e = rma_event(trace::EventKind::kRmaSync, at(t), win,
                               r == defs::MpiRma::kLock ? peer(remote) : -1);
    e.root = r == defs::MpiRma::kLock ? (type == OTF2_LOCK_EXCLUSIVE ? 1 : 2) : 0;
    emit(e);
  }
  void release(OTF2_TimeStamp t, OTF2_RmaWinRef win, uint32_t remote) {
    if (foreign_window(win)) return;
    const defs::MpiRma r = role();
    if (r == defs::MpiRma::kUnlock || r == defs::MpiRma::kUnlockAll)
      emit(rma_event(trace::EventKind::kRmaSync, at(t), win, r == defs::MpiRma::kUnlock ? peer(remote) : -1));
  }
  void sync(OTF2_TimeStamp t, OTF2_RmaWinRef win, uint32_t remote) {
    if (foreign_window(win)) return;
    if (role() != defs::MpiRma::kNone) emit(rma_event(trace::EventKind::kRmaSync, at(t), win, peer(remote)));
  }
  void transfer(trace::EventKind kind, OTF2_TimeStamp t, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes,
                uint64_t id) {
    if (foreign_window(win)) return;
    trace::Event e = rma_event(kind, at(t), win, peer(remote));
    e.bytes = bytes;
    e.request = request_based() ? id : 0;
    targets_[{win, id}] = e.peer;
    emit(e);
  }
  void atomic(OTF2_TimeStamp t, OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType type, uint64_t sent,
              uint64_t received, uint64_t id) {
    if (foreign_window(win)) return;
    transfer(trace::EventKind::kRmaAccumulate, t, win, remote, sent, id);
    if (type != OTF2_RMA_ATOMIC_TYPE_ACCUMULATE)  // a fetching form: its result bytes
      transfer(trace::EventKind::kRmaGet, t, win, remote, received, id);
  }
  void op_complete(OTF2_TimeStamp t, OTF2_RmaWinRef win, uint64_t id, bool nonblocking) {
    if (foreign_window(win)) return;
    // The operation is done: only a flush still asks for its target, now.
    int32_t target = -1;
    if (auto it = targets_.find({win, id}); it != targets_.end()) {
      target = it->second;
      targets_.erase(it);
    }
    if (nonblocking && !frames_.empty() && frames_.back().mpi.completion != defs::MpiCompletion::kNone) {
      trace::Event e = rma_event(trace::EventKind::kRmaRequestComplete, at(t), win, -1);
      e.region = 0;
      e.request = id;
      e.root = -1;
      emit(e);
      return;
    }
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if ((f.mpi.rma == defs::MpiRma::kFlush || f.mpi.rma == defs::MpiRma::kFlushAll) && f.flush_target < 0) {
      f.flush_target = target;
      f.flush_win = win;
    }
  }

  void skip(uint64_t Skipped::*field) { ++(skipped_.*field); }
  void fail(const std::string& why) {
    if (error_.empty()) error_ = why;
  }
  const std::string& error() const { return error_; }

  // Flushes what is still held; closes the synthetic root.
  void finish() {
    flush_counters();
    skipped_.open_icolls += open_icolls_.size();
    for (const auto& [req, at] : open_icolls_) held_[at].kind = trace::EventKind::kInvalid;  // dropped
    open_icolls_.clear();
    release_held();
    if (synthetic_root_) emit(simple(trace::EventKind::kExit, last_, defs::kRootRegion));
    flush_chunk();
  }

  uint64_t first() const { return first_ == UINT64_MAX ? 0 : first_; }
  uint64_t last() const { return last_; }
  uint64_t init_at() const { return init_at_; }
  uint64_t finalize_at() const { return finalize_at_; }
  const std::string& executable() const { return executable_; }
  const std::vector<std::string>& args() const { return args_; }
  Status status() const { return status_; }

 private:
  struct Frame {
    uint32_t region = 0;
    defs::MpiSemantics mpi;
    bool callsite = false;
    bool rma_written = false;  // an RMA event of this call was emitted
    int32_t flush_target = -1;
    uint32_t flush_win = 0;
  };

  uint64_t at(OTF2_TimeStamp t) {
    const uint64_t v = s_.ticks(t);
    first_ = std::min(first_, v);
    last_ = std::max(last_, v);
    return v;
  }
  static trace::Event simple(trace::EventKind kind, uint64_t time, uint32_t region) {
    trace::Event e;
    e.kind = kind;
    e.time = time;
    e.region = region;
    return e;
  }
  // A collective's root: critpath's -1 for OTF2's special values, trace::kRootSomeBlockEmpty
  // where the event carries CRITPATH::SOME_BLOCK_EMPTY (critpath's own export).
  int32_t root_of(uint32_t root, const OTF2_AttributeList* attrs) const {
    uint8_t flag = 0;
    if (attrs && block_empty_ != kUndefined32 &&
        OTF2_AttributeList_GetUint8(attrs, block_empty_, &flag) == OTF2_SUCCESS && flag == 1)
      return trace::kRootSomeBlockEmpty;
    return root >= OTF2_COLLECTIVE_ROOT_THIS_GROUP ? -1 : int32_t(root);
  }
  static int32_t peer(uint32_t remote) { return remote == kUndefined32 ? -1 : int32_t(remote); }
  // An MPI record's communicator: never another paradigm's.
  void mpi_comm(OTF2_CommRef comm) const {
    bool foreign = false;
    s_.record_comm(comm, foreign);
    if (foreign)
      throw std::runtime_error("an MPI record refers to communicator " + std::to_string(comm) +
                               ", which is not of the MPI paradigm");
  }
  // An RMA record on another paradigm's window (CUDA's memory copies): counted, dropped.
  bool foreign_window(OTF2_RmaWinRef win) {
    auto w = s_.wins.find(win);
    if (w == s_.wins.end()) return false;
    if (!w->second.mpi) {
      ++skipped_.other_records;
      return true;
    }
    return false;
  }

  // What the events need of a region, looked up once (the table takes a lock per lookup).
  struct RegionFacts {
    defs::MpiSemantics mpi;
    bool callsite = false;
  };
  const RegionFacts& facts_of(uint32_t region) {
    auto it = facts_.find(region);
    if (it == facts_.end()) {
      RegionFacts f;
      f.mpi = defs_.regions.mpi(region);
      f.callsite = defs_.regions.get(region).kind == defs::RegionKind::kCallsite;
      it = facts_.emplace(region, f).first;
    }
    return it->second;
  }
  uint32_t region_of(OTF2_RegionRef ref) {
    auto it = regions_.find(ref);
    if (it != regions_.end()) return it->second;
    throw std::runtime_error("an event refers to region " + std::to_string(ref) + ", which is not defined");
  }
  // The innermost open MPI call's region (0: none).
  uint32_t mpi_call() const {
    for (size_t i = frames_.size(); i > 0; --i)
      if (frames_[i - 1].mpi.cls != defs::MpiClass::kNone) return frames_[i - 1].region;
    return 0;
  }
  bool in_lifecycle() const {
    return !frames_.empty() && frames_.back().mpi.lifecycle != defs::MpiLifecycle::kNone;
  }
  defs::MpiRma role() const { return frames_.empty() ? defs::MpiRma::kNone : frames_.back().mpi.rma; }
  bool request_based() const {
    if (frames_.empty()) return false;
    const char* name = defs_.regions.stable_name(frames_.back().region);
    return name && std::strncmp(name, "MPI_R", 5) == 0;  // MPI_Rput, MPI_Rget, MPI_Raccumulate, ...
  }
  const std::vector<int32_t>& window_members(uint32_t win) {
    return defs::cached_members(defs_.windows, win, win_members_);
  }
  trace::Event rma_event(trace::EventKind kind, uint64_t time, uint32_t win, int32_t peer) {
    trace::Event e = simple(kind, time, frames_.empty() ? 0 : frames_.back().region);
    e.comm = win;
    e.peer = peer;
    if (!frames_.empty()) frames_.back().rma_written = true;
    return e;
  }

  // ENTER/EXIT, then the COUNTERS of a Metric record just before it at the same time.
  void region_event(trace::EventKind kind, OTF2_TimeStamp t, uint64_t now, uint32_t region) {
    const bool own = have_counters_ && pending_counters_at_ == t;
    if (!own) flush_counters();
    emit_now(simple(kind, now, region));
    if (own) {
      have_counters_ = false;
      emit_now(pending_counters_);
    }
  }
  void flush_counters() {
    if (!have_counters_) return;
    have_counters_ = false;
    emit_now(pending_counters_);
  }
  void emit(const trace::Event& e) {
    flush_counters();
    emit_now(e);
  }
  // Events wait behind an open nonblocking-collective post, so that it can be completed.
  void emit_now(const trace::Event& e) {
    if (!open_icolls_.empty()) {
      held_.push_back(e);
      return;
    }
    release_held();
    put(e);
  }
  void release_held() {
    for (const trace::Event& h : held_)
      if (h.kind != trace::EventKind::kInvalid) put(h);
    held_.clear();
  }
  void put(const trace::Event& e) {
    trace::Slot buf[trace::kMaxEventSlots];
    const unsigned n = trace::event_to_slots(e, buf);
    slots_.insert(slots_.end(), buf, buf + n);
    if (slots_.size() >= kChunkSlots) flush_chunk();
  }
  void flush_chunk() {
    if (slots_.empty() || status_ != Status::kOk) return;
    std::vector<uint8_t> chunk;
    status_ = compressor_.compress(slots_.data(), slots_.data() + slots_.size(), thread_, sequence_++, chunk);
    if (status_ == Status::kOk) status_ = store_.append(std::move(chunk));
    slots_.clear();
  }

  const State& s_;
  const int rank_;
  const uint16_t thread_;
  trace::ChunkStore& store_;
  const std::unordered_map<uint32_t, uint32_t>& regions_;
  const defs::Definitions& defs_;
  Skipped& skipped_;
  trace::ChunkCompressor compressor_;
  std::vector<trace::Slot> slots_;
  uint32_t sequence_ = 0;
  Status status_ = Status::kOk;
  std::vector<Frame> frames_;
  bool started_ = false, synthetic_root_ = false;
  uint32_t block_empty_ = kUndefined32;  // the CRITPATH::SOME_BLOCK_EMPTY attribute's ref
  uint64_t first_ = UINT64_MAX, last_ = 0, init_at_ = UINT64_MAX, finalize_at_ = UINT64_MAX;
  trace::Event pending_counters_;
  OTF2_TimeStamp pending_counters_at_ = 0;
  bool have_counters_ = false;
  std::vector<trace::Event> held_;
  std::unordered_map<uint64_t, size_t> open_icolls_;          // request -> index in held_
  std::map<std::pair<uint32_t, uint64_t>, int32_t> targets_;  // (window, matching id) -> target
  std::unordered_map<uint32_t, std::vector<int32_t>> win_members_;
  std::unordered_map<uint32_t, RegionFacts> facts_;
  std::string executable_;
  std::vector<std::string> args_;
  std::string error_;
};

// Records critpath does not analyse: counted, otherwise ignored. The template arguments after
// the field come from the callback type the function is registered for.
template <uint64_t Skipped::*Field, typename... Fields>
OTF2_CallbackCode skip(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user, OTF2_AttributeList*,
                       Fields...) {
  static_cast<Builder*>(user)->skip(Field);
  return OTF2_CALLBACK_SUCCESS;
}
// Records that carry nothing an analysis needs (their information is elsewhere).
template <typename... Fields>
OTF2_CallbackCode ignore(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, Fields...) {
  return OTF2_CALLBACK_SUCCESS;
}

#define CRITPATH_OTF2_EVT(Name, ...)                                                              \
  OTF2_EvtReaderCallbacks_Set##Name##Callback(c, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, \
                                                   void* u, OTF2_AttributeList*, __VA_ARGS__)
#define CRITPATH_OTF2_DO(...)                                   \
  {                                                             \
    return guard<Builder>(u, [&](Builder& b) { __VA_ARGS__; }); \
  })

// register_event_callbacks' steps: the events analysed (regions, metrics, messages,
// collectives), the one-sided ones, then the counted or ignored rest.
void register_mpi_callbacks(OTF2_EvtReaderCallbacks* c) {
  using K = trace::EventKind;
  CRITPATH_OTF2_EVT(Enter, OTF2_RegionRef r) CRITPATH_OTF2_DO(b.enter(t, r));
  CRITPATH_OTF2_EVT(Leave, OTF2_RegionRef r) CRITPATH_OTF2_DO(b.leave(t, r));
  CRITPATH_OTF2_EVT(Metric, OTF2_MetricRef m, uint8_t n, const OTF2_Type* ty, const OTF2_MetricValue* v)
  CRITPATH_OTF2_DO(b.metric(t, m, n, ty, v));
  CRITPATH_OTF2_EVT(MpiSend, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes)
  CRITPATH_OTF2_DO(b.p2p(K::kSend, t, peer, comm, tag, bytes, 0));
  CRITPATH_OTF2_EVT(MpiRecv, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes)
  CRITPATH_OTF2_DO(b.p2p(K::kRecv, t, peer, comm, tag, bytes, 0));
  CRITPATH_OTF2_EVT(MpiIsend, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes, uint64_t req)
  CRITPATH_OTF2_DO(b.p2p(K::kIsend, t, peer, comm, tag, bytes, req));
  CRITPATH_OTF2_EVT(MpiIrecv, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes, uint64_t req)
  CRITPATH_OTF2_DO(b.p2p(K::kIrecv, t, peer, comm, tag, bytes, req));
  CRITPATH_OTF2_EVT(MpiIsendComplete, uint64_t req) CRITPATH_OTF2_DO(b.request(K::kIsendComplete, t, req));
  CRITPATH_OTF2_EVT(MpiIrecvRequest, uint64_t req) CRITPATH_OTF2_DO(b.request(K::kIrecvRequest, t, req));
  CRITPATH_OTF2_EVT(MpiRequestCancelled, uint64_t req) CRITPATH_OTF2_DO(b.request(K::kRequestCancel, t, req));
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(
      c, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*) {
        return guard<Builder>(u, [&](Builder& b) { b.coll_begin(t); });
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(
      c, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a, OTF2_CollectiveOp,
            OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received) {
        return guard<Builder>(u, [&](Builder& b) { b.coll_end(t, comm, root, sent, received, a); });
      });
  CRITPATH_OTF2_EVT(NonBlockingCollectiveRequest, uint64_t req) CRITPATH_OTF2_DO(b.icoll_request(t, req));
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(
      c, [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a, OTF2_CollectiveOp,
            OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t received, uint64_t req) {
        return guard<Builder>(u,
                              [&](Builder& b) { b.icoll_complete(t, comm, root, sent, received, req, a); });
      });
  CRITPATH_OTF2_EVT(MeasurementOnOff, OTF2_MeasurementMode mode) CRITPATH_OTF2_DO(b.measurement(t, mode));
  CRITPATH_OTF2_EVT(ProgramBegin, OTF2_StringRef name, uint32_t n, const OTF2_StringRef* args)
  CRITPATH_OTF2_DO((void)t; b.program(name, n, args));
}

void register_rma_callbacks(OTF2_EvtReaderCallbacks* c) {
  using K = trace::EventKind;
  CRITPATH_OTF2_EVT(RmaWinCreate, OTF2_RmaWinRef w) CRITPATH_OTF2_DO(b.win_create(t, w));
  CRITPATH_OTF2_EVT(RmaWinDestroy, OTF2_RmaWinRef w) CRITPATH_OTF2_DO(b.win_destroy(t, w));
  CRITPATH_OTF2_EVT(RmaCollectiveEnd, OTF2_CollectiveOp, OTF2_RmaSyncLevel, OTF2_RmaWinRef w, uint32_t,
                    uint64_t, uint64_t)
  CRITPATH_OTF2_DO(b.rma_collective_end(t, w));
  CRITPATH_OTF2_EVT(RmaGroupSync, OTF2_RmaSyncLevel level, OTF2_RmaWinRef w, OTF2_GroupRef g)
  CRITPATH_OTF2_DO(b.group_sync(t, level, w, g));
  CRITPATH_OTF2_EVT(RmaRequestLock, OTF2_RmaWinRef w, uint32_t remote, uint64_t, OTF2_LockType type)
  CRITPATH_OTF2_DO(b.lock(t, w, remote, type));
  CRITPATH_OTF2_EVT(RmaAcquireLock, OTF2_RmaWinRef w, uint32_t remote, uint64_t, OTF2_LockType type)
  CRITPATH_OTF2_DO(b.lock(t, w, remote, type));
  CRITPATH_OTF2_EVT(RmaReleaseLock, OTF2_RmaWinRef w, uint32_t remote, uint64_t)
  CRITPATH_OTF2_DO(b.release(t, w, remote));
  CRITPATH_OTF2_EVT(RmaSync, OTF2_RmaWinRef w, uint32_t remote, OTF2_RmaSyncType)
  CRITPATH_OTF2_DO(b.sync(t, w, remote));
  CRITPATH_OTF2_EVT(RmaPut, OTF2_RmaWinRef w, uint32_t remote, uint64_t bytes, uint64_t id)
  CRITPATH_OTF2_DO(b.transfer(K::kRmaPut, t, w, remote, bytes, id));
  CRITPATH_OTF2_EVT(RmaGet, OTF2_RmaWinRef w, uint32_t remote, uint64_t bytes, uint64_t id)
  CRITPATH_OTF2_DO(b.transfer(K::kRmaGet, t, w, remote, bytes, id));
  CRITPATH_OTF2_EVT(RmaAtomic, OTF2_RmaWinRef w, uint32_t remote, OTF2_RmaAtomicType type, uint64_t sent,
                    uint64_t received, uint64_t id)
  CRITPATH_OTF2_DO(b.atomic(t, w, remote, type, sent, received, id));
  CRITPATH_OTF2_EVT(RmaOpCompleteBlocking, OTF2_RmaWinRef w, uint64_t id)
  CRITPATH_OTF2_DO(b.op_complete(t, w, id, false));
  CRITPATH_OTF2_EVT(RmaOpCompleteNonBlocking, OTF2_RmaWinRef w, uint64_t id)
  CRITPATH_OTF2_DO(b.op_complete(t, w, id, true));
}

void register_skipped_callbacks(OTF2_EvtReaderCallbacks* c) {
  // Counted and skipped.
  OTF2_EvtReaderCallbacks_SetUnknownCallback(c, skip<&Skipped::other_events>);
  OTF2_EvtReaderCallbacks_SetOmpForkCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetOmpJoinCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetOmpAcquireLockCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetOmpReleaseLockCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetOmpTaskCreateCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetOmpTaskSwitchCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetOmpTaskCompleteCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadForkCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadJoinCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadTeamBeginCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadTeamEndCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadTaskCreateCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadTaskSwitchCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadTaskCompleteCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadCreateCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadBeginCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadWaitCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetThreadEndCallback(c, skip<&Skipped::threading_events>);
  OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback(c, skip<&Skipped::sampling_events>);
  OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback(c, skip<&Skipped::sampling_events>);
  OTF2_EvtReaderCallbacks_SetCallingContextSampleCallback(c, skip<&Skipped::sampling_events>);
  OTF2_EvtReaderCallbacks_SetParameterStringCallback(c, skip<&Skipped::parameter_events>);
  OTF2_EvtReaderCallbacks_SetParameterIntCallback(c, skip<&Skipped::parameter_events>);
  OTF2_EvtReaderCallbacks_SetParameterUnsignedIntCallback(c, skip<&Skipped::parameter_events>);
  OTF2_EvtReaderCallbacks_SetIoCreateHandleCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoDestroyHandleCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoDuplicateHandleCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoSeekCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoChangeStatusFlagsCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoDeleteFileCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoOperationTestCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoOperationIssuedCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoOperationCancelledCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoAcquireLockCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoReleaseLockCallback(c, skip<&Skipped::io_events>);
  OTF2_EvtReaderCallbacks_SetIoTryLockCallback(c, skip<&Skipped::io_events>);
  // Nothing to analyse in them: failed tests (critpath counts, never records them), the
  // program's end, buffer flushes, communicator life (the definitions say it), RMA waits,
  // tests and remote completions.
  OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetProgramEndCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetBufferFlushCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetCommCreateCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetCommDestroyCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetRmaCollectiveBeginCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetRmaTryLockCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetRmaOpTestCallback(c, ignore);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(c, ignore);
}

void register_event_callbacks(OTF2_EvtReaderCallbacks* c) {
  register_mpi_callbacks(c);
  register_rma_callbacks(c);
  register_skipped_callbacks(c);
}

#undef CRITPATH_OTF2_EVT
#undef CRITPATH_OTF2_DO

std::string iso_utc(uint64_t realtime_ns) {
  if (realtime_ns == OTF2_UNDEFINED_TIMESTAMP) return {};
  const time_t t = time_t(realtime_ns / 1000000000ull);
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return {};
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// libotf2 trusts the counts an anchor file holds: a damaged one can make OTF2_Reader_Open
// allocate tens of GB (AddressSanitizer stops at 31.7 GB for one bit flipped) or corrupt the
// heap. So the anchor is opened first in a child process, which only opens and closes it; if
// that child dies, the archive is refused here instead of taking the analysis down. False
// where fork fails or the child is still at it after 30 s (it is killed): the archive is
// then opened as it is.
bool anchor_kills_reader(const std::string& anchor) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
    if (r != nullptr) OTF2_Reader_Close(r);
    _exit(0);
  }
  int status = 0;
  for (int waited_ms = 0;; ++waited_ms) {
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if ((got < 0 && errno != EINTR) || waited_ms >= 30000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    usleep(1000);
  }
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// ArchiveReader::open's steps. The anchor file and the global definitions.
Status read_global_definitions(State& s, std::string& error) {
  const std::string& anchor = s.anchor;
  if (access(anchor.c_str(), R_OK) != 0) {
    error = anchor + ": cannot read it: " + std::strerror(errno);
    return Status::kIoError;
  }
  if (anchor_kills_reader(anchor)) {
    error = anchor +
            ": the OTF2 library fails on this anchor file (a process opening it died): it is damaged";
    return Status::kCorrupt;
  }
  s.reader = OTF2_Reader_Open(anchor.c_str());
  if (s.reader == nullptr) {
    const std::string why = take_last_error();
    error = anchor + ": not an OTF2 archive that can be opened" + (why.empty() ? "" : " (" + why + ")");
    return Status::kIoError;
  }
  OTF2_ErrorCode rc = OTF2_Reader_SetSerialCollectiveCallbacks(s.reader);
  if (rc != OTF2_SUCCESS) {
    error = anchor + ": " + describe(rc);
    return Status::kIoError;
  }
  char* value = nullptr;
  if (OTF2_Reader_GetProperty(s.reader, kPropertyTimestamps, &value) == OTF2_SUCCESS) s.critpath = true;
  std::free(value);
  value = nullptr;
  if (OTF2_Reader_GetCreator(s.reader, &value) == OTF2_SUCCESS) s.creator = take_string(value);

  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(s.reader);
  if (gdr == nullptr) {
    error = anchor + ": the global definitions (traces.def) do not open: " + take_last_error();
    return Status::kCorrupt;
  }
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  register_global_callbacks(cbs);
  register_metric_callbacks(cbs);
  OTF2_Reader_RegisterGlobalDefCallbacks(s.reader, gdr, cbs, &s);
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  uint64_t n = 0;
  rc = OTF2_Reader_ReadAllGlobalDefinitions(s.reader, gdr, &n);
  OTF2_Reader_CloseGlobalDefReader(s.reader, gdr);
  if (rc != OTF2_SUCCESS || !s.error.empty()) {
    error = anchor + ": the global definitions do not read: " + (s.error.empty() ? describe(rc) : s.error);
    return Status::kCorrupt;
  }
  return Status::kOk;
}

// A paradigm's name, for the sentence that refuses an archive: the archive's own (its
// Paradigm definitions), else OTF2's.
std::string paradigm_name(const State& s, OTF2_Paradigm p) {
  auto it = s.paradigm_names.find(p);
  if (it != s.paradigm_names.end() && !s.str(it->second).empty()) return s.str(it->second);
  static const std::map<OTF2_Paradigm, const char*> kNames = {
      {OTF2_PARADIGM_OPENMP, "OpenMP"},    {OTF2_PARADIGM_CUDA, "CUDA"},
      {OTF2_PARADIGM_PTHREAD, "pthreads"}, {OTF2_PARADIGM_SHMEM, "SHMEM"},
      {OTF2_PARADIGM_OPENCL, "OpenCL"},    {OTF2_PARADIGM_OPENACC, "OpenACC"},
      {OTF2_PARADIGM_HIP, "HIP"},          {OTF2_PARADIGM_GASPI, "GASPI"},
      {OTF2_PARADIGM_UPC, "UPC"},          {OTF2_PARADIGM_KOKKOS, "Kokkos"},
      {OTF2_PARADIGM_OMPSS, "OmpSs"},      {OTF2_PARADIGM_SAMPLING, "sampling"},
      {OTF2_PARADIGM_TBBTHREAD, "TBB"},    {OTF2_PARADIGM_MTAPI, "MTAPI"},
      {OTF2_PARADIGM_HMPP, "HMPP"}};
  auto n = kNames.find(p);
  return n == kNames.end() ? "paradigm " + std::to_string(int(p)) : n->second;
}

// What an archive without MPI holds, for the sentence that refuses it: "2 processes, 8 CPU
// threads, 4 accelerator streams; paradigms: CUDA, OpenMP".
std::string describe_contents(const State& s, size_t processes) {
  size_t threads = 0, streams = 0, other = 0;
  for (const auto& [loc, l] : s.locations)
    ++(l.type == OTF2_LOCATION_TYPE_CPU_THREAD           ? threads
       : l.type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM ? streams
                                                         : other);
  std::set<OTF2_Paradigm> used;
  for (const auto& [p, name] : s.paradigm_names) used.insert(p);
  for (const auto& [ref, r] : s.regions) used.insert(r.paradigm);
  for (const auto& [ref, g] : s.groups) used.insert(g.paradigm);
  std::string names;
  for (OTF2_Paradigm p : used)
    if (p != OTF2_PARADIGM_UNKNOWN && p != OTF2_PARADIGM_USER && p != OTF2_PARADIGM_COMPILER &&
        p != OTF2_PARADIGM_MEASUREMENT_SYSTEM && p != OTF2_PARADIGM_NONE)
      names += (names.empty() ? "" : ", ") + paradigm_name(s, p);
  std::string out = std::to_string(processes) + (processes == 1 ? " process, " : " processes, ") +
                    std::to_string(threads) + " CPU threads, " + std::to_string(streams) +
                    " accelerator streams";
  if (other) out += ", " + std::to_string(other) + " other locations";
  return out + (names.empty() ? "" : "; paradigms: " + names);
}

// An archive without MPI (no MPI group, no MPI region): the master thread (first CPU thread)
// of its one process; more than one process, or none, is refused with what it holds.
Status find_master_thread(State& s, std::vector<uint64_t>& mains, std::string& error) {
  std::map<uint32_t, uint64_t> first_thread;  // process location group -> its first CPU thread
  for (const auto& [loc, l] : s.locations)
    if (l.type == OTF2_LOCATION_TYPE_CPU_THREAD && s.location_groups.count(l.group) &&
        s.location_groups.at(l.group).type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
      first_thread.emplace(l.group, loc);
  if (first_thread.size() != 1) {
    error = s.anchor + ": holds no MPI (" + describe_contents(s, first_thread.size()) +
            "): critpath analyses the MPI ranks of an archive, or the master thread of a single process";
    return Status::kCorrupt;
  }
  s.without_mpi = true;
  mains.push_back(first_thread.begin()->second);
  return Status::kOk;
}

// The ranks: MPI_COMM_WORLD's locations, rank i = member i of the MPI COMM_LOCATIONS group.
Status find_ranks(State& s, std::string& error) {
  const std::string& anchor = s.anchor;
  std::vector<uint64_t> mains;
  for (const auto& [ref, g] : s.groups)
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == OTF2_PARADIGM_MPI) {
      mains = g.members;
      break;
    }
  const bool mpi_regions = std::any_of(s.regions.begin(), s.regions.end(),
                                       [](const auto& r) { return r.second.paradigm == OTF2_PARADIGM_MPI; });
  if (mains.empty() && !mpi_regions) {
    CRITPATH_FORWARD_IF_ERROR(find_master_thread(s, mains, error));
  } else if (mains.empty()) {
    // MPI regions but no MPI group: one rank per process, its first CPU thread.
    std::map<uint32_t, uint64_t> first_thread;
    for (const auto& [loc, l] : s.locations)
      if (l.type == OTF2_LOCATION_TYPE_CPU_THREAD && s.location_groups.count(l.group) &&
          s.location_groups.at(l.group).type == OTF2_LOCATION_GROUP_TYPE_PROCESS)
        first_thread.emplace(l.group, loc);
    for (const auto& [g, loc] : first_thread) mains.push_back(loc);
  }
  for (uint64_t loc : mains) {
    if (!s.locations.count(loc)) {
      error = anchor + ": MPI_COMM_WORLD names location " + std::to_string(loc) + ", which is not defined";
      return Status::kCorrupt;
    }
    if (s.rank_of_location.count(loc)) {
      error = anchor + ": MPI_COMM_WORLD names location " + std::to_string(loc) + " twice";
      return Status::kCorrupt;
    }
    s.rank_of_location[loc] = int(s.rank_locations.size());
    s.rank_locations.push_back({loc});
  }
  if (s.rank_locations.empty()) {
    error = anchor + ": holds no MPI rank (no process location group with a CPU thread)";
    return Status::kCorrupt;
  }
  // Every other location: another thread of a rank (imported from critpath's archives, where
  // they called MPI), or something critpath does not analyse.
  std::map<uint32_t, int> rank_of_group;
  for (size_t r = 0; r < s.rank_locations.size(); ++r)
    rank_of_group[s.locations.at(s.rank_locations[r][0]).group] = int(r);
  for (const auto& [loc, l] : s.locations) {
    if (s.rank_of_location.count(loc)) continue;
    const auto g = s.location_groups.find(l.group);
    const bool accelerator = l.type == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM ||
                             (g != s.location_groups.end() &&
                              g->second.type == OTF2_LOCATION_GROUP_TYPE_ACCELERATOR);
    if (accelerator) {
      ++s.skipped.accelerator_locations;
    } else if (l.type == OTF2_LOCATION_TYPE_METRIC) {
      ++s.skipped.metric_locations;
    } else if (s.critpath && l.type == OTF2_LOCATION_TYPE_CPU_THREAD && rank_of_group.count(l.group) &&
               s.rank_locations[size_t(rank_of_group[l.group])].size() < 0xffff) {
      s.rank_locations[size_t(rank_of_group[l.group])].push_back(loc);
      s.rank_of_location[loc] = rank_of_group[l.group];
    } else {
      ++s.skipped.thread_locations;
    }
  }
  return Status::kOk;
}

// The members of an MPI communicator's group as ranks: each a rank, none twice, at least
// one. "" when so, else why not.
std::string check_members(const State& s, uint32_t group, size_t& size) {
  const std::vector<int32_t> ranks = s.ranks_of(group, 0);
  size = ranks.size();
  if (ranks.empty()) return "has no member";
  std::vector<bool> seen(s.rank_locations.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0) return "has member " + std::to_string(i) + ", which is not an MPI rank";
    if (seen[size_t(ranks[i])]) return "names rank " + std::to_string(ranks[i]) + " twice";
    seen[size_t(ranks[i])] = true;
  }
  return {};
}

// Which communicators and windows are MPI's: those over groups of the MPI paradigm (UNKNOWN:
// a writer that does not say; taken for MPI unless the archive holds no MPI). Those of other
// paradigms (CUDA's, whose members are accelerator streams; OpenMP's, SHMEM's) are counted and
// never enter the analysis. An MPI communicator whose members are not distinct ranks, a
// reference to an undefined group or communicator: a damaged archive, refused here, before
// the analysis makes MPI groups of them.
Status classify_paradigms(State& s, std::string& error) {
  auto mpi_group = [&](uint32_t ref) {
    const OTF2_Paradigm p = s.groups.at(ref).paradigm;
    return !s.without_mpi && (p == OTF2_PARADIGM_MPI || p == OTF2_PARADIGM_UNKNOWN);
  };
  for (auto& [ref, c] : s.comms) {
    const std::string name = "communicator " + std::to_string(ref) + " (" + s.str(c.name) + ")";
    for (uint32_t g : {c.group, c.inter ? c.group_b : c.group})
      if (!s.groups.count(g)) {
        error = s.anchor + ": " + name + " refers to group " + std::to_string(g) + ", which is not defined";
        return Status::kCorrupt;
      }
    c.mpi = mpi_group(c.group) && (!c.inter || mpi_group(c.group_b));
    if (!c.mpi) {
      ++s.skipped.other_comms;
      continue;
    }
    std::string why = check_members(s, c.group, c.size);
    if (why.empty() && c.inter) why = check_members(s, c.group_b, c.remote_size);
    if (!why.empty()) {
      error = s.anchor + ": MPI " + name + " " + why;
      return Status::kCorrupt;
    }
  }
  for (auto& [ref, w] : s.wins) {
    auto c = s.comms.find(w.comm);
    if (c == s.comms.end() && w.comm != kUndefined32) {
      error = s.anchor + ": window " + std::to_string(ref) + " refers to communicator " +
              std::to_string(w.comm) + ", which is not defined";
      return Status::kCorrupt;
    }
    // Over no communicator: critpath's export of a window over a communicator it did not know.
    w.mpi = c == s.comms.end() ? !s.without_mpi : c->second.mpi && !c->second.inter;
    if (!w.mpi) ++s.skipped.other_windows;
  }
  return Status::kOk;
}

// The special definitions: the world and self communicators, the hardware counters.
void find_special_definitions(State& s) {
  // MPI_COMM_WORLD: named so, else the first parentless communicator of all ranks in order;
  // MPI_COMM_SELF: the first communicator of a COMM_SELF group.
  auto all_ranks = [&](uint32_t group) {
    auto it = s.groups.find(group);
    if (it == s.groups.end() || it->second.members.size() != s.rank_locations.size()) return false;
    for (size_t i = 0; i < it->second.members.size(); ++i)
      if (it->second.members[i] != i) return false;
    return true;
  };
  for (const auto& [ref, c] : s.comms)
    if (c.mpi && !c.inter && s.str(c.name) == "MPI_COMM_WORLD") s.world = ref;
  for (const auto& [ref, c] : s.comms)
    if (s.world == kUndefined32 && c.mpi && !c.inter && c.parent == kUndefined32 && all_ranks(c.group))
      s.world = ref;
  for (const auto& [ref, c] : s.comms) {
    auto g = s.groups.find(c.group);
    if (c.mpi && !c.inter && g != s.groups.end() && g->second.type == OTF2_GROUP_TYPE_COMM_SELF) {
      s.self = ref;
      break;
    }
  }
  // The hardware counters: the first strictly synchronous metric class of integer members.
  for (const auto& [ref, m] : s.metric_classes) {
    if (m.occurrence != OTF2_METRIC_SYNCHRONOUS_STRICT || m.members.empty() ||
        m.members.size() > trace::kMaxCounters)
      continue;
    std::vector<std::string> names;
    for (uint32_t member : m.members) names.push_back(s.str(s.metric_member_names[member]));
    s.counter_class = ref;
    s.counter_names = std::move(names);
    break;
  }
}

// ArchiveReader::load's steps. Regions, in reference order: the same ids on every rank. MPI
// functions by name get the spec's id and semantics; unknown ones ids below the spec's range
// with the OTF2 role's. Other names are demangled where the archive holds them mangled (the
// mangled ones into `mangled`, by display name). Returns the critpath id of each OTF2 region
// reference.
std::unordered_map<uint32_t, uint32_t> define_regions(const State& s, defs::Definitions& definitions,
                                                      std::map<std::string, std::string>& mangled) {
  std::unordered_map<uint32_t, uint32_t> regions;
  uint32_t next_unknown_mpi = defs::kLastMpiRegion;
  std::unordered_set<uint32_t> spec_ids;
  for (const pmpi::GeneratedRegion& g : pmpi::generated_regions()) spec_ids.insert(g.id);
  for (const auto& [ref, r] : s.regions) {
    const defs::RegionKind kind = region_kind(r.paradigm, r.role);
    const std::string& raw = s.str(r.name);
    const std::string name = kind == defs::RegionKind::kMpi ? raw : defs::demangle(raw.c_str());
    if (name != raw) mangled.emplace(name, raw);
    uint32_t id = 0;
    if (kind == defs::RegionKind::kMpi) {
      if (const pmpi::GeneratedRegion* g = spec_region(name)) {
        id = g->id;
        definitions.regions.define_fixed(id, name, kind, g->mpi);
      } else {
        while (next_unknown_mpi > 0 && spec_ids.count(next_unknown_mpi)) --next_unknown_mpi;
        id = next_unknown_mpi--;
        definitions.regions.define_fixed(id, name, kind, semantics_from_role(r.role));
      }
    } else if (kind == defs::RegionKind::kArtificial && name == "main") {
      id = defs::kRootRegion;
      definitions.regions.define_fixed(id, name, kind);
    } else if (s.critpath && r.paradigm == OTF2_PARADIGM_USER && r.role == OTF2_REGION_ROLE_CODE) {
      id = definitions.regions.define(name, defs::RegionKind::kCallsite, s.str(r.file), r.line);
    } else {
      id = definitions.regions.define(name, kind, s.str(r.file), r.line);
    }
    regions[ref] = id;
  }
  return regions;
}

// Communicators: every intracommunicator (members as MPI_COMM_WORLD ranks), and the
// intercommunicators this rank is in, its own side first. Then the windows and the counter
// names.
void define_communicators(const State& s, int rank, defs::Definitions& definitions) {
  for (const auto& [ref, c] : s.comms) {
    if (!c.mpi) continue;
    defs::CommDef d;
    d.id = s.comm_id(ref);
    d.parent = s.comm_id(c.parent);
    d.created_by = s.str(c.name);
    if (s.critpath && d.id > defs::kCommSelf) {  // critpath writes "<creator> <id>"
      const size_t space = d.created_by.rfind(' ');
      if (space != std::string::npos) d.created_by.resize(space);
    }
    d.members = s.ranks_of(c.group, rank);
    if (c.inter) {
      std::vector<int32_t> b = s.ranks_of(c.group_b, rank);
      const bool in_a = std::count(d.members.begin(), d.members.end(), rank) > 0;
      const bool in_b = std::count(b.begin(), b.end(), rank) > 0;
      if (!in_a && !in_b) continue;
      if (in_b) std::swap(d.members, b);
      d.remote = std::move(b);
    }
    definitions.comms.define(std::move(d));
  }
  for (const auto& [ref, w] : s.wins) {
    if (!w.mpi) continue;
    defs::WindowDef d;
    d.id = ref;
    d.comm = s.comm_id(w.comm);
    defs::CommDef c;
    if (definitions.comms.find(d.comm, c)) d.members = c.members;
    d.created_by = s.str(w.name);
    definitions.windows.define(std::move(d));
  }
  definitions.set_counter_names(s.counter_names);
}

// What a rank's events say about its run: their span, and from its first location the
// program and when MPI_Init and MPI_Finalize began.
struct EventSpan {
  uint64_t first = UINT64_MAX, last = 0, init_at = UINT64_MAX, finalize_at = UINT64_MAX;
  std::string executable;
  std::vector<std::string> args;
};

// Events, location after location, into `chunks`.
Status read_events(State& s, int rank, trace::ChunkStore& chunks,
                   const std::unordered_map<uint32_t, uint32_t>& regions, defs::Definitions& definitions,
                   Skipped& skipped, EventSpan& span, std::string& error) {
  const std::vector<uint64_t>& locs = s.rank_locations.at(size_t(rank));
  for (size_t th = 0; th < locs.size(); ++th) {
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(s.reader, locs[th]);
    if (er == nullptr) {
      error = s.anchor + ": the events of location " + std::to_string(locs[th]) +
              " do not open: " + take_last_error();
      return Status::kCorrupt;
    }
    Builder b(s, rank, uint16_t(th), chunks, regions, definitions, skipped);
    OTF2_EvtReaderCallbacks* cbs = OTF2_EvtReaderCallbacks_New();
    register_event_callbacks(cbs);
    OTF2_Reader_RegisterEvtCallbacks(s.reader, er, cbs, &b);
    OTF2_EvtReaderCallbacks_Delete(cbs);
    uint64_t n = 0;
    const OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalEvents(s.reader, er, &n);
    OTF2_Reader_CloseEvtReader(s.reader, er);
    if (rc != OTF2_SUCCESS || !b.error().empty()) {
      error = s.anchor + ": the events of location " + std::to_string(locs[th]) + " (rank " +
              std::to_string(rank) + ") do not read: " + (b.error().empty() ? describe(rc) : b.error());
      return Status::kCorrupt;
    }
    b.finish();
    if (b.status() != Status::kOk) {
      error = std::string("cannot store the imported events: ") + to_string(b.status());
      return b.status();
    }
    span.first = std::min(span.first, b.first());
    span.last = std::max(span.last, b.last());
    if (th == 0) {
      span.init_at = b.init_at();
      span.finalize_at = b.finalize_at();
      span.executable = b.executable();
      span.args = b.args();
    }
  }
  if (span.first == UINT64_MAX) span.first = 0;
  return Status::kOk;
}

// Run facts: ticks on the archive's (already corrected) time base.
void set_run_facts(const State& s, int rank, size_t threads, const EventSpan& span, RunInfo& run) {
  run.rank = rank;
  run.size = int(s.rank_locations.size());
  run.thread_level = threads > 1 ? 3 : 0;
  run.executable = span.executable;
  run.args = span.args;
  if (run.executable.empty()) run.executable = "(OTF2 archive)";
  run.output_dir.clear();
  run.imported_from = "OTF2 archive";
  run.start_utc = iso_utc(s.realtime);  // empty when the archive gives no wall-clock time
  run.mpi_library = "OTF2 archive" + (s.creator.empty() ? std::string() : " by " + s.creator);
  // A tick converter of the archive's resolution: one second is `resolution` ticks (the TSC
  // kind is the one that takes its rate from the two pairs).
  run.timer = s.resolution == 1000000000ull ? clock::TimerKind::kMonotonic : clock::TimerKind::kTsc;
  run.timer_why = "OTF2 time stamps (" + std::to_string(s.resolution) + " ticks/s)";
  run.begin = {0, 0};
  run.end = {s.resolution, 1000000000ull};
  run.conv = clock::TickConverter(run.timer, run.begin, run.end);
  run.init_enter_ticks = span.init_at != UINT64_MAX ? span.init_at : span.first;
  run.finalize_enter_ticks = span.finalize_at != UINT64_MAX ? span.finalize_at : span.last;
  run.clock_linear = false;  // the time stamps are on one base already (the writer's or OTF2's)
}

// The properties critpath's export gives the rank's process: its MPMD command, the regions'
// visits it did not record, its CPUs.
void read_process_properties(const State& s, uint32_t process,
                             const std::unordered_map<uint32_t, uint32_t>& regions,
                             defs::Definitions& definitions, RunInfo& run) {
  for (const State::GroupProperty& p : s.group_properties)
    if (p.group == process && s.str(p.name) == kPropertyAppnum) {
      run.appnum = std::atoi(s.str(p.value).c_str());
    } else if (p.group == process && s.str(p.name) == kPropertyUnrecorded) {
      // "<region ref>:<visits>:<seconds>:<auto>;...": in this archive's ticks.
      const std::string& list = s.str(p.value);
      for (size_t at = 0; at < list.size();) {
        unsigned ref = 0, autof = 0;
        unsigned long long visits = 0;
        double seconds = 0;
        if (std::sscanf(list.c_str() + at, "%u:%llu:%lg:%u", &ref, &visits, &seconds, &autof) == 4) {
          auto it = regions.find(ref);
          if (it != regions.end() && seconds >= 0)
            definitions.regions.add_unrecorded(
                it->second, visits, uint64_t(std::llround(seconds * double(s.resolution))), autof != 0);
        }
        const size_t semi = list.find(';', at);
        at = semi == std::string::npos ? list.size() : semi + 1;
      }
    } else if (p.group == process && s.str(p.name) == kPropertyCpus) {
      const std::string& list = s.str(p.value);
      for (size_t at = 0; at < list.size();) {
        run.cpus.push_back(std::atoi(list.c_str() + at));
        const size_t comma = list.find(',', at);
        at = comma == std::string::npos ? list.size() : comma + 1;
      }
    }
}

}  // namespace

// ---- ArchiveReader ------------------------------------------------------------------------------

ArchiveReader::ArchiveReader() : s_(std::make_unique<State>()) {}

ArchiveReader::~ArchiveReader() {
  if (s_->reader) {
    if (s_->selected) {
      OTF2_Reader_CloseEvtFiles(s_->reader);
    }
    OTF2_Reader_Close(s_->reader);
  }
}

int ArchiveReader::ranks() const { return int(s_->rank_locations.size()); }
const Skipped& ArchiveReader::skipped_locations() const { return s_->skipped; }
bool ArchiveReader::written_by_critpath() const { return s_->critpath; }
bool ArchiveReader::without_mpi() const { return s_->without_mpi; }

Status ArchiveReader::open(const std::string& anchor, std::string& error) {
  install_error_hook();
  State& s = *s_;
  s.anchor = anchor;
  take_last_error();
  CRITPATH_FORWARD_IF_ERROR(read_global_definitions(s, error));
  CRITPATH_FORWARD_IF_ERROR(find_ranks(s, error));
  CRITPATH_FORWARD_IF_ERROR(classify_paradigms(s, error));
  find_special_definitions(s);
  return Status::kOk;
}

Status ArchiveReader::select(int first, int count, std::string& error) {
  State& s = *s_;
  s.first = first;
  s.count = count;
  for (int r = first; r < first + count; ++r)
    for (uint64_t loc : s.rank_locations.at(size_t(r))) OTF2_Reader_SelectLocation(s.reader, loc);
  // Local definitions: the mapping tables and clock offsets OTF2 applies to the events.
  OTF2_ErrorCode rc = OTF2_Reader_OpenDefFiles(s.reader);
  if (rc != OTF2_SUCCESS) {
    error = s.anchor + ": the local definition files do not open: " + describe(rc);
    return Status::kCorrupt;
  }
  for (int r = first; r < first + count && error.empty(); ++r)
    for (uint64_t loc : s.rank_locations.at(size_t(r))) {
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(s.reader, loc);
      if (dr == nullptr) continue;  // a location without local definitions
      uint64_t n = 0;
      rc = OTF2_Reader_ReadAllLocalDefinitions(s.reader, dr, &n);
      OTF2_Reader_CloseDefReader(s.reader, dr);
      if (rc != OTF2_SUCCESS) {
        error = s.anchor + ": the local definitions of location " + std::to_string(loc) +
                " do not read: " + describe(rc);
        break;
      }
    }
  OTF2_Reader_CloseDefFiles(s.reader);
  if (!error.empty()) return Status::kCorrupt;
  rc = OTF2_Reader_OpenEvtFiles(s.reader);
  if (rc != OTF2_SUCCESS) {
    error = s.anchor + ": the event files do not open: " + describe(rc);
    return Status::kCorrupt;
  }
  s.selected = true;
  return Status::kOk;
}

Status ArchiveReader::load(int rank, trace::ChunkStore& chunks, defs::Definitions& definitions,
                           LocationTrace& location, Skipped& skipped, std::string& error) {
  State& s = *s_;
  location.chunks = &chunks;
  location.definitions = &definitions;
  try {
    RunInfo& run = location.run;
    run = RunInfo{};
    const std::unordered_map<uint32_t, uint32_t> regions = define_regions(s, definitions, run.mangled_names);
    define_communicators(s, rank, definitions);
    EventSpan span;
    CRITPATH_FORWARD_IF_ERROR(read_events(s, rank, chunks, regions, definitions, skipped, span, error));
    const std::vector<uint64_t>& locs = s.rank_locations.at(size_t(rank));
    set_run_facts(s, rank, locs.size(), span, run);
    const LocationInfo& main = s.locations.at(locs[0]);
    auto g = s.location_groups.find(main.group);
    if (g != s.location_groups.end() && s.node_names.count(g->second.node))
      run.host = s.str(s.node_names.at(g->second.node));
    read_process_properties(s, main.group, regions, definitions, run);
    run.recorder.threads = uint32_t(locs.size());
    run.store = chunks.stats();
    run.offline = true;
    location.notes.clear();
    if (s.without_mpi)
      location.notes.push_back(
          "otf2: the archive holds no MPI: analysed as one process's profile (call paths, "
          "time, the critical path of its master thread, location " +
          std::to_string(locs[0]) + ")");
    return Status::kOk;
  } catch (const std::exception& e) {
    error = s.anchor + ": rank " + std::to_string(rank) + ": " + e.what();
    return Status::kCorrupt;
  }
}

}  // namespace critpath::analyzer::otf2
