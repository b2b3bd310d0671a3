// critpath — pmpi_wrappers/semantics/mpi_glue.cpp
//
// The out-of-line part of the wrapper semantics (contracts in mpi_glue.h): nonblocking and
// persistent posts, probes, collective bytes, communicator tracking and the MPI_Init hook.
#include "pmpi_wrappers/semantics/mpi_glue.h"

#include <atomic>
#include <new>
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
constinit CommMap g_win_map;
constinit CommSequence g_win_sequence;

constinit std::atomic<bool> g_request_table_full_said{false};

void insert_request(MPI_Request request, const RequestInfo& info) {
  if (CRITPATH_UNLIKELY(!requests().insert(handle_bits(request), info, request_owner()))) {
    count_untracked_request();
    // Cold: once per run, count what is really outstanding (a scan of the table).
    if (!g_request_table_full_said.exchange(true, std::memory_order_relaxed))
      log::warn_once("wrappers-requests",
                     "no room to track an MPI request (%u outstanding, room "
                     "for %u); completions of the requests that did not fit are not traced",
                     requests().size(), RequestTable::kCapacity);
  }
}
}  // namespace

CommMap& comm_map() { return g_comm_map; }

CommView comm_view_slow(MPI_Comm c) {
  CommView v;
  if (c == MPI_COMM_NULL) return v;
  count_unknown_comm();
  int size = 0, rank = 0, inter = 0;
  PMPI_Comm_size(c, &size);
  PMPI_Comm_rank(c, &rank);
  v.size = size;
  v.rank = rank;
  if (PMPI_Comm_test_inter(c, &inter) == MPI_SUCCESS && inter) {
    int remote = 0;
    PMPI_Comm_remote_size(c, &remote);
    v.remote_size = remote;
  }
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
    const uint32_t s = table.claim(handle_bits(reqs[i]), request_owner());
    if (s == RequestTable::kNone) continue;  // MPI_PROC_NULL peer, or untracked
    RequestInfo& info = table.at(s);
    if (info.flags & request_flag::kPersistent) {
      info.id = next_request_id();
      info.flags = request_flag::kPersistent | request_flag::kActive | (t ? request_flag::kRecorded : 0);
      if (t) {
        if (info.kind == RequestKind::kSend)
          runtime::record_p2p(*t, trace::EventKind::kIsend, info.comm, info.peer, info.tag, info.bytes,
                              info.id);
        else runtime::record_request(*t, trace::EventKind::kIrecvRequest, info.id);
      }
    }
    table.release(s);
  }
}

void cancel_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return;
  RequestTable& table = requests();
  const uint32_t s = table.claim(handle_bits(request), request_owner());
  if (s == RequestTable::kNone) return;
  RequestInfo& info = table.at(s);
  if (info.flags & request_flag::kActive) info.flags |= request_flag::kCancelRequested;
  table.release(s);
}

