// critpath — analyzer/tool/critpath_analyze.cpp: offline re-analysis of a kept trace.
//
//   CRITPATH_KEEP_TRACE=1 critpath-run mpiexec -n 4 ./app      -> <dir>/trace/rank-<r>.*
//   mpiexec -n 4 critpath-analyze <dir> [--output <outdir>]    -> <outdir>/summary.txt, ...
//
// Runs the same run_analysis() as the in-situ analysis inside MPI_Finalize, on the same
// number of ranks, from the kept chunks and definitions; the report is the same (up to the
// analysis time and the output directory). Default output: <dir>/reanalysis.
// This tool is linked without the MPI wrappers: its own MPI traffic is never traced.
//
// Each kept rank (a "location") is loaded into its own LoadedLocation, nothing into the
// process-wide recording state, so that one process can host several of them.
#include <mpi.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "analyzer/analysis.h"
#include "analyzer/engine/trace_set.h"
#include "analyzer/session/trace_archive.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/config/config.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/log.h"

extern char** environ;

using namespace critpath;

namespace {

// One kept rank, loaded: the chunk store and definitions its LocationTrace points into.
// `trace` points into the object itself, which therefore never moves (hold it by unique_ptr).
struct LoadedLocation {
  LoadedLocation() = default;
  LoadedLocation(const LoadedLocation&) = delete;
  LoadedLocation& operator=(const LoadedLocation&) = delete;

  trace::ChunkStore chunks;
  defs::Definitions definitions;
  analyzer::LocationTrace trace;
};

// Loads location `location` of the kept trace in `trace_dir` (<dir>/trace): run facts,
// definitions and notes from rank-<location>.json, chunks from rank-<location>.cptrace.
// `out` must be fresh. Prints the reason of a failure.
Status load_location(const std::string& trace_dir, int location, LoadedLocation& out) {
  out.trace.chunks = &out.chunks;
  out.trace.definitions = &out.definitions;
  const std::string base = trace_dir + "/rank-" + std::to_string(location);
  Status s = analyzer::load_archive(trace_dir, location, out.trace.run, out.definitions,
                                    out.trace.notes);
  if (s != Status::kOk) {
    std::fprintf(stderr, "critpath-analyze: rank %d: cannot read %s.json\n", location,
                 base.c_str());
    return s;
  }
  s = out.chunks.open_file(base + ".cptrace");
  if (s != Status::kOk)
    std::fprintf(stderr, "critpath-analyze: rank %d: cannot read its .cptrace file\n", location);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  log::set_rank(rank);
  std::string dir, out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--output" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "-h" || a == "--help") {
      if (rank == 0)
        std::printf("usage: mpiexec -n <ranks of the run> critpath-analyze DIR [--output OUTDIR]\n"
                    "Re-analyzes the trace kept with CRITPATH_KEEP_TRACE=1 in DIR/trace.\n");
      MPI_Finalize();
      return 0;
    } else {
      dir = a;
    }
  }
  int status = 0;
  // One location per MPI rank: the trace's rank `rank`.
  auto loaded = std::make_unique<LoadedLocation>();
  analyzer::RunInfo& run = loaded->trace.run;
  if (dir.empty()) {
    if (rank == 0) std::fprintf(stderr, "critpath-analyze: no directory given (--help)\n");
    status = 2;
  } else if (load_location(dir + "/trace", rank, *loaded) != Status::kOk) {
    status = 1;
  } else if (run.size != size) {
    if (rank == 0)
      std::fprintf(stderr, "critpath-analyze: the trace has %d ranks; run with mpiexec -n %d\n",
                   run.size, run.size);
    status = 2;
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) {
    std::vector<std::string> warnings;
    config::Config cfg = config::parse(environ, warnings);
    for (const auto& w : warnings) log::print0(w);
    cfg.keep_trace = false;
    cfg.analysis = true;
    config::set_current(cfg);
    run.output_dir = out.empty() ? dir + "/reanalysis" : out;
    if (rank == 0 && mkdir(run.output_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      std::fprintf(stderr, "critpath-analyze: cannot create %s: %s\n", run.output_dir.c_str(),
                   std::strerror(errno));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    analyzer::run_analysis(loaded->trace, clock::monotonic_ns());
  }
  MPI_Finalize();
  return worst;
}
