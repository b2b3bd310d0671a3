// critpath — analyzer/engine/header_lines.h
//
// The engine's summary.txt header lines whose facts a trace may lack: the nodes (an archive of
// another tool may name no host and give no CPU affinity), the clock (an imported archive's
// time stamps were corrected, or not, by its writer) and the replay (a run without messages
// has no per-message figures). A fact the trace does not give is left
// out of its line, or named unknown in words; never printed as 0 or as an empty field.
// Pure formatting, no MPI (tests/unit/analyzer/engine/header_lines_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "analyzer/engine/run_info.h"

namespace critpath::analyzer::engine {

// One host of the run: how many ranks ran there and how many distinct cores their affinity
// masks allow. host "": the trace names none; cores 0: no rank there recorded its mask.
struct NodeCount {
  std::string host;
  int ranks = 0;
  int cores = 0;
};

// "@ Nodes           : 2 nodes: a 4 ranks on 8 cores; b 4 ranks": the named hosts in the
// given order (at most `shown`, then "..."), then the ranks on hosts the trace does not name;
// "unknown (...)" when it names none.
std::string nodes_line(const std::vector<NodeCount>& nodes, size_t shown = 4);

// "@ Clock           : ...": how the ranks' times were put on one base, the correction's
// error bound (unknown for an imported archive: its writer corrected the time stamps) and
// the clock-condition violations.
std::string clock_line(const RunInfo& run, double max_error_s, double p2p_violations,
                       double collective_violations);

// "@ Replay          : ...": the messages matched, the bytes the replay exchanged per message to
// match them and in all (`all_bytes`: collectives, one-sided notes and the delay analysis
// included), the messages left unmatched. Without messages the per-message figures are
// left out (there is nothing to divide by), not printed as 0.
std::string replay_line(double messages, double match_bytes, double all_bytes, double unmatched);

}  // namespace critpath::analyzer::engine
