// critpath — pmpi_wrappers/semantics/mpi_glue.cpp
//
// The out-of-line part of the wrapper semantics (contracts in mpi_glue.h): nonblocking and
// persistent posts, probes, collective bytes, communicator tracking and the MPI_Init hook.
#include "pmpi_wrappers/semantics/mpi_glue.h"

#include <vector>

#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/session.h"
#include "pmpi_wrappers/generated_regions.h"

namespace critpath::pmpi {

WorldInfo g_world;

namespace {
constinit CommMap g_comm_map;
constinit CommSequence g_comm_sequence;

void insert_request(MPI_Request request, const RequestInfo& info) {
  if (CRITPATH_UNLIKELY(!requests().insert(handle_bits(request), info))) {
    count_untracked_request();
    log::warn_once("wrappers-requests", "more than %u outstanding MPI requests; completions "
                   "of the excess ones are not traced", RequestTable::kCapacity);
  }
}
}  // namespace

CommMap& comm_map() { return g_comm_map; }

CommView comm_view_slow(MPI_Comm c) {
  CommView v;
  if (c == MPI_COMM_NULL) return v;
  count_unknown_comm();
  int size = 0, rank = 0;
  PMPI_Comm_size(c, &size);
  PMPI_Comm_rank(c, &rank);
  v.size = size;
  v.rank = rank;
  return v;
}

// ---- nonblocking point-to-point -------------------------------------------------------

void post_isend(runtime::ThreadState& t, MPI_Request request, uint32_t comm, int peer, int tag,
                uint64_t bytes) {
  RequestInfo info;
  info.id = next_request_id();
  info.bytes = bytes;
  info.peer = peer;
  info.tag = tag;
  info.kind = RequestKind::kSend;
  info.flags = request_flag::kActive | request_flag::kRecorded;
  info.comm = comm;
  insert_request(request, info);
  runtime::record_p2p(t, trace::EventKind::kIsend, comm, peer, tag, bytes, info.id);
}

void post_irecv(runtime::ThreadState& t, MPI_Request request, uint32_t comm, int peer, int tag) {
  RequestInfo info;
  info.id = next_request_id();
  info.peer = peer;
  info.tag = tag;
  info.kind = RequestKind::kRecv;
  info.flags = request_flag::kActive | request_flag::kRecorded;
  info.comm = comm;
  insert_request(request, info);
  runtime::record_request(t, trace::EventKind::kIrecvRequest, info.id);
}

void post_imrecv(runtime::ThreadState* t, MPI_Request request, MPI_Message message) {
  const uint32_t comm = take_message_comm(message);
  if (!t || message == MPI_MESSAGE_NO_PROC) return;  // paused: nothing will be recorded
  post_irecv(*t, request, comm, MPI_ANY_SOURCE, MPI_ANY_TAG);
}

// ---- persistent requests ----------------------------------------------------------------

void track_persistent(MPI_Request request, RequestKind kind, uint32_t comm, int peer, int tag,
                      uint64_t bytes) {
  RequestInfo info;
  info.bytes = bytes;
  info.peer = peer;
  info.tag = tag;
  info.kind = kind;
  info.flags = request_flag::kPersistent;
  info.comm = comm;
  insert_request(request, info);
}

void start_requests(runtime::ThreadState* t, int count, const MPI_Request* reqs) {
  RequestTable& table = requests();
  for (int i = 0; i < count; ++i) {
    const uint32_t s = table.claim(handle_bits(reqs[i]));
    if (s == RequestTable::kNone) continue;  // MPI_PROC_NULL peer, or untracked
    RequestInfo& info = table.at(s);
    if (info.flags & request_flag::kPersistent) {
      info.id = next_request_id();
      info.flags = request_flag::kPersistent | request_flag::kActive |
                   (t ? request_flag::kRecorded : 0);
      if (t) {
        if (info.kind == RequestKind::kSend)
          runtime::record_p2p(*t, trace::EventKind::kIsend, info.comm, info.peer, info.tag,
                              info.bytes, info.id);
        else
          runtime::record_request(*t, trace::EventKind::kIrecvRequest, info.id);
      }
    }
    table.release(s);
  }
}

void cancel_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return;
  RequestTable& table = requests();
  const uint32_t s = table.claim(handle_bits(request));
  if (s == RequestTable::kNone) return;
  RequestInfo& info = table.at(s);
  if (info.flags & request_flag::kActive) info.flags |= request_flag::kCancelRequested;
  table.release(s);
}

