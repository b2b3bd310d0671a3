// critpath — analyzer/engine/run_info.h
//
// Facts about this run that the analysis and the reports need: who we are, where output
// goes, which clock ticked, and when the run began and ended in that clock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/engine/clock_sync.h"
#include "libtrace/clock/clock.h"
#include "libtrace/runtime/recorder_control.h"

namespace critpath::analyzer {

struct RunInfo {
  int rank = 0;
  int size = 1;
  int thread_level = 0;
  int appnum = 0;                 // MPI_APPNUM (which command of an MPMD launch); 0 when unset
  std::string executable;         // basename of /proc/self/exe
  std::vector<std::string> args;  // argv[1..] from /proc/self/cmdline
  std::string output_dir;         // agreed by all ranks at MPI_Init
  std::string start_utc;          // ISO 8601, rank 0's clock at MPI_Init
  std::string mpi_library;        // first line of MPI_Get_library_version
  std::string timer_why;          // how the timer was chosen
  clock::TimerKind timer = clock::TimerKind::kTsc;
  clock::ClockPair begin;     // at MPI_Init
  clock::ClockPair end;       // at MPI_Finalize
  clock::TickConverter conv;  // ticks -> ns, fitted on begin/end
  uint64_t init_enter_ticks = 0;
  uint64_t finalize_enter_ticks = 0;
  double analysis_seconds = 0;      // set as the analysis proceeds
  ClockSkew skew;                   // injected distortion (CRITPATH_DEBUG_CLOCK_SKEW), tests only
  bool clock_linear = true;         // CRITPATH_CLOCK_CORRECTION=linear
  OffsetSample init_offset;         // offset to rank 0 measured at MPI_Init
  bool same_host_as_root = false;   // shares rank 0's CLOCK_MONOTONIC (and no skew injected)
  bool all_on_one_host = false;     // every rank does: no offsets needed at all
  std::string host;                 // gethostname at MPI_Init
  std::vector<int> cpus;            // the CPUs this rank may run on (sched_getaffinity)
  OffsetSample fin_offset;          // offset to rank 0 measured at MPI_Finalize
  runtime::RecorderStats recorder;  // cold-path and compression costs of the run
  trace::ChunkStoreStats store;     // the trace as recorded (sizes, spilling)
  bool offline = false;             // re-analysis of a kept trace (critpath-analyze)
  // In situ, analysed hosted (analyzer/session/hosted.h): the ranks the one process analysing
  // them all ran as fibers, on how many worker threads; 0: natively, one analysis per rank.
  int hosted_ranks = 0;
  int hosted_workers = 0;
  // CPU seconds the hand-off cost this rank when hosted: writing its trace for the analysing
  // process, and that process reading it back. Counted in the analysis's CPU time.
  double handoff_cpu_s = 0;
  // The format of another tool's trace this run was imported from ("OTF2 archive"); empty:
  // recorded by critpath. An import knows no recording costs and no clock error bound.
  std::string imported_from;
  // An imported OTF2 archive's region names it held mangled, by their display (demangled)
  // names: report.json's call paths give both (analyzer/otf2/otf2_import.h).
  std::map<std::string, std::string> mangled_names;
  // A partial trace, written at a fault (analyzer/session/fault.h): how the rank ended
  // ("SIGSEGV", "exit(3) without MPI_Finalize", "MPI_Abort(errorcode 3)"); empty: complete.
  std::string partial;
  uint64_t partial_end_ticks = 0;  // when (the `end` clock sample, taken at the fault)
  bool partial_complete = true;    // false: the dump had to leave something out
};

}  // namespace critpath::analyzer
