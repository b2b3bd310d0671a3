// critpath — analyzer/engine/path_walk.h
//
// The distributed backward walk along the critical path ([Böhme2012] §III-B; docs/metrics.md
// "The path"), over compact hop records: per rank, its waiting calls whose wait another rank
// caused (HopRec, ascending by enter).
//
// One step of the walk, at time T on the path's owner o:
//   r = o's latest hop record with r.enter < T
//   none        --> the path began here: segment [first, T] on o, the walk ends
//   otherwise   --> we = min(r.wait_end, T); segment [we, T] on o (if not empty); the path
//                   continues on r.cause_rank at min(r.cause_time, we)  (one hop)
//
// Whenever T >= r.wait_end (always on a consistent trace: T is the enter of a later call), the
// continuation depends on r alone: next_time(r) = min(cause_time, wait_end). So every record
// has one successor, succ(r) = the record found on cause_rank at next_time(r) (or the path's
// beginning there), and the path is the chain start -> succ -> succ ... The walk here does
// not move along it hop by hop (a message latency per hop) but in bulk rounds of
// sparse all-to-alls, each rank handling all its records at once:
//
//   1. succ: every record (and the start) asks cause_rank "your latest record before t?"
//      (8 B request; 16 B reply, 24 with 64-bit ids, naming the found record, its cause rank
//      and its next time: a successor's successor on the asking rank is found there without a
//      round, the list path's returns after two hops). An arrival inside the found record's
//      wait (t < wait_end, an inconsistent trace) is passed on as today's walk passes it (an
//      empty segment, one hop) by asking again, at most kPassRounds rounds.
//   2. pointer doubling: J_0 = succ, J_k = J_{k-1} ∘ J_{k-1}, until every J_k is the end
//      (K <= ceil(log2(N + 2)), N = all ranks' hop records, so fewer levels when every chain
//      is short). Pushed: the rank of y = J_k(x) holds the pair (y, x) and sends J_{k+1}(x)
//      to x's rank and the pair (J_{k+1}(x), x) to that record's rank, one round per level
//      (2 × 16 B per record, 24 with 64-bit ids) after one round placing the level-0 pairs.
//   3. marking, top-down: x marked at level k also marks J_{k-1}(x), and J_{k-2}(x) and
//      J_{k-2}(J_{k-1}(x)) (step 2's successor messages carry the latter): one round per two levels, an
//      allgather (one collective: PathExchange::allgather) while at most 2^8 records of all
//      ranks ask, else a sparse all-to-all.
//   4. each marked record r yields the segment on the rank succ(r) lies on,
//      [wait_end(succ(r)) or first, arrival], the start one more: one round delivers them
//      (16 B each: the arrival and succ(r), whose wait end its rank reads). A marked record
//      that is no two items' successor has its one predecessor on the path too: its rank
//      makes the segment from the arrival it answered in step 1, and the round carries the
//      chains' ends and the merges' segments alone (step 1's replies flag a merge to its
//      predecessors; where arrivals were passed on, later rounds flag nothing, and with
//      merges every segment travels).
// The list path (ListPath; path_walk.cpp "The list path") replaces steps 2 and 3 where it pays
// (many records, few merges): each record's token follows its chain, one hop per round, to its
// first return to its own rank (no token where step 1's reply showed it back after two hops); those returns make each rank's records local runs, resolved
// in one pass, and only the runs whose token stopped jump. Without merges each record's chain
// end and hops mark the path; with merges the marking floods from the start along returns
// (local) and successors (a round each), while every token came back. Rounds: 2 per token
// hop and per flood hop, + 8 (a 2-rank ping-pong: 13, against about 2.5 log2(records) + 7);
// work O(records × hops to return). Where it cannot decide (a cycle, tokens stopped in a
// forest) steps 2 and 3 run as below.
// A chain still unended after 2^K steps is a cycle (an inconsistent trace): the walk is
// partial, the path is cut at its earliest point (the rest back to `first` stays there),
// never a hang.
//
// Cost per rank: K + 4 rounds of sparse all-to-alls (each rank sends to and hears from the
// ranks its records name, nothing sized by the number of ranks: Comm::exchange), K / 2 (rounded
// up) of the marking's small allgathers (or all-to-alls), and K + 3 allreduces (the doubling's first
// count comes with the successors'), 2 × 16 B per local record per doubling level (24 B when a
// record's global id, its rank and local index, needs more than 32 bits). Memory: K levels × 4 (8) B per hop record (the J_k, kept for the
// marking) plus ~40 B per record of state and buffers, on every rank alike: no rank holds
// more than its own records. It is the default at every size. The gather method (all
// records on rank 0, 32 B each, a sequential walk there: 5 collectives) remains on request
// (CRITPATH_DEBUG_CP_WALK=gather), as the reference.
//
// Results are the sequential walk's (walk_serial, the reference) whenever that walk is not
// cut by its hop bound: same segments, same hop count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/engine/comm.h"
#include "analyzer/engine/grouping.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {

// A waiting call at which the path may leave its rank: its wait [enter, wait_end] ended at
// cause_time, an event of cause_rank (another rank of the walk's communicator).
struct HopRec {
  double enter = 0;
  double wait_end = 0;
  double cause_time = 0;
  int32_t cause_rank = -1;
  int32_t pad = 0;
};
static_assert(sizeof(HopRec) == 32, "hop records are 32 bytes");

