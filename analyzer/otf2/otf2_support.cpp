// critpath — analyzer/otf2/otf2_support.cpp
#include "analyzer/otf2/otf2_support.h"

#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

namespace critpath::analyzer::otf2 {

RegionStyle region_style(const defs::RegionDef& region) {
  switch (region.kind) {
    case defs::RegionKind::kUser: return {OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER};
    case defs::RegionKind::kFunction: return {OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER};
    case defs::RegionKind::kArtificial:
      return {OTF2_REGION_ROLE_ARTIFICIAL, OTF2_PARADIGM_MEASUREMENT_SYSTEM};
    case defs::RegionKind::kCallsite: return {OTF2_REGION_ROLE_CODE, OTF2_PARADIGM_USER};
    case defs::RegionKind::kMpi: break;
  }
  const defs::MpiSemantics& m = region.mpi;
  OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
  switch (m.cls) {
    case defs::MpiClass::kP2p: role = OTF2_REGION_ROLE_POINT2POINT; break;
    case defs::MpiClass::kRma: role = OTF2_REGION_ROLE_RMA; break;
    case defs::MpiClass::kCollective:
      switch (m.sync) {
        case defs::MpiSync::kBarrier: role = OTF2_REGION_ROLE_BARRIER; break;
        case defs::MpiSync::kNxN: role = OTF2_REGION_ROLE_COLL_ALL2ALL; break;
        case defs::MpiSync::kOneToN: role = OTF2_REGION_ROLE_COLL_ONE2ALL; break;
        case defs::MpiSync::kNToOne: role = OTF2_REGION_ROLE_COLL_ALL2ONE; break;
        default: role = OTF2_REGION_ROLE_COLL_OTHER; break;
      }
      break;
    case defs::MpiClass::kManagement:
    case defs::MpiClass::kNone:
      role = m.sync == defs::MpiSync::kOther ? OTF2_REGION_ROLE_COLL_OTHER : OTF2_REGION_ROLE_FUNCTION;
      break;
  }
  return {role, OTF2_PARADIGM_MPI};
}

defs::RegionKind region_kind(OTF2_Paradigm paradigm, OTF2_RegionRole role) {
  if (paradigm == OTF2_PARADIGM_MPI) return defs::RegionKind::kMpi;
  if (paradigm == OTF2_PARADIGM_COMPILER) return defs::RegionKind::kFunction;
  if (paradigm == OTF2_PARADIGM_MEASUREMENT_SYSTEM && role == OTF2_REGION_ROLE_ARTIFICIAL)
    return defs::RegionKind::kArtificial;
  return defs::RegionKind::kUser;
}

defs::MpiSemantics semantics_from_role(OTF2_RegionRole role) {
  defs::MpiSemantics m;
  m.cls = defs::MpiClass::kCollective;
  switch (role) {
    case OTF2_REGION_ROLE_POINT2POINT: m.cls = defs::MpiClass::kP2p; break;
    case OTF2_REGION_ROLE_BARRIER: m.sync = defs::MpiSync::kBarrier; break;
    case OTF2_REGION_ROLE_COLL_ALL2ALL: m.sync = defs::MpiSync::kNxN; break;
    case OTF2_REGION_ROLE_COLL_ONE2ALL:
      m.sync = defs::MpiSync::kOneToN;
      m.root = defs::MpiRoot::kSource;
      break;
    case OTF2_REGION_ROLE_COLL_ALL2ONE:
      m.sync = defs::MpiSync::kNToOne;
      m.root = defs::MpiRoot::kSink;
      break;
    case OTF2_REGION_ROLE_COLL_OTHER: m.sync = defs::MpiSync::kOther; break;
    case OTF2_REGION_ROLE_RMA:
      m.cls = defs::MpiClass::kRma;
      m.rma = defs::MpiRma::kOther;
      break;
    default: m.cls = defs::MpiClass::kManagement; break;
  }
  return m;
}

OTF2_CollectiveOp collective_op(std::string_view mpi_name) {
  std::string n;
  if (mpi_name.substr(0, 4) == "MPI_") mpi_name.remove_prefix(4);
  for (char c : mpi_name) n += char(std::tolower(static_cast<unsigned char>(c)));
  struct Entry {
    const char* name;
    OTF2_CollectiveOp op;
  };
  static constexpr Entry kOps[] = {
      {"barrier", OTF2_COLLECTIVE_OP_BARRIER},
      {"bcast", OTF2_COLLECTIVE_OP_BCAST},
      {"gather", OTF2_COLLECTIVE_OP_GATHER},
      {"gatherv", OTF2_COLLECTIVE_OP_GATHERV},
      {"scatter", OTF2_COLLECTIVE_OP_SCATTER},
      {"scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
      {"allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
      {"allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
      {"alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
      {"alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
      {"alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
      {"allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
      {"reduce", OTF2_COLLECTIVE_OP_REDUCE},
      {"reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
      {"reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
      {"scan", OTF2_COLLECTIVE_OP_SCAN},
      {"exscan", OTF2_COLLECTIVE_OP_EXSCAN},
      {"neighbor_allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
      {"neighbor_allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
      {"neighbor_alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
      {"neighbor_alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
      {"neighbor_alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
      {"win_fence", OTF2_COLLECTIVE_OP_BARRIER},
      {"win_create", OTF2_COLLECTIVE_OP_CREATE_HANDLE},
      {"win_create_dynamic", OTF2_COLLECTIVE_OP_CREATE_HANDLE},
      {"win_allocate", OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE},
      {"win_allocate_shared", OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE},
      {"win_free", OTF2_COLLECTIVE_OP_DESTROY_HANDLE},
      {"comm_free", OTF2_COLLECTIVE_OP_DESTROY_HANDLE},
      {"comm_disconnect", OTF2_COLLECTIVE_OP_DESTROY_HANDLE},
  };
  const auto find = [&](std::string_view s) -> const Entry* {
    for (const Entry& e : kOps)
      if (s == e.name) return &e;
    return nullptr;
  };
  if (const Entry* e = find(n)) return e->op;
  if (n.size() > 1 && n[0] == 'i')  // the nonblocking twin: MPI_Iallreduce
    if (const Entry* e = find(std::string_view(n).substr(1))) return e->op;
  // Communicator and topology constructors (MPI_Comm_split, MPI_Cart_create, ...).
  for (const char* prefix : {"comm_", "cart_", "graph_", "dist_graph_", "intercomm_"})
    if (n.rfind(prefix, 0) == 0) return OTF2_COLLECTIVE_OP_CREATE_HANDLE;
  return OTF2_COLLECTIVE_OP_BARRIER;
}

// ---- collectives -------------------------------------------------------------------------

namespace {

size_t type_size(OTF2_Type t) {
  switch (t) {
    case OTF2_TYPE_UINT8:
    case OTF2_TYPE_INT8: return 1;
    case OTF2_TYPE_UINT16:
    case OTF2_TYPE_INT16: return 2;
    case OTF2_TYPE_UINT32:
    case OTF2_TYPE_INT32:
    case OTF2_TYPE_FLOAT: return 4;
    case OTF2_TYPE_UINT64:
    case OTF2_TYPE_INT64:
    case OTF2_TYPE_DOUBLE: return 8;
    default: return 0;
  }
}

OTF2_CallbackCode code(Status s) { return s == Status::kOk ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR; }

OTF2_CallbackCode get_size(void*, OTF2_CollectiveContext* c, uint32_t* size) {
  *size = uint32_t(c->comm->size());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode get_rank(void*, OTF2_CollectiveContext* c, uint32_t* rank) {
  *rank = uint32_t(c->comm->rank());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode create_local_comm(void*, OTF2_CollectiveContext**, OTF2_CollectiveContext*, uint32_t,
                                    uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) {
  return OTF2_CALLBACK_ERROR;  // only the SION substrate partitions files; we never ask for it
}
OTF2_CallbackCode free_local_comm(void*, OTF2_CollectiveContext*) { return OTF2_CALLBACK_SUCCESS; }
OTF2_CallbackCode barrier(void*, OTF2_CollectiveContext* c) { return code(c->comm->barrier()); }
OTF2_CallbackCode bcast(void*, OTF2_CollectiveContext* c, void* data, uint32_t n, OTF2_Type type,
                        uint32_t root) {
  const size_t e = type_size(type);
  if (e == 0) return OTF2_CALLBACK_ERROR;
  return code(c->comm->bcast(data, size_t(n) * e, int(root)));
}
// Both gathers: every rank's elements at the root, in rank order, copied to `out`.
OTF2_CallbackCode gather_any(OTF2_CollectiveContext* c, const void* in, uint32_t n, void* out, OTF2_Type type,
                             uint32_t root) {
  const size_t e = type_size(type);
  if (e == 0) return OTF2_CALLBACK_ERROR;
  std::vector<unsigned char> all;
  std::vector<int> counts, displs;
  if (c->comm->gatherv(in, int(n), e, int(root), all, counts, displs) != Status::kOk)
    return OTF2_CALLBACK_ERROR;
  if (c->comm->rank() == int(root) && !all.empty()) std::memcpy(out, all.data(), all.size());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode gather(void*, OTF2_CollectiveContext* c, const void* in, void* out, uint32_t n,
                         OTF2_Type type, uint32_t root) {
  return gather_any(c, in, n, out, type, root);
}
OTF2_CallbackCode gatherv(void*, OTF2_CollectiveContext* c, const void* in, uint32_t n, void* out,
                          const uint32_t*, OTF2_Type type, uint32_t root) {
  return gather_any(c, in, n, out, type, root);
}
// Both scatters: counts[r] elements of `in` (the root's) to rank r, into `out`.
OTF2_CallbackCode scatter_any(OTF2_CollectiveContext* c, const void* in, const std::vector<int>& counts,
                              void* out, OTF2_Type type, uint32_t root) {
  const size_t e = type_size(type);
  if (e == 0) return OTF2_CALLBACK_ERROR;
  std::vector<unsigned char> mine;
  if (c->comm->scatterv(in, counts, e, int(root), mine) != Status::kOk) return OTF2_CALLBACK_ERROR;
  if (!mine.empty()) std::memcpy(out, mine.data(), mine.size());
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode scatter(void*, OTF2_CollectiveContext* c, const void* in, void* out, uint32_t n,
                          OTF2_Type type, uint32_t root) {
  std::vector<int> counts;
  if (c->comm->rank() == int(root)) counts.assign(size_t(c->comm->size()), int(n));
  return scatter_any(c, in, counts, out, type, root);
}
OTF2_CallbackCode scatterv(void*, OTF2_CollectiveContext* c, const void* in, const uint32_t* in_counts,
                           void* out, uint32_t, OTF2_Type type, uint32_t root) {
  std::vector<int> counts;
  if (c->comm->rank() == int(root)) counts.assign(in_counts, in_counts + c->comm->size());
  return scatter_any(c, in, counts, out, type, root);
}

const OTF2_CollectiveCallbacks kCollectives = {
    nullptr, get_size, get_rank, create_local_comm, free_local_comm, barrier,
    bcast,   gather,   gatherv,  scatter,           scatterv,
};

thread_local std::string t_last_error;

OTF2_ErrorCode keep_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode error, const char* fmt,
                          va_list va) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, va);
  try {
    t_last_error = buf;
  } catch (...) {
  }
  return error;
}

}  // namespace

const OTF2_CollectiveCallbacks* collectives() { return &kCollectives; }

void install_error_hook() {
  static std::once_flag once;
  std::call_once(once, [] { OTF2_Error_RegisterCallback(keep_error, nullptr); });
}

std::string take_last_error() {
  std::string s;
  s.swap(t_last_error);
  return s;
}

std::string describe(OTF2_ErrorCode code) {
  std::string msg = take_last_error();
  std::string out = OTF2_Error_GetName(code);
  if (!msg.empty()) out += ": " + msg;
  return out;
}

}  // namespace critpath::analyzer::otf2
