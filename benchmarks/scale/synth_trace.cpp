// critpath — benchmarks/scale/synth_trace.cpp
#include "synth_trace.h"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "analyzer/engine/run_info.h"
#include "analyzer/session/trace_archive.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/buffer/codec.h"
#include "libtrace/defs/definitions.h"
#include "pmpi_wrappers/generated_regions.h"

namespace critpath::synth {

namespace {

using trace::Event;
using trace::EventKind;

constexpr const char* kUserNames[] = {"sweep", "compute", "exchange", "schedule"};
static_assert(sizeof(kUserNames) / sizeof(kUserNames[0]) == size_t(UserRegion::kCount));
// A raw chunk of the recorder's default size (CRITPATH_CHUNK_SIZE=256K: 16384 slots).
constexpr size_t kChunkSlots = 16384;
// MPI_COMM_WORLD's member list is written out (as a real run does) up to this many ranks;
// above, it is left empty: the analysis derives world's members from the run's size
// (engine::comm_members), and P world ranks in each of P files would make the trace O(P^2).
constexpr int kWorldMembersUpTo = 1024;

Event p2p(EventKind kind, uint64_t t, int peer, int tag, uint64_t bytes, uint64_t request) {
  Event e;
  e.kind = kind;
  e.time = t;
  e.comm = defs::kCommWorld;
  e.peer = peer;
  e.tag = tag;
  e.bytes = bytes;
  e.request = request;
  return e;
}

// An event with no payload but a region (ENTER, EXIT) or a request id (completions).
Event plain(EventKind kind, uint64_t t, uint32_t region, uint64_t request = 0) {
  return Event{.time = t, .region = region, .kind = kind, .request = request};
}

// Every definition a traced rank of this run has: the spec's MPI regions (as MPI_Init
// defines them), the root, the user regions in UserRegion order, MPI_COMM_WORLD and
// MPI_COMM_SELF.
void define_rank(defs::Definitions& d, int rank, int ranks) {
  for (const pmpi::GeneratedRegion& r : pmpi::generated_regions())
    d.regions.define_fixed(r.id, r.name, defs::RegionKind::kMpi, r.mpi);
  d.regions.define_fixed(defs::kRootRegion, "main", defs::RegionKind::kArtificial);
  for (const char* name : kUserNames) d.regions.define(name, defs::RegionKind::kUser);
  defs::CommDef world;
  world.id = defs::kCommWorld;
  world.created_by = "MPI_COMM_WORLD";
  if (ranks <= kWorldMembersUpTo)
    for (int r = 0; r < ranks; ++r) world.members.push_back(r);
  d.comms.define(std::move(world));
  defs::CommDef self;
  self.id = defs::kCommSelf;
  self.parent = defs::kCommWorld;
  self.created_by = "MPI_COMM_SELF";
  self.members = {rank};
  d.comms.define(std::move(self));
}

}  // namespace

SynthTrace::SynthTrace(int ranks, std::string model, std::vector<std::string> args)
    : ranks_(ranks), model_(std::move(model)), args_(std::move(args)), rank_(size_t(ranks)) {}

uint32_t SynthTrace::user_region(UserRegion r) const { return defs::kFirstDynamicRegion + uint32_t(r); }

void SynthTrace::put(int rank, const Event& e) {
  trace::Slot s[trace::kMaxEventSlots];
  const unsigned n = trace::event_to_slots(e, s);
  std::vector<trace::Slot>& v = rank_[size_t(rank)].slots;
  v.insert(v.end(), s, s + n);
}

void SynthTrace::init(int rank, uint64_t enter, uint64_t exit) {
  rank_[size_t(rank)].init_enter = enter;
  put(rank, plain(EventKind::kEnter, enter, defs::kRootRegion));
  put(rank, plain(EventKind::kEnter, enter, pmpi::region::kMPI_Init));
  put(rank, plain(EventKind::kExit, exit, pmpi::region::kMPI_Init));
}

void SynthTrace::finalize(int rank, uint64_t enter, uint64_t exit) {
  rank_[size_t(rank)].finalize_enter = enter;
  rank_[size_t(rank)].end = exit;
  put(rank, plain(EventKind::kEnter, enter, pmpi::region::kMPI_Finalize));
  put(rank, plain(EventKind::kExit, exit, pmpi::region::kMPI_Finalize));
  put(rank, plain(EventKind::kExit, exit, defs::kRootRegion));
}

void SynthTrace::enter(int rank, uint32_t region, uint64_t t) {
  put(rank, plain(EventKind::kEnter, t, region));
}

void SynthTrace::exit(int rank, uint32_t region, uint64_t t) {
  put(rank, plain(EventKind::kExit, t, region));
}

void SynthTrace::send(int rank, int peer, int tag, uint64_t bytes, uint64_t enter, uint64_t exit) {
  put(rank, plain(EventKind::kEnter, enter, pmpi::region::kMPI_Send));
  put(rank, p2p(EventKind::kSend, exit, peer, tag, bytes, 0));
  put(rank, plain(EventKind::kExit, exit, pmpi::region::kMPI_Send));
}

void SynthTrace::recv(int rank, int peer, int tag, uint64_t bytes, uint64_t enter, uint64_t exit) {
  put(rank, plain(EventKind::kEnter, enter, pmpi::region::kMPI_Recv));
  put(rank, p2p(EventKind::kRecv, exit, peer, tag, bytes, 0));
  put(rank, plain(EventKind::kExit, exit, pmpi::region::kMPI_Recv));
}

uint64_t SynthTrace::isend(int rank, int peer, int tag, uint64_t bytes, uint64_t enter, uint64_t exit) {
  const uint64_t request = rank_[size_t(rank)].next_request++;
  put(rank, plain(EventKind::kEnter, enter, pmpi::region::kMPI_Isend));
  put(rank, p2p(EventKind::kIsend, exit, peer, tag, bytes, request));
  put(rank, plain(EventKind::kExit, exit, pmpi::region::kMPI_Isend));
  return request;
}

uint64_t SynthTrace::irecv(int rank, uint64_t enter, uint64_t exit) {
  const uint64_t request = rank_[size_t(rank)].next_request++;
  put(rank, plain(EventKind::kEnter, enter, pmpi::region::kMPI_Irecv));
  put(rank, plain(EventKind::kIrecvRequest, exit, 0, request));
  put(rank, plain(EventKind::kExit, exit, pmpi::region::kMPI_Irecv));
  return request;
}

void SynthTrace::waitall(int rank, const std::vector<Completed>& recvs, const std::vector<uint64_t>& sends,
                         uint64_t enter, uint64_t exit) {
  put(rank, plain(EventKind::kEnter, enter, pmpi::region::kMPI_Waitall));
  for (const Completed& c : recvs) put(rank, p2p(EventKind::kIrecv, exit, c.peer, c.tag, c.bytes, c.request));
  for (uint64_t request : sends) put(rank, plain(EventKind::kIsendComplete, exit, 0, request));
  put(rank, plain(EventKind::kExit, exit, pmpi::region::kMPI_Waitall));
}

void SynthTrace::allreduce(int rank, uint64_t bytes, uint64_t enter, uint64_t exit) {
  put(rank, plain(EventKind::kEnter, enter, pmpi::region::kMPI_Allreduce));
  put(rank, plain(EventKind::kCollBegin, enter, 0));
  Event e = plain(EventKind::kCollEnd, exit, pmpi::region::kMPI_Allreduce);  // region: the op
  e.comm = defs::kCommWorld;
  e.root = -1;
  e.bytes = bytes;
  e.bytes_received = bytes;
  put(rank, e);
  put(rank, plain(EventKind::kExit, exit, pmpi::region::kMPI_Allreduce));
}

bool SynthTrace::write_rank(const std::string& trace_dir, int rank, std::string& error) {
  Rank& rk = rank_[size_t(rank)];
  trace::ChunkStore store;
  trace::ChunkCompressor compressor(1);
  uint32_t sequence = 0;
  const trace::Slot* s = rk.slots.data();
  const trace::Slot* end = s + rk.slots.size();
  while (s < end) {  // chunks of about kChunkSlots slots, never splitting an event
    const trace::Slot* cut = s;
    while (cut < end && size_t(cut - s) < kChunkSlots) cut += 1 + cut->nextra;
    std::vector<uint8_t> chunk;
    if (compressor.compress(s, cut, 0, sequence++, chunk) != Status::kOk ||
        store.append(std::move(chunk)) != Status::kOk) {
      error = "rank " + std::to_string(rank) + ": cannot compress its events";
      return false;
    }
    s = cut;
  }
  std::vector<trace::Slot>().swap(rk.slots);
  const std::string base = trace_dir + "/rank-" + std::to_string(rank);
  if (store.write_file(base + ".cptrace") != Status::kOk) {
    error = "cannot write " + base + ".cptrace";
    return false;
  }
  analyzer::RunInfo run;
  run.rank = rank;
  run.size = ranks_;
  run.executable = "critpath-synth-" + model_;
  run.args = args_;
  run.output_dir = trace_dir.substr(0, trace_dir.size() - std::strlen("/trace"));
  run.start_utc = "2026-01-01T00:00:00Z";
  run.mpi_library = "critpath-synth (a model: no MPI ran)";
  run.timer = clock::TimerKind::kMonotonic;
  run.timer_why = "synthesized: nanoseconds of a model";
  run.begin = {rk.init_enter, rk.init_enter};
  run.end = {rk.end, rk.end};
  run.init_enter_ticks = rk.init_enter;
  run.finalize_enter_ticks = rk.finalize_enter;
  run.same_host_as_root = true;
  run.all_on_one_host = true;
  run.host = "synth";
  run.recorder.threads = 1;
  run.recorder.raw_chunks_allocated = 1;
  run.store = store.stats();
  defs::Definitions definitions;
  define_rank(definitions, rank, ranks_);
  if (analyzer::save_archive(run, definitions, {}, trace_dir) != Status::kOk) {
    error = "cannot write " + base + ".json";
    return false;
  }
  struct stat st;
  const uint64_t json = stat((base + ".json").c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
  std::lock_guard<std::mutex> lock(totals_mu_);
  trace_bytes_ += run.store.bytes_total;
  events_ += run.store.events;
  json_bytes_ += json;
  return true;
}

bool SynthTrace::write(const std::string& dir, int threads) {
  const std::string trace_dir = dir + "/trace";
  for (size_t at = 1; at <= trace_dir.size(); ++at) {  // every directory on the way (mkdir -p)
    if (at < trace_dir.size() && trace_dir[at] != '/') continue;
    const std::string d = trace_dir.substr(0, at);
    if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "critpath-synth: cannot create %s: %s\n", d.c_str(), std::strerror(errno));
      return false;
    }
  }
  std::atomic<int> next{0};
  std::atomic<bool> ok{true};
  std::mutex err_mu;
  auto work = [&] {
    std::string error;
    for (int r = next++; r < ranks_ && ok; r = next++)
      if (!write_rank(trace_dir, r, error)) {
        ok = false;
        std::lock_guard<std::mutex> lock(err_mu);
        std::fprintf(stderr, "critpath-synth: %s\n", error.c_str());
      }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return ok;
}

}  // namespace critpath::synth
