// critpath — benchmarks/scale/synth_models.h
//
// critpath-synth's three models. Each simulates its program on a model machine, writes every
// rank's events into a SynthTrace and derives the analysis's known answers from the same
// simulation. All times are integer nanoseconds:
//
//   compute      a fixed time per step (the model's parameters)
//   message      a Send (or Isend) takes send_ns; the message can be received send enter +
//                latency_ns + bytes * ns_per_kib / 1024 later (eager: the sender never waits);
//                a Recv takes at least recv_ns and ends no earlier than that
//   collective   an MPI_Allreduce ends coll_ns after its last member entered
//   MPI_Init     every rank enters at the same time and leaves init_ns later
//   MPI_Finalize leaves finalize_ns after the last rank entered
//
// The wait states then follow exactly the analysis's definitions (docs/metrics.md): a
// receive's late-sender time is max(0, send enter - receive enter) (the largest per call),
// an Allreduce's wait at NxN is the last member's entry minus the own one, MPI_Finalize waits
// for the last rank to enter it, and the critical path is as long as the run (first MPI_Init
// entry to last MPI_Finalize entry: the analysis runs inside MPI_Finalize).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "synth_trace.h"

namespace critpath::synth {

struct ModelParams {
  int ranks = 16;
  int iterations = 2;
  int planes = 3;                // wavefront: blocks pipelined per sweep
  int tasks_per_worker = 4;      // master: tasks handed out per worker on average
  uint64_t compute_ns = 200000;  // a step's compute (wavefront interior, halo, task base)
  uint64_t border_ns = 320000;   // wavefront: a step's compute in the border columns
  uint64_t slow_ns = 500000;     // halo: the slow rank's extra compute per iteration
  int slow_rank = -1;            // halo: which rank is slow (-1: ranks / 2)
  uint64_t bytes = 8192;         // per message
  uint64_t latency_ns = 2000;
  uint64_t ns_per_kib = 256;  // transfer time per 1024 bytes (4 GB/s)
  uint64_t send_ns = 400;
  uint64_t recv_ns = 300;
  uint64_t coll_ns = 3000;
  uint64_t init_ns = 10000;
  uint64_t finalize_ns = 5000;
};

// Known answers, in ns per world rank.
struct Answers {
  std::string model;
  std::vector<int> grid;        // the process grid's dimensions
  uint64_t begin = 0, end = 0;  // first MPI_Init entry, last MPI_Finalize entry
  std::vector<uint64_t> late_sender, late_receiver, wait_nxn, wait_finalize;
  // Delay costs that follow in closed form (halo: the slow rank's compute causes every other
  // rank's wait at NxN, all short-term); empty where not derived.
  std::vector<uint64_t> delay_nxn_short_term;
  // Every instance (> 0) of the patterns whose median the report gives, in model order.
  std::vector<uint64_t> late_sender_instances, late_receiver_instances, wait_nxn_instances;
};

// The models; each fills `trace` (ranks = p.ranks) and returns the answers.
Answers run_wavefront(const ModelParams& p, SynthTrace& trace);
Answers run_halo(const ModelParams& p, SynthTrace& trace);
Answers run_master(const ModelParams& p, SynthTrace& trace);

// answers.json: the model, grid, run length, the per-rank answers and the medians over all
// instances (`median_s`), in seconds.
std::string answers_json(const Answers& a);

}  // namespace critpath::synth
