// critpath — analyzer/session/hosted.h
//
// Several traced ranks analysed by one process, each rank a fiber on a small pool of worker
// threads over hosted analysis ranks (engine/comm.h, engine/fiber.h):
//
//   critpath-analyze   a kept trace re-analysed on fewer processes than the run had ranks: each
//                      process loads its block of ranks (load_location) and runs them
//                      (for_each_location)
//   in situ, hosted    (CRITPATH_ANALYSIS_HOSTED) every rank on one host, many more ranks
//                      than cores: inside MPI_Finalize each rank writes its trace into the
//                      output directory (as CRITPATH_KEEP_TRACE=1 does), rank 0 loads them all
//                      and analyses them as critpath-analyze on one process would, and the
//                      other ranks sleep meanwhile (a file lock: no polling, no MPI). The
//                      analysis is the same run_analysis() and the report the same; what it
//                      saves is the cost of crowding: natively, 256 ranks on 2 cores each run
//                      their own analysis, and every one of its ~100 synchronizing rounds wakes
//                      every process, whose working set the other 255 have evicted.
//
// The hand-off: every rank writes trace/rank-<r>.cptrace and .json, one gather tells rank 0
// that all were written (and what each cost), one broadcast tells the others whether rank 0
// took over (it holds an exclusive lock on <output>/.critpath-hosted.lock until the analysis
// ends; they wait for a shared one). Rank 0 then loads every rank, analyses them, releases the
// lock and removes the trace files unless CRITPATH_KEEP_TRACE kept them. When any rank could
// not write its trace, or rank 0 cannot lock, every rank analyses natively instead (the same
// decision on every rank). The hand-off's CPU time counts in the analysis's (RunInfo::
// handoff_cpu_s: the rank's writing plus rank 0's reading of it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "analyzer/engine/trace_set.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/config/config.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer {

// One kept rank, loaded: the chunk store and definitions its LocationTrace points into.
// `trace` points into the object itself, which therefore never moves (hold it by unique_ptr).
struct LoadedLocation {
  LoadedLocation() = default;
  LoadedLocation(const LoadedLocation&) = delete;
  LoadedLocation& operator=(const LoadedLocation&) = delete;

  trace::ChunkStore chunks;
  defs::Definitions definitions;
  LocationTrace trace;
};

// Loads location `location` of the kept trace in `trace_dir` (<dir>/trace): run facts,
// definitions and notes from rank-<location>.json, chunks from rank-<location>.cptrace.
// `out` must be fresh. On failure `why` says what is wrong (one sentence, no prefix).
Status load_location(const std::string& trace_dir, int location, LoadedLocation& out, std::string& why);

// Runs fn(i) for every location i in [0, n): on this thread when n is 1, else one fiber each
// on `workers` worker threads (0: one per core): they drive their hosted analysis ranks at the
// same time. Each fiber speaks for traced rank first + i in log lines.
void for_each_location(size_t n, int first, int workers, const std::function<void(size_t)>& fn);

// In situ: whether this rank allows its analysis to be hosted (CRITPATH_ANALYSIS_HOSTED, the
// analysis on, a report to write, no stall injected; `auto`: more than 8 ranks per online
// CPU). The session agrees on it over all ranks at MPI_Init (every rank must allow it) and
// hosts only when every rank also runs on one host.
bool hosting_allowed(const config::Config& cfg, int ranks, bool analysis_to_run);

// In situ, at MPI_Finalize, collective over MPI_COMM_WORLD: the hand-off and, on rank 0, the
// hosted analysis of every rank. True when rank 0 analysed (or tried to: its warnings say
// why not); false when the hand-off failed: then every rank analyses natively.
bool analyse_hosted(LocationTrace& location, const config::Config& cfg, uint64_t wall0);

}  // namespace critpath::analyzer
