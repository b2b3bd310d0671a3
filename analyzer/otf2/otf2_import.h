// critpath — analyzer/otf2/otf2_import.h
//
// An OTF2 archive, written by Score-P or by critpath itself, as critpath's own analysis input:
// per MPI rank one LocationTrace (engine/trace_set.h) — compressed chunks of critpath events,
// definitions, run facts — built with the OTF2 reader API, so that every analysis runs on it
// unchanged (critpath-analyze --otf2):
//
//   traces.otf2 --global definitions--> ranks (MPI_COMM_WORLD's locations), regions with
//                                       their MPI semantics (by name from the wrapper spec,
//                                       else from the OTF2 role), communicators, windows,
//                                       counters
//               --each rank's events--> critpath events (Score-P's conventions, read back:
//                                       docs/other-tools.md) --> chunks
//
// Only MPI enters the MPI analysis: MPI_COMM_WORLD's locations as ranks, the communicators
// and windows of the MPI paradigm. What critpath does not analyse is skipped and counted
// (Skipped): threads other than the one that called MPI_Init in archives not written by
// critpath (OpenMP, pthreads), GPU and metric locations, other paradigms' communicators and
// windows (CUDA's, whose members are accelerator streams) and the records on them,
// OpenMP/thread, I/O, sampling and parameter records. An archive with no MPI at all is one
// process's profile (its master thread as the only rank) when it holds one process, else
// refused with a sentence naming what it holds. A malformed archive (a reference to an
// undefined id, a member that is no rank, events that do not read) gives an error with a
// message, never a crash.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/engine/trace_set.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::otf2 {

// What an import left out, for the report's one note (describe()).
struct Skipped {
  // Archive-wide, from the definitions (the same on every process; zero in load()'s counts).
  uint64_t thread_locations = 0;       // CPU threads other than a rank's MPI thread
  uint64_t accelerator_locations = 0;  // GPU streams, accelerator location groups
  uint64_t metric_locations = 0;       // locations that only carry metrics
  uint64_t other_comms = 0;            // communicators of other paradigms (CUDA, OpenMP, SHMEM, ...)
  uint64_t other_windows = 0;          // their RMA windows (CUDA memory copies' windows)
  // Per imported rank, from its events.
  uint64_t threading_events = 0;  // OpenMP and thread fork/join/team/lock/task records
  uint64_t io_events = 0;         // I/O handles and operations
  uint64_t sampling_events = 0;   // calling contexts, samples
  uint64_t parameter_events = 0;  // region parameters
  uint64_t metric_events = 0;     // metrics other than the strictly synchronous counters
  uint64_t other_events = 0;      // records this OTF2 version does not know
  uint64_t open_icolls = 0;       // nonblocking collectives never completed (no operation)
  uint64_t other_records = 0;     // records on other paradigms' communicators and windows

  static constexpr int kFields = 13;
  void to_array(uint64_t (&a)[kFields]) const;
  void from_array(const uint64_t (&a)[kFields]);
  bool empty() const;
  // "otf2: skipped what critpath does not analyse: 3 OpenMP/pthread locations, 120 I/O
  // records" (empty when nothing was skipped).
  std::string describe() const;
};

class ArchiveReader {
 public:
  ArchiveReader();
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  // Opens the anchor file (".../traces.otf2") and reads the global definitions. On failure
  // returns kIoError (cannot open) or kCorrupt (does not read, or holds no MPI rank) and sets
  // `error` to one line that says why.
  Status open(const std::string& anchor, std::string& error);
  // The MPI ranks: the locations of MPI_COMM_WORLD (the archive's traced ranks).
  int ranks() const;
  // Archive-wide facts (valid after open()).
  const Skipped& skipped_locations() const;
  bool written_by_critpath() const;
  // The archive holds no MPI: its one process's master thread is rank 0 (a profile).
  bool without_mpi() const;

  // Reads ranks [first, first + count): their local definitions (mapping tables, clock
  // offsets), then their events. Call once, after open(), before load().
  Status select(int first, int count, std::string& error);
  // Builds rank `rank` (selected): chunks into `chunks` and definitions into `definitions`
  // (both fresh), everything else into `location`, which then points at them. Adds what it
  // skipped to `skipped`. kCorrupt with `error` when the events do not read.
  Status load(int rank, trace::ChunkStore& chunks, defs::Definitions& definitions, LocationTrace& location,
              Skipped& skipped, std::string& error);

  struct State;  // otf2_import.cpp

 private:
  std::unique_ptr<State> s_;
};

}  // namespace critpath::analyzer::otf2
