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
//             rank for its contribution, the reduced result, and for P <= kMatrixRanks two
//             P x P count matrices (the all-to-all of counts, used alternately)
//   arrive    each rank adds itself to the count; the last one combines the slots, resets the
//             count, bumps the generation and wakes the others (FUTEX_WAKE)
//   wait      the others spin briefly (only when ranks do not outnumber cores), then wait on the
//             generation word with a timeout (FUTEX_WAIT), checking the analysis deadline at
//             each timeout (watchdog.h): a rank that never arrives poisons the segment after the
//             grace and every later operation fails, as an abandoned MPI operation does
//
// It serves only communicators congruent with the one it was attached to (the same ranks in
// the same order: its duplicates), which then share its sequence of operations: the engine
// completes every operation before it starts the next, in the same order on every rank. An
// operation that it cannot serve exactly as MPI would (a sum of doubles, whose order MPI
// picks; contributions larger than a slot; other types and operations) goes to MPI.
// Degrades to today's MPI operations: no shared memory, no futex, ranks on several hosts or
// on a fiber (critpath-analyze) all leave it detached.
#pragma once
#include <mpi.h>

#include <cstddef>

#include "libtrace/runtime/status.h"

namespace critpath::analyzer::engine {
class Comm;
}

namespace critpath::analyzer::engine::host_shm {

constexpr size_t kSlotBytes = 1024;
constexpr int kMatrixRanks = 1024;

// Collective over `comm` (native; to be called on every rank of it or on none, with every rank
// on this host): attaches the segment when every rank could map it and use futexes, otherwise
// stays detached (kMpiError only when the agreement's own MPI calls fail). `crowded`: the
// ranks outnumber this host's cores (no spinning before a wait). Replaces an earlier segment.
Status attach(const Comm& comm, bool crowded);
// Unmaps the segment (local).
void detach();
// Whether the segment serves `comm` (attached, congruent, not on a fiber).
bool serves(MPI_Comm comm);

// The engine's posted point-to-point messages not known delivered yet (comm.cpp's post and
// reap): while there are any, a wait here also drives MPI's progress.
void count_posts(long delta);

// Each returns false when the segment does not serve the call (the caller goes to MPI);
// otherwise it ran the operation and `status` says how it went.
bool barrier(MPI_Comm comm, Status& status);
bool allreduce(MPI_Comm comm, void* inout, int n, MPI_Datatype type, MPI_Op op, Status& status);
// MPI_Alltoall of one int per rank (the counts of an all-to-all-v).
bool alltoall_int(MPI_Comm comm, const int* send, int* recv, Status& status);

}  // namespace critpath::analyzer::engine::host_shm