// Where the walk starts and where any path began at the latest (global seconds).
struct PathStart {
  int rank = 0;           // the owner of the path's end (the rank that entered MPI_Finalize last)
  double time = 0;        // the path's end (its MPI_Finalize entry)
  double first = 0;       // the first MPI_Init entry: a path without further hops begins here
  uint64_t max_hops = 0;  // walk_serial's bound (all ranks' records + ranks + 2)
};

struct PathSegment {
  double begin = 0;
  double end = 0;
};

enum class PathWalkMethod : uint8_t { kAuto = 0, kJump = 1, kGather = 2 };

// Rounds of passing on arrivals inside a wait (inconsistent traces only) before such a
// record counts as a broken end (partial, if it is on the path).
constexpr int kPassRounds = 64;

struct PathWalkResult {
  std::vector<PathSegment> segments;              // this rank's, ascending, non-overlapping, non-empty
  uint64_t hops = 0;                              // ownership transfers along the whole path (every rank)
  bool partial = false;                           // a cycle or the hop bound cut the path
  PathWalkMethod method = PathWalkMethod::kJump;  // what ran (never kAuto)
  uint32_t levels = 0;                            // pointer-doubling levels (jump)
  bool listed = false;                            // the list path resolved it (jump, no merges)
  uint32_t rounds = 0;                            // collective rounds this rank took part in
  uint64_t bytes_sent = 0;                        // payload this rank sent
};

// ---- Pure logic (no MPI) ----------------------------------------------------------------

constexpr size_t kNoRecord = SIZE_MAX;

// The index of the latest record of h[0..n) (ascending by enter) with enter < t, or kNoRecord.
size_t latest_before(const HopRec* h, size_t n, double t);

// What the owner of h answers to "the path arrives on you at time t".
struct Arrival {
  enum Kind : int32_t { kFound = 0, kBegan = 1, kPass = 2 } kind = kBegan;
  size_t index = kNoRecord;  // kFound, kPass: the record
  double begin = 0;          // kFound: the segment's begin (the record's wait end)
  int32_t next_rank = -1;    // kPass: where the arrival goes on
  double next_time = 0;      // kPass: and when
};
Arrival arrive(const HopRec* h, size_t n, double t);

// The time at which the path continues on r.cause_rank after record r (T >= r.wait_end).
inline double next_time(const HopRec& r) { return r.cause_time < r.wait_end ? r.cause_time : r.wait_end; }

// The reference: today's sequential walk over every rank's records (recs[rank]). Returns each
// rank's segments, ascending; sets hops and partial. Used by the gather method on rank 0.
std::vector<std::vector<PathSegment>> walk_serial(const std::vector<const HopRec*>& recs,
                                                  const std::vector<size_t>& counts, const PathStart& start,
                                                  uint64_t& hops, bool& partial);

// The collectives the distributed walk needs, so that it runs without MPI in unit tests.
class PathExchange {
 public:
  virtual ~PathExchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The sparse all-to-all: `send` holds elem_bytes-sized elements run after run,
  // send_runs[i].count of them for rank send_runs[i].peer (peers ascending, each at most once,
  // no empty run). `recv` receives the elements sent to this rank by ascending source rank,
  // recv_runs their sources and counts (no empty run). Nothing in it is sized by the ranks
  // (where a process hosts one rank it may be: an MPI all-to-all is). With `reply` the round
  // answers the previous one element for element: recv_runs will be that round's send_runs.
  virtual Status exchange(const void* send, const std::vector<PathRun>& send_runs, size_t elem_bytes,
                          std::vector<unsigned char>& recv, std::vector<PathRun>& recv_runs, bool reply) = 0;
  // Every rank's `count` elements of elem_bytes, rank after rank, into `all` on every rank (a
  // round of few elements in all: one collective). By default through exchange(), O(ranks).
  virtual Status allgather(const void* send, uint32_t count, size_t elem_bytes,
                           std::vector<unsigned char>& all);
  virtual Status allreduce_sum(uint64_t* v, int n) = 0;
  virtual Status allreduce_min(double* v, int n) = 0;
};

// The distributed walk (pointer jumping) over this rank's records `mine`. Collective over ex.
// When the list path runs (path_walk.cpp, "The list path"): kAuto where it pays, on many
// records (at least kListMinRecords) that never merge, or seldom (at most one record in
// kListMergeShare the successor of two items) on at most kListMaxRanks ranks (a forest over
// many ranks, as a wavefront's, rarely brings its tokens back: the doubling would run after
// them); kAlways, kNever for tests.
enum class ListPath : uint8_t { kAuto = 0, kAlways = 1, kNever = 2 };
constexpr uint64_t kListMinRecords = uint64_t(1) << 14;
constexpr uint64_t kListMergeShare = 64;
constexpr int kListMaxRanks = 64;
Status walk_jump(const std::vector<HopRec>& mine, const PathStart& start, PathExchange& ex,
                 PathWalkResult& out, ListPath lists = ListPath::kAuto);

// ---- MPI ---------------------------------------------------------------------------------

// Collective over `comm` (used for nothing else meanwhile). `mine` ascending by enter;
// records whose cause_rank is this rank or outside comm are ignored. kAuto is kJump (nothing
// converges on rank 0). Both give walk_serial's path.
Status walk_path(const std::vector<HopRec>& mine, const PathStart& start, const Comm& comm,
                 PathWalkMethod method, PathWalkResult& out);

}  // namespace critpath::analyzer::engine
