// critpath — tests/mpi/otf2/otf2_synth.cpp: OTF2 archives with known answers, written with
// the OTF2 writer API the way Score-P writes its traces, for critpath-analyze --otf2.
//
//   otf2_synth SCENARIO DIR    writes DIR/traces.otf2 (DIR must not hold an archive yet)
//
// Score-P's conventions followed (docs/other-tools.md): one process location group per rank
// with its master thread as location <rank>; a COMM_LOCATIONS group of the MPI paradigm (rank
// i = location i) defined before every COMM_GROUP; MPI_COMM_WORLD a COMM_GROUP of all ranks,
// MPI_COMM_SELF a COMM_SELF group, both with create/destroy events in MPI_Init and
// MPI_Finalize, inside an MpiCollectiveBegin/End pair (CREATE_HANDLE / DESTROY_HANDLE);
// collectives bracketed by MpiCollectiveBegin/End; RMA windows created in
// RmaCollectiveBegin / RmaWinCreate / RmaCollectiveEnd(CREATE_HANDLE), fences as
// RmaCollectiveBegin/End(BARRIER) with the operation completions before the end; ticks of a
// 2.5 GHz timer with a global offset; local definitions with mapping tables (events carry
// rank-local region ids) and ClockOffset records (rank 1's clock runs 0.5 s ahead: only the
// corrected time stamps give the answers).
//
// Scenarios (times in seconds, corrected):
//   late_sender  2 ranks: rank 0 computes 1.0..3.0 then MPI_Send (1 KiB, tag 7) to rank 1,
//                which sits in MPI_Recv from 1.0: Late Sender 2.0 s on rank 1. Also a GPU
//                location, an OpenMP worker thread (ThreadTeamBegin/End records) and an I/O
//                record on rank 0: skipped, with a note.
//   barrier      4 ranks enter MPI_Barrier at 1 + r, all leave at 4.01: Wait at Barrier
//                3, 2, 1, 0 s (6 s in all).
//   rma_fence    4 ranks: MPI_Win_create, a fence that rank 3 enters 1.0 s late (Wait at
//                Fence 1.0 s on ranks 0..2), MPI_Put of 800 B from 0 to 1, a closing fence,
//                MPI_Win_free.
//   grid16       16 ranks in a 4 x 4 grid: row communicators (MPI_Comm_split), a ring of
//                Isend/Irecv/Waitall, imbalanced compute, MPI_Allreduce on the rows and an
//                MPI_Barrier on MPI_COMM_WORLD, three iterations.
//   badref       2 ranks whose events name a region that is not defined (a malformed archive).
//   X+cuda       scenario X (late_sender, barrier, rma_fence, grid16) with CUDA beside MPI, as
//                Score-P's CUDA adapter writes it: per rank an accelerator location group of two
//                ACCELERATOR_STREAM locations running a kernel, a COMM_LOCATIONS group of the
//                CUDA paradigm (the master threads and the streams), per rank a CUDA
//                communicator over its master thread and streams and an RMA window on it, and
//                on the master thread a cudaMemcpy (RmaWinCreate, RmaPut to stream 1,
//                RmaOpCompleteBlocking, RmaWinDestroy) while no rank is in MPI: the MPI
//                figures are those of X.
//   cuda_only    one process, no MPI: its master thread runs main, latesender(int, int) and
//                sleep(double) (the names mangled, _Z10latesenderii, _Z5sleepd, as some
//                Score-P archives hold them) 0.1..1.0 and 1.0..1.5, then a cudaMemcpy on a
//                CUDA window 1.6..1.7; two CUDA streams run a kernel (_Z6kernelPfi).
//   nompi2       two processes, no MPI (a SHMEM paradigm definition): refused.
#include <otf2/otf2.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kResolution = 2500000000ull;  // 2.5 GHz
constexpr uint64_t kOffset = 7000000000000ull;
constexpr double kRank1Ahead = 0.5;  // rank 1's clock, corrected by its ClockOffset records

