// critpath — analyzer/engine/window.h
//
// Phase-by-phase analysis: the run cut into windows at global synchronizations, so that the
// analysis holds one window's replay index at a time, not the whole run's.
//
//   scan_windows   one extra decode of the rank's trace (no replay index): where its
//                  collectives over all ranks end, and whether anything is in flight there
//   plan_windows   the ranks agree on the cuts (three elementwise reductions over the
//                  candidates): a cut is a world barrier or N x N collective that moved data
//                  on every rank, after which, on every rank, no nonblocking request is
//                  pending and every message sent has been received (over all ranks,
//                  messages sent == messages received up to the cut)
//   analysis.cpp   decodes again; at each cut the replay index built so far is exchanged and
//                  analysed as a window (TimelineBuilder::take_window), then dropped
//
// Why such a cut is exact: every record of a window has its partner in the same window — the
// other end of each message, every member's instance of each collective (all members call
// them in the same order relative to the world collective) — so matching, collective
// synchronization and the wait-state patterns give what the whole run gives, window by window.
// A message crossing a cut (an eager send before a barrier, received after it) makes the
// counts differ there, and that candidate is not used. And every rank waits at the cut for
// its last arrival L_k (at T_k): the critical path of a consistent trace passes through
// (L_k, T_k), so the path of a window runs from its cut's last arrival back to the previous
// one's (passes/critical_path).
//
// A trace is not windowed (the analysis runs on the whole run) when it has one-sided
// communication (epochs span synchronizations), when a thread other than the main one called
// MPI, or when the ranks recorded different numbers of world collectives.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "libtrace/buffer/chunk_store.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

class Group;

// One rank's cut candidates: per blocking barrier or N x N collective of location 0 on a
// communicator that spans every rank (CandidateTracker), in call order (candidate k is the
// k-th), at the exit of the MPI call that holds it.
struct WindowScan {
  std::vector<uint64_t> at;  // location 0's events up to and including that exit
  // 1: a nonblocking request (send, receive, collective) pending, or the collective moved no
  // data into or out of this rank (an N x N collective then need not synchronize)
  std::vector<uint8_t> busy;
  std::vector<int64_t> net;  // messages this rank sent minus those it received, up to there
  uint64_t events = 0;       // location 0's events in all
  uint64_t mpi_calls = 0;    // MPI calls of location 0 (the analysis's memory estimate)
  // Why this rank's trace cannot be cut (a static string), or nullptr.
  const char* ineligible = nullptr;
  Status status = Status::kOk;  // the decode's
};

// Whether a communicator spans every rank: MPI_COMM_WORLD, or any communicator whose group is
// all `world_size` ranks (a library's MPI_Comm_dup(MPI_COMM_WORLD), a split that kept
// everyone): every rank calls its collectives. Looked up once per communicator.
class WorldComms {
 public:
  WorldComms(const defs::Definitions& definitions, int world_size) : defs_(definitions), size_(world_size) {}
  bool spans_world(uint32_t comm);

 private:
  const defs::Definitions& defs_;
  int size_;
  std::unordered_map<uint32_t, bool> known_;
};

// The cut candidates in location 0's events, counted by one rule that the scan and the
// analysis that cuts both follow (so their candidate k is the same collective): a COLL_END
// of a barrier or an N x N collective on a communicator that spans every rank (the
// collectives every member waits at for the last one to arrive, through whose last arrival
// the critical path passes), inside an open MPI call; the candidate is complete at the EXIT
// that closes the last open MPI call. The open calls are kept as TimelineBuilder keeps them.
class CandidateTracker {
 public:
  CandidateTracker(const defs::Definitions& definitions, int world_size)
      : defs_(definitions), world_(definitions, world_size) {}
  // True at the EXIT that completes candidate completed() - 1.
  bool on_event(const trace::Event& e);
  uint64_t completed() const { return completed_; }
  // Whether the last completed candidate synchronized on this rank: a barrier, or data both
  // sent and received (an N x N collective that moved none need not).
  bool synchronized() const { return syncs_; }
  uint64_t mpi_calls() const { return mpi_calls_; }
  bool is_mpi(uint32_t region);

 private:
  const defs::Definitions& defs_;
  WorldComms world_;
  std::vector<uint8_t> mpi_flat_;  // region -> 0 unknown, 1 not MPI, 2 MPI
  std::vector<uint32_t> open_;     // open MPI calls (regions)
  uint64_t completed_ = 0, mpi_calls_ = 0;
  bool pending_ = false, syncs_ = false;
};

// The scan, event by event: fed every location's events in order (begin_location() before
// each location's), as a decode that also builds the call-path profile sees them.
class WindowScanner {
 public:
  WindowScanner(const defs::Definitions& definitions, int world_size) : tracker_(definitions, world_size) {}
  void begin_location(uint16_t location) { location_ = location; }
  void on_event(const trace::Event& e);
  // The decode's status; then the scan is complete.
  WindowScan finish(Status decode);

 private:
  CandidateTracker tracker_;  // location 0's
  WindowScan out_;
  uint16_t location_ = 0;
  std::unordered_set<uint64_t> pending_;  // nonblocking requests posted, not yet completed
  int64_t net_ = 0;
};

// Decodes every location of `store` once (WindowScanner over a TraceReader).
WindowScan scan_windows(const trace::ChunkStore& store, const defs::Definitions& definitions, int world_size);

// The cuts from the candidates as every rank sees them: span[k] the most events any rank has
// between candidate k - 1 and k (k = 0: from the start), ok[k] whether candidate k is a valid
// cut on every rank. Greedy: a window ends at the first valid candidate at which it holds at
// least `target` events. Returns the candidates' indices, ascending.
std::vector<uint64_t> choose_cuts(const std::vector<double>& span, const std::vector<uint8_t>& ok,
                                  double target);

struct WindowPlan {
  std::vector<uint64_t> cuts;  // candidate indices after which a window ends, ascending
  uint64_t candidates = 0;     // world collectives (the same on every rank)
  double largest_window = 0;   // events: the most a window holds on any rank (bounded above)
  std::string why_not;         // when cuts is empty: why (for the note)
};

// Collective over `group`. At most 2^20 candidates are considered (every s-th beyond that).
Status plan_windows(const WindowScan& mine, const Group& group, double target_events, WindowPlan& out);

}  // namespace critpath::analyzer::engine
