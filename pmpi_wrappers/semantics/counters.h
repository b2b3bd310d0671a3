// critpath — pmpi_wrappers/semantics/counters.h
//
// Per-rank counts of things the wrappers deliberately do not record as events, read by the
// analyzer at finalize (report notes) and by tests:
//
//   * MPI_Test/Testany/Testall/Testsome calls that completed nothing: no ENTER/EXIT is
//     written for them (a polling loop would otherwise dominate the trace); their count and
//     the ticks spent in them are kept here instead.
//   * MPI_Iprobe/MPI_Improbe calls that found no message: same treatment.
//   * requests and communicators that could not be tracked (tables full, unknown handles).
//
// Counting is per thread slot (location % 256, cache-line padded) so polling threads do not
// share a counter; readers sum the slots. Each of the first 256 locations is the only
// writer of its slot, so it updates without a locked instruction.
//
// Thread safety: all functions are thread-safe. Signal safety: none.
#pragma once

#include <cstdint>

namespace critpath::pmpi {

// Totals for this process since the last reset.
uint64_t test_calls_without_completion();
uint64_t test_ticks_without_completion();  // clock ticks (runtime::now() units)
uint64_t probe_calls_without_message();
uint64_t untracked_requests();  // request table full
uint64_t unknown_comm_uses();   // events recorded with comm = kCommIdUnknown

void count_test_without_completion(uint16_t location, uint64_t ticks);
void count_probe_without_message(uint16_t location);
void count_untracked_request();
void count_unknown_comm();

// Requires: no concurrent counting. Zeroes every counter (tests; a new session).
void reset_counters();

}  // namespace critpath::pmpi
