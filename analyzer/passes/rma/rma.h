// critpath — analyzer/passes/rma/rma.h
//
// One-sided communication: the MPI RMA wait states of [Hermanns2009] (Hermanns et al., "Scalable
// detection of MPI-2 remote memory access inefficiency patterns") and Scalasca 2.6
// ([Scalasca2.6]; docs/references.md), found in the replay like the others:
//
//   local     epochs from the Timeline's RMA records: fence epochs, PSCW access and exposure
//             epochs, lock / lock_all epochs, per window and partner
//   exchange  one alltoallv of notes (RmaNote): targets tell origins when they posted,
//             origins tell targets when they completed and when their last operation towards
//             them ended (PSCW and fence epochs), and describe their passive-target epochs;
//             a second alltoallv returns the targets' verdicts on those passive epochs
//   window    creation, fences and free are synchronized like collectives over the window's
//   sync      members (engine::sync_window_collectives)
//
// [Hermanns2009] replays the synchronization on windows of its own; critpath sends the same
// timestamps point to point in bulk instead (docs/metrics.md, "One-sided communication"): the
// epochs are matched by their order per (window, origin, target), which MPI defines, so no
// replay step can block, and an illegal epoch sequence shows up as unmatched notes.
//
// The patterns are booked into the wait-state pass's WaitStates (patterns kRma*, and wait
// records with their causes, which the critical path follows).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/engine/exchange.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::passes {

// What one rank tells another about an RMA epoch. `ordinal` names the epoch the same way on
// both sides: the n-th epoch of its kind on `win` between that origin and that target.
struct RmaNote {
  enum Type : uint8_t {
    kPost = 0,        // target -> origin: t[0] = enter(Win_post)
    kComplete = 1,    // origin -> target: t[0] = enter(Win_complete), t[1] = exit of the last
                      //   RMA operation towards the target in the epoch (exit(Win_start) if none)
    kFenceOps = 2,    // origin -> target: fence epoch `ordinal` (operations issued after the
                      //   ordinal-th fence): t[0] = exit, t[1] = enter of the last operation
                      //   towards the target
    kLockEpoch = 3,   // origin -> target: t[0] = enter(lock), t[1], t[2] = enter, exit of the
                      //   epoch's longest call, t[3], t[4] = enter, exit of its unlock (`call`)
    kLockResult = 4,  // target -> origin: t[0] = lock contention, t[1] = the release it waited
                      //   for, t[2] = wait for progress, t[3] = the target's next MPI entry,
                      //   t[4] = that call's index; `cause`, `call` = the previous holder's
                      //   world rank and unlock call
  };
  Type type = kPost;
  uint8_t lock = 0;  // kLockEpoch: 1 exclusive, 2 shared
  uint16_t pad = 0;
  int32_t peer = -1;  // world rank: the destination when sent, the source when received
  uint32_t win = 0;
  uint32_t ordinal = 0;
  int32_t cause = -1;
  uint32_t call = UINT32_MAX;  // the sender's call the note speaks of (index in its Timeline)
  double t[5] = {0, 0, 0, 0, 0};
};
static_assert(sizeof(RmaNote) == 64, "RMA notes travel as 64-byte records");

// One booked RMA wait of a top-level pattern (not the parts Late Complete and Early Fence),
// with what caused it, for the delay analysis: the causing call on the causer, named by its
// index there, or for window collectives by (window, instance number).
struct RmaWait {
  uint32_t call = UINT32_MAX;  // the waiting call
  double amount = 0;
  int32_t causer = -1;       // world rank
  bool window_coll = false;  // cause named by (win, nth) instead of cause_call
  uint32_t cause_call = UINT32_MAX;
  uint32_t win = 0, nth = 0;
  double cause_time = 0;  // when the cause happened (global seconds, the causer's clock)
};

// The RMA search of one rank, in steps, so that unit tests can route the notes themselves:
//   RmaSearch s(...);  notes = s.outgoing();  s.receive(notes addressed to this rank);
//   replies = s.replies();  s.receive_replies(replies addressed to this rank);  s.book(w);
class RmaSearch {
 public:
  // `wsync`: engine::sync_window_collectives' result for t.win_colls; `inconsistent`: its
  // inconsistent windows.
  RmaSearch(const engine::Timeline& t, const std::vector<engine::CollSync>& wsync,
            const std::vector<uint32_t>& inconsistent, const defs::Definitions& definitions, int32_t my_rank);

  const std::vector<RmaNote>& outgoing() const { return out_; }
  void receive(const std::vector<RmaNote>& notes);  // `peer` = the sender
  const std::vector<RmaNote>& replies() const { return replies_; }
  void receive_replies(const std::vector<RmaNote>& notes);
  // Books the patterns (kRma*) and their wait records into `w`.
  void book(WaitStates& w);

