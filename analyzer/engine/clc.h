// critpath — analyzer/engine/clc.h
//
// The controlled logical clock (CRITPATH_CLOCK_CORRECTION=clc; Becker et al. 2009, as
// Scalasca's --time-correct): after the linear correction, clock-condition violations that
// remain (a receive completing before its send began, a collective ending before its latest
// participant began) are removed by forward amortization over each rank's MPI call times:
//
//   internal event:  L = max(L_prev + γ·(t − t_prev), t)
//   receive:         L = max(L, L_send + l_min)          (l_min = 1 µs)
//   collective exit: L = max(L, L_latest_begin + l_min)   (the participants it waits for)
//
// A corrected receive shifts the rank's later events, decaying with γ < 1, so nothing after
// it runs backward. Shifted sends change other ranks' constraints, so the passes repeat —
// each with a fresh bulk exchange — until no rank has a violation left (at most 8 passes;
// γ = 0.99999, 0.9999, 0.999, then ×0.9 per pass). Backward amortization (smoothing the
// jump before a corrected receive) is not done: events before a corrected receive keep
// their times. Only the replay index's MPI call times change; profile durations do not.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/timeline.h"

namespace critpath::analyzer::engine {

struct ClcStats {
  int passes = 0;
  uint64_t violations_before = 0;  // this rank's violations before the first pass
  uint64_t corrected = 0;          // call times this rank moved
  double max_shift_s = 0;
  bool converged = true;
};

// Counts this rank's clock-condition violations (with l_min) under `m` and `cs`.
uint64_t count_violations(const Timeline& t, const P2pMatch& m, const std::vector<CollSync>& cs);

// Collective over `world`. On return `m` and `cs` describe the corrected timeline.
// `definitions`: the traced rank's, for sync_collectives.
Status apply_clc(Timeline& t, const defs::Definitions& definitions, const Comm& world, P2pMatch& m,
                 std::vector<CollSync>& cs, CollExchangeStats& cstats, ClcStats& out);

}  // namespace critpath::analyzer::engine
