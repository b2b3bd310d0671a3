// critpath — benchmarks/scale/synth_trace.h
//
// The writing half of critpath-synth: per-rank event streams turned into a kept trace, the
// files CRITPATH_KEEP_TRACE=1 leaves in DIR/trace (docs/trace-format.md §6.2): per rank the
// chunks (`rank-<r>.cptrace`, made by libtrace's own codec and chunk store) and the run facts
// and definitions (`rank-<r>.json`, written by the analyzer's own save_archive()).
//
// A model (synth_models.h) calls the SynthTrace methods in any rank order but in time order
// per rank; every time is in nanoseconds of a model clock that the archive declares as
// CLOCK_MONOTONIC ticks (1 tick = 1 ns, one host, no offsets: no clock correction applies).
// Events are kept as raw slots (16 B each) until write(), which compresses and writes the
// ranks on a few threads and frees each rank's slots once written.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "libtrace/event/event.h"

namespace critpath::synth {

// The user regions a model's call paths use; their ids are the same on every rank.
enum class UserRegion : uint32_t { kSweep = 0, kCompute = 1, kExchange = 2, kSchedule = 3, kCount = 4 };

class SynthTrace {
 public:
  // `ranks` traced ranks of a run of `model`; times of every rank start at base_ns.
  SynthTrace(int ranks, std::string model, std::vector<std::string> args);

  int ranks() const { return ranks_; }
  uint32_t user_region(UserRegion r) const;

  // The framing a real run records: ENTER main + ENTER/EXIT MPI_Init; EXIT MPI_Finalize +
  // EXIT main (the session writes them so).
  void init(int rank, uint64_t enter, uint64_t exit);
  void finalize(int rank, uint64_t enter, uint64_t exit);
  void enter(int rank, uint32_t region, uint64_t t);
  void exit(int rank, uint32_t region, uint64_t t);
  // MPI_Send (SEND recorded at the EXIT, as the wrapper does after PMPI_Send returns) and
  // MPI_Recv (RECV at the EXIT); peers are world ranks (the messages go over MPI_COMM_WORLD).
  void send(int rank, int peer, int tag, uint64_t bytes, uint64_t enter, uint64_t exit);
  void recv(int rank, int peer, int tag, uint64_t bytes, uint64_t enter, uint64_t exit);
  // MPI_Isend / MPI_Irecv: the call's ENTER, ISEND / IRECV_REQUEST and EXIT; returns the
  // request id for the completion.
  uint64_t isend(int rank, int peer, int tag, uint64_t bytes, uint64_t enter, uint64_t exit);
  uint64_t irecv(int rank, uint64_t enter, uint64_t exit);
  // MPI_Waitall completing `sends` (ISEND_COMPLETE) and the receives `recvs` (IRECV with the
  // matched peer, tag and bytes), in that order, all at the EXIT.
  struct Completed {
    uint64_t request;
    int peer;
    int tag;
    uint64_t bytes;
  };
  void waitall(int rank, const std::vector<Completed>& recvs, const std::vector<uint64_t>& sends,
               uint64_t enter, uint64_t exit);
  // MPI_Allreduce over MPI_COMM_WORLD: ENTER, COLL_BEGIN, COLL_END, EXIT.
  void allreduce(int rank, uint64_t bytes, uint64_t enter, uint64_t exit);

  // Writes DIR/trace/rank-<r>.{cptrace,json} for every rank with `threads` threads; `false`
  // and a message on stderr on an I/O error. Frees the slots as it goes.
  bool write(const std::string& dir, int threads);
  // Compressed bytes of the .cptrace files and events written (after write()).
  uint64_t trace_bytes() const { return trace_bytes_; }
  uint64_t json_bytes() const { return json_bytes_; }
  uint64_t events() const { return events_; }

 private:
  struct Rank {
    std::vector<trace::Slot> slots;
    uint64_t next_request = 1;
    uint64_t init_enter = 0;
    uint64_t finalize_enter = 0;
    uint64_t end = 0;
  };
  void put(int rank, const trace::Event& e);
  bool write_rank(const std::string& trace_dir, int rank, std::string& error);

  int ranks_;
  std::string model_;
  std::vector<std::string> args_;
  std::vector<Rank> rank_;
  std::mutex totals_mu_;
  uint64_t trace_bytes_ = 0;
  uint64_t json_bytes_ = 0;
  uint64_t events_ = 0;
};

}  // namespace critpath::synth
