// critpath — analyzer/tool/critpath_analyze.cpp: offline re-analysis of a kept trace.
//
//   CRITPATH_KEEP_TRACE=1 critpath-run mpiexec -n 4 ./app      -> <dir>/trace/rank-<r>.*
//   mpiexec -n P critpath-analyze <dir> [--output <outdir> [--force]]  -> <outdir>/summary.txt
//   mpiexec -n P critpath-analyze --export-otf2 <out> <dir>    -> <out>/traces.otf2 (OTF2,
//                                                                 analyzer/otf2/otf2_export.h)
//   mpiexec -n P critpath-analyze --otf2 <path>/traces.otf2 [--output <outdir>]: an OTF2
//     archive of Score-P's or critpath's, read into the same LocationTraces
//     (analyzer/otf2/otf2_import.h); default output <path>/critpath, -2, -3, ...
//
// Runs the same run_analysis() as the in-situ analysis inside MPI_Finalize, from the kept
// chunks and definitions, on P processes from 1 to the run's number of ranks: with fewer,
// each process hosts a contiguous block of traced ranks, as fibers on a pool of worker threads (about one per core, --workers), over hosted
// analysis ranks (engine/comm.h). The report is the same for every P (up to the analysis
// time and the output directory). Default output: <dir>/reanalysis, or the first of
// <dir>/reanalysis-2, -3, ... that holds no summary.txt yet: an earlier re-analysis is never
// overwritten. An explicit --output that holds a summary.txt is refused unless --force.
// This tool is linked without the MPI wrappers: its own MPI traffic is never traced.
//
// Each kept rank (a "location") is loaded into its own LoadedLocation, nothing into the
// process-wide recording state, so that one process can host several of them.
#include <mpi.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/analysis.h"
#include "analyzer/engine/fiber.h"
#include "analyzer/engine/trace_set.h"
#include "analyzer/otf2/otf2_export.h"
#include "analyzer/otf2/otf2_import.h"
#include "analyzer/session/analysis_guard.h"
#include "analyzer/session/hosted.h"
#include "analyzer/session/partial_trace.h"
#include "analyzer/session/trace_archive.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/config/config.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/log.h"

extern char** environ;

using namespace critpath;

