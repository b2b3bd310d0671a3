// critpath — analyzer/engine/host_shm.h
//
// In situ, with every analysis rank on one host: the small collectives of the analysis
// communicator through a shared-memory segment, each rank waiting on a futex until the last
// to arrive wakes it, instead of an MPI collective that progresses only while its ranks poll.
//
// Why: with many more ranks than cores (the oversubscribed testbed, benchmarks/scale) a waiting
// rank's poll costs 20 to 40 us of CPU in MPICH's progress engine, and a collective of log2 P
// dependent steps needs its ranks to poll again at every step: at 256 ranks on 2 cores the
// polling was nine tenths of the analysis's CPU. Here a rank arrives once and sleeps until the
// operation is complete: one wake-up per rank and operation, no MPI call.
//
//   segment   made by rank 0 (shm_open with a unique name, unlinked once every rank has
//             mapped it), a header (arrival count, generation: the futex word), a slot per
//             rank for its contribution, the reduced result, a futex word per rank (the
//             rings of point-to-point messages), a 64-byte line per rank (a contribution that
//             small, and a gather's sizes: the rank reading all P of them touches P / 64 pages,
//             not P) and for P <= kMatrixRanks two P x P count
//             matrices (the all-to-all of counts, used alternately) and two sets of exchange
//             areas (a rank's pieces of a sparse exchange, kSlotBytes each, with a P-bit row per
//             rank marking who sent it one, used alternately as the matrices), and an inbox per
//             rank (a ring of the point-to-point messages sent to it: send, take below)
//   arrive    each rank adds itself to the count; the last one combines the slots, resets the
//             count, bumps the generation and wakes the others (FUTEX_WAKE)
//   wait      the others spin briefly (only when ranks do not outnumber cores), then wait on the
//             generation word with a timeout (FUTEX_WAIT), checking the analysis deadline at
//             each timeout (watchdog.h): a rank that never arrives poisons the segment after the
//             grace and every later operation fails, as an abandoned MPI operation does. A rank
//             whose point-to-point posts are under way (they may need its progress) tests them
//             instead; crowded, it sleeps between tests on its own futex word (its bell, which
//             their receivers ring), marked so that the rank completing the operation rings it
//
// It serves only communicators congruent with the one it was attached to (the same ranks in
// the same order: its duplicates), which then share its sequence of operations: the engine
// completes every operation before it starts the next, in the same order on every rank.
// Reductions fold in rank order (MPI picks its own order: a sum of doubles may differ in its
// last bits). What does not fit a slot goes to MPI.
// Degrades to today's MPI operations: no shared memory, no futex, ranks on several hosts or
// on a fiber (critpath-analyze) all leave it detached.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "analyzer/engine/comm.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine::host_shm {

constexpr size_t kSlotBytes = 8192;
constexpr int kMatrixRanks = 1024;

// The segment's name and cookie, rank 0's to every rank of the communicator: words[0 .. 6] the
// name (zeros: no segment), words[7] the cookie.
constexpr size_t kOfferWords = 8;
struct Offer {
  uint64_t words[kOfferWords];
};
// Attaching, in two steps around one collective the caller runs anyway (the engine's maximum of
// the host names' hashes), so that no MPI operation of its own comes before the segment: offer()
// (on every rank of `comm`, local) makes the segment on rank 0 and returns its offer there, zeros
// elsewhere, for the caller to take the maximum of over `comm`; attach() (on every rank of `comm`
// with that maximum and the same `use`: whether every rank is on this host) maps it and waits
// until every rank has (one futex wait, no MPI). It attaches when every rank could map it and use
// futexes; a rank that cannot never arrives, and the others give up after a few seconds
// (kJoinNs): all detached then, as when `use` is false or rank 0 could not make it (no MPI call:
// nothing fails). `crowded`: the ranks outnumber this host's cores (no spinning before a wait).
// offer() detaches an earlier segment.
Offer offer(const Comm& comm);
void attach(const Comm& comm, const Offer& offer, bool use, bool crowded);
// Unmaps the segment (local).
void detach();
// Whether the segment serves `comm` (attached, congruent, not on a fiber).
bool serves(MPI_Comm comm);

// The engine's posted point-to-point messages not known delivered yet (comm.cpp's post and
// reap): while there are any, a wait here also drives MPI's progress.
void count_posts(long delta);
// How a wait here tests those posts (drops the delivered ones, count_posts(-n)): the latest
// communicator that posted on the segment's ranks registers its sweep.
void watch_posts(std::function<void()> sweep);

