// critpath — analyzer/otf2/otf2_support.h
//
// What the OTF2 export (otf2_export.h) and import (otf2_import.h) share: the conventions of
// Score-P's OTF2 archives that critpath writes and relies on (docs/other-tools.md lists them),
// OTF2's collective callbacks over the analysis ranks, and OTF2's error messages.
//
//   critpath definitions/events <--(region roles, collective ops, location ids)--> OTF2
//
// Everything here is pure mapping except collectives() (MPI through engine::Comm) and the
// error hook (process-wide OTF2 state, installed once).
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/engine/comm.h"
#include "libtrace/defs/definitions.h"

// OTF2 leaves the collective context to its user: ours is one set of analysis ranks.
struct OTF2_CollectiveContext {
  const critpath::analyzer::engine::Comm* comm = nullptr;
};

namespace critpath::analyzer::otf2 {

// The archive's name inside its directory, as Score-P names it: <dir>/traces.otf2 (anchor),
// <dir>/traces.def (global definitions), <dir>/traces/<location>.{evt,def}.
inline constexpr const char* kArchiveName = "traces";

// Archive properties critpath writes (anchor file, OTF2_Archive_SetProperty) and reads back.
//   CRITPATH::VERSION            the critpath version that wrote the archive
//   CRITPATH::TIMESTAMPS         "global": the time stamps are on one time base already (the
//                                analysis's clock-corrected one); no ClockOffset records
//   CRITPATH::CLOCK_CORRECTION   how that base was made: "linear" (offsets to rank 0
//                                interpolated between MPI_Init and MPI_Finalize), "shared"
//                                (one host, one CLOCK_MONOTONIC: nothing to correct) or "none"
//                                (CRITPATH_CLOCK_CORRECTION=none, or a single rank). The
//                                controlled logical clock (clc) is an analysis step, never
//                                applied to the time stamps.
inline constexpr const char* kPropertyVersion = "CRITPATH::VERSION";
inline constexpr const char* kPropertyTimestamps = "CRITPATH::TIMESTAMPS";
inline constexpr const char* kPropertyClock = "CRITPATH::CLOCK_CORRECTION";
// A location group (rank) property: the CPUs its process may run on, "0,1,5" (report's
// @ Nodes line and its oversubscription finding).
inline constexpr const char* kPropertyCpus = "CRITPATH::CPUS";
// A location group (rank) property: its MPI_APPNUM, "0", "1", ... (the command of an MPMD
// launch: the critical-path partitions).
inline constexpr const char* kPropertyAppnum = "CRITPATH::APPNUM";
// A location group (rank) property: the compiler hooks' estimate for the visits they did not
// record (the automatic filter's, docs/instrumentation.md), per region:
// "<region ref>:<visits>:<seconds>:<auto 0|1>;..." (the profile adds it to those regions).
inline constexpr const char* kPropertyUnrecorded = "CRITPATH::UNRECORDED";
// An event attribute (uint8 1) on MpiCollectiveEnd and NonBlockingCollectiveComplete: this
// rank's Alltoallv/w lacked the block of some member (a zero count), so the instance does not
// make it wait for every member (trace::kRootSomeBlockEmpty in critpath's own trace; OTF2's
// root field keeps "none"). The exporter defines it as attribute 0.
inline constexpr const char* kAttributeSomeBlockEmpty = "CRITPATH::SOME_BLOCK_EMPTY";
inline constexpr OTF2_AttributeRef kSomeBlockEmptyRef = 0;

// Score-P's location ids: thread t of MPI rank r is location (t << 32) | r, so the thread that
// called MPI_Init has the rank's number; the rank's location group has id r.
inline uint64_t location_id(int rank, uint16_t thread) { return (uint64_t(thread) << 32) | uint32_t(rank); }

// How a critpath region is described in OTF2: role and paradigm, as Score-P's MPI adapter,
// compiler adapter and user API define theirs.
struct RegionStyle {
  OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_USER;
};
RegionStyle region_style(const defs::RegionDef& region);

// The reverse, for a region critpath does not know by name: its kind (MPI by paradigm,
// functions by the compiler paradigm, the rest user regions) and, for MPI, semantics guessed
// from the role (point-to-point, the collective roles, RMA; all else management).
defs::RegionKind region_kind(OTF2_Paradigm paradigm, OTF2_RegionRole role);
defs::MpiSemantics semantics_from_role(OTF2_RegionRole role);

// The OTF2 collective operation of an MPI collective call, by its name ("MPI_Iallreduce" ->
// OTF2_COLLECTIVE_OP_ALLREDUCE). Communicator constructors are CREATE_HANDLE, MPI_Comm_free
// DESTROY_HANDLE, window constructors CREATE_HANDLE(_AND_ALLOCATE), MPI_Win_free
// DESTROY_HANDLE(_AND_DEALLOCATE), as Score-P writes them; an unknown name gives BARRIER.
OTF2_CollectiveOp collective_op(std::string_view mpi_name);

// OTF2's collective callbacks over the analysis ranks of `context->comm` (native or hosted):
// each OTF2 archive object is one rank. Never a local (per-file) communicator: the POSIX
// substrate writes one file per location.
const OTF2_CollectiveCallbacks* collectives();

// OTF2 reports errors through one process-wide callback that prints to stderr. Installs,
// once per process, a callback that keeps the message of the calling thread's last error
// instead (so a failing export or import says one clear line). Thread-safe.
void install_error_hook();
// The calling thread's last OTF2 error message ("" when none), cleared by the call.
std::string take_last_error();
// "<OTF2 error name>: <last message>" for a failed call that returned `code`.
std::string describe(OTF2_ErrorCode code);

}  // namespace critpath::analyzer::otf2