namespace {

using analyzer::LoadedLocation;

bool holds_report(const std::string& dir) {
  struct stat st;
  return stat((dir + "/summary.txt").c_str(), &st) == 0;
}

// Rank 0: the directory the report goes to, created; empty after printing why there is none.
// `wanted` empty: `base` (<dir>/reanalysis), or `base`-2, -3, ... when it already holds a
// report (session.cpp's create_output_dir() never reuses a directory either; here a directory
// without summary.txt, e.g. of a failed run, is reused). `wanted` given: used as is, refused
// when it holds a report and `force` is false.
std::string choose_output_dir(const std::string& base, const std::string& wanted, bool force) {
  std::string name = wanted;
  if (name.empty()) {
    for (int k = 1; k <= 1000 && name.empty(); ++k) {
      const std::string candidate = k == 1 ? base : base + "-" + std::to_string(k);
      if (!holds_report(candidate)) name = candidate;
    }
    if (name.empty()) {
      std::fprintf(stderr, "critpath-analyze: %s-2 to -1000 all hold reports; pass --output\n", base.c_str());
      return {};
    }
    if (name != base)
      std::fprintf(stderr, "critpath-analyze: %s holds an earlier report; writing to %s\n", base.c_str(),
                   name.c_str());
  } else if (holds_report(name) && !force) {
    std::fprintf(stderr,
                 "critpath-analyze: %s already holds a report (summary.txt); pass "
                 "--force to overwrite it or choose another --output\n",
                 name.c_str());
    return {};
  }
  if (mkdir(name.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "critpath-analyze: cannot create %s: %s\n", name.c_str(), std::strerror(errno));
    return {};
  }
  return name;
}

// A launcher of the other MPI library leaves its world size in the environment, and each
// process it starts initializes this library's MPI as a singleton (MPI_COMM_WORLD of size 1).
// Returns a description of the mismatch ("Open MPI's launcher (OMPI_COMM_WORLD_SIZE=4)
// started this MPICH build ..."), empty when no foreign launcher started several processes.
// `first` is set when this process is the foreign launcher's rank 0 (or it cannot tell).
std::string foreign_launcher(bool& first) {
#if defined(OPEN_MPI)
  const char* built = "Open MPI";
  const char* other = "MPICH's (hydra)";
  const char* size_var = "PMI_SIZE";
  const char* rank_var = "PMI_RANK";
  const char* use = "mpiexec.openmpi";
#elif defined(MPICH) || defined(MPICH_VERSION)
  const char* built = "MPICH";
  const char* other = "Open MPI's";
  const char* size_var = "OMPI_COMM_WORLD_SIZE";
  const char* rank_var = "OMPI_COMM_WORLD_RANK";
  const char* use = "mpiexec.mpich";
#else
  first = true;
  return {};
#endif
  const char* value = std::getenv(size_var);
  if (value == nullptr || std::atoi(value) <= 1) return {};
  const char* foreign_rank = std::getenv(rank_var);
  first = foreign_rank == nullptr || std::atoi(foreign_rank) == 0;
  return std::string(other) + " launcher (" + size_var + "=" + value + ") started this " + built +
         " build of critpath-analyze; launch it with " + use;
}

// The number of ranks of the kept trace (rank-0.json's "size", or when a partial run left no
// rank-0.json, the first other rank's); 0 when none is readable.
int traced_ranks(const std::string& trace_dir) {
  for (int r = 0; r < 1 << 20; ++r) {
    struct stat st;
    if (stat((trace_dir + "/rank-" + std::to_string(r) + ".json").c_str(), &st) != 0) {
      if (r < 4096) continue;  // a partial run: look further for a rank that wrote
      break;
    }
    analyzer::RunInfo run;
    defs::Definitions definitions;
    std::vector<std::string> notes;
    if (analyzer::load_archive(trace_dir, r, run, definitions, notes) != Status::kOk) return 0;
    return run.size;
  }
  return 0;
}

// The ranks below `locations` without a rank-<r>.json, as "1,3-5"; empty when none.
std::string missing_ranks(const std::string& trace_dir, int locations) {
  std::vector<int> missing;
  for (int r = 0; r < locations; ++r) {
    struct stat st;
    if (stat((trace_dir + "/rank-" + std::to_string(r) + ".json").c_str(), &st) != 0) missing.push_back(r);
  }
  return analyzer::format_rank_list(missing);
}

// Rank 0: makes `out` the directory an OTF2 archive is exported into. False after printing
// why not: it holds an archive already (OTF2 never overwrites one), or it cannot be created.
bool prepare_export_dir(const std::string& out) {
  struct stat st;
  for (const char* name : {"/traces.otf2", "/traces.def", "/traces"})
    if (stat((out + name).c_str(), &st) == 0) {
      std::fprintf(stderr,
                   "critpath-analyze: %s%s exists: %s already holds an OTF2 archive; "
                   "choose another directory or remove it\n",
                   out.c_str(), name, out.c_str());
      return false;
    }
  if (mkdir(out.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "critpath-analyze: cannot create %s: %s\n", out.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

// The directory of a path ("." for a bare name).
std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The import's one note on what it skipped (summed over the processes, each of which counted
// its ranks' records), and where the time stamps came from: notes of traced rank 0. Collective.
void note_skipped(const analyzer::otf2::ArchiveReader& archive, const analyzer::otf2::Skipped& mine,
                  const std::string& anchor, std::vector<std::unique_ptr<LoadedLocation>>& loaded) {
  // Record counts are per process; the location counts come from the (shared) definitions.
  uint64_t a[analyzer::otf2::Skipped::kFields], sum[analyzer::otf2::Skipped::kFields],
      places[analyzer::otf2::Skipped::kFields];
  mine.to_array(a);
  MPI_Allreduce(a, sum, analyzer::otf2::Skipped::kFields, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  archive.skipped_locations().to_array(places);
  for (int i = 0; i < analyzer::otf2::Skipped::kFields; ++i) sum[i] += places[i];
  analyzer::otf2::Skipped all;
  all.from_array(sum);
  if (loaded.empty() || loaded[0]->trace.run.rank != 0) return;
  std::vector<std::string>& notes = loaded[0]->trace.notes;
  notes.push_back("otf2: " + anchor +
                  (archive.written_by_critpath()
                       ? ": written by critpath, time stamps clock-corrected at the run"
                       : ": time stamps as the OTF2 reader gives them (with the archive's "
                         "clock offsets applied)"));
  if (!all.empty()) notes.push_back(all.describe());
}

using analyzer::for_each_location;

// The command line.
struct Options {
  std::string dir, out, whatif, export_dir, otf2_anchor;
  bool force = false, have_whatif = false, help = false;
  int workers = 0;  // --workers: threads running the hosted ranks; 0: one per core
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--output" && i + 1 < argc) {
      o.out = argv[++i];
    } else if (a == "--export-otf2" && i + 1 < argc) {
      o.export_dir = argv[++i];
    } else if (a == "--otf2" && i + 1 < argc) {
      o.otf2_anchor = argv[++i];
    } else if (a == "--workers" && i + 1 < argc) {
      o.workers = std::max(0, std::atoi(argv[++i]));
    } else if (a == "--force") {
      o.force = true;
    } else if (a == "--whatif" && i + 1 < argc) {
      o.whatif = argv[++i];
      o.have_whatif = true;
    } else if (a == "-h" || a == "--help") {
      o.help = true;
      return o;
    } else {
      o.dir = a;
    }
  }
  return o;
}

void print_usage() {
  std::printf("usage: mpiexec -n <P> critpath-analyze DIR [--output OUTDIR [--force]]\n"
              "                                     [--whatif \"balance:solve;zero:io;...\"]\n"
              "                                     [--workers N]\n"
              "       mpiexec -n <P> critpath-analyze --export-otf2 OUT DIR\n"
              "       mpiexec -n <P> critpath-analyze --otf2 PATH/traces.otf2 [--output OUTDIR [--force]]\n"
              "Re-analyzes the trace kept with CRITPATH_KEEP_TRACE=1 in DIR/trace, on P\n"
              "processes: from 1 to the number of ranks of the run (each process then\n"
              "replays a block of traced ranks as fibers on N worker threads, by default\n"
              "one per core: --workers). Same report for every P.\n"
              "Default OUTDIR: DIR/reanalysis, or DIR/reanalysis-2, -3, ... when it holds\n"
              "a report already. An OUTDIR holding a report is refused unless --force.\n"
              "--whatif: simulate these hypotheses (as CRITPATH_WHATIF, which it replaces;\n"
              "docs/metrics.md, What-if simulation) beside the automatic ones.\n"
              "--export-otf2 OUT: writes the kept trace as an OTF2 archive, OUT/traces.otf2\n"
              "(Vampir, Scalasca; docs/other-tools.md), instead of analysing it. OUT is\n"
              "created; one holding an archive already is refused.\n"
              "--otf2 ARCHIVE: analyses an OTF2 archive (Score-P's or critpath's) instead,\n"
              "on 1 to its number of MPI ranks processes; default OUTDIR PATH/critpath.\n");
}

// This process in critpath-analyze's MPI world, and what it reads.
struct Job {
  int rank = 0, size = 1;
  int provided = MPI_THREAD_SINGLE;       // the thread level MPI_Init_thread gave
  std::string trace_dir;                  // <dir>/trace
  bool import = false;                    // --otf2
  analyzer::otf2::ArchiveReader archive;  // opened by every process (its definitions name the ranks)
  std::string otf2_error;
  int locations = 0;         // traced ranks of the run; 0: unreadable
  int first = 0, count = 0;  // the ones this process hosts
  std::vector<std::unique_ptr<LoadedLocation>> loaded;
  analyzer::otf2::Skipped skipped;  // what the import of this process's ranks left out
  std::string output_dir;           // rank 0's choice
};

// Step 1: the command line, the input and this MPI world agree. Returns the exit status: 0,
// 1 (unreadable or incomplete input) or 2 (usage); rank 0 (or one process) says why.
int check_job(const Options& o, bool archive_ok, Job& job) {
  const int rank = job.rank, locations = job.locations;
  bool foreign_first = true;
  const std::string foreign = job.size == 1 && locations > 1 ? foreign_launcher(foreign_first)
                                                             : std::string();
  if (o.dir.empty() && !job.import) {
    if (rank == 0) std::fprintf(stderr, "critpath-analyze: no directory given (--help)\n");
    return 2;
  }
  if (job.import && (!o.dir.empty() || !o.export_dir.empty())) {
    if (rank == 0)
      std::fprintf(stderr, "critpath-analyze: --otf2 analyses an archive; it takes no DIR and no "
                           "--export-otf2 (--help)\n");
    return 2;
  }
  if (job.import && !archive_ok) {
    if (rank == 0) std::fprintf(stderr, "critpath-analyze: %s\n", job.otf2_error.c_str());
    return 1;
  }
  if (locations == 0) {
    if (rank == 0)
      std::fprintf(stderr, "critpath-analyze: cannot read %s/rank-0.json\n", job.trace_dir.c_str());
    return 1;
  }
  if (!foreign.empty()) {
    // Each process is rank 0 of its own world: the foreign launcher's rank 0 speaks. The others
    // leave a second later: a launcher aborts the job at the first non-zero exit (Open MPI with
    // odls_base_sigkill_timeout 0 at once), which could otherwise kill the speaker before it speaks.
    if (foreign_first)
      std::fprintf(stderr,
                   "critpath-analyze: MPI mismatch: the trace has %d ranks but "
                   "MPI_COMM_WORLD has 1 process: %s\n",
                   locations, foreign.c_str());
    else std::this_thread::sleep_for(std::chrono::seconds(1));
    return 2;
  }
  if (job.size > locations) {
    if (rank == 0)
      std::fprintf(stderr, "critpath-analyze: the trace has %d ranks; run with mpiexec -n %d or fewer\n",
                   locations, locations);
    return 2;
  }
  if (job.size < locations && job.provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      std::fprintf(stderr,
                   "critpath-analyze: this MPI library offers no MPI_THREAD_MULTIPLE, which "
                   "hosting several traced ranks per process needs; run with mpiexec -n %d\n",
                   locations);
    return 2;
  }
  // A kept trace's rank files (an OTF2 archive names its locations).
  const std::string missing = job.import ? std::string() : missing_ranks(job.trace_dir, locations);
  if (!missing.empty()) {
    if (rank == 0)
      std::fprintf(
          stderr,
          "critpath-analyze: analysis incomplete: %s/rank-<r>.json is missing for rank %s: those processes "
          "ended without writing their trace (killed with SIGKILL, as MPICH's launcher does to "
          "the other ranks when one rank fails, or the files were removed); a report needs "
          "every rank\n",
          job.trace_dir.c_str(), missing.c_str());
    return 1;
  }
  return 0;
}

// Step 2: this process's traced ranks, loaded; rank 0 prepares the output (or export)
// directory. Returns the exit status as check_job().
int load_job(const Options& o, Job& job) {
  analyzer::engine::Comm::locations_of(job.locations, job.size, job.rank, job.first, job.count);
  int status = 0;
  if (job.import && job.archive.select(job.first, job.count, job.otf2_error) != Status::kOk) {
    std::fprintf(stderr, "critpath-analyze: %s\n", job.otf2_error.c_str());
    status = 1;
  }
  for (int l = job.first; l < job.first + job.count && status == 0; ++l) {
    job.loaded.push_back(std::make_unique<LoadedLocation>());
    LoadedLocation& ll = *job.loaded.back();
    if (job.import) {
      if (job.archive.load(l, ll.chunks, ll.definitions, ll.trace, job.skipped, job.otf2_error) !=
          Status::kOk) {
        std::fprintf(stderr, "critpath-analyze: %s\n", job.otf2_error.c_str());
        status = 1;
      }
    } else {
      std::string why;
      const Status s = analyzer::load_location(job.trace_dir, l, ll, why);
      if (!why.empty()) std::fprintf(stderr, "critpath-analyze: %s\n", why.c_str());
      if (s != Status::kOk) {
        status = 1;
      } else if (ll.trace.run.size != job.locations) {
        std::fprintf(stderr,
                     "critpath-analyze: %s/rank-%d.json says the run had %d ranks, "
                     "rank-0.json %d\n",
                     job.trace_dir.c_str(), l, ll.trace.run.size, job.locations);
        status = 1;
      }
    }
  }
  if (job.rank == 0 && status == 0 && !o.export_dir.empty()) {
    if (!prepare_export_dir(o.export_dir)) status = 2;
  } else if (job.rank == 0 && status == 0) {
    job.output_dir = choose_output_dir(
        job.import ? parent_of(o.otf2_anchor) + "/critpath" : o.dir + "/reanalysis", o.out, o.force);
    if (job.output_dir.empty()) status = 2;
  }
  return status;
}

// Step 3: the configuration of the analysis: the environment's, with the command line's
// what-if hypotheses, never keeping the trace again.
config::Config configure(const Options& o) {
  std::vector<std::string> warnings;
  config::Config cfg = config::parse(environ, warnings);
  for (const auto& w : warnings) log::print0(w);
  log::set_verbosity(cfg.verbose);
  cfg.keep_trace = "false";
  cfg.analysis = true;
  if (o.have_whatif) {
    cfg.whatif = o.whatif;
    cfg.simulation = true;
  }
  config::set_current(cfg);
  return cfg;
}

// Step 4: rank 0 chose and created the output directory; everyone learns its name. A partial
// run (some rank ended in a fault): every rank cut to the consistent prefix. Collective; false
// when an exchange failed.
bool share_output_and_cut(Job& job, std::vector<std::unique_ptr<trace::ChunkStore>>& cut) {
  std::vector<char> name(4096, '\0');
  if (job.rank == 0) std::strncpy(name.data(), job.output_dir.c_str(), name.size() - 1);
  MPI_Bcast(name.data(), int(name.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  job.output_dir = name.data();
  for (auto& l : job.loaded) l->trace.run.output_dir = job.output_dir;
  std::vector<analyzer::LocationTrace*> traces;
  for (auto& l : job.loaded) traces.push_back(&l->trace);
  analyzer::engine::Comm procs;  // MPI_COMM_WORLD itself
  std::string partial;
  if (analyzer::engine::Comm::borrow(MPI_COMM_WORLD, procs) != Status::kOk ||
      analyzer::cut_to_consistent_prefix(traces, cut, procs, partial) != Status::kOk)
    return false;
  if (!partial.empty()) {
    std::fprintf(stderr, "critpath-analyze: %s\n", partial.c_str());
    for (auto& l : job.loaded)
      if (l->trace.run.rank == 0) l->trace.notes.push_back(partial);
  }
  return true;
}

// Step 5, under the analysis deadline: the analysis ranks, natively one per process or hosted
// (engine/comm.h); then every location exports itself (collective over the analysis ranks; all
// agree on the outcome, the first location of each process speaks for it) or is analysed.
// Returns the exit status.
int run_job(const Options& o, const config::Config& cfg, Job& job) {
  std::vector<analyzer::engine::Comm> ranks;
  Status made = Status::kOk;
  if (job.size == job.locations) {
    ranks.emplace_back();
    made = analyzer::start_guarded_analysis(MPI_COMM_WORLD, ranks.back(), cfg, job.first);
  } else {
    made = analyzer::start_guarded_analysis(MPI_COMM_WORLD, job.locations, ranks, cfg, job.first, job.count);
  }
  if (made != Status::kOk || ranks.size() != job.loaded.size()) {
    std::fprintf(stderr, "critpath-analyze: process %d: cannot set up the analysis ranks\n", job.rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const uint64_t wall0 = clock::monotonic_ns();
  int status = 0;
  auto& loaded = job.loaded;
  if (!o.export_dir.empty()) {
    std::vector<std::string> errors(loaded.size());
    std::vector<Status> results(loaded.size(), Status::kOk);
    for_each_location(loaded.size(), job.first, o.workers, [&](size_t i) {
      results[i] = analyzer::otf2::export_location(loaded[i]->trace, ranks[i], o.export_dir, errors[i]);
    });
    if (results[0] != Status::kOk) {
      std::fprintf(stderr, "critpath-analyze: process %d: cannot write the OTF2 archive into %s: %s\n",
                   job.rank, o.export_dir.c_str(), errors[0].c_str());
      status = 1;
    } else if (job.rank == 0) {
      std::fprintf(stderr, "critpath-analyze: OTF2 archive in %s/traces.otf2\n", o.export_dir.c_str());
    }
  } else {
    for_each_location(loaded.size(), job.first, o.workers,
                      [&](size_t i) { analyzer::run_analysis(loaded[i]->trace, ranks[i], wall0); });
  }
  analyzer::end_guarded_analysis(cfg, job.first);
  ranks.clear();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Several traced ranks per process run as fibers on worker threads that drive MPI at the same time.
  Job job;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &job.provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job.size);
  log::set_rank(job.rank);
  const Options o = parse_options(argc, argv);
  if (o.help) {
    if (job.rank == 0) print_usage();
    MPI_Finalize();
    return 0;
  }
  job.trace_dir = o.dir + "/trace";
  job.import = !o.otf2_anchor.empty();
  const bool archive_ok = job.import && job.archive.open(o.otf2_anchor, job.otf2_error) == Status::kOk;
  job.locations = job.import      ? (archive_ok ? job.archive.ranks() : 0)
                  : o.dir.empty() ? 0
                                  : traced_ranks(job.trace_dir);
  int status = check_job(o, archive_ok, job);
  if (status == 0) status = load_job(o, job);
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) {
    if (job.import) note_skipped(job.archive, job.skipped, o.otf2_anchor, job.loaded);
    const config::Config cfg = configure(o);
    std::vector<std::unique_ptr<trace::ChunkStore>> cut;  // the partial run's prefixes, if any
    if (!share_output_and_cut(job, cut)) {
      std::fprintf(stderr,
                   "critpath-analyze: process %d: cannot cut the partial run to its consistent "
                   "prefix\n",
                   job.rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    worst = run_job(o, cfg, job);
  }
  MPI_Finalize();
  return worst;
}