void free_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return;
  RequestTable& table = requests();
  const uint32_t s = table.claim(handle_bits(request));
  if (s != RequestTable::kNone) table.erase(s);
}

// ---- probes ---------------------------------------------------------------------------------

void track_message(MPI_Message message, MPI_Comm comm) {
  if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC) return;
  MessageInfo info;
  info.comm = comm_id(comm);
  if (!messages().insert(handle_bits(message), info)) count_untracked_request();
}

uint32_t take_message_comm(MPI_Message message) {
  if (message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC) return kCommIdUnknown;
  MessageTable& table = messages();
  const uint32_t s = table.claim(handle_bits(message));
  if (s == MessageTable::kNone) return kCommIdUnknown;
  const uint32_t comm = table.at(s).comm;
  table.erase(s);
  return comm;
}

void finish_probe(runtime::ThreadState* t, uint32_t region, uint64_t t0, bool is_test, int rc,
                  const int* flag, const MPI_Message* message, MPI_Comm comm) {
  const bool found = rc == MPI_SUCCESS && (!is_test || (flag && *flag));
  if (found && message) track_message(*message, comm);
  if (!t) return;
  if (!is_test) {
    runtime::record_exit(*t, region);
  } else if (found) {
    runtime::record_region(*t, trace::EventKind::kEnter, region, t0);
    runtime::record_exit(*t, region);
  } else {
    count_probe_without_message(t->location);
  }
}

// ---- collectives ----------------------------------------------------------------------------

void finish_coll(runtime::ThreadState& t, int rc, uint32_t region, MPI_Comm comm, CollRule rule,
                 int root, bool in_place, int sendcount, int recvcount, const int* sendcounts,
                 const int* recvcounts, MPI_Datatype sendtype, MPI_Datatype recvtype,
                 const MPI_Datatype* sendtypes, const MPI_Datatype* recvtypes) {
  const CommView cv = comm_view(comm);
  CollBytes b;
  if (rc == MPI_SUCCESS) {
    CollArgs a;
    a.size = cv.size;
    a.rank = cv.rank;
    a.root = root;
    a.in_place = in_place;
    a.sendcount = sendcount;
    a.recvcount = recvcount;
    a.sendcounts = sendcounts;
    a.recvcounts = recvcounts;
    b = coll_bytes(rule, a, [&](TypeArg which, int i) -> uint64_t {
      if (which == TypeArg::kSend) return type_size(sendtypes ? sendtypes[i] : sendtype);
      return type_size(recvtypes ? recvtypes[i] : recvtype);
    });
  }
  runtime::record_coll_end(t, trace::EventKind::kCollEnd, region, cv.id, root, b.sent,
                           b.received, 0);
}

// ---- communicators (cold) ------------------------------------------------------------------

namespace {

std::vector<int32_t> world_members(MPI_Comm c, int size) {
  std::vector<int32_t> out(size_t(size > 0 ? size : 0), -1);
  MPI_Group g = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  if (PMPI_Comm_group(c, &g) != MPI_SUCCESS) return out;
  if (PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
    std::vector<int> ranks(out.size());
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = int(i);
    std::vector<int> translated(out.size(), MPI_UNDEFINED);
    if (PMPI_Group_translate_ranks(g, size, ranks.data(), world, translated.data()) == MPI_SUCCESS)
      for (size_t i = 0; i < out.size(); ++i)
        out[i] = translated[i] == MPI_UNDEFINED ? -1 : translated[i];
    PMPI_Group_free(&world);
  }
  PMPI_Group_free(&g);
  return out;
}

const char* region_name(uint32_t region) {
  for (const GeneratedRegion& r : generated_regions())
    if (r.id == region) return r.name;
  return "MPI";
}

}  // namespace

