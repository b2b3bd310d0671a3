// critpath — analyzer/tool/critpath_analyze.cpp: offline re-analysis of a kept trace.
//
//   CRITPATH_KEEP_TRACE=1 critpath-run mpiexec -n 4 ./app      -> <dir>/trace/rank-<r>.*
//   mpiexec -n 4 critpath-analyze <dir> [--output <outdir>]    -> <outdir>/summary.txt, ...
//
// Runs the same run_analysis() as the in-situ analysis inside MPI_Finalize, on the same
// number of ranks, from the kept chunks and definitions; the report is the same (up to the
// analysis time and the output directory). Default output: <dir>/reanalysis.
// This tool is linked without the MPI wrappers: its own MPI traffic is never traced.
#include <mpi.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "analyzer/analysis.h"
#include "analyzer/session/trace_archive.h"
#include "libtrace/config/config.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder_control.h"

extern char** environ;

using namespace critpath;

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
  analyzer::RunInfo run;
  if (dir.empty()) {
    if (rank == 0) std::fprintf(stderr, "critpath-analyze: no directory given (--help)\n");
    status = 2;
  } else if (analyzer::load_archive(dir + "/trace", rank, run) != Status::kOk) {
    std::fprintf(stderr, "critpath-analyze: rank %d: cannot read %s/trace/rank-%d.json\n", rank,
                 dir.c_str(), rank);
    status = 1;
  } else if (run.size != size) {
    if (rank == 0)
      std::fprintf(stderr, "critpath-analyze: the trace has %d ranks; run with mpiexec -n %d\n",
                   run.size, run.size);
    status = 2;
  } else if (runtime::chunk_store().open_file(dir + "/trace/rank-" + std::to_string(rank) +
                                              ".cptrace") != Status::kOk) {
    std::fprintf(stderr, "critpath-analyze: rank %d: cannot read its .cptrace file\n", rank);
    status = 1;
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
    analyzer::run_analysis(run, clock::monotonic_ns());
  }
  MPI_Finalize();
  return worst;
}
