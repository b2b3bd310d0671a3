// critpath — analyzer/passes/critical_path/critical_path.h
//
// The critical path ([Böhme2012] §II-A, §III-B; docs/metrics.md "Critical path"): the longest
// path through the run that contains no wait state, from the first MPI_Init entry to the
// last MPI_Finalize entry. After the forward exchange every rank already knows, for each of
// its waiting calls, what ended the wait (wait_states.h WaitRecord), so the path is found
// backward over those records alone instead of replaying whole traces:
//
//   owner at time T   --> its latest waiting call entered before T: [wait end, T] is on
//                         the path (the wait itself is not)
//                     --> the path continues on the rank that caused the wait, at the
//                         cause's event, and so on
//   no waiting call   --> the path began here: [first MPI_Init entry, T]
//   before T
//
// It starts on the rank that entered MPI_Finalize last, at that entry. MPI_Init counts as a
// barrier (a rank that entered it early waited for the last one), so the path always ends on
// the rank that entered MPI_Init last and covers the launch skew before that entry too. The
// segments tile [first MPI_Init entry, last MPI_Finalize entry] without gap or overlap: the
// path's length is the measured span by construction.
//
// The walk itself is the engine's (analyzer/engine/path_walk.h, the only part that talks to
// MPI): by pointer jumping over every rank's hop records in O(log hops) bulk rounds (or, on
// request, on rank 0 after a gather: CpWalkMode). It always ends, also on inconsistent traces
// (then it is marked partial).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/engine/group.h"
#include "analyzer/engine/path_walk.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/results.h"
#include "analyzer/engine/run_info.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::passes {

// Run-wide facts the walk needs, reduced over the world (global seconds).
struct RunBounds {
  double first_init_enter = 0;
  double first_init_exit = 0;
  double last_init_enter = 0;
  int last_init_rank = 0;
  double last_finalize_enter = 0;
  int last_finalize_rank = 0;
  uint64_t max_hops = 0;  // bound on the gather method's walk: all ranks' waiting calls + ranks + 2
};

// A stretch of the critical path on this rank, [begin, end] in global seconds.
struct CpSegment {
  double begin = 0;
  double end = 0;
  int32_t node = -1;  // local call-path node holding most of the segment's time (set by the clip)
};

struct CpWalk {
  std::vector<CpSegment> segments;  // this rank's, ascending, non-overlapping
  uint64_t hops = 0;                // ownership transfers along the whole path (every rank)
  bool partial = false;             // a cycle (inconsistent trace) or a failed message cut it
  bool gathered = false;            // walked on rank 0 (CpWalkMode::kGather), else jumped
  uint32_t levels = 0;              // pointer-doubling levels (jump)
  uint32_t rounds = 0;              // collective rounds of the walk
  uint64_t bytes_sent = 0;          // walk payload this rank sent
};

// How the walk moves along the path (CRITPATH_DEBUG_CP_WALK):
//   kJump    pointer jumping over all ranks' hop records: ~log2(records) alltoallv rounds,
//            32 B per record per level (engine/path_walk.h)
//   kGather  every rank's hop records (32 B per waiting call with a remote cause) go to
//            rank 0, which walks them and scatters the segments: five collectives, all
//            records in rank 0's memory (the reference, on request only)
//   kAuto    kJump, at every size: nothing converges on rank 0
// All give the same path. CRITPATH_DEBUG_CP_WALK=token, the old name of jump, still selects kJump.
enum class CpWalkMode : uint8_t { kAuto = 0, kJump = 1, kGather = 2 };

// CRITPATH_DEBUG_CP_WALK's word -> mode ("token" = "jump"; anything else: kAuto).
CpWalkMode cp_walk_mode(std::string_view word);

// The wait records the walk follows: `ws.records` plus MPI_Init's wait for the last rank to
// enter it ([enter, last_init_enter], caused by last_init_rank), ascending by call. Read in
// place: MPI_Init's record (put in, or changed) is the only one held apart.
struct CpRecords {
  const std::vector<WaitRecord>* base = nullptr;
  WaitRecord init;        // MPI_Init's record, when has_init
  size_t at = 0;          // its place among base's
  bool has_init = false;  // MPI_Init's record is at `at`
  bool replaces = false;  // in place of base[at] (MPI_Init's own wait record)

  size_t size() const { return base->size() + (has_init && !replaces ? 1 : 0); }
  // f(record) for every record, ascending by call.
  template <typename F>
  void for_each(F&& f) const {
    const auto no_room = [] {};
    for_each_block(SIZE_MAX, no_room, f);
  }
  // for_each(f) in blocks of at most `block` records, room() before each block (out of the
  // records' loop: a call there, as a vector's growth, made GCC keep the loop's values in memory).
  template <typename R, typename F>
  void for_each_block(size_t block, R&& room, F&& f) const {
    const std::vector<WaitRecord>& v = *base;
    auto run = [&](size_t i, size_t e) __attribute__((always_inline)) {
      while (i < e) {
        const size_t stop = e - i > block ? i + block : e;
        room();
        for (; i < stop; ++i) f(v[i]);
      }
    };
    if (!has_init) return run(0, v.size());
    run(0, at);
    room();
    f(init);
    run(replaces ? at + 1 : at, v.size());
  }
};
CpRecords cp_records(const engine::Timeline& t, const WaitStates& ws, const RunBounds& b);