void check(OTF2_ErrorCode c, const char* what) {
  if (c != OTF2_SUCCESS) {
    std::fprintf(stderr, "otf2_synth: %s: %s\n", what, OTF2_Error_GetDescription(c));
    std::exit(1);
  }
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
const OTF2_FlushCallbacks kFlush = {pre_flush, nullptr};

// clang-format off
enum Region : uint32_t {
  kInit, kFinalize, kSend, kRecv, kIsend, kIrecv, kWaitall, kBarrier, kAllreduce, kCommSplit,
  kWinCreate, kWinFence, kPut, kWinFree, kCompute, kMain, kMemcpy, kKernel, kLateSenderFn, kSleepFn,
  kRegionCount
};
// clang-format on
struct RegionSpec {
  const char* name;
  OTF2_RegionRole role;
  OTF2_Paradigm paradigm;
};
const RegionSpec kRegions[kRegionCount] = {
    {"MPI_Init", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI},
    {"MPI_Finalize", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI},
    {"MPI_Send", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI},
    {"MPI_Recv", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI},
    {"MPI_Isend", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI},
    {"MPI_Irecv", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI},
    {"MPI_Waitall", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI},
    {"MPI_Barrier", OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_MPI},
    {"MPI_Allreduce", OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI},
    {"MPI_Comm_split", OTF2_REGION_ROLE_COLL_OTHER, OTF2_PARADIGM_MPI},
    {"MPI_Win_create", OTF2_REGION_ROLE_RMA, OTF2_PARADIGM_MPI},
    {"MPI_Win_fence", OTF2_REGION_ROLE_RMA, OTF2_PARADIGM_MPI},
    {"MPI_Put", OTF2_REGION_ROLE_RMA, OTF2_PARADIGM_MPI},
    {"MPI_Win_free", OTF2_REGION_ROLE_RMA, OTF2_PARADIGM_MPI},
    {"compute", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER},
    {"main", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER},
    {"cudaMemcpy", OTF2_REGION_ROLE_DATA_TRANSFER, OTF2_PARADIGM_CUDA},
    {"_Z6kernelPfi", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_CUDA},
    {"_Z10latesenderii", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER},
    {"_Z5sleepd", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER},
};
// Rank r's events carry local region ids: global id + 100 * (r + 1) (mapping tables undo it).
uint32_t local_region(int rank, uint32_t region) { return region + 100u * uint32_t(rank + 1); }

// Communicators and their groups (global ids).
enum : uint32_t { kWorld = 0, kSelf = 1, kRowComm0 = 2 };  // rows: kRowComm0 + row
enum : uint32_t { kGroupLocations = 0, kGroupWorld = 1, kGroupSelf = 2, kGroupRow0 = 3 };
constexpr uint32_t kWin = 0;
// CUDA (X+cuda, cuda_only): rank r's accelerator location group kCudaGroup0 + r with streams
// kStream0 + 2r + {0, 1}; the CUDA COMM_LOCATIONS group (member 3r: rank r's master thread,
// 3r + 1 and 3r + 2: its streams), per rank a CUDA COMM_GROUP, communicator and window.
constexpr uint32_t kCudaGroup0 = 2000, kCudaLocations = 100, kCudaCommGroup0 = 101;
constexpr uint32_t kCudaComm0 = 100, kCudaWin0 = 100;
constexpr uint64_t kStream0 = 3000;
uint64_t stream(int rank, int k) { return kStream0 + 2 * uint64_t(rank) + uint64_t(k); }

// One rank's event writer with times in (true) seconds.
class Rank {
 public:
  Rank(OTF2_EvtWriter* w, int rank) : w_(w), rank_(rank) {}
  uint64_t ts(double s) const {
    const double local = s + (rank_ == 1 ? kRank1Ahead : 0.0);
    return kOffset + uint64_t(local * double(kResolution) + 0.5);
  }
  void enter(double s, uint32_t r) {
    check(OTF2_EvtWriter_Enter(w_, nullptr, ts(s), local_region(rank_, r)), "enter");
  }
  void leave(double s, uint32_t r) {
    check(OTF2_EvtWriter_Leave(w_, nullptr, ts(s), local_region(rank_, r)), "leave");
  }
  // MPI_Init / MPI_Finalize as Score-P writes them: the program's begin (end), and the
  // creation (destruction) of MPI_COMM_WORLD and MPI_COMM_SELF in a collective pair.
  void init(double from, double to) {
    check(OTF2_EvtWriter_ProgramBegin(w_, nullptr, ts(from), 0, 0, nullptr), "program begin");
    lifecycle(kInit, from, to, true);
  }
  void finalize(double from, double to) {
    lifecycle(kFinalize, from, to, false);
    check(OTF2_EvtWriter_ProgramEnd(w_, nullptr, ts(to), 0), "program end");
  }
  void lifecycle(uint32_t region, double from, double to, bool create) {
    enter(from, region);
    check(OTF2_EvtWriter_MpiCollectiveBegin(w_, nullptr, ts(from)), "coll begin");
    for (uint32_t comm : {kWorld, kSelf})
      check(create ? OTF2_EvtWriter_CommCreate(w_, nullptr, ts(to), comm)
                   : OTF2_EvtWriter_CommDestroy(w_, nullptr, ts(to), comm),
            "comm create/destroy");
    check(OTF2_EvtWriter_MpiCollectiveEnd(
              w_, nullptr, ts(to),
              create ? OTF2_COLLECTIVE_OP_CREATE_HANDLE : OTF2_COLLECTIVE_OP_DESTROY_HANDLE, kWorld,
              OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
          "coll end");
    leave(to, region);
  }
  void compute(double from, double to) {
    enter(from, kCompute);
    leave(to, kCompute);
  }
  void collective(uint32_t region, OTF2_CollectiveOp op, uint32_t comm, double from, double to,
                  uint64_t bytes) {
    enter(from, region);
    check(OTF2_EvtWriter_MpiCollectiveBegin(w_, nullptr, ts(from)), "coll begin");
    check(OTF2_EvtWriter_MpiCollectiveEnd(w_, nullptr, ts(to), op, comm, OTF2_COLLECTIVE_ROOT_NONE, bytes,
                                          bytes),
          "coll end");
    leave(to, region);
  }
  OTF2_EvtWriter* w() const { return w_; }

 private:
  OTF2_EvtWriter* w_;
  int rank_;
};

struct Archive {
  OTF2_Archive* a = nullptr;
  int ranks = 0;
  std::vector<int> row_of;  // grid16: each rank's row (its row communicator)
  bool extras = false;      // late_sender: GPU location, OpenMP thread, I/O record
  bool cuda = false;        // X+cuda, cuda_only: CUDA streams, communicators, windows
  bool mpi = true;          // cuda_only, nompi2: no MPI at all
};

// Rank r's CUDA activity from `at`: a memory copy on the master thread (an RMA put on the
// rank's CUDA window, to stream 1) and a kernel on each stream.
void write_cuda(Archive& ar, std::vector<Rank>& r, double at) {
  for (int i = 0; i < ar.ranks; ++i) {
    Rank& k = r[size_t(i)];
    const uint32_t win = kCudaWin0 + uint32_t(i);
    k.enter(at, kMemcpy);
    check(OTF2_EvtWriter_RmaWinCreate(k.w(), nullptr, k.ts(at), win), "cuda win create");
    check(OTF2_EvtWriter_RmaPut(k.w(), nullptr, k.ts(at), win, 1, 4096, 1), "cuda put");
    check(OTF2_EvtWriter_RmaOpCompleteBlocking(k.w(), nullptr, k.ts(at + 0.1), win, 1), "cuda complete");
    check(OTF2_EvtWriter_RmaWinDestroy(k.w(), nullptr, k.ts(at + 0.1), win), "cuda win destroy");
    k.leave(at + 0.1, kMemcpy);
    for (int s = 0; s < 2; ++s) {
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(ar.a, stream(i, s));
      check(OTF2_EvtWriter_Enter(w, nullptr, k.ts(at + 0.1), kKernel), "kernel enter");
      check(OTF2_EvtWriter_Leave(w, nullptr, k.ts(at + 0.15), kKernel), "kernel leave");
    }
  }
}

void write_scenario(const std::string& what, Archive& ar) {
  std::vector<Rank> r;
  for (int i = 0; i < ar.ranks; ++i) r.emplace_back(OTF2_Archive_GetEvtWriter(ar.a, OTF2_LocationRef(i)), i);
  if (!ar.mpi) {  // a process's master thread, no MPI
    for (int i = 0; i < ar.ranks; ++i) {
      Rank& k = r[size_t(i)];
      k.enter(0.0, kMain);
      k.enter(0.1, kLateSenderFn);
      k.leave(1.0, kLateSenderFn);
      k.enter(1.0, kSleepFn);
      k.leave(1.5, kSleepFn);
    }
    if (ar.cuda) write_cuda(ar, r, 1.6);
    for (int i = 0; i < ar.ranks; ++i) r[size_t(i)].leave(2.0, kMain);
    return;
  }
  for (int i = 0; i < ar.ranks; ++i) r[size_t(i)].init(0.0, 0.5);
  double end = 4.0;
  if (what == "late_sender" || what == "badref") {
    r[0].compute(1.0, 3.0);
    r[0].enter(3.0, kSend);
    check(OTF2_EvtWriter_MpiSend(r[0].w(), nullptr, r[0].ts(3.0), 1, kWorld, 7, 1024), "send");
    r[0].leave(3.001, kSend);
    r[1].enter(1.0, kRecv);
    check(OTF2_EvtWriter_MpiRecv(r[1].w(), nullptr, r[1].ts(3.002), 0, kWorld, 7, 1024), "recv");
    r[1].leave(3.002, kRecv);
    if (what == "badref") check(OTF2_EvtWriter_Enter(r[1].w(), nullptr, r[1].ts(3.5), 99999), "bad enter");
    if (ar.extras)  // an I/O record on rank 0 (an I/O handle's creation, handle 0)
      check(OTF2_EvtWriter_IoCreateHandle(r[0].w(), nullptr, r[0].ts(3.5), 0, OTF2_IO_ACCESS_MODE_READ_ONLY,
                                          OTF2_IO_CREATION_FLAG_NONE, OTF2_IO_STATUS_FLAG_NONE),
            "io");
  } else if (what == "barrier") {
    for (int i = 0; i < ar.ranks; ++i) {
      r[size_t(i)].compute(0.5, 1.0 + i);
      r[size_t(i)].collective(kBarrier, OTF2_COLLECTIVE_OP_BARRIER, kWorld, 1.0 + i, 4.01, 0);
    }
    end = 4.5;
  } else if (what == "rma_fence") {
    for (int i = 0; i < ar.ranks; ++i) {
      Rank& k = r[size_t(i)];
      k.enter(0.6, kWinCreate);
      check(OTF2_EvtWriter_RmaCollectiveBegin(k.w(), nullptr, k.ts(0.6)), "rma begin");
      check(OTF2_EvtWriter_RmaWinCreate(k.w(), nullptr, k.ts(0.7), kWin), "win create");
      check(
          OTF2_EvtWriter_RmaCollectiveEnd(k.w(), nullptr, k.ts(0.7), OTF2_COLLECTIVE_OP_CREATE_HANDLE,
                                          OTF2_RMA_SYNC_LEVEL_PROCESS, kWin, OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
          "rma end");
      k.leave(0.7, kWinCreate);
      const double in = i == ar.ranks - 1 ? 2.0 : 1.0;
      k.compute(0.7, in);
      for (int fence = 0; fence < 2; ++fence) {
        const double from = fence == 0 ? in : 3.0, to = fence == 0 ? 2.01 : 3.01;
        if (fence == 1 && i == 0) {  // the epoch's transfer, completed by the closing fence
          k.enter(2.5, kPut);
          check(OTF2_EvtWriter_RmaPut(k.w(), nullptr, k.ts(2.5), kWin, 1, 800, 1), "put");
          k.leave(2.501, kPut);
        }
        k.enter(from, kWinFence);
        check(OTF2_EvtWriter_RmaCollectiveBegin(k.w(), nullptr, k.ts(from)), "rma begin");
        if (fence == 1 && i == 0)
          check(OTF2_EvtWriter_RmaOpCompleteBlocking(k.w(), nullptr, k.ts(to), kWin, 1), "complete");
        check(OTF2_EvtWriter_RmaCollectiveEnd(k.w(), nullptr, k.ts(to), OTF2_COLLECTIVE_OP_BARRIER,
                                              OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, kWin,
                                              OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
              "rma end");
        k.leave(to, kWinFence);
      }
      k.enter(3.5, kWinFree);
      check(OTF2_EvtWriter_RmaCollectiveBegin(k.w(), nullptr, k.ts(3.5)), "rma begin");
      check(OTF2_EvtWriter_RmaWinDestroy(k.w(), nullptr, k.ts(3.6), kWin), "win destroy");
      check(
          OTF2_EvtWriter_RmaCollectiveEnd(k.w(), nullptr, k.ts(3.6), OTF2_COLLECTIVE_OP_DESTROY_HANDLE,
                                          OTF2_RMA_SYNC_LEVEL_PROCESS, kWin, OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
          "rma end");
      k.leave(3.6, kWinFree);
    }
  } else if (what == "grid16") {
    const int n = ar.ranks;
    for (int i = 0; i < n; ++i) {
      Rank& k = r[size_t(i)];
      const uint32_t row = kRowComm0 + uint32_t(ar.row_of[size_t(i)]);
      k.enter(0.5, kCommSplit);
      check(OTF2_EvtWriter_MpiCollectiveBegin(k.w(), nullptr, k.ts(0.5)), "coll begin");
      check(OTF2_EvtWriter_CommCreate(k.w(), nullptr, k.ts(0.51), row), "comm create");
      check(OTF2_EvtWriter_MpiCollectiveEnd(k.w(), nullptr, k.ts(0.51), OTF2_COLLECTIVE_OP_CREATE_HANDLE,
                                            kWorld, OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
            "coll end");
      k.leave(0.51, kCommSplit);
      double t = 0.51;
      uint64_t req = 1;
      for (int it = 0; it < 3; ++it) {
        // Imbalance: rank i computes 0.1 + 0.01 * i, more in the last row.
        const double work = 0.1 + 0.01 * i + (ar.row_of[size_t(i)] == 3 ? 0.05 : 0.0);
        const double base = 0.51 + it * 1.0;
        k.compute(base, base + work);
        t = base + work;
        const int right = (i + 1) % n, left = (i + n - 1) % n;
        k.enter(t, kIrecv);
        check(OTF2_EvtWriter_MpiIrecvRequest(k.w(), nullptr, k.ts(t), req), "irecv request");
        k.leave(t + 0.0001, kIrecv);
        k.enter(t + 0.0002, kIsend);
        check(OTF2_EvtWriter_MpiIsend(k.w(), nullptr, k.ts(t + 0.0002), uint32_t(right), kWorld, 3, 4096,
                                      req + 1),
              "isend");
        k.leave(t + 0.0003, kIsend);
        // The left neighbour's send was posted at its own base + work: wait for it.
        const double left_sent = base + 0.1 + 0.01 * left + (ar.row_of[size_t(left)] == 3 ? 0.05 : 0.0) +
                                 0.0002;
        const double done = std::max(t + 0.0004, left_sent + 0.001);
        k.enter(t + 0.0004, kWaitall);
        check(OTF2_EvtWriter_MpiIsendComplete(k.w(), nullptr, k.ts(done), req + 1), "isend complete");
        check(OTF2_EvtWriter_MpiIrecv(k.w(), nullptr, k.ts(done), uint32_t(left), kWorld, 3, 4096, req),
              "irecv");
        k.leave(done, kWaitall);
        req += 2;
        // Row allreduce: all leave when the row's last member arrived.
        double last_in = 0;
        for (int j = 0; j < n; ++j)
          if (ar.row_of[size_t(j)] == ar.row_of[size_t(i)])
            last_in = std::max(last_in, base + 0.5 + 0.005 * j);
        k.collective(kAllreduce, OTF2_COLLECTIVE_OP_ALLREDUCE, row, base + 0.5 + 0.005 * i, last_in + 0.001,
                     8);
        k.collective(kBarrier, OTF2_COLLECTIVE_OP_BARRIER, kWorld, last_in + 0.002 + 0.001 * i,
                     base + 0.5 + 0.005 * n + 0.05, 0);
      }
    }
  }
  if (ar.cuda) write_cuda(ar, r, end - 0.3);  // no rank is in MPI then
  for (int i = 0; i < ar.ranks; ++i) r[size_t(i)].finalize(end, end + 0.1);
  if (ar.extras) {
    // An OpenMP worker thread of rank 0 and a GPU stream: not MPI ranks.
    OTF2_EvtWriter* omp = OTF2_Archive_GetEvtWriter(ar.a, (uint64_t(1) << 32) | 0);
    check(OTF2_EvtWriter_ThreadTeamBegin(omp, nullptr, kOffset + kResolution, 0), "team begin");
    check(OTF2_EvtWriter_Enter(omp, nullptr, kOffset + kResolution, kCompute), "omp enter");
    check(OTF2_EvtWriter_Leave(omp, nullptr, kOffset + 2 * kResolution, kCompute), "omp leave");
    check(OTF2_EvtWriter_ThreadTeamEnd(omp, nullptr, kOffset + 2 * kResolution, 0), "team end");
    OTF2_EvtWriter* gpu = OTF2_Archive_GetEvtWriter(ar.a, 1000);
    check(OTF2_EvtWriter_Enter(gpu, nullptr, kOffset + kResolution, kCompute), "gpu enter");
    check(OTF2_EvtWriter_Leave(gpu, nullptr, kOffset + 2 * kResolution, kCompute), "gpu leave");
  }
}

// The CUDA paradigm's groups, communicators and windows (X+cuda, cuda_only).
template <typename Str>
void write_cuda_definitions(Archive& ar, OTF2_GlobalDefWriter* g, Str& str) {
  std::vector<uint64_t> locations;
  for (int i = 0; i < ar.ranks; ++i)
    for (uint64_t loc : {uint64_t(i), stream(i, 0), stream(i, 1)}) locations.push_back(loc);
  check(OTF2_GlobalDefWriter_WriteGroup(g, kCudaLocations, str(""), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_CUDA, OTF2_GROUP_FLAG_NONE, uint32_t(locations.size()),
                                        locations.data()),
        "cuda group");
  for (int i = 0; i < ar.ranks; ++i) {
    const uint64_t m[3] = {3 * uint64_t(i), 3 * uint64_t(i) + 1, 3 * uint64_t(i) + 2};
    check(
        OTF2_GlobalDefWriter_WriteGroup(g, kCudaCommGroup0 + uint32_t(i), str(""), OTF2_GROUP_TYPE_COMM_GROUP,
                                        OTF2_PARADIGM_CUDA, OTF2_GROUP_FLAG_NONE, 3, m),
        "cuda group");
    check(OTF2_GlobalDefWriter_WriteComm(
              g, kCudaComm0 + uint32_t(i), str("CUDA context " + std::to_string(i)),
              kCudaCommGroup0 + uint32_t(i), OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
          "cuda comm");
    check(OTF2_GlobalDefWriter_WriteRmaWin(g, kCudaWin0 + uint32_t(i), str("CUDA window"),
                                           kCudaComm0 + uint32_t(i), OTF2_RMA_WIN_FLAG_NONE),
          "cuda window");
  }
}

// MPI's groups, communicators and window.
template <typename Str>
void write_mpi_definitions(Archive& ar, OTF2_GlobalDefWriter* g, Str& str) {
  std::vector<uint64_t> all;
  for (int i = 0; i < ar.ranks; ++i) all.push_back(uint64_t(i));
  check(OTF2_GlobalDefWriter_WriteGroup(g, kGroupLocations, str(""), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, uint32_t(all.size()),
                                        all.data()),
        "group");
  check(
      OTF2_GlobalDefWriter_WriteGroup(g, kGroupWorld, str(""), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                      OTF2_GROUP_FLAG_NONE, uint32_t(all.size()), all.data()),
      "group");
  check(OTF2_GlobalDefWriter_WriteGroup(g, kGroupSelf, str(""), OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, 0, nullptr),
        "group");
  int rows = 0;
  for (int row : ar.row_of) rows = std::max(rows, row + 1);
  for (int row = 0; row < rows; ++row) {
    std::vector<uint64_t> m;
    for (int i = 0; i < ar.ranks; ++i)
      if (ar.row_of[size_t(i)] == row) m.push_back(uint64_t(i));
    check(OTF2_GlobalDefWriter_WriteGroup(g, kGroupRow0 + uint32_t(row), str(""), OTF2_GROUP_TYPE_COMM_GROUP,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, uint32_t(m.size()),
                                          m.data()),
          "group");
  }
  check(OTF2_GlobalDefWriter_WriteComm(g, kWorld, str("MPI_COMM_WORLD"), kGroupWorld, OTF2_UNDEFINED_COMM,
                                       OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS),
        "comm");
  check(OTF2_GlobalDefWriter_WriteComm(g, kSelf, str("MPI_COMM_SELF"), kGroupSelf, OTF2_UNDEFINED_COMM,
                                       OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS),
        "comm");
  for (int row = 0; row < rows; ++row)
    check(OTF2_GlobalDefWriter_WriteComm(g, kRowComm0 + uint32_t(row), str("MPI_Comm_split"),
                                         kGroupRow0 + uint32_t(row), kWorld,
                                         OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS),
          "comm");
  check(OTF2_GlobalDefWriter_WriteRmaWin(g, kWin, str("MPI_Win_create window"), kWorld,
                                         OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS),
        "window");
}

void write_definitions(Archive& ar) {
  // Local definitions: the mapping tables of the rank-local region ids, and the clock offsets.
  check(OTF2_Archive_OpenDefFiles(ar.a), "open def files");
  for (int i = 0; i < ar.ranks; ++i) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(ar.a, OTF2_LocationRef(i));
    OTF2_IdMap* map = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, kRegionCount);
    for (uint32_t g = 0; g < kRegionCount; ++g) OTF2_IdMap_AddIdPair(map, local_region(i, g), g);
    check(OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_REGION, map), "mapping table");
    OTF2_IdMap_Free(map);
    const int64_t off = i == 1 ? -int64_t(kRank1Ahead * double(kResolution)) : 0;
    check(OTF2_DefWriter_WriteClockOffset(dw, kOffset, off, 0.0), "clock offset");
    check(OTF2_DefWriter_WriteClockOffset(dw, kOffset + 10 * kResolution, off, 0.0), "clock offset");
    check(OTF2_Archive_CloseDefWriter(ar.a, dw), "close def writer");
  }
  if (ar.extras) {  // the extra locations have definition files too
    for (uint64_t loc : {(uint64_t(1) << 32) | 0, uint64_t(1000)})
      check(OTF2_Archive_CloseDefWriter(ar.a, OTF2_Archive_GetDefWriter(ar.a, loc)), "close def writer");
  }
  for (int i = 0; ar.cuda && i < ar.ranks; ++i)
    for (int k = 0; k < 2; ++k)
      check(OTF2_Archive_CloseDefWriter(ar.a, OTF2_Archive_GetDefWriter(ar.a, stream(i, k))),
            "close def writer");
  check(OTF2_Archive_CloseDefFiles(ar.a), "close def files");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar.a);
  std::vector<std::string> strings;
  auto str = [&](const std::string& s) {
    for (size_t i = 0; i < strings.size(); ++i)
      if (strings[i] == s) return OTF2_StringRef(i);
    strings.push_back(s);
    return OTF2_StringRef(strings.size() - 1);
  };
  // Strings first (collected, then written in order).
  for (const RegionSpec& r : kRegions) str(r.name);
  for (const char* s : {"", "machine", "node", "Linux", "host0", "MPI", "Master thread", "OMP thread 1",
                        "CUDA[0:0]", "GPU", "MPI_COMM_WORLD", "MPI_COMM_SELF", "MPI_Comm_split",
                        "MPI_Win_create window", "CUDA", "SHMEM", "CUDA window"})
    str(s);
  for (int i = 0; i < ar.ranks; ++i) {
    str((ar.mpi ? "MPI Rank " : "Process ") + std::to_string(i));
    str("CUDA[" + std::to_string(i) + "]");
    str("CUDA context " + std::to_string(i));
    for (int k = 0; k < 2; ++k) str("CUDA[" + std::to_string(i) + ":" + std::to_string(k) + "]");
  }
  for (size_t i = 0; i < strings.size(); ++i)
    check(OTF2_GlobalDefWriter_WriteString(g, OTF2_StringRef(i), strings[i].c_str()), "string");
  // Global offset = the earliest time stamp; length up to the last one.
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, kResolution, kOffset, 12 * kResolution,
                                                  1700000000000000000ull),
        "clock properties");
  if (ar.mpi)
    check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, str("MPI"), OTF2_PARADIGM_CLASS_PROCESS),
          "paradigm");
  else if (!ar.cuda)
    check(
        OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_SHMEM, str("SHMEM"), OTF2_PARADIGM_CLASS_PROCESS),
        "paradigm");
  if (ar.cuda)
    check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_CUDA, str("CUDA"),
                                             OTF2_PARADIGM_CLASS_ACCELERATOR),
          "paradigm");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str("Linux"), str("machine"),
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        "node");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, str("host0"), str("node"), 0), "node");
  for (int i = 0; i < ar.ranks; ++i)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(
              g, OTF2_LocationGroupRef(i), str((ar.mpi ? "MPI Rank " : "Process ") + std::to_string(i)),
              OTF2_LOCATION_GROUP_TYPE_PROCESS, 1, OTF2_UNDEFINED_LOCATION_GROUP),
          "location group");
  for (int i = 0; ar.cuda && i < ar.ranks; ++i)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(
              g, kCudaGroup0 + uint32_t(i), str("CUDA[" + std::to_string(i) + "]"),
              OTF2_LOCATION_GROUP_TYPE_ACCELERATOR, 1, OTF2_LocationGroupRef(i)),
          "location group");
  if (ar.extras)
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, 1000, str("GPU"), OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                                  1, 0),
          "location group");
  for (int i = 0; i < ar.ranks; ++i)
    check(OTF2_GlobalDefWriter_WriteLocation(g, OTF2_LocationRef(i), str("Master thread"),
                                             OTF2_LOCATION_TYPE_CPU_THREAD, 0, OTF2_LocationGroupRef(i)),
          "location");
  if (ar.extras) {
    check(OTF2_GlobalDefWriter_WriteLocation(g, (uint64_t(1) << 32) | 0, str("OMP thread 1"),
                                             OTF2_LOCATION_TYPE_CPU_THREAD, 4, 0),
          "location");
    check(OTF2_GlobalDefWriter_WriteLocation(g, 1000, str("CUDA[0:0]"), OTF2_LOCATION_TYPE_ACCELERATOR_STREAM,
                                             2, 1000),
          "location");
  }
  for (int i = 0; ar.cuda && i < ar.ranks; ++i)
    for (int k = 0; k < 2; ++k)
      check(OTF2_GlobalDefWriter_WriteLocation(
                g, stream(i, k), str("CUDA[" + std::to_string(i) + ":" + std::to_string(k) + "]"),
                OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, 2, kCudaGroup0 + uint32_t(i)),
            "location");
  for (uint32_t i = 0; i < kRegionCount; ++i) {
    const RegionSpec& r = kRegions[i];
    if (!ar.mpi && r.paradigm == OTF2_PARADIGM_MPI) continue;  // an archive without MPI
    check(OTF2_GlobalDefWriter_WriteRegion(g, i, str(r.name), str(r.name), str(""), r.role, r.paradigm,
                                           OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0),
          "region");
  }
  if (ar.cuda) write_cuda_definitions(ar, g, str);
  if (ar.mpi) write_mpi_definitions(ar, g, str);
  check(OTF2_Archive_CloseGlobalDefWriter(ar.a, g), "close global defs");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(
        stderr,
        "usage: otf2_synth late_sender|barrier|rma_fence|grid16[+cuda]|badref|cuda_only|nompi2 DIR\n");
    return 2;
  }
  std::string what = argv[1];
  Archive ar;
  if (what.size() > 5 && what.compare(what.size() - 5, 5, "+cuda") == 0) {
    what.resize(what.size() - 5);
    ar.cuda = true;
  }
  if (what == "cuda_only" || what == "nompi2") {
    ar.mpi = false;
    ar.cuda = what == "cuda_only";
  }
  ar.ranks = what == "late_sender" || what == "badref" || what == "nompi2" ? 2
             : what == "grid16"                                            ? 16
             : what == "cuda_only"                                         ? 1
                                                                           : 4;
  ar.extras = what == "late_sender";
  if (what == "grid16")
    for (int i = 0; i < ar.ranks; ++i) ar.row_of.push_back(i / 4);
  ar.a = OTF2_Archive_Open(argv[2], "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                           OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!ar.a) {
    std::fprintf(stderr, "otf2_synth: cannot open an archive in %s\n", argv[2]);
    return 1;
  }
  check(OTF2_Archive_SetFlushCallbacks(ar.a, &kFlush, nullptr), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(ar.a), "collectives");
  check(OTF2_Archive_SetCreator(ar.a, "otf2_synth (Score-P conventions)"), "creator");
  check(OTF2_Archive_OpenEvtFiles(ar.a), "open evt files");
  write_scenario(what, ar);
  check(OTF2_Archive_CloseEvtFiles(ar.a), "close evt files");
  write_definitions(ar);
  check(OTF2_Archive_Close(ar.a), "close");
  return 0;
}