  // Bytes per local call-path node: put, get (incl. fetched results), accumulated.
  const std::vector<std::array<double, 3>>& bytes_by_node() const { return bytes_; }
  // Notes for the report: skipped windows and unmatched epochs.
  std::vector<std::string> notes() const;
  uint64_t epochs() const { return epochs_; }
  // After book(): the waits of the top-level patterns, by waiting call.
  std::vector<RmaWait> waits() const;

 private:
  struct Access {  // a PSCW access epoch: Win_start .. Win_complete
    uint32_t win = 0, start = engine::kNoCall, complete = engine::kNoCall;
    std::vector<std::pair<int32_t, uint32_t>> targets;  // (world rank, ordinal)
    std::vector<std::pair<uint32_t, int32_t>> ops;      // (call, target world rank)
  };
  struct Exposure {  // a PSCW exposure epoch: Win_post .. Win_wait / Win_test
    uint32_t win = 0, post = engine::kNoCall, close = engine::kNoCall;
    bool blocking = false;                              // closed by Win_wait
    std::vector<std::pair<int32_t, uint32_t>> origins;  // (world rank, ordinal)
  };
  struct Passive {  // a lock epoch towards one target (lock .. unlock, or in a lock_all epoch)
    uint32_t win = 0, ordinal = 0;
    int32_t target = -1;
    uint8_t lock = 2;
    std::vector<uint32_t> calls;          // the epoch's calls concerning the target, in order
    uint32_t blocking = engine::kNoCall;  // the longest of them (where the epoch waited)
  };
  struct WinState;

  void scan();  // the epochs and outgoing notes, from t_.rma
  // scan()'s steps for the records [i, j) of one call on the window of `s`: transfers, PSCW
  // epochs (start, complete, post, wait / test), passive target (lock .. unlock, flushes).
  void scan_transfers(WinState& s, size_t i, size_t j);
  void scan_pscw(WinState& s, size_t i, size_t j);
  void scan_passive(WinState& s, size_t i);
  // The passive epoch towards `target` open in `s` (created in a lock_all epoch on first use).
  Passive* passive_of(WinState& s, uint32_t win, int32_t target);
  static void add_call(Passive& p, uint32_t call);  // `call` concerns the epoch (once)
  void close_passive(Passive& p);
  // book()'s steps.
  void book_access_epochs();
  void book_exposure_epochs();
  void book_window_collectives();
  void write_wait_states(WaitStates& w) const;
  // Books `v` of `pattern` at `call`, caused by `cause` at `cause_time` through its call
  // `cause_call` (window collectives: through instance `nth` of window `win`).
  void add(int pattern, uint32_t call, double v, int32_t cause, double cause_time,
           uint32_t cause_call = engine::kNoCall, bool window_coll = false, uint32_t win = 0,
           uint32_t nth = 0);

  const engine::Timeline& t_;
  const std::vector<engine::CollSync>& wsync_;
  const defs::Definitions& definitions_;
  int32_t me_;
  std::vector<RmaNote> out_, replies_;
  std::vector<Access> access_;
  std::vector<Exposure> exposure_;
  std::vector<Passive> passive_;
  std::map<std::tuple<uint32_t, int32_t, uint32_t>, size_t> passive_at_;  // (win, target, ordinal)
  std::map<std::pair<uint32_t, uint32_t>, RmaNote> fence_ops_;            // (win, epoch) -> latest op
  std::map<std::tuple<uint32_t, int32_t, uint32_t>, RmaNote> posts_, completes_;
  std::vector<uint32_t> skipped_;           // inconsistent windows
  std::map<uint32_t, uint64_t> unmatched_;  // window -> epochs without their partner's note
  std::vector<std::array<double, 3>> bytes_;
  uint64_t epochs_ = 0;
  // What book() writes: (pattern, call, value, cause rank, cause time).
  struct Booking {
    int pattern;
    uint32_t call;
    double value;
    int32_t cause;
    double cause_time;
    uint32_t cause_call;
    bool window_coll;
    uint32_t win, nth;
  };
  std::vector<Booking> bookings_;
};

struct RmaResult {
  bool any = false;         // whether some rank has one-sided records (all ranks agree)
  uint64_t bytes_sent = 0;  // analysis payload this rank sent
  uint64_t epochs = 0;
  std::vector<std::string> notes;
  std::vector<std::array<double, 3>> bytes_by_node;
  std::vector<RmaWait> waits;  // for the delay analysis
  // The one-sided patterns booked as wait states (per node, statistics, wait records), for
  // the wait-state pass to merge into its result.
  WaitStates one_sided;
};

// The rma pass's result (engine/results.h).
inline constexpr engine::ResultKey<RmaResult> kRma{"rma"};

// Collective over `group` (whose ranks are the world ranks). Books into `w`.
Status compute_rma(const engine::Timeline& t, const std::vector<engine::CollSync>& wsync,
                   const std::vector<uint32_t>& inconsistent, const defs::Definitions& definitions,
                   int32_t my_rank, const engine::Group& group, WaitStates& w, RmaResult& out);

}  // namespace critpath::analyzer::passes
