// critpath — analyzer/passes/whatif/whatif.h
//
// What would fixing it buy? A trace-based simulator ([Böhme2010] §VI; docs/metrics.md "What-if
// simulation" defines the model): the run is replayed with modified computation times and
// every timestamp is recomputed from the recorded dependencies, for several hypotheses at
// once, each one a *lane* of the replay:
//
//   lane 0        identity: nothing modified (the model's quality check: it must reproduce
//                 the measured span and waiting time)
//   lane 1        ideal network: every MPI call costs nothing but its waiting (POP's
//                 serialisation efficiency, which others need Dimemas for)
//   lanes 2..     balance / zero / scale a call path's computation; slack (zero it only where
//                 it lies on the critical path: [Hollingsworth1994]'s lower bound)
//
// The model, per rank and lane, over the MPI calls of the main thread in call order:
//
//   enter'(k) = exit'(k-1) + gap(k) modified      gap: the computation between two calls,
//                                                 per call path (Timeline::gaps)
//   ready'(k) = max over what call k completes of the sim time it depends on:
//                 a receive            the matching send's enter'
//                 N x N, barrier       the latest member's enter' (a scan: of members 0..me)
//                 1 -> N (non-root)    the root's enter'
//                 N -> 1 (root)        the latest member's enter'
//                                      (a collective only where the call waited for it in
//                                      the run by engine::coll_ready, else nothing)
//                 a one-sided wait     its cause's enter' or exit' (the RMA pass's
//                                      RmaWait: the post, the complete, the unlock, ...)
//   exit'(k)  = max(enter'(k), ready'(k)) + c(k),  c(k) = exit(k) - max(enter(k), ready(k))
//               (a call that did not wait in the run: max(enter' + c, ready' + L), L the
//               latency its rank's waited-for dependencies show)
//
// c(k) is what the call cost beyond waiting in the measured run (transfer, overhead), taken
// from the run itself; the ideal network sets it (and L) to 0. What the model leaves out keeps its
// measured duration (docs/metrics.md lists it: late receivers, PSCW and lock epochs, ...).
//
// Each rank compiles its calls into a replay program (whatif.cpp); the programs run in groups
// of consecutive ranks (ReplayMode), each group's on its first rank as one discrete-event
// simulation that switches to another member wherever one waits for a time not told yet; the
// groups run at once, following the run's own dependencies: a group sends the sim times
// another will need as soon as it knows them (batched per group, flushed before it blocks) and
// blocks only where the run itself completed a dependency across groups. This cannot deadlock
// on a correct MPI program; a deadline bounds it on any other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/passes/critical_path/critical_path.h"
#include "analyzer/passes/rma/rma.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::passes {

// Lanes per replay: identity, ideal network and up to 63 hypotheses (a replay message names
// the lanes that differ from lane 0 in a 64-bit mask).
constexpr size_t kMaxLanes = 65;

enum class LaneKind : uint8_t {
  kIdentity = 0,
  kIdealNetwork = 1,
  kBalance = 2,  // each rank's time in the call paths set to the mean over the ranks with any
  kZero = 3,     // logical zeroing ([Hollingsworth1994])
  kScale = 4,    // times factor
  kSlack = 5,    // zeroed where on the critical path ([Hollingsworth1994] slack: lower bound)
};

// One lane of the replay.
struct Hypothesis {
  LaneKind kind = LaneKind::kIdentity;
  double factor = 1;           // kScale
  std::string spec;            // as written: "balance:solve", or generated "zero:main/foo"
  std::string callpath;        // what it acts on, for the report
  bool automatic = false;      // chosen by the analysis (CRITPATH_WHATIF_TOP)
  int target = -1;             // automatic: the global call path it was chosen for
  std::vector<int> callpaths;  // global call paths whose computation it changes
};

// Parses CRITPATH_WHATIF ("balance:solve;scale:0.5:exchange;zero:io"); the call-path names
// stay unresolved (Hypothesis::callpath). Returns false with `error` on the first bad item.
bool parse_whatif(const std::string& text, std::vector<Hypothesis>& out, std::string& error);

// Every rank's lanes, in one byte string (rank 0 decides, every rank replays).
std::vector<unsigned char> encode_lanes(const std::vector<Hypothesis>& lanes);
bool decode_lanes(const std::vector<unsigned char>& bytes, std::vector<Hypothesis>& lanes);

// Where the replay runs (CRITPATH_DEBUG_SIMULATION_REPLAY): in groups of consecutive ranks,
// each group's programs gathered on its first rank and run there as one sequential
// discrete-event simulation, the groups exchanging sim times as the run exchanged messages (a
// message latency per dependency that crosses groups). kAuto: as many ranks per group as 1 MiB
// of programs, at least 4 (a run of up to 4 ranks is one group: rank 0) and at most 64;
// kDistributed: groups of one rank, every rank its own part; kGathered: one group of every
// rank, on rank 0. The same figures either way.
enum class ReplayMode : uint8_t { kAuto = 0, kDistributed, kGathered };

struct WhatIfInput {
  const engine::Timeline* timeline = nullptr;
  const engine::P2pMatch* match = nullptr;
  const std::vector<engine::CollSync>* csync = nullptr;  // aligned with Timeline::colls
  const std::vector<engine::CollSync>* wsync = nullptr;  // aligned with Timeline::win_colls
  const defs::Definitions* definitions = nullptr;
  const std::vector<int>* local_to_global = nullptr;
  const std::vector<CpSegment>* cp_segments = nullptr;  // this rank's (slack lanes), or none
  const std::vector<RmaWait>* rma_waits = nullptr;      // the one-sided waits (RmaResult), or none
  double first_init_enter = 0;                          // run-wide, the span's start
  double earliest_init_exit = 0;                        // run-wide, POP's window start
  double timeout_s = 60;                                // the replay gives up after this
  bool budgeted = false;        // the timeout is CRITPATH_SIMULATION_BUDGET's (the note says so)
  uint32_t debug_delay_us = 0;  // CRITPATH_DEBUG_SIMULATION_DELAY: sleep at every dependency
  ReplayMode replay = ReplayMode::kAuto;
};

// Reduced over the ranks: complete on the root (a gathered replay fills it there only).
struct WhatIfResult {
  bool ok = false;
  bool gathered = false;         // replayed on the root: one group of every rank (ReplayMode)
  int group_ranks = 1;           // ranks per replay group
  std::string failure;           // why not, when !ok
  bool over_budget = false;      // gave up at the deadline
  std::vector<double> span;      // per lane: last MPI_Finalize entry' - first MPI_Init entry
  std::vector<double> wait;      // per lane: waiting time summed over ranks
  std::vector<double> pop_span;  // per lane: last MPI_Finalize entry' - earliest MPI_Init exit
  double measured_span = 0, measured_wait = 0, measured_pop_span = 0;
  double useful_sum = 0, useful_max = 0;  // computation outside MPI in POP's window
  int ranks = 0;
  uint64_t messages = 0;    // dependencies: sim-time entries told
  uint64_t bytes_sent = 0;  // the programs gathered (the leaders' own too) and the entries between groups
  uint64_t clamped = 0;     // calls that ended before what they waited for (clock errors)
  double seconds = 0;       // the replay's time on the slowest rank
};

// Collective over `group`.
Status simulate(const WhatIfInput& in, const std::vector<Hypothesis>& lanes, const engine::Group& group,
                WhatIfResult& out);

}  // namespace critpath::analyzer::passes