void track_new_comm(MPI_Comm parent, MPI_Comm newcomm, uint32_t creator_region) {
  if (newcomm == MPI_COMM_NULL) return;
  try {
    CommView v;
    int inter = 0;
    PMPI_Comm_test_inter(newcomm, &inter);
    PMPI_Comm_size(newcomm, &v.size);
    PMPI_Comm_rank(newcomm, &v.rank);
    if (inter) {
      // Intercommunicators (later work): usable, but their events carry kCommIdUnknown.
      log::warn_once("wrappers-inter", "intercommunicators are not traced yet; their "
                     "messages are reported under an unknown communicator");
      v.id = kCommIdUnknown;
      g_comm_map.insert(handle_bits(newcomm), v);
      return;
    }
    uint32_t id = 0;
    if (v.rank == 0) id = pack_comm_id(g_world.world.rank, g_comm_sequence.next(), g_world.rank_bits);
    PMPI_Bcast(&id, 1, MPI_UINT32_T, 0, newcomm);
    v.id = id;
    defs::CommDef def;
    def.id = id;
    def.members = world_members(newcomm, v.size);
    def.parent = comm_id(parent);
    def.created_by = region_name(creator_region);
    defs::comms().define(std::move(def));
    if (!g_comm_map.insert(handle_bits(newcomm), v))
      log::warn_once("wrappers-comms", "more than %u communicators alive; events on the "
                     "excess ones carry an unknown communicator id", CommMap::kCapacity);
  } catch (...) {
    log::warn_once("wrappers-comm-internal", "internal error tracking a new communicator");
  }
}

void untrack_comm(MPI_Comm freed_handle) {
  if (freed_handle == MPI_COMM_WORLD || freed_handle == MPI_COMM_SELF) return;
  const uint32_t id = g_comm_map.erase(handle_bits(freed_handle));
  if (id != kCommIdUnknown) {
    try {
      defs::comms().mark_freed(id);
    } catch (...) {
    }
  }
}

// ---- MPI_Init ------------------------------------------------------------------------------

void after_init(uint64_t t_enter, uint32_t region, const int* provided) {
  try {
    for (const GeneratedRegion& r : generated_regions())
      defs::regions().define_fixed(r.id, r.name, defs::RegionKind::kMpi);
  } catch (...) {
    log::warn_once("wrappers-regions", "cannot register the MPI region names");
  }
  int level = MPI_THREAD_SINGLE;
  if (provided) level = *provided;
  else PMPI_Query_thread(&level);
  runtime::session_init(t_enter, region, level);
  if (!tracking()) return;  // CRITPATH_ENABLE=0 or a failed start: pure pass-through

  int size = 1, rank = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  g_world.world = CommView{kCommIdWorld, size, rank};
  g_world.self = CommView{kCommIdSelf, 1, 0};
  g_world.rank_bits = comm_rank_bits(size);
  g_comm_sequence.reset();
  g_comm_map.clear();
  g_comm_map.insert(handle_bits(MPI_COMM_SELF), g_world.self);
  reset_request_tracking();
  reset_counters();
  try {
    defs::CommDef world;
    world.id = kCommIdWorld;
    world.members.resize(size_t(size));
    for (int i = 0; i < size; ++i) world.members[size_t(i)] = i;
    world.created_by = "MPI_COMM_WORLD";
    defs::comms().define(std::move(world));
    defs::CommDef self;
    self.id = kCommIdSelf;
    self.members = {rank};
    self.parent = kCommIdWorld;
    self.created_by = "MPI_COMM_SELF";
    defs::comms().define(std::move(self));
  } catch (...) {
    log::warn_once("wrappers-world", "cannot define MPI_COMM_WORLD/MPI_COMM_SELF");
  }
}

}  // namespace critpath::pmpi