// Each returns false when the segment does not serve the call (the caller goes to MPI);
// otherwise it ran the operation and `status` says how it went.
bool barrier(MPI_Comm comm, Status& status);
// MPI_Allreduce (root < 0) or MPI_Reduce to `root` of `n` elements of a predefined `type`
// under a predefined `op`, folded in rank order (`in` may be `out`); MPI_Scan (inclusive); the
// root's `bytes` to every rank. Only what fits a slot (kSlotBytes).
bool allreduce(MPI_Comm comm, const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, int root,
               Status& status);
bool scan(MPI_Comm comm, const void* in, void* out, int n, MPI_Datatype type, MPI_Op op, Status& status);
bool bcast(MPI_Comm comm, void* buf, size_t bytes, int root, Status& status);
// Every rank's `bytes` to `root` (root < 0: to every rank), into `all` in rank order, their
// sizes in `sizes`, when every contribution fits a slot (else false on every rank, after one
// operation here).
bool gather(MPI_Comm comm, const void* mine, size_t bytes, int root, std::vector<unsigned char>& all,
            std::vector<size_t>& sizes, Status& status);
// MPI_Alltoall of one int per rank (the counts of an all-to-all-v).
bool alltoall_int(MPI_Comm comm, const int* send, int* recv, Status& status);
// Comm::alltoallv (and so Comm::exchange) in one operation: `pieces` (ascending by peer, at most
// one per peer, this rank among them or not, none empty) to their ranks; `in` receives the pieces
// sent to this rank, one parcel per source rank by ascending source. Only when every rank's pieces
// fit its exchange area (else false on every rank, after one operation here).
bool exchange(MPI_Comm comm, const std::vector<Comm::Piece>& pieces, std::vector<Comm::Parcel>& in,
              Status& status);

// Point-to-point messages between the segment's ranks (comm.cpp's post and receive): ring()
// bumps `dest`'s futex word and wakes it (false, doing nothing, when the segment does not
// serve `comm`); rings() reads this rank's word, before it looks for messages;
// sleep_until_rung() then sleeps until the word leaves `seen` or a timeout (false when not
// served: the caller polls).
bool ring(MPI_Comm comm, int dest);
uint32_t rings();
bool sleep_until_rung(MPI_Comm comm, uint32_t seen);
// The messages themselves, between the ranks of a communicator the segment serves, when it has
// inboxes (P <= kMatrixRanks; the same answer on every rank): carries(). Then every message of
// comm.cpp's post goes this way, not to MPI, so that the order per sender holds. Each rank has
// an inbox, a ring the others append records to (a longer message in several) and only it takes
// from. send() queues a message for `dest` and puts into its ring what fits now (ringing it);
// push() puts the queued rest as far as it fits (false: nothing left queued; the waits here push
// too, and a receiver that makes room in a full ring rings the senders it turned away); take()
// hands over the next whole message in this rank's inbox (false: none yet). One communicator at
// a time: the engine takes every message of a replay before the next replay posts its first.
bool carries(MPI_Comm comm);
void send(int dest, std::vector<unsigned char>&& bytes);
bool push();
bool take(int& src, std::vector<unsigned char>& bytes);
// Whether the segment is attached with more ranks than cores: a rank whose posts are under way
// then sleeps until rung between its tests of them (the receiver of a post rings its sender
// while it receives and once it has), instead of polling.
bool crowded();

// Completes point-to-point requests on `comm` (the first `receives` of them receives, the rest
// sends; peers[i] the rank requests[i] talks to): rings each send's destination (a futex word
// per rank) and sleeps on its own while only receives are pending; while sends are pending it
// polls as complete_all does, ringing their destinations again now and then (a rendezvous
// send goes on only with its receiver's progress). Each sleep lasts until a sender rings or
// for a timeout, the deadline checked as in complete_all.
bool complete_p2p(MPI_Comm comm, std::vector<MPI_Request>& requests, const std::vector<int>& peers,
                  size_t receives, Status& status);

// For tests without MPI (tests/unit/analyzer/engine/host_shm_test.cpp: forked processes as the
// ranks): the bytes of a segment for P ranks; a segment set up in `base` (memory the ranks
// share); this process joined to it as `rank` of P, detached by detach(). Joined so, every
// communicator is served and the reductions treat each element as `elem_bytes` bytes combined
// by `reduce` (inout = in op inout, as MPI_Reduce_local) instead of asking MPI.
namespace testing {
using Reduce = void (*)(const void* in, void* inout, int n);
size_t segment_bytes(int P);
void init_segment(void* base, int P);
void join(void* base, int rank, int P, bool crowded, size_t elem_bytes, Reduce reduce);
}  // namespace testing

}  // namespace critpath::analyzer::engine::host_shm