void free_request(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return;
  RequestTable& table = requests();
  const uint32_t s = table.claim(handle_bits(request), request_owner());
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

namespace {
void neighbor_degrees(MPI_Comm comm, int rank, int& in, int& out) {
  int topo = MPI_UNDEFINED;
  in = out = 0;
  if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return;
  if (topo == MPI_CART) {
    int nd = 0;
    PMPI_Cartdim_get(comm, &nd);
    in = out = 2 * nd;
  } else if (topo == MPI_GRAPH) {
    int n = 0;
    PMPI_Graph_neighbors_count(comm, rank, &n);
    in = out = n;
  } else if (topo == MPI_DIST_GRAPH) {
    int weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
  }
}
}  // namespace

CollBytes coll_call_bytes(const CommView& cv, MPI_Comm comm, const CollCall& c) {
  const bool rooted = c.rule == CollRule::kBcast || c.rule == CollRule::kGather ||
                      c.rule == CollRule::kGatherv || c.rule == CollRule::kScatter ||
                      c.rule == CollRule::kScatterv || c.rule == CollRule::kReduce;
  // Intercommunicator forms: MPI_PROC_NULL marks a root-group bystander (no data), MPI_ROOT
  // the root. (MPICH's MPI_PROC_NULL is -1, the "no root" value of the other rules.)
  CollArgs a;
  a.size = cv.size;
  a.remote_size = cv.remote_size;
  a.rank = cv.rank;
  a.root = c.root;
  if (rooted && c.root == MPI_PROC_NULL) a.root = kRootNone;
  if (rooted && c.root == MPI_ROOT) a.root = cv.remote_size > 0 ? kRootHere : cv.rank;
  a.in_place = c.in_place;
  a.sendcount = c.sendcount;
  a.recvcount = c.recvcount;
  a.sendcounts = c.sendcounts;
  a.recvcounts = c.recvcounts;
  if (c.rule >= CollRule::kNeighborAllgather && c.rule <= CollRule::kNeighborAlltoallw)
    neighbor_degrees(comm, cv.rank, a.indegree, a.outdegree);
  return coll_bytes(c.rule, a, [&](TypeArg which, int i) -> uint64_t {
    if (which == TypeArg::kSend) return type_size(c.sendtypes ? c.sendtypes[i] : c.sendtype);
    return type_size(c.recvtypes ? c.recvtypes[i] : c.recvtype);
  });
}

namespace {

// The root COLL_END / ICOLL_POST records: the call's, or trace::kRootSomeBlockEmpty for an
// Alltoallv/w on an intracommunicator that leaves some other member's block to this rank empty
// (coll_bytes.h's some_block_empty; the analysis then knows that not every member's data
// reached this rank).
int32_t recorded_root(const CommView& cv, const CollCall& c) {
  CollArgs a;
  a.size = cv.size;
  a.remote_size = cv.remote_size;
  a.rank = cv.rank;
  a.recvcounts = c.recvcounts;
  const bool empty = some_block_empty(c.rule, a, [&](TypeArg, int i) -> uint64_t {
    return type_size(c.recvtypes ? c.recvtypes[i] : c.recvtype);
  });
  return empty ? trace::kRootSomeBlockEmpty : int32_t(c.root);
}

}  // namespace

void finish_coll(runtime::ThreadState& t, int rc, uint32_t region, MPI_Comm comm, CollRule rule, int root,
                 bool in_place, int sendcount, int recvcount, const int* sendcounts, const int* recvcounts,
                 MPI_Datatype sendtype, MPI_Datatype recvtype, const MPI_Datatype* sendtypes,
                 const MPI_Datatype* recvtypes) {
  const CommView cv = comm_view(comm);
  CollBytes b;
  int32_t recorded = root;
  if (rc == MPI_SUCCESS) {
    CollCall c;
    c.rule = rule;
    c.root = root;
    c.in_place = in_place;
    c.sendcount = sendcount;
    c.recvcount = recvcount;
    c.sendcounts = sendcounts;
    c.recvcounts = recvcounts;
    c.sendtype = sendtype;
    c.recvtype = recvtype;
    c.sendtypes = sendtypes;
    c.recvtypes = recvtypes;
    b = coll_call_bytes(cv, comm, c);
    recorded = recorded_root(cv, c);
  }
  runtime::record_coll_end(t, trace::EventKind::kCollEnd, region, cv.id, recorded, b.sent, b.received, 0);
}

void post_icoll(runtime::ThreadState& t, MPI_Request request, uint32_t region, MPI_Comm comm,
                const CollCall& c) {
  const CommView cv = comm_view(comm);
  const CollBytes b = coll_call_bytes(cv, comm, c);
  RequestInfo info;
  info.id = next_request_id();
  info.kind = RequestKind::kColl;
  info.flags = request_flag::kActive | request_flag::kRecorded;
  info.comm = cv.id;
  insert_request(request, info);
  runtime::record_coll_end(t, trace::EventKind::kIcollPost, region, cv.id, recorded_root(cv, c), b.sent,
                           b.received, info.id);
}

// ---- one-sided ----------------------------------------------------------------------------

CommMap& win_map() { return g_win_map; }

void note_session(uint32_t region) {
  if (tracking() || region != region::kMPI_Session_finalize) return;
  log::warn_once("sessions", "MPI-4 Sessions are not traced (critpath follows MPI_Init .. MPI_Finalize, "
                             "the World Model): this process gets no report");
}

void record_rma_comm(runtime::ThreadState& t, trace::EventKind kind, uint32_t region, MPI_Win win, int target,
                     uint64_t origin_bytes, int64_t result_bytes, const MPI_Request* request) {
  if (target == MPI_PROC_NULL) return;
  const uint32_t w = win_id(win);
  uint64_t id = 0;
  if (request) {
    RequestInfo info;
    info.id = id = next_request_id();
    info.kind = RequestKind::kRma;
    info.flags = request_flag::kActive | request_flag::kRecorded;
    info.comm = w;
    insert_request(*request, info);
  }
  runtime::record_rma(t, kind, w, target, region, origin_bytes, id, -1);
  if (result_bytes >= 0)
    runtime::record_rma(t, trace::EventKind::kRmaGet, w, target, region, uint64_t(result_bytes), id, -1);
}

void record_rma_sync(runtime::ThreadState& t, uint32_t region, MPI_Win win, int target, int lock_type,
                     bool collective) {
  const int lock = lock_type == MPI_LOCK_EXCLUSIVE ? 1 : lock_type == MPI_LOCK_SHARED ? 2 : 0;
  runtime::record_rma(t, collective ? trace::EventKind::kRmaCollSync : trace::EventKind::kRmaSync,
                      win_id(win), target, region, 0, 0, lock);
}

void record_rma_group_sync(runtime::ThreadState& t, uint32_t region, MPI_Win win, MPI_Group group) {
  const uint32_t w = win_id(win);
  int n = 0;
  MPI_Group wg = MPI_GROUP_NULL;
  if (PMPI_Group_size(group, &n) != MPI_SUCCESS || n <= 0) return;
  if (PMPI_Win_get_group(win, &wg) != MPI_SUCCESS) return;
  constexpr int kChunk = 64;
  int ranks[kChunk], out[kChunk];
  for (int base = 0; base < n; base += kChunk) {
    const int k = n - base < kChunk ? n - base : kChunk;
    for (int i = 0; i < k; ++i) ranks[i] = base + i;
    if (PMPI_Group_translate_ranks(group, k, ranks, wg, out) != MPI_SUCCESS) break;
    for (int i = 0; i < k; ++i)
      runtime::record_rma(t, trace::EventKind::kRmaSync, w, out[i] == MPI_UNDEFINED ? -1 : out[i], region, 0,
                          0, 0);
  }
  PMPI_Group_free(&wg);
}

// ---- communicators (cold) ------------------------------------------------------------------

namespace {

const char* region_name(uint32_t region) {
  for (const GeneratedRegion& r : generated_regions())
    if (r.id == region) return r.name;
  return "MPI";
}

}  // namespace

namespace {

// World ranks of a group's members, in group order (-1 where not in MPI_COMM_WORLD).
std::vector<int32_t> group_world_ranks(MPI_Group g) {
  int size = 0;
  PMPI_Group_size(g, &size);
  std::vector<int32_t> out(size_t(size > 0 ? size : 0), -1);
  MPI_Group world = MPI_GROUP_NULL;
  if (PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
    std::vector<int> ranks(out.size());
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = int(i);
    std::vector<int> translated(out.size(), MPI_UNDEFINED);
    if (PMPI_Group_translate_ranks(g, size, ranks.data(), world, translated.data()) == MPI_SUCCESS)
      for (size_t i = 0; i < out.size(); ++i) out[i] = translated[i] == MPI_UNDEFINED ? -1 : translated[i];
    PMPI_Group_free(&world);
  }
  return out;
}

// World ranks of a communicator's (local) group, in rank order; all -1 when the group
// cannot be had.
std::vector<int32_t> world_members(MPI_Comm c, int size) {
  MPI_Group g = MPI_GROUP_NULL;
  if (PMPI_Comm_group(c, &g) != MPI_SUCCESS) return std::vector<int32_t>(size_t(size > 0 ? size : 0), -1);
  std::vector<int32_t> out = group_world_ranks(g);
  PMPI_Group_free(&g);
  return out;
}

// Defines a tracked communicator with an agreed id (cold).
void define_comm(uint32_t parent_id, MPI_Comm newcomm, CommView v, bool inter, uint32_t creator_region) {
  defs::CommDef def;
  def.id = v.id;
  def.members = world_members(newcomm, v.size);
  if (inter) {
    MPI_Group rg = MPI_GROUP_NULL;
    if (PMPI_Comm_remote_group(newcomm, &rg) == MPI_SUCCESS) {
      def.remote = group_world_ranks(rg);
      PMPI_Group_free(&rg);
    }
  } else {
    int topo = MPI_UNDEFINED;
    if (PMPI_Topo_test(newcomm, &topo) == MPI_SUCCESS && topo == MPI_CART) {
      int nd = 0;
      PMPI_Cartdim_get(newcomm, &nd);
      if (nd > 0) {
        const size_t n = size_t(nd);
        std::vector<int> dims(n), periods(n), coords(n);
        if (PMPI_Cart_get(newcomm, nd, dims.data(), periods.data(), coords.data()) == MPI_SUCCESS) {
          def.dims.assign(dims.begin(), dims.end());
          def.periods.assign(periods.begin(), periods.end());
        }
      }
    }
  }
  def.parent = parent_id;
  def.created_by = region_name(creator_region);
  defs::comms().define(std::move(def));
  if (!g_comm_map.insert(handle_bits(newcomm), v))
    log::warn_once("wrappers-comms",
                   "more than %u communicators alive; events on the "
                   "excess ones carry an unknown communicator id",
                   CommMap::kCapacity);
}

// Intercommunicator id: the group whose rank 0 has the lower world rank leads; its rank 0
// sends the id to the other group (MPI_ROOT), whose rank 0 sends it back to the leader's
// group. Two bcasts on the intercommunicator, all members take part.
uint32_t agree_inter_id(MPI_Comm inter) {
  MPI_Group lg = MPI_GROUP_NULL, rg = MPI_GROUP_NULL;
  int32_t local_leader = -1, remote_leader = -1;
  if (PMPI_Comm_group(inter, &lg) == MPI_SUCCESS) {
    const std::vector<int32_t> w = group_world_ranks(lg);
    if (!w.empty()) local_leader = w[0];
    PMPI_Group_free(&lg);
  }
  if (PMPI_Comm_remote_group(inter, &rg) == MPI_SUCCESS) {
    const std::vector<int32_t> w = group_world_ranks(rg);
    if (!w.empty()) remote_leader = w[0];
    PMPI_Group_free(&rg);
  }
  int rank = 0;
  PMPI_Comm_rank(inter, &rank);
  if (local_leader < 0 || remote_leader < 0) return kCommIdUnknown;  // spawned processes
  uint32_t id = 0;
  const bool leads = local_leader < remote_leader;
  if (leads) {
    if (rank == 0) id = pack_comm_id(g_world.world.rank, g_comm_sequence.next(), g_world.rank_bits);
    PMPI_Bcast(&id, 1, MPI_UINT32_T, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    PMPI_Bcast(&id, 1, MPI_UINT32_T, 0, inter);
  } else {
    PMPI_Bcast(&id, 1, MPI_UINT32_T, 0, inter);
    PMPI_Bcast(&id, 1, MPI_UINT32_T, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
  }
  return id;
}

struct IdupState {
  MPI_Request bcast = MPI_REQUEST_NULL;
  uint32_t id = 0;
  uint32_t parent = kCommIdUnknown;
  uint32_t region = 0;
  MPI_Comm* newcomm = nullptr;
};

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
      PMPI_Comm_remote_size(newcomm, &v.remote_size);
      v.id = agree_inter_id(newcomm);
    } else {
      uint32_t id = 0;
      if (v.rank == 0) id = pack_comm_id(g_world.world.rank, g_comm_sequence.next(), g_world.rank_bits);
      PMPI_Bcast(&id, 1, MPI_UINT32_T, 0, newcomm);
      v.id = id;
    }
    if (v.id == kCommIdUnknown) {
      log::warn_once("wrappers-inter",
                     "an intercommunicator with processes outside "
                     "MPI_COMM_WORLD is not traced; its events carry an unknown communicator");
      g_comm_map.insert(handle_bits(newcomm), v);
      return;
    }
    define_comm(comm_id(parent), newcomm, v, inter != 0, creator_region);
  } catch (...) {
    log::warn_once("wrappers-comm-internal", "internal error tracking a new communicator");
  }
}

void post_idup(runtime::ThreadState* t, MPI_Comm parent, MPI_Comm* newcomm, MPI_Request request,
               uint32_t region) {
  IdupState* st = new (std::nothrow) IdupState;
  const CommView pv = comm_view(parent);
  if (!st) return;
  st->parent = pv.id;
  st->region = region;
  st->newcomm = newcomm;
  int inter = 0;
  PMPI_Comm_test_inter(parent, &inter);
  if (inter) {  // rare: fall back to agreeing at completion (blocking bcasts on the new comm)
    st->id = kCommIdUnknown;
  } else {
    if (pv.rank == 0) st->id = pack_comm_id(g_world.world.rank, g_comm_sequence.next(), g_world.rank_bits);
    if (PMPI_Ibcast(&st->id, 1, MPI_UINT32_T, 0, parent, &st->bcast) != MPI_SUCCESS) {
      delete st;
      return;
    }
  }
  RequestInfo info;
  info.id = next_request_id();
  info.kind = RequestKind::kIdup;
  info.flags = request_flag::kActive | (t ? request_flag::kRecorded : 0);
  info.comm = pv.id;
  info.bytes = uint64_t(reinterpret_cast<uintptr_t>(st));
  if (!requests().insert(handle_bits(request), info, request_owner())) {
    count_untracked_request();
    if (st->bcast != MPI_REQUEST_NULL) PMPI_Wait(&st->bcast, MPI_STATUS_IGNORE);
    delete st;
    return;
  }
  if (t) runtime::record_coll_end(*t, trace::EventKind::kIcollPost, region, pv.id, -1, 0, 0, info.id);
}

void finish_idup(uint64_t state, bool completed) {
  IdupState* st = reinterpret_cast<IdupState*>(uintptr_t(state));
  if (!st) return;
  if (st->bcast != MPI_REQUEST_NULL) PMPI_Wait(&st->bcast, MPI_STATUS_IGNORE);
  if (completed && st->newcomm && *st->newcomm != MPI_COMM_NULL) {
    try {
      CommView v;
      PMPI_Comm_size(*st->newcomm, &v.size);
      PMPI_Comm_rank(*st->newcomm, &v.rank);
      if (st->id == kCommIdUnknown) {
        PMPI_Comm_remote_size(*st->newcomm, &v.remote_size);
        v.id = agree_inter_id(*st->newcomm);
        define_comm(st->parent, *st->newcomm, v, true, st->region);
      } else {
        v.id = st->id;
        define_comm(st->parent, *st->newcomm, v, false, st->region);
      }
    } catch (...) {
      log::warn_once("wrappers-comm-internal", "internal error tracking a new communicator");
    }
  }
  delete st;
}

void track_new_win(runtime::ThreadState* t, MPI_Comm comm, MPI_Win win, uint32_t region,
                   uint64_t local_bytes) {
  if (win == MPI_WIN_NULL) return;
  try {
    CommView v = comm_view(comm);
    uint32_t id = 0;
    if (v.rank == 0) id = pack_comm_id(g_world.world.rank, g_win_sequence.next(), g_world.rank_bits);
    PMPI_Bcast(&id, 1, MPI_UINT32_T, 0, comm);
    const uint32_t parent = v.id;
    v.id = id;
    defs::WindowDef def;
    def.id = id;
    def.comm = parent;
    def.members = world_members(comm, v.size);
    def.created_by = region_name(region);
    defs::windows().define(std::move(def));
    if (!g_win_map.insert(handle_bits(win), v))
      log::warn_once("wrappers-wins",
                     "more than %u windows alive; events on the excess ones "
                     "carry an unknown window id",
                     CommMap::kCapacity);
    if (t)
      runtime::record_rma(*t, trace::EventKind::kRmaWinCreate, id, -1, region, local_bytes, 0,
                          int32_t(parent));
  } catch (...) {
    log::warn_once("wrappers-win-internal", "internal error tracking a new window");
  }
}

void untrack_win(MPI_Win freed_handle, uint32_t id) {
  g_win_map.erase(handle_bits(freed_handle));
  if (id != kCommIdUnknown) {
    try {
      defs::windows().mark_freed(id);
    } catch (...) {
    }
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
  g_win_sequence.reset();
  g_win_map.clear();
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