// Collective over `group` (the engine walks on its communicator). `records` from cp_records().
Status walk_critical_path(const engine::Timeline& t, const CpRecords& records, const RunBounds& b,
                          const engine::Group& group, CpWalkMode mode, CpWalk& out);

// Local: clips this rank's exclusive time per call-path node to its segments, from the
// timeline's gap profile (TimelineBuilder::profile_gaps): the time between MPI calls per node,
// spread evenly over each gap (segments begin and end at MPI calls, so a gap is split only at
// the path's two ends). Returns CP seconds per local node (size `nodes`) and sets each
// segment's dominant node. Time before the rank's first event goes to `init_node`.
std::vector<double> clip_by_gaps(const engine::Timeline& t, std::vector<CpSegment>& segments, size_t nodes,
                                 int32_t init_node);

// Local: the intervals during which this rank does non-waiting work: its measured span
// [init_enter, finalize_enter] minus every waiting interval of `records`. Ascending. With
// `wait_node`, in the same pass over the records (one pass less over them and their calls),
// adds each record's waiting seconds (before wait_end and after completion_begin) to its
// call's node, where wait_node has room for it.
std::vector<std::pair<double, double>> busy_intervals(const engine::Timeline& t, const CpRecords& records,
                                                      double init_enter, double finalize_enter,
                                                      std::vector<double>* wait_node = nullptr);

// The window-by-window analysis (critical_path_window.cpp) and its report
// (critical_path_report.cpp) share these bounds.
constexpr size_t kMaxSegments = 10000;       // segments kept for report.json (longest first)
constexpr uint64_t kExactIntervals = 65536;  // busy intervals (all ranks) merged exactly
constexpr int kBins = 4096;                  // otherwise: bins over the span

// One rank's walk, clip and busy time: of the whole run, or added window by window
// (engine/window.h; each window is cut at a clean, synchronizing MPI_COMM_WORLD collective
// C_k, through whose last arrival (L_k, T_k) the path of a consistent trace always passes, so
// the path of window k runs from (L_k, T_k) back to T_{k-1}). What analyze_critical_path
// reports from.
struct CpLocal {
  RunBounds b;                     // the run's (set by the first window)
  double my_init = 0, my_fin = 0;  // this rank's MPI_Init / MPI_Finalize entries
  double t0 = 0, t1 = 0;           // the application phase: first MPI_Init exit, last MPI_Finalize entry
  CpWalk walk;                     // hops, partial, method, levels (max), rounds, bytes (sums); segments:
                                   // all (whole run) or the longest (window by window)
  double walk_s = 0;               // walk time (sum over windows)
  double analysis_s = 0;           // critical_path_window's time (sum over windows)
  uint64_t segments = 0;           // this rank's segments in all
  double seg_len = 0;              // their length
  std::vector<double> cp_node;     // CP seconds per local call-path node
  std::vector<double> wait_node;   // waiting seconds per local node (the walk's records)
  double busy = 0, busy_span = 0;  // non-waiting work: in the application phase, in the span
  // Rank 0: the parallelism histogram, fraction × window length per k, and that length.
  std::vector<double> histogram;
  double hist_len = 0;
  bool hist_exact = true;
  // Between windows.
  int windows = 0;
  double prev_cut_time = 0;  // T_{k-1}
  int prev_cut_rank = -1;    // L_{k-1}
  double prev_exit = 0;      // this rank's exit of C_{k-1}
  int32_t prev_node = -1;    // C_{k-1}'s call-path node on this rank
  uint64_t hop_adjust = 0;   // hops at the cuts (the path's owner after C_{k-1} was not L_{k-1})
  std::vector<std::pair<double, double>> carry;  // busy intervals reaching past T_{k-1}
};

// The window's place in the run and what the walk of a window needs.
struct CpWindowInput {
  const RunInfo* run = nullptr;
  const engine::Timeline* timeline = nullptr;  // the window's (or the whole run's)
  const WaitStates* waits = nullptr;           // its records are the window's
  size_t nodes = 0;                            // local call-path nodes known so far
  std::function<double(uint64_t)> to_global;
  CpWalkMode walk_mode = CpWalkMode::kAuto;
  bool first = true, last = true;  // the whole run: both
  double cut_time = 0;             // not last: T_k, the cut's latest entry
  int cut_rank = -1;               // and L_k, whose entry it is
};

// Collective over `group`: the window's walk, clip, busy time and parallelism, added to `acc`.
Status critical_path_window(const CpWindowInput& in, const engine::Group& group, CpLocal& acc);

// The critical-path pass's result (engine/results.h): this rank's path segments (all of
// them when the run was analysed whole), published by its reduce().
inline constexpr engine::ResultKey<std::vector<CpSegment>> kCriticalPath{"critical_path"};

}  // namespace critpath::analyzer::passes
