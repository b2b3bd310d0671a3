// critpath — analyzer/session/hosted.cpp: several traced ranks analysed by one process
// (critpath-analyze, and in situ when crowded); hosted.h has the protocol.
#include "analyzer/session/hosted.h"

#include <fcntl.h>
#include <mpi.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "analyzer/analysis.h"
#include "analyzer/engine/comm.h"
#include "analyzer/engine/fiber.h"
#include "analyzer/session/analysis_guard.h"
#include "analyzer/session/partial_trace.h"
#include "analyzer/session/trace_archive.h"
#include "libtrace/runtime/log.h"

namespace critpath::analyzer {
namespace {

std::string printf_string(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string rank_base(const std::string& dir, int rank) { return dir + "/rank-" + std::to_string(rank); }

// flock() that retries when a signal interrupts it. True when the lock is held.
bool lock_file(int fd, int how) {
  while (flock(fd, how) != 0)
    if (errno != EINTR) return false;
  return true;
}

// Rank 0, holding the lock: every rank loaded from `dir` and analysed as fibers of this
// process. `written`: each rank's CPU seconds writing its trace.
void analyse_all(const LocationTrace& mine, const config::Config& cfg, const std::string& dir,
                 const std::vector<double>& written, uint64_t wall0) {
  const int P = mine.run.size;
  // The engine calls MPI (MPI_Reduce_local, operator creation) from the fibers: worker threads
  // beside this one only when the application initialised MPI_THREAD_MULTIPLE. Worker 0 is
  // this thread (fiber::run), which called MPI_Finalize.
  const int workers = mine.run.thread_level == MPI_THREAD_MULTIPLE
                          ? std::max<int>(1, int(mine.run.cpus.size()))
                          : 1;
  std::vector<std::unique_ptr<LoadedLocation>> loaded;
  for (int r = 0; r < P; ++r) {
    const double cpu0 = engine::fiber::cpu_seconds();
    loaded.push_back(std::make_unique<LoadedLocation>());
    std::string why;
    if (load_location(dir, r, *loaded.back(), why) != Status::kOk) {
      log::warn("hosted analysis: %s", why.c_str());
      return;
    }
    if (!why.empty()) log::warn("hosted analysis: %s", why.c_str());
    RunInfo& run = loaded.back()->trace.run;
    run.offline = false;  // live: the run is ending now, with its budgets and outputs
    run.hosted_ranks = P;
    run.hosted_workers = std::min(workers, P);
    run.handoff_cpu_s = written[size_t(r)] + (engine::fiber::cpu_seconds() - cpu0);
  }
  std::vector<engine::Comm> ranks;
  if (start_guarded_analysis(MPI_COMM_SELF, P, ranks, cfg, 0, P) == Status::kOk && int(ranks.size()) == P)
    for_each_location(size_t(P), 0, workers,
                      [&](size_t i) { run_analysis(loaded[i]->trace, ranks[i], wall0); });
  else log::warn("cannot create the hosted analysis ranks; no report");
  end_guarded_analysis(cfg, 0);
}

// Rank 0 keeps every rank's trace file open while it analyses them: room for P more
// descriptors than `was` (the soft limit now, restored afterwards), raised towards the hard
// limit if need be.
bool descriptors_for(int P, const rlimit& was) {
  const rlim_t want = rlim_t(P) + 256;
  if (was.rlim_cur == RLIM_INFINITY || was.rlim_cur >= want) return true;
  if (was.rlim_max != RLIM_INFINITY && was.rlim_max < want) return false;
  rlimit lim = was;
  lim.rlim_cur = want;
  return setrlimit(RLIMIT_NOFILE, &lim) == 0;
}

void remove_traces(const std::string& dir, int P) {
  for (int r = 0; r < P; ++r) {
    unlink((rank_base(dir, r) + ".cptrace").c_str());
    unlink((rank_base(dir, r) + ".json").c_str());
  }
  rmdir(dir.c_str());
}

}  // namespace

Status load_location(const std::string& trace_dir, int location, LoadedLocation& out, std::string& why) {
  why.clear();
  out.trace.chunks = &out.chunks;
  out.trace.definitions = &out.definitions;
  const std::string base = rank_base(trace_dir, location);
  Status s = load_archive(trace_dir, location, out.trace.run, out.definitions, out.trace.notes);
  if (s != Status::kOk) {
    why = printf_string("analysis incomplete: rank %d: cannot read %s.json; no report", location,
                        base.c_str());
    return s;
  }
  if (out.trace.run.rank != location) {
    why = printf_string(
        "analysis incomplete: %s.json describes rank %d: the rank files were renamed or swapped; no report",
        base.c_str(), out.trace.run.rank);
    return Status::kCorrupt;
  }
  s = out.chunks.open_file(base + ".cptrace");
  if (s != Status::kOk) {
    why = printf_string(
        "analysis incomplete: rank %d: cannot read %s.cptrace (%s: the file is missing, truncated or "
        "damaged); no report",
        location, base.c_str(), to_string(s));
    return s;
  }
  // The trace file must be the one its definitions were written with: an empty, truncated or
  // swapped file would otherwise analyse as a rank that did nothing.
  const trace::ChunkStoreStats got = out.chunks.stats();
  const trace::ChunkStoreStats& want = out.trace.run.store;
  if (got.events != want.events || got.chunks != want.chunks || got.bytes_total != want.bytes_total ||
      (want.fingerprint != 0 && got.fingerprint != want.fingerprint)) {
    why = printf_string(
        "analysis incomplete: %s.cptrace holds %llu events in %llu chunks (%llu B), but %s.json "
        "records %llu events in %llu chunks (%llu B): the file is %s; no report",
        base.c_str(), static_cast<unsigned long long>(got.events),
        static_cast<unsigned long long>(got.chunks), static_cast<unsigned long long>(got.bytes_total),
        base.c_str(), static_cast<unsigned long long>(want.events),
        static_cast<unsigned long long>(want.chunks), static_cast<unsigned long long>(want.bytes_total),
        got.bytes_total == 0                 ? "empty"
        : got.bytes_total < want.bytes_total ? "truncated or another rank's"
                                             : "another rank's (swapped?)");
    return Status::kCorrupt;
  }
  // A partial trace (written at a fault): the raw buffers not compressed then join the chunks.
  if (!out.trace.run.partial.empty() && merge_tail(base + ".tail", out.chunks) != Status::kOk)
    why = printf_string(
        "%s.tail is damaged: the rank's last events before the fault are read up to the damage",
        base.c_str());
  return Status::kOk;
}

void for_each_location(size_t n, int first, int workers, const std::function<void(size_t)>& fn) {
  if (n == 1) {
    fn(size_t(0));
    return;
  }
  std::vector<log::ThreadRank> speaks(n);
  for (size_t i = 0; i < n; ++i) speaks[i].rank = first + int(i);
  engine::fiber::PoolOptions options;
  options.workers = workers;
  options.on_switch = [&](size_t i, bool) { log::swap_thread_rank(speaks[i]); };
  engine::fiber::run(n, fn, options);
  log::info0(2, "%zu ranks analysed as fibers; the deepest fiber stack held %zu KiB", n,
             engine::fiber::max_stack_resident() / 1024);
  for (log::ThreadRank& t : speaks) delete static_cast<std::set<std::string>*>(t.causes);
}

bool hosting_allowed(const config::Config& cfg, int ranks, bool analysis_to_run) {
  if (cfg.analysis_hosted == "false" || !analysis_to_run || ranks < 2 || cfg.debug_analysis_stall >= 0)
    return false;
  if (cfg.analysis_hosted == "true") return true;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 0 && ranks > 8 * cpus;
}

bool analyse_hosted(LocationTrace& location, const config::Config& cfg, uint64_t wall0) {
  const RunInfo& run = location.run;
  const std::string dir = run.output_dir + "/trace", lock_path = run.output_dir + "/.critpath-hosted.lock";
  const bool keep = keeps_trace(cfg);
  // Rank 0 locks first: whoever learns below that it took over finds the lock held.
  int fd = -1;
  rlimit fds{};
  const bool have_fds = run.rank == 0 && getrlimit(RLIMIT_NOFILE, &fds) == 0;
  if (have_fds && descriptors_for(run.size, fds)) {
    fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0 && !lock_file(fd, LOCK_EX)) {
      close(fd);
      fd = -1;
    }
  }
  const double cpu0 = engine::fiber::cpu_seconds();
  const double mine = save_trace(location, dir) == Status::kOk ? engine::fiber::cpu_seconds() - cpu0
                                                               : -1.0;  // < 0: not written
  // On MPI_COMM_WORLD itself (borrowed: its error handler stays the application's), as the
  // session's other collectives.
  engine::Comm world;
  std::vector<unsigned char> all;
  std::vector<int> counts, displs;
  std::vector<double> written(run.rank == 0 ? size_t(run.size) : 0);
  int go = 0;
  bool agreed = engine::Comm::borrow(MPI_COMM_WORLD, world) == Status::kOk &&
                world.gatherv(&mine, 1, sizeof mine, 0, all, counts, displs) == Status::kOk;
  if (run.rank == 0 && agreed && all.size() == written.size() * sizeof(double)) {
    std::memcpy(written.data(), all.data(), all.size());
    go = fd >= 0 && std::all_of(written.begin(), written.end(), [](double w) { return w >= 0; });
  }
  agreed = agreed && world.bcast(&go, sizeof go, 0) == Status::kOk;
  if (!go || !agreed) {
    if (run.rank == 0) {
      log::warn("the ranks could not hand their traces over to rank 0 for a hosted analysis "
                "(CRITPATH_ANALYSIS_HOSTED); each rank analyses its own");
      if (fd >= 0) close(fd);
      unlink(lock_path.c_str());
      if (have_fds) setrlimit(RLIMIT_NOFILE, &fds);
    }
    if (!keep) {
      unlink((rank_base(dir, run.rank) + ".cptrace").c_str());
      unlink((rank_base(dir, run.rank) + ".json").c_str());
      rmdir(dir.c_str());  // the last one's succeeds
    }
    return false;
  }
  if (run.rank != 0) {
    // Sleep until rank 0's analysis is over (or rank 0 is gone: the kernel drops its lock).
    const int wait_fd = open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (wait_fd >= 0) {
      if (lock_file(wait_fd, LOCK_SH)) flock(wait_fd, LOCK_UN);
      close(wait_fd);
    }
    return true;
  }
  try {
    analyse_all(location, cfg, dir, written, wall0);
  } catch (...) {
    log::warn("internal error during the hosted analysis at MPI_Finalize; the report may be missing");
  }
  if (!keep) remove_traces(dir, run.size);
  unlink(lock_path.c_str());
  flock(fd, LOCK_UN);
  close(fd);
  setrlimit(RLIMIT_NOFILE, &fds);  // the application's limit again
  return true;
}

}  // namespace critpath::analyzer
