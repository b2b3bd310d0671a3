// critpath — analyzer/session/analysis_guard.h
//
// CRITPATH_ANALYSIS_TIMEOUT around an analysis (in situ at MPI_Finalize, or critpath-analyze):
//
//   start_guarded_analysis()  the deadline armed, the analysis communicator created under it,
//                             the deadline re-armed from there (the same moment on every rank:
//                             the creation is collective), CRITPATH_DEBUG_ANALYSIS_STALL applied
//   run_analysis(...)
//   end_guarded_analysis()    `critpath: analysis incomplete: ...` on rank 0 when the deadline
//                             passed; the watchdog disarmed
//
// engine/watchdog.h says how the deadline makes the analysis give up.
//
// The guard also sets the process's malloc policy for the analysis's duration: it allocates
// and frees large vectors pass after pass, and glibc by default hands every block above
// 128 KiB back to the kernel (munmap, heap trim), so each pass pays fresh page faults and the
// kernel's page clearing again (a third of rank 0's CPU time on the 4-rank chain benchmark).
// Between start and end, blocks up to 32 MiB come from the heap and freed memory stays there
// for the next pass; end_guarded_analysis() restores glibc's defaults and trims the heap, so
// the application gets its memory back before MPI_Finalize returns. Larger blocks are still
// mapped on their own: taking them from the heap too (M_MMAP_MAX 0) saved the 4-rank chain
// benchmark 12 % of its page faults after decode but grew rank 0's peak by 14 % (a freed block
// the next request does not fit stays resident in the heap). What faults in after decode is
// the growth of what the analysis holds at once (scalars.analysis_faults_phases).
#pragma once

#include <mpi.h>

#include <vector>

#include "analyzer/engine/comm.h"
#include "libtrace/config/config.h"

namespace critpath::analyzer {

// Native mode: `ranks` over a duplicate of `world`, one analysis rank per process. `rank`: the
// traced rank (for the stall).
Status start_guarded_analysis(MPI_Comm world, engine::Comm& ranks, const config::Config& cfg, int rank);
// Hosted mode (critpath-analyze on fewer processes than traced ranks): `locations` ranks.
// `first`, `count`: the traced ranks this process hosts.
Status start_guarded_analysis(MPI_Comm procs, int locations, std::vector<engine::Comm>& ranks,
                              const config::Config& cfg, int first, int count);
// `rank`: the traced rank speaking for the run (0 prints).
void end_guarded_analysis(const config::Config& cfg, int rank);

}  // namespace critpath::analyzer
