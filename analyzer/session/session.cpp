// critpath — analyzer/session/session.cpp
//
// The MPI side of a measurement session, registered with libtrace/runtime/session.h:
//
//   MPI_Init      -> on_init:      config, output directory (rank 0 decides, broadcast),
//                                  clock choice, recorder start, root + MPI_Init events
//   MPI_Pcontrol  -> on_pcontrol:  pause / resume recording
//   MPI_Finalize  -> on_finalize:  MPI_Finalize events, recorder stop, in-situ analysis
//                                  (analyzer/analysis.h), then PMPI_Finalize runs
//
// Nothing here may throw into the application or change its MPI state: every step is
// wrapped, failures disable measurement with one `critpath:` line.
#include <mpi.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

#include "analyzer/analysis.h"
#include "analyzer/engine/comm.h"
#include "analyzer/engine/run_info.h"
#include "analyzer/engine/trace_set.h"
#include "analyzer/session/analysis_guard.h"
#include "analyzer/session/fault.h"
#include "analyzer/session/hosted.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/config/config.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder.h"
#include "libtrace/runtime/recorder_control.h"
#include "libtrace/runtime/session.h"

extern char** environ;

namespace critpath::analyzer {
namespace {

using runtime::Phase;

RunInfo g_run;
// Every rank allows a hosted in-situ analysis (session/hosted.h), agreed at MPI_Init.
bool g_hosting_allowed = false;

// This rank's clock as the analysis sees it: CLOCK_MONOTONIC plus any injected skew.
double local_clock_ns() { return skewed_ns(g_run.skew, double(clock::monotonic_ns())); }

std::string read_exe_name() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "app";
  buf[n] = 0;
  const char* slash = std::strrchr(buf, '/');
  return slash ? slash + 1 : buf;
}

std::vector<std::string> read_args() {
  std::vector<std::string> out;
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string arg;
  bool first = true;
  while (std::getline(f, arg, '\0')) {
    if (!first) out.push_back(arg);
    first = false;
  }
  return out;
}

std::string utc_now(const char* fmt) {
  char buf[64];
  time_t t = time(nullptr);
  tm tmv;
  gmtime_r(&t, &tmv);
  strftime(buf, sizeof buf, fmt, &tmv);
  return buf;
}

std::string local_stamp() {
  char buf[64];
  time_t t = time(nullptr);
  tm tmv;
  localtime_r(&t, &tmv);
  strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tmv);
  return buf;
}

bool mkdir_p(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    if (i < path.size()) cur += path[i];
  }
  return true;
}

// Creates `base`, or the first of base.1, base.2, ... that does not exist, exclusively (mkdir
// never reuses a directory, never follows a symlink: both are EEXIST), mode 0755 (less with a
// stricter umask), and checks that a report fits in it (not read-only, not full). Returns its
// name, or empty with `err` set to the errno that says why not.
std::string create_fresh_dir(const std::string& base, int& err) {
  for (int k = 0; k < 1000; ++k) {
    std::string name = k == 0 ? base : base + "." + std::to_string(k);
    if (mkdir(name.c_str(), 0755) == 0) {
      if ((err = trace::ChunkStore::probe_spill(name + "/report.json", 1 << 20)) != 0) {
        rmdir(name.c_str());
        return {};
      }
      return name;
    }
    if (errno != EEXIST) {
      err = errno;
      return {};
    }
  }
  err = EEXIST;
  return {};
}

// Rank 0: creates a fresh directory, never reusing an existing one (".1", ".2", ... suffix).
// When it cannot be created or written (read-only, full, a file in the way), the directory is
// made in $TMPDIR (or /tmp) under the same name instead, with a warning.
std::string create_output_dir(const std::string& wanted, const std::string& exe, int size) {
  std::string base = wanted.empty() ? "critpath-" + exe + "-" + std::to_string(size) + "p-" + local_stamp()
                                    : wanted;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const size_t slash = base.rfind('/');
  if (slash != std::string::npos && slash > 0) mkdir_p(base.substr(0, slash));
  int err = 0;
  std::string name = create_fresh_dir(base, err);
  if (!name.empty()) {
    if (name != base && !wanted.empty())
      log::warn("output directory %s exists; writing to %s instead", base.c_str(), name.c_str());
    return name;
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string fallback_base = std::string(tmp && *tmp ? tmp : "/tmp") + "/" +
                                    (slash == std::string::npos ? base : base.substr(slash + 1));
  int err2 = 0;
  name = fallback_base == base ? std::string() : create_fresh_dir(fallback_base, err2);
  if (name.empty()) {
    log::warn("cannot create output directory %s (%s) nor %s (%s); no report will be written", base.c_str(),
              std::strerror(err), fallback_base.c_str(), std::strerror(err2 ? err2 : err));
    return {};
  }
  log::warn("cannot create output directory %s (%s); writing to %s instead", base.c_str(), std::strerror(err),
            name.c_str());
  return name;
}

std::string mpi_library_version() {
  std::string s;
  if (engine::Comm::library_version(s) != Status::kOk) return "unknown";
  const size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  // One line, single spaces ("MPICH Version:\t4.0.2" -> "MPICH Version: 4.0.2").
  std::string out;
  for (char c : s) {
    const bool blank = c == ' ' || c == '\t' || c == '\0' || c == '\r';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

void disable(const char* why) {
  runtime::disable_measurement();
  if (why) log::warn("measurement disabled: %s", why);
}

// This rank's offset to rank 0's clock, measured on a private duplicate of MPI_COMM_WORLD (the
// ping-pongs can never meet application messages); none when the duplicate cannot be made.
// Collective over MPI_COMM_WORLD.
OffsetSample measure_world_offset() {
  engine::Comm world, sync;
  if (engine::Comm::borrow(MPI_COMM_WORLD, world) != Status::kOk || world.dup(sync) != Status::kOk) return {};
  return measure_offset(sync.native_handle(), local_clock_ns);
}

// on_init, step 1: the configuration, current from now on. False when measurement is off.
bool read_configuration(config::Config& cfg) {
  std::vector<std::string> warnings;
  cfg = config::parse(environ, warnings);
  for (const auto& w : warnings) log::print0(w);
  config::set_current(cfg);
  log::set_verbosity(cfg.verbose);
  return cfg.enable;
}

// Step 2: what this process knows alone: its program, the MPI library, the timer.
void describe_process(const engine::Comm& world, const config::Config& cfg, int thread_level) {
  g_run.rank = world.rank();
  g_run.size = world.size();
  g_run.thread_level = thread_level;
  // MPMD launches (mpiexec -n A ./x : -n B ./y) number their commands: the partitions.
  int appnum = 0;
  if (world.app_number(appnum)) g_run.appnum = appnum;
  g_run.executable = read_exe_name();
  g_run.args = read_args();
  g_run.mpi_library = mpi_library_version();
  g_run.timer = clock::choose(cfg.timer, &g_run.timer_why);
}

// Step 3: the output directory: rank 0 creates it, everyone learns its name. Collective.
Status agree_output_dir(const engine::Comm& world, const config::Config& cfg) {
  char dir[4096] = {0};
  if (world.rank() == 0) {
    g_run.start_utc = utc_now("%Y-%m-%dT%H:%M:%SZ");
    std::string d = create_output_dir(cfg.output_dir, g_run.executable, world.size());
    std::strncpy(dir, d.c_str(), sizeof dir - 1);
  }
  CRITPATH_FORWARD_IF_ERROR(world.bcast(dir, sizeof dir, 0));
  g_run.output_dir = dir;
  return Status::kOk;
}

// Step 4: the trace buffers, spilling to CRITPATH_SPILL_DIR or <output>/spill.
Status start_recorder(const config::Config& cfg, int rank) {
  runtime::RecorderOptions ro;
  ro.chunk_bytes = cfg.chunk_size;
  ro.memory_budget = cfg.buffer_size;
  ro.compression_level = cfg.compression_level;
  ro.compress_thread = cfg.compress_thread;
  std::string spill_dir = cfg.spill_dir.empty()
                              ? (g_run.output_dir.empty() ? std::string("/tmp") : g_run.output_dir) + "/spill"
                              : cfg.spill_dir;
  ro.spill_path = spill_dir + "/rank-" + std::to_string(rank) + "." + std::to_string(getpid()) + ".chunks";
  // Chunks past the budget that cannot be spilled stay in memory up to 8x the budget.
  ro.memory_cap = cfg.buffer_size > UINT64_MAX / 8 ? UINT64_MAX : 8 * cfg.buffer_size;
  // An unusable spill directory is said now, with its path, not at the first spill.
  if (const int err = trace::ChunkStore::probe_spill(ro.spill_path)) {
    log::warn("spill directory %s is unusable (%s): trace chunks past CRITPATH_BUFFER_SIZE stay "
              "in memory, up to %llu MiB; then recording stops",
              spill_dir.c_str(), std::strerror(err), static_cast<unsigned long long>(ro.memory_cap >> 20));
    ro.spill_path.clear();
  }
  return runtime::recorder_start(ro);
}

// Step 5: where each rank runs. Ranks on rank 0's host read the same CLOCK_MONOTONIC: their
// offset is exactly 0, and a measured one would only add ping-pong noise. (An injected skew
// simulates other hosts.) `peers`: who to tell when this rank faults, the other ranks on this
// host that will listen (fault.h), exchanged here, where every rank still takes part (none
// when that exchange fails). Collective.
Status exchange_hosts(const engine::Comm& world, const config::Config& cfg, std::vector<FaultPeer>& peers) {
  char host[256] = {0}, host0[256] = {0};
  gethostname(host, sizeof host - 1);
  g_run.host = host;
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) g_run.cpus.push_back(c);
  }
  std::memcpy(host0, host, sizeof host0);
  CRITPATH_FORWARD_IF_ERROR(world.bcast(host0, sizeof host0, 0));
  g_run.same_host_as_root = std::strcmp(host, host0) == 0 && !g_run.skew.active;
  // With it, whether every rank allows a hosted analysis (its settings could differ by rank).
  int agree[2] = {g_run.same_host_as_root ? 1 : 0,
                  hosting_allowed(cfg, world.size(), cfg.analysis && !g_run.output_dir.empty()) ? 1 : 0};
  CRITPATH_FORWARD_IF_ERROR(world.allreduce(agree, 2, MPI_INT, MPI_MIN));
  g_run.all_on_one_host = agree[0] == 1;
  g_hosting_allowed = agree[0] == 1 && agree[1] == 1;
  const int size = world.size();
  if (size > 1) {
    const uint64_t mine[3] = {fault_host_key(), uint64_t(getpid()), fault_peer_signal_free() ? 1u : 0u};
    std::vector<uint64_t> all(3 * size_t(size));
    if (world.allgather(mine, sizeof mine, all.data()) != Status::kOk) {
      log::warn("the ranks could not exchange their process ids at MPI_Init: a fault of this rank "
                "will not make the others dump their traces");
      return Status::kOk;
    }
    for (int r = 0; r < size; ++r)
      if (r != world.rank() && all[3 * size_t(r)] == mine[0] && all[3 * size_t(r) + 2] == 1)
        peers.push_back({r, pid_t(all[3 * size_t(r) + 1])});
  }
  return Status::kOk;
}

// The collectives here run on MPI_COMM_WORLD itself (borrowed: its error handler stays the
// application's), in the same order on every rank; one that fails disables measurement on
// this rank with one warning.
void on_init(uint64_t t_enter, uint32_t init_region, int thread_level) {
  try {
    engine::Comm world;
    if (engine::Comm::borrow(MPI_COMM_WORLD, world) != Status::kOk)
      return disable("cannot query MPI_COMM_WORLD at MPI_Init");
    log::set_rank(world.rank());
    config::Config cfg;
    if (!read_configuration(cfg)) {
      runtime::disable_measurement();
      return;
    }
    describe_process(world, cfg, thread_level);
    if (g_run.timer != clock::TimerKind::kTsc) {
      runtime::use_tsc_timer(false);
      t_enter = runtime::now();  // MPI_Init's own duration is lost when the timer changes
    }
    if (agree_output_dir(world, cfg) != Status::kOk)
      return disable("the ranks could not agree on the output directory at MPI_Init");
    if (start_recorder(cfg, world.rank()) != Status::kOk) return disable("no memory for trace buffers");
    g_run.begin = clock::sample_pair(g_run.timer);
    g_run.init_enter_ticks = t_enter;
    g_run.skew = parse_debug_skew(cfg.debug_clock_skew, world.rank(), double(g_run.begin.ns));
    g_run.clock_linear = cfg.clock_correction != "none";  // "linear" or "clc"
    std::vector<FaultPeer> peers;
    if (exchange_hosts(world, cfg, peers) != Status::kOk)
      return disable("the ranks could not exchange their hosts at MPI_Init");
    if (g_run.clock_linear && world.size() > 1 && !g_run.all_on_one_host)
      g_run.init_offset = measure_world_offset();
    if (!runtime::start_recording()) return;  // disabled meanwhile (a fault, a failure)
    runtime::ThreadState* t = runtime::ready_state();
    if (!t) return disable("cannot attach the main thread's trace buffer");
    runtime::record_region(*t, trace::EventKind::kEnter, defs::kRootRegion, t_enter);
    runtime::record_region(*t, trace::EventKind::kEnter, init_region, t_enter);
    runtime::record_exit(*t, init_region);
    log::info0(2, "recording to %s (timer: %s)", g_run.output_dir.c_str(), g_run.timer_why.c_str());
    fault_arm(g_run);  // from now on a fault leaves a partial trace
    fault_set_peers(peers);
  } catch (...) {
    disable("internal error at MPI_Init");
  }
}

void on_pcontrol(int level) {
  if (level == 0 && runtime::current_phase() == Phase::kRecording) {
    if (runtime::ThreadState* t = runtime::ready_state()) {
      trace::Event e;
      e.time = runtime::now();
      e.kind = trace::EventKind::kMeasurementOff;
      runtime::record_event(*t, e);
    }
    runtime::pause_recording();
  } else if (level != 0 && runtime::resume_recording()) {
    if (runtime::ThreadState* t = runtime::ready_state()) {
      trace::Event e;
      e.time = runtime::now();
      e.kind = trace::EventKind::kMeasurementOn;
      runtime::record_event(*t, e);
    }
  }
}

void on_finalize(uint32_t finalize_region) {
  fault_disarm();
  // The end of the run is recorded even when paused: the root must close.
  Phase was = Phase::kRecording;
  if (!runtime::finish_recording(was)) return;
  const uint64_t wall0 = clock::monotonic_ns();
  try {
    if (runtime::ThreadState* t = runtime::ready_state()) {
      const uint64_t t_fin = runtime::now();
      g_run.finalize_enter_ticks = t_fin;
      if (was == Phase::kPaused) {
        trace::Event e;
        e.time = t_fin;
        e.kind = trace::EventKind::kMeasurementOn;
        runtime::record_event(*t, e);
      }
      runtime::record_region(*t, trace::EventKind::kEnter, finalize_region, t_fin);
      const uint64_t t_end = runtime::now();
      runtime::record_region(*t, trace::EventKind::kExit, finalize_region, t_end);
      runtime::record_region(*t, trace::EventKind::kExit, defs::kRootRegion, t_end);
    }
    runtime::enter_finalizing();
    g_run.end = clock::sample_pair(g_run.timer);
    g_run.conv = clock::TickConverter(g_run.timer, g_run.begin, g_run.end);
    runtime::recorder_stop();
    g_run.recorder = runtime::recorder_stats();
    g_run.store = runtime::chunk_store().stats();
    if (g_run.clock_linear && g_run.size > 1 && !g_run.all_on_one_host)
      g_run.fin_offset = measure_world_offset();
    // The analysis reads this rank through a LocationTrace built from the process-wide
    // recording state. The notes are taken now, after recorder_stop(): the recording side
    // logs none after it, and the analysis appends its own warnings to location.notes.
    LocationTrace location;
    location.chunks = &runtime::chunk_store();
    location.definitions = &defs::current();
    location.run = g_run;
    location.notes = log::notes();
    // Crowded on one host: rank 0 analyses every rank (session/hosted.h); else, or when the
    // hand-off fails, each rank its own, over native MPI.
    if (!g_hosting_allowed || !analyse_hosted(location, config::current(), wall0)) {
      engine::Comm ranks;
      if (start_guarded_analysis(MPI_COMM_WORLD, ranks, config::current(), g_run.rank) == Status::kOk)
        run_analysis(location, ranks, wall0);
      else log::warn("cannot create the analysis communicator; no report");
      end_guarded_analysis(config::current(), g_run.rank);
    }
  } catch (...) {
    log::warn("internal error during the analysis at MPI_Finalize; the report may be missing");
  }
  runtime::enter_finalizing();
}

void after_finalize() { runtime::end_session(); }

const runtime::SessionHooks kHooks = {on_init, on_finalize, after_finalize, on_pcontrol, fault_abort};

// The load-time actions of the library: tell libtrace who runs sessions, and register the exit
// handler that writes a partial trace when the program exits without MPI_Finalize (registered
// this early, it runs after the application's own exit handlers). No allocation, no I/O, safe
// in processes that never call MPI_Init (mpiexec itself: the handler then does nothing).
__attribute__((constructor)) void install_session() {
  runtime::register_session(&kHooks);
  fault_install_exit_handler();
}

}  // namespace
}  // namespace critpath::analyzer
