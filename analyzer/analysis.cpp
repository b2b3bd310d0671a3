// critpath — analyzer/analysis.cpp: the in-situ analysis driver (see analysis.h).
#include "analyzer/analysis.h"

#include <mpi.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "analyzer/passes/critical_path/critical_path.h"
#include "analyzer/passes/delay/delay.h"
#include "analyzer/passes/pass.h"
#include "analyzer/passes/wait_states/wait_states.h"
#include "analyzer/passes/whatif/whatif.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/clc.h"
#include "analyzer/engine/clock_sync.h"
#include "analyzer/engine/exchange.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/engine/watchdog.h"
#include "analyzer/engine/window.h"
#include "analyzer/otf2/otf2_export.h"
#include "analyzer/session/trace_archive.h"
#include "analyzer/report/atomic_file.h"
#include "analyzer/report/event_dump.h"
#include "analyzer/report/report.h"
#include "libtrace/buffer/chunk_store.h"
#include "libtrace/config/config.h"
#include "libtrace/runtime/log.h"

namespace critpath::analyzer {
namespace {

// A warning of the analysis: one stderr line (log::warn) and a note of the location. The
// report takes the location's notes, never the process-wide log (which every location of a
// critpath-analyze process shares), so the analysis keeps its own warnings there itself.
__attribute__((format(printf, 2, 3))) void warn(LocationTrace& location, const char* fmt, ...) {
  char buf[1024];  // as log::warn: a longer line is cut
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  log::warn("%s", buf);
  try {
    location.notes.emplace_back(buf);
  } catch (...) {  // out of memory loses the note, not the stderr line (as log::warn)
  }
}

// Where the ranks ran: per host, how many ranks and how many distinct cores their affinity
// masks allow. Ranks outnumbering cores wait for a core inside MPI as well as outside: the
// report must say so before anyone reads the waiting times.
struct NodeInfo {
  char host[64];
  uint64_t mask[16];  // CPUs 0..1023
};

void describe_nodes(const engine::Group& group, const RunInfo& run, ReportInput& in) {
  NodeInfo mine{};
  std::snprintf(mine.host, sizeof mine.host, "%s", run.host.empty() ? "?" : run.host.c_str());
  for (int c : run.cpus)
    if (c >= 0 && c < 1024) mine.mask[c / 64] |= uint64_t(1) << (c % 64);
  std::vector<NodeInfo> all;
  std::vector<int> counts, displs;
  if (group.gather_to_root(&mine, 1, all, counts, displs) != Status::kOk || !group.is_root()) return;
  struct Node {
    int ranks = 0;
    uint64_t mask[16] = {};
  };
  std::map<std::string, Node> nodes;
  for (const NodeInfo& n : all) {
    Node& node = nodes[std::string(n.host, strnlen(n.host, sizeof n.host))];
    ++node.ranks;
    for (int w = 0; w < 16; ++w) node.mask[w] |= n.mask[w];
  }
  std::string line = "@ Nodes           : " + std::to_string(nodes.size()) +
                     (nodes.size() == 1 ? " node" : " nodes");
  int shown = 0;
  for (const auto& [host, node] : nodes) {
    int cores = 0;
    for (uint64_t w : node.mask) cores += __builtin_popcountll(w);
    if (shown++ < 4)
      line += std::string(shown == 1 ? ": " : "; ") + host + " " + std::to_string(node.ranks) +
              (node.ranks == 1 ? " rank on " : " ranks on ") + std::to_string(cores) +
              (cores == 1 ? " core" : " cores");
    if (cores > 0 && node.ranks > cores) {
      char msg[400];
      std::snprintf(msg, sizeof msg,
                    "%d ranks share %d cores on %s (oversubscribed %.1fx): their waiting and MPI "
                    "times include the time a rank waits for a core, not only for other ranks",
                    node.ranks, cores, host.c_str(), double(node.ranks) / cores);
      in.lead_findings.push_back(std::string(msg) + ".");
      in.notes.push_back(std::string("oversubscribed: ") + msg);
    }
  }
  if (shown > 4) line += "; ...";
  in.header_lines.push_back(line);
}

std::vector<std::string> gather_notes(const engine::Group& group,
                                      const std::vector<std::string>& notes) {
  std::string mine;
  for (const std::string& n : notes)
    mine += "rank " + std::to_string(group.rank()) + ": " + n + "\n";
  std::vector<char> all;
  std::vector<int> counts, displs;
  group.gather_to_root(mine.data(), mine.size(), all, counts, displs);
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == '\n') {
      out.emplace_back(all.data() + start, i - start);
      start = i + 1;
    }
  return out;
}

// "1 (3), 4 (1)": the ranks whose row has `stat` > 0, with the value; at most 8 named.
std::string ranks_with(const std::vector<std::vector<double>>& rows, int stat) {
  std::string out;
  int named = 0, more = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r][size_t(stat)] <= 0) continue;
    if (named == 8) {
      ++more;
      continue;
    }
    char b[64];
    std::snprintf(b, sizeof b, "%s%zu (%.0f)", named ? ", " : "", r, rows[r][size_t(stat)]);
    out += b;
    ++named;
  }
  if (more) out += " and " + std::to_string(more) + " more";
  return out;
}

// Rank 0: the `analysis incomplete:` notes of what the ranks' statistics say the analysis
// could not use: partial traces, unmatched messages, collectives not all members recorded.
std::vector<std::string> incomplete_notes(const std::vector<std::vector<double>>& rows) {
  std::vector<std::string> out;
  double partial = 0, unmatched = 0, dropped = 0, comms = 0;
  for (const auto& row : rows) {
    partial += row[kStatPartial];
    unmatched += row[kStatUnmatched];
    dropped += row[kStatCollsDropped];
    comms = std::max(comms, row[kStatInconsistentComms]);
  }
  char q[512];
  if (partial > 0) {
    std::string who;
    for (size_t r = 0; r < rows.size(); ++r)
      if (rows[r][kStatPartial] > 0) who += (who.empty() ? "" : ",") + std::to_string(r);
    std::snprintf(q, sizeof q, "analysis incomplete: the traces of %.0f ranks are partial (ranks %s; "
                  "see their notes)", partial, who.c_str());
    out.emplace_back(q);
  }
  if (unmatched > 0) {
    std::snprintf(q, sizeof q, "analysis incomplete: %.0f message%s could not be matched, %s waits "
                  "not analysed (rank (messages): %s)", unmatched, unmatched == 1 ? "" : "s",
                  unmatched == 1 ? "its" : "their", ranks_with(rows, kStatUnmatched).c_str());
    out.emplace_back(q);
  }
  if (dropped > 0) {
    std::snprintf(q, sizeof q, "analysis incomplete: on %.0f communicator%s the members recorded "
                  "different numbers of collectives; the %.0f beyond what every member recorded are not "
                  "analysed (rank (collectives left out): %s)", comms, comms == 1 ? "" : "s", dropped,
                  ranks_with(rows, kStatCollsDropped).c_str());
    out.emplace_back(q);
  }
  return out;
}

// The passes' settings, typed (passes/pass.h).
AnalysisOptions analysis_options(const config::Config& cfg) {
  AnalysisOptions o;
  o.report_threshold_pct = std::atof(cfg.report_threshold.c_str());
  o.delay_analysis = cfg.delay_analysis;
  o.delay_batch = uint64_t(std::max(1, cfg.debug_delay_batch));
  o.delay_replay = int(cfg.debug_delay_replay == "gathered"      ? passes::DelayReplay::kGathered
                       : cfg.debug_delay_replay == "distributed" ? passes::DelayReplay::kDistributed
                                                                 : passes::DelayReplay::kAuto);
  o.partitions = cfg.partitions;
  o.cp_walk_mode = int(passes::cp_walk_mode(cfg.debug_cp_walk));
  o.simulation = cfg.simulation;
  o.simulation_budget_pct = cfg.simulation_budget;
  o.whatif = cfg.whatif;
  o.whatif_top = cfg.whatif_top;
  o.simulation_delay_us = uint32_t(cfg.debug_simulation_delay);
  o.timeline = cfg.timeline;
  o.timeline_max_events = uint64_t(std::max(1, cfg.timeline_max_events));
  o.simulation_replay = int(cfg.debug_simulation_replay == "gathered"      ? passes::ReplayMode::kGathered
                            : cfg.debug_simulation_replay == "distributed" ? passes::ReplayMode::kDistributed
                                                                           : passes::ReplayMode::kAuto);
  return o;
}

}  // namespace

namespace {

// Feeds location 0's events, with their call-path nodes, into the replay index.
// Progress on rank 0 for long analyses: nothing during the first ~2 s, then one line
// "critpath: analysis: <phase> <percent>%" per phase change or per second at most.
class Progress {
 public:
  Progress(int rank, uint64_t start_ns) : rank_(rank), start_(start_ns) {}
  void report(const char* phase, double fraction) {
    if (rank_ != 0) return;
    const uint64_t now = clock::monotonic_ns();
    if (now - start_ < 2000000000ull) return;
    if (phase == last_phase_ && now - last_ < 1000000000ull) return;
    last_phase_ = phase;
    last_ = now;
    log::info0(1, "analysis: %s %d%%", phase,
               int(100.0 * std::min(1.0, std::max(0.0, fraction))));
  }

 private:
  int rank_;
  uint64_t start_;
  uint64_t last_ = 0;
  const char* last_phase_ = nullptr;
};

// The process's resident memory, bytes (/proc/self/statm); 0 when unreadable. Not the
// allocator's own figures: mallinfo2 walks glibc's arenas, which crashes when another
// allocator (a sanitizer's, jemalloc) serves malloc.
size_t resident_bytes() {
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  return size_t(resident) * size_t(page > 0 ? page : 4096);
}

// Rank 0's analysis time by phase (report.json scalars.analysis_phases_s): where a slow
// analysis spends its time. A phase ends at the next mark; waiting for other ranks inside a
// collective counts to the phase that waits. Also the resident memory the process grew by
// since the analysis began (sampled at every phase end, when a phase's structures are still
// alive; a peak within a phase is not seen).
class PhaseClock {
 public:
  PhaseClock(uint64_t start, size_t rss0) : last_(start), rss0_(rss0) {}
  void mark(const char* phase) {
    const uint64_t now = clock::monotonic_ns();
    phases_.push_back({phase, double(now - last_) * 1e-9});
    last_ = now;
    sample();
  }
  // The memory alone (at the end of each analysis window).
  void sample() {
    const size_t h = resident_bytes();
    if (h > rss0_ && h - rss0_ > rss_peak_) rss_peak_ = h - rss0_;
  }
  std::vector<std::pair<std::string, double>> take() { return std::move(phases_); }
  size_t rss_peak() const { return rss_peak_; }

 private:
  uint64_t last_;
  size_t rss0_;
  size_t rss_peak_ = 0;
  std::vector<std::pair<std::string, double>> phases_;
};

// The engine's one forward traversal: every location's events, with their call-path nodes,
// into the replay index and to the passes that want events (passes/pass.h), fused.
class TimelineObserver : public ProfileObserver {
 public:
  TimelineObserver(engine::TimelineBuilder& b, Progress& p, uint64_t total, const std::vector<Pass*>& passes,
                   const std::function<double(uint64_t)>& to_global)
      : b_(b), progress_(p), total_(total ? total : 1), passes_(passes), to_global_(to_global) {}
  bool wants_location(uint16_t) override { return true; }  // every thread's MPI calls
  void begin_location(uint16_t location) override {
    b_.begin_location(location);
    location_ = location;
    for (Pass* p : passes_) p->begin_location(location);
  }
  // Phase by phase (engine/window.h): `on_cut` runs at the exit of the MPI call holding each
  // of the `cuts` (indices of location 0's candidates, ascending), counted by the same
  // engine::CandidateTracker as engine::scan_windows counts them.
  void cut_at(const std::vector<uint64_t>* cuts, const defs::Definitions& definitions, int world_size,
              std::function<void()> on_cut) {
    cuts_ = cuts;
    candidates_.emplace(definitions, world_size);
    on_cut_ = std::move(on_cut);
  }
  void on_event(const trace::Event& e, int32_t node) override {
    b_.on_event(e, node);
    if (candidates_ && location_ == 0 && candidates_->on_event(e) && next_cut_ < cuts_->size() &&
        (*cuts_)[next_cut_] == candidates_->completed() - 1) {
      ++next_cut_;
      on_cut_();
    }
    if (!passes_.empty()) {
      const double t = to_global_(e.time);
      for (Pass* p : passes_) p->on_event(e, t, node);
    }
    if ((++seen_ & 0xfffff) == 0) progress_.report("replay index", double(seen_) / double(total_));
  }

 private:
  engine::TimelineBuilder& b_;
  Progress& progress_;
  uint64_t total_;
  uint64_t seen_ = 0;
  const std::vector<Pass*>& passes_;
  const std::function<double(uint64_t)>& to_global_;
  uint16_t location_ = 0;
  const std::vector<uint64_t>* cuts_ = nullptr;
  std::optional<engine::CandidateTracker> candidates_;
  std::function<void()> on_cut_;
  size_t next_cut_ = 0;
};

// The window scan's decode, fused with the call-path profile's.
class ScanObserver : public ProfileObserver {
 public:
  explicit ScanObserver(engine::WindowScanner& s) : s_(s) {}
  bool wants_location(uint16_t) override { return true; }
  void begin_location(uint16_t location) override { s_.begin_location(location); }
  void on_event(const trace::Event& e, int32_t) override { s_.on_event(e); }

 private:
  engine::WindowScanner& s_;
};

// The analysis's memory when it holds the whole run, estimated (benchmarks/run_analysis.sh
// and the memory scalars show what it took): per recorded event and per MPI call of the
// rank, the replay index, the passes' per-call arrays and the exchanges' buffers, plus on the
// rank that gathers (the critical-path walk, the delay propagation and the what-if replay
// gather small runs on rank 0, each up to its own cap) a share of the others'. Measured: a
// trace of user regions 5 B per event; an MPI-heavy one (every event in an MPI call) 141 B
// per event on rank 0 of 4, about 550 B per MPI call.
constexpr double kBytesPerEvent = 5, kBytesPerMpiCall = 600;
// Before the scan only the events are known: an MPI-heavy trace has ~4 events per call.
constexpr double kMinBytesPerEvent = kBytesPerEvent, kMaxBytesPerEvent = kBytesPerMpiCall / 4 + kBytesPerEvent;

// The host's available memory (/proc/meminfo MemAvailable), bytes; 0 when unknown.
double mem_available_bytes() {
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[256];
  double kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
  std::fclose(f);
  return kib * 1024;
}

// Whether the analysis goes window by window, agreed over the group, in two steps: before
// decoding, from the events alone (`decide`: kWhole when even an MPI-heavy trace would fit
// every rank's budget, kWindows when even a trace of user regions would not, else kScan);
// after the scan, from the MPI calls it counted (`confirm`).
class WindowChoice {
 public:
  enum Verdict : uint8_t { kWhole, kScan, kWindows };

  Status decide(const engine::Group& group, const RunInfo& run, const config::Config& cfg) {
    forced_ = cfg.debug_analysis_window > 0;
    if (forced_) {
      target_ = double(cfg.debug_analysis_window);
      verdict_ = kWindows;
      char buf[160];
      std::snprintf(buf, sizeof buf, "CRITPATH_DEBUG_ANALYSIS_WINDOW=%d asked for an analysis window by window",
                    cfg.debug_analysis_window);
      why_ = buf;
      return Status::kOk;
    }
    std::vector<int> hosts;
    const int mine = int(std::hash<std::string>{}(run.host) & 0x7fffffff);
    CRITPATH_FORWARD_IF_ERROR(group.allgather(mine, hosts));
    const double sharing = double(std::max<long>(1, std::count(hosts.begin(), hosts.end(), mine)));
    budget_ = cfg.analysis_memory > 0 ? double(cfg.analysis_memory) * 1048576.0
                                      : 0.5 * mem_available_bytes() / sharing;
    events_ = double(run.store.events);
    // [0] a rank may not fit, [1] a rank cannot fit, [2] -(the smallest budget).
    double v[3] = {0, 0, -1e300};
    if (budget_ > 0) {
      v[0] = events_ * kMaxBytesPerEvent > budget_ ? 1 : 0;
      v[1] = events_ * kMinBytesPerEvent > budget_ ? 1 : 0;
      v[2] = -budget_;
    }
    CRITPATH_FORWARD_IF_ERROR(group.allreduce(v, 3, engine::ReduceOp::kMax));
    min_budget_ = -v[2];
    verdict_ = v[1] > 0 ? kWindows : v[0] > 0 ? kScan : kWhole;
    // A window holds at most half the smallest budget's worth of an MPI-heavy trace's events
    // (the profile, the chunk store and the allocator's slack take the rest).
    target_ = std::max(1.0, 0.5 * min_budget_ / kMaxBytesPerEvent);
    return Status::kOk;
  }

  // After the scan: the estimate from this rank's events and MPI calls.
  Status confirm(const engine::Group& group, const engine::WindowScan& scan) {
    if (forced_) return Status::kOk;
    const double need = events_ * kBytesPerEvent + double(scan.mpi_calls) * kBytesPerMpiCall;
    double v[2] = {budget_ > 0 && need > budget_ ? 1.0 : 0.0, need};
    CRITPATH_FORWARD_IF_ERROR(group.allreduce(v, 2, engine::ReduceOp::kMax));
    verdict_ = v[0] > 0 ? kWindows : kWhole;
    char buf[320];
    std::snprintf(buf, sizeof buf, "the analysis of the whole run would need about %.0f MiB on a rank, more "
                  "than the %.0f MiB it may use (CRITPATH_ANALYSIS_MEMORY)", v[1] / 1048576.0,
                  min_budget_ / 1048576.0);
    why_ = buf;
    return Status::kOk;
  }

  Verdict verdict() const { return verdict_; }
  double target() const { return target_; }  // events per window
  const std::string& why() const { return why_; }  // when kWindows

 private:
  bool forced_ = false;
  Verdict verdict_ = kWhole;
  double budget_ = 0, min_budget_ = 0, events_ = 0, target_ = 0;
  std::string why_;
};

}  // namespace

void run_analysis(LocationTrace& location, const engine::Comm& ranks, uint64_t wall0) {
  const config::Config& cfg = config::current();
  RunInfo& run = location.run;
  const trace::ChunkStore& store = *location.chunks;
  const defs::Definitions& definitions = *location.definitions;
  // The analysis communicator: the passes reach it through `group`, the engine's exchanges
  // through group.comm(). Freed when `group` goes out of scope.
  engine::Group group;
  if (engine::Group::over(ranks, group) != Status::kOk) {
    warn(location, "cannot create the analysis communicator; no report");
    return;
  }
  const engine::Comm& comm = group.comm();
  // Ranks reach MPI_Finalize at different times: the analysis proper starts when the last
  // one arrived. The time before is the application's imbalance, not analysis cost.
  const bool analyse = cfg.analysis && !run.output_dir.empty();
  if (analyse) group.barrier();
  const uint64_t analysis0 = clock::monotonic_ns();
  const size_t rss0 = resident_bytes();
  const double finalize_wait_s = double(analysis0 - std::min(analysis0, wall0)) * 1e-9;

  if (!run.output_dir.empty()) {
    if (cfg.dump_events) {
      const std::string dir = run.output_dir + "/events";
      mkdir(dir.c_str(), 0755);
      const std::string path = dir + "/rank-" + std::to_string(run.rank) + ".txt";
      if (write_event_dump(store, definitions, path) != Status::kOk)
        warn(location, "cannot write the event dump %s", path.c_str());
    }
    if ((cfg.keep_trace == "true" || cfg.keep_trace == "both") && !run.offline) {
      const std::string dir = run.output_dir + "/trace";
      mkdir(dir.c_str(), 0755);
      const std::string path = dir + "/rank-" + std::to_string(run.rank) + ".cptrace";
      if (store.write_file(path) != Status::kOk ||
          save_archive(run, definitions, location.notes, dir) != Status::kOk)
        warn(location, "cannot keep the trace in %s", dir.c_str());
    }
    std::string otf2_error;  // collective over the ranks (analyzer/otf2/otf2_export.h)
    if ((cfg.keep_trace == "otf2" || cfg.keep_trace == "both") && !run.offline &&
        otf2::export_location(location, comm, run.output_dir, otf2_error) != Status::kOk)
      warn(location, "cannot write the OTF2 archive into %s: %s", run.output_dir.c_str(), otf2_error.c_str());
  }
  if (!analyse) {
    // No analysis, but the settings in force are still written, and the user told where.
    if (run.rank == 0 && !run.output_dir.empty() && !run.offline) {
      if (write_config_only(run.output_dir, config::describe(cfg)) == Status::kOk)
        log::info0(1, "analysis off (CRITPATH_ANALYSIS=0); settings in %s/critpath.cfg",
                   run.output_dir.c_str());
    }
    return;
  }

  // One time base: this rank's offset to rank 0 at finalize, interpolated with MPI_Init's.
  const bool correct = run.clock_linear && run.size > 1 && !run.all_on_one_host;
  const GlobalClock gclock(run.init_offset, run.fin_offset, correct && !run.same_host_as_root);
  auto to_global = [&](uint64_t ticks) {
    return gclock.to_global_s(skewed_ns(run.skew, run.conv.to_ns(ticks))) + run.skew.event_jump_s;
  };

  // The passes (passes/pass.h), in the pass list's order.
  PassContext ctx;
  ctx.run = &run;
  ctx.definitions = &definitions;
  ctx.to_global = to_global;
  ctx.options = analysis_options(cfg);
  ctx.warn = [&location](const std::string& w) { warn(location, "%s", w.c_str()); };
  std::vector<std::unique_ptr<Pass>> pass_objects = passes::make_passes();
  std::vector<Pass*> active, event_passes;
  for (const auto& p : pass_objects)
    if (p->enabled(ctx.options)) active.push_back(p.get());
  Progress progress(run.rank, wall0);
  PhaseClock phases(analysis0, rss0);

  // The call paths across ranks (after the decode; window by window, before the windows).
  GlobalProfile global;
  std::vector<int> local_to_global;
  auto unify = [&](const LocalProfile& profile) {
    const Status us = unify_profile(profile, definitions, run.conv, comm, global, &local_to_global);
    if (us != Status::kOk) {
      warn(location, "call-path unification failed (%s); no report", to_string(us));
      return false;
    }
    int n_callpaths = int(global.callpaths.size());  // rank 0 knows it
    group.broadcast(&n_callpaths, 1);
    ctx.global = &global;
    ctx.local_to_global = &local_to_global;
    ctx.n_callpaths = n_callpaths;
    return true;
  };

  // Phase by phase (engine/window.h) when the whole run would not fit the memory budget, or
  // when a test asks for it: then only the passes that can go window by window run.
  engine::WindowPlan plan;
  std::string window_why;  // what asked for windows (and, if the run cannot be cut, why not)
  {
    WindowChoice choice;
    if (choice.decide(group, run, cfg) != Status::kOk) {
      warn(location, "the analysis's memory estimate could not be agreed; no report");
      return;
    }
    if (choice.verdict() != WindowChoice::kWhole) {
      // One more decode: the MPI calls (for the estimate), the cut candidates, and the
      // call-path profile, unified at once when the run is cut, so that the windows' passes
      // book to the global call paths (the second decode builds the same profile again).
      engine::WindowScanner scanner(definitions, run.size);
      ScanObserver so(scanner);
      LocalProfile scan_profile = build_profile(store, definitions, &so);
      const engine::WindowScan scan = scanner.finish(scan_profile.status);
      if (choice.confirm(group, scan) != Status::kOk) {
        warn(location, "the analysis's memory estimate could not be agreed; no report");
        return;
      }
      if (choice.verdict() == WindowChoice::kWindows) {
        window_why = choice.why();
        if (engine::plan_windows(scan, group, choice.target(), plan) != Status::kOk) {
          warn(location, "planning the analysis windows failed; no report");
          return;
        }
        if (plan.cuts.empty()) window_why += "; it cannot be cut: " + plan.why_not;
        else if (!unify(scan_profile)) return;
      }
      phases.mark("window_scan");
    }
  }
  const bool windowed = !plan.cuts.empty();
  std::vector<std::string> left_out;  // passes a windowed analysis leaves out
  if (windowed) {
    std::vector<Pass*> kept;
    for (Pass* p : active) {
      if (p->windowed()) kept.push_back(p);
      else left_out.push_back(p->name());
    }
    active = kept;
  }
  for (Pass* p : active)
    if (p->wants_events()) {
      p->prepare(ctx);
      event_passes.push_back(p);
    }

  // One forward pass: the call-path profile and the replay index of the MPI activity; window
  // by window, each window's index is exchanged and analysed at its cut and then dropped.
  engine::TimelineBuilder tb(to_global, run.rank, definitions);
  if (!windowed) tb.reserve(run.store.events);
  // Time between MPI calls per call path: the delay analysis's time vectors and the
  // critical path's clip (instead of a second pass over the trace).
  tb.profile_gaps(run.conv.ticks_to_seconds(1000000000ull) * 1e-9);
  engine::Timeline timeline;  // the whole run's, or the last window's
  engine::P2pMatch match;
  std::vector<engine::CollSync> csync;
  engine::ClcStats clc;
  std::vector<engine::CollSync> wsync;
  std::vector<uint32_t> inconsistent_windows;
  passes::RunSync rsync;
  LocalProfile local;
  // Over the windows: what the per-rank statistics report.
  struct {
    uint64_t messages = 0, unmatched = 0, replay_bytes = 0, coll_bytes = 0, dropped = 0;
    uint64_t inconsistent_comms = 0, windows = 0;
  } sum;
  bool failed = false;  // an exchange failed: no report
  // The engine's exchanges and the passes' analyze() over `timeline` (the whole run, or
  // window `w`; `last`: the window that ends the run). Collective.
  auto analyze_timeline = [&](int w, bool last) {
    ctx.window = windowed ? w : -1;
    ctx.last_window = last;
    ctx.local = last ? &local : nullptr;
    // Window by window the profile is still being built: the nodes the window's calls name.
    ctx.nodes = last ? local.nodes.size() : 0;
    for (const engine::CallRecord& call : timeline.calls) ctx.nodes = std::max(ctx.nodes, size_t(call.node + 1));
    // What the patterns of MPI_Init (first window) and MPI_Finalize (last) need.
    double mx[2] = {timeline.init_call != engine::kNoCall ? timeline.calls[timeline.init_call].enter : 0,
                    timeline.finalize_call != engine::kNoCall ? timeline.calls[timeline.finalize_call].enter : 0};
    double mn = timeline.init_call != engine::kNoCall ? timeline.calls[timeline.init_call].exit : 0;
    group.allreduce(mx, 2, engine::ReduceOp::kMax);
    group.allreduce(&mn, 1, engine::ReduceOp::kMin);
    if (w <= 0) {
      rsync.latest_init_enter = mx[0];
      rsync.earliest_init_exit = mn;
    }
    if (last) rsync.latest_finalize_enter = mx[1];
    match = engine::P2pMatch{};
    csync.clear();
    engine::CollExchangeStats cs;
    if (w <= 0) progress.report("exchange", 0.0);
    if (engine::exchange_p2p(timeline, comm, match) != Status::kOk ||
        engine::sync_collectives(timeline, definitions, comm, csync, cs) != Status::kOk) {
      warn(location, "the replay exchange failed; no report");
      failed = true;
      return;
    }
    if (cfg.clock_correction == "clc" && !windowed &&
        engine::apply_clc(timeline, definitions, comm, match, csync, cs, clc) != Status::kOk)
      warn(location, "analysis incomplete: the controlled-logical-clock pass failed; times are only linearly corrected");
    // Window collectives (creation, fences, free), synchronized like collectives.
    wsync.clear();
    inconsistent_windows.clear();
    {
      engine::CollExchangeStats wstats;
      if (engine::sync_window_collectives(timeline, definitions, comm, wsync, wstats, inconsistent_windows) !=
          Status::kOk)
        warn(location, "analysis incomplete: synchronizing the window collectives failed; the one-sided "
             "analysis lacks them");
      cs.bytes_sent += wstats.bytes_sent;  // the RMA notes: scalars.rma_analysis_bytes
    }
    if (!windowed) phases.mark("exchange");
    sum.messages += timeline.sends.size();
    sum.unmatched += match.unmatched_sends + match.unmatched_recvs;
    sum.replay_bytes += match.bytes_sent;
    sum.coll_bytes += cs.bytes_sent;
    sum.dropped += cs.dropped;
    sum.inconsistent_comms = std::max(sum.inconsistent_comms, cs.inconsistent_comms);
    ++sum.windows;
    // The cut that ends the window: the collective of the window's last call (a blocking
    // collective's call holds no other).
    ctx.cut_time = 0;
    ctx.cut_rank = -1;
    if (!last && !timeline.calls.empty())
      for (size_t i = std::min(timeline.colls.size(), csync.size()); i-- > 0;) {
        if (timeline.colls[i].complete_call + 1 != timeline.calls.size()) continue;
        if (csync[i].valid) {
          ctx.cut_time = csync[i].latest_begin;
          ctx.cut_rank = csync[i].latest_rank;
        }
        break;
      }

    // The passes' local work.
    ctx.timeline = &timeline;
    ctx.match = &match;
    ctx.csync = &csync;
    ctx.wsync = &wsync;
    ctx.inconsistent_windows = &inconsistent_windows;
    ctx.latest_init_enter = rsync.latest_init_enter;
    ctx.earliest_init_exit = rsync.earliest_init_exit;
    ctx.latest_finalize_enter = rsync.latest_finalize_enter;
    for (Pass* p : active) {
      const Status ps = p->analyze(ctx, group);
      if (ps != Status::kOk) warn(location, "analysis incomplete: %s", p->failure(ps, Pass::Step::kAnalyze).c_str());
      if (!windowed && p->analyze_phase()) phases.mark(p->analyze_phase());
    }
    phases.sample();
  };

  const std::function<double(uint64_t)> to_global_fn = to_global;
  TimelineObserver observer(tb, progress, run.store.events, event_passes, to_global_fn);
  int next_window = 0;
  if (windowed)
    observer.cut_at(&plan.cuts, definitions, run.size, [&] {
      if (failed) return;  // every rank failed the same exchange: no more windows
      timeline = tb.take_window();
      analyze_timeline(next_window++, false);
      timeline = engine::Timeline{};  // the window is done: its memory goes
    });
  local = build_profile(store, definitions, &observer);
  timeline = windowed ? tb.take_window() : tb.finish(local.node_remap);
  if (!windowed) phases.mark("decode_profile_timeline");
  if (local.status != Status::kOk)
    warn(location, "analysis incomplete: the trace of rank %d did not decode completely (%s); its results are partial",
         run.rank, to_string(local.status));
  if (!failed) analyze_timeline(next_window, true);
  if (failed) return;
  if (windowed) phases.mark("windows");
  if (windowed && cfg.clock_correction == "clc" && run.rank == 0)
    warn(location, "analysis incomplete: window by window, the controlled logical clock is not applied "
         "(CRITPATH_CLOCK_CORRECTION=clc); times are only linearly corrected");
  if (!window_why.empty() && run.rank == 0) {
    if (!windowed) {
      warn(location, "analysis: %s; the analysis holds the whole run", window_why.c_str());
    } else {
      std::string names;
      for (const std::string& n : left_out) names += (names.empty() ? "" : ", ") + n;
      if (names.empty())
        warn(location, "analysis: window by window (%llu windows): %s", (unsigned long long)sum.windows,
             window_why.c_str());
      else
        warn(location, "analysis incomplete: window by window (%llu windows; %s), without the passes that "
             "need the whole run at once: %s", (unsigned long long)sum.windows, window_why.c_str(), names.c_str());
    }
  }
  passes::WaitStates no_waits;
  const passes::WaitStates* waits_ptr = ctx.get<passes::WaitStates>("wait_states");
  const passes::WaitStates& waits = waits_ptr ? *waits_ptr : no_waits;

  if (!windowed) {  // window by window the call paths were unified before the windows
    progress.report("unification", 0.0);
    if (!unify(local)) return;
    phases.mark("unify_profile");
  }

  // Per-rank statistics.
  const trace::ChunkStoreStats& ss = run.store;
  const runtime::RecorderStats& rs = run.recorder;
  std::vector<double> st(kStatCount, 0.0);
  st[kStatEvents] = double(local.events);
  st[kStatChunks] = double(ss.chunks);
  st[kStatCompressedBytes] = double(ss.bytes_total);
  st[kStatEncodedBytes] = double(ss.encoded_bytes);
  st[kStatSpilledBytes] = double(ss.bytes_spilled);
  st[kStatChunksSpilled] = double(ss.chunks_spilled);
  st[kStatOverheadSeconds] = run.conv.ticks_to_seconds(rs.overhead_ticks_max_thread);
  st[kStatCompressSeconds] = run.conv.ticks_to_seconds(rs.compress_ticks);
  st[kStatInitNs] = to_global(run.init_enter_ticks) * 1e9;
  st[kStatFinalizeNs] = to_global(run.finalize_enter_ticks) * 1e9;
  st[kStatReplayBytes] = double(sum.replay_bytes);
  st[kStatReplayCollBytes] = double(sum.coll_bytes);
  st[kStatMessages] = double(sum.messages);
  st[kStatUnmatched] = double(sum.unmatched);
  st[kStatP2pViolations] = double(waits.p2p_clock_violations);
  st[kStatCollViolations] = double(waits.coll_clock_violations);
  st[kStatClockError] = gclock.max_error_s();
  st[kStatClcPasses] = double(clc.passes);
  st[kStatClcCorrected] = double(clc.corrected);
  st[kStatClcMaxShift] = clc.max_shift_s;
  st[kStatClcViolationsBefore] = double(clc.violations_before);
  st[kStatUnmatchedExits] = double(local.unmatched_exits);
  st[kStatUnclosedFrames] = double(local.unclosed_frames);
  // Partial: the trace did not decode completely, or recording stopped early on some thread
  // (out of memory on the recording path; the note says which).
  st[kStatPartial] =
      local.status == Status::kOk && rs.threads_stopped == 0 && rs.rank_stopped == 0 ? 0.0 : 1.0;
  st[kStatThreads] = double(rs.threads);
  st[kStatMpiThreads] = double(timeline.mpi_locations);
  const defs::Instrumentation instr = definitions.instrumentation();
  st[kStatInstrModes] = double((instr.gcc ? 1 : 0) | (instr.xray ? 2 : 0));
  st[kStatInstrFunctions] = double(instr.instrumented);
  st[kStatInstrPatched] = double(instr.patched);
  st[kStatInstrUnpatched] = double(instr.unpatched);
  st[kStatInstrFiltered] = double(instr.filtered);
  st[kStatInstrAutoFiltered] = double(instr.auto_filtered);
  st[kStatInstrSitesPatchedOut] = double(instr.sites_patched_out);
  st[kStatInconsistentComms] = double(sum.inconsistent_comms);
  st[kStatCollsDropped] = double(sum.dropped);
  std::vector<double> all_st;
  group.gather_rows(st.data(), st.size(), all_st);
  std::vector<std::string> notes = gather_notes(group, location.notes);
  ReportInput in;
  {
    // Wall time in the corrected time base: earliest MPI_Init entry to latest MPI_Finalize entry.
    double lo_hi[2] = {-to_global(run.init_enter_ticks), to_global(run.finalize_enter_ticks)};
    group.allreduce(lo_hi, 2, engine::ReduceOp::kMax);
    ctx.first_init_enter = -lo_hi[0];
    ctx.wall_time_s = lo_hi[1] + lo_hi[0];
    ctx.report = &in;
    for (Pass* p : active) {
      const Status ps = p->reduce(ctx, group);
      if (ps != Status::kOk) warn(location, "analysis incomplete: %s", p->failure(ps, Pass::Step::kReduce).c_str());
      if (p->reduce_phase()) phases.mark(p->reduce_phase());
    }
  }
  // The analysis's memory: the largest growth over the ranks (in-situ; critpath-analyze: per
  // process, the ranks it hosts together).
  std::pair<double, int> mem_peak{double(phases.rss_peak()), run.rank};
  group.allreduce_maxloc(&mem_peak, 1);
  describe_nodes(group, run, in);
  if (run.rank == 0) {
    in.run = &run;
    in.profile = &global;
    double init_min = 0, fin_max = 0;
    for (int r = 0; r < run.size; ++r) {
      std::vector<double> row(all_st.begin() + r * kStatCount, all_st.begin() + (r + 1) * kStatCount);
      if (r == 0 || row[kStatInitNs] < init_min) init_min = row[kStatInitNs];
      if (r == 0 || row[kStatFinalizeNs] > fin_max) fin_max = row[kStatFinalizeNs];
      in.rank_stats.push_back(std::move(row));
    }
    in.wall_time_s = (fin_max - init_min) * 1e-9;
    double bytes = 0, coll_bytes = 0, msgs = 0, unmatched = 0, v_p2p = 0, v_coll = 0, err = 0;
    for (const auto& row : in.rank_stats) {
      bytes += row[kStatReplayBytes];
      coll_bytes += row[kStatReplayCollBytes];
      msgs += row[kStatMessages];
      unmatched += row[kStatUnmatched];
      v_p2p += row[kStatP2pViolations];
      v_coll += row[kStatCollViolations];
      err = std::max(err, row[kStatClockError]);
    }
    char line[256];
    std::snprintf(line, sizeof line, "@ Clock           : %s; max error %.1f us; clock-condition violations: %.0f p2p, %.0f collective",
                  !run.clock_linear || run.size == 1 ? "no correction"
                  : run.all_on_one_host ? "one host: CLOCK_MONOTONIC shared, no correction needed"
                                        : "linear correction to rank 0",
                  err * 1e6, v_p2p, v_coll);
    in.header_lines.push_back(line);
    if (cfg.clock_correction == "clc") {
      double passes = 0, corrected = 0, shift = 0, before = 0;
      for (const auto& row : in.rank_stats) {
        passes = std::max(passes, row[kStatClcPasses]);
        corrected += row[kStatClcCorrected];
        shift = std::max(shift, row[kStatClcMaxShift]);
        before += row[kStatClcViolationsBefore];
      }
      std::snprintf(line, sizeof line,
                    "@ Logical clock   : %.0f violations before, %.0f passes, %.0f call times moved, max shift %.1f us",
                    before, passes, corrected, shift * 1e6);
      in.header_lines.push_back(line);
    }
    const double delay_bytes = in.scalars.number("delay_bytes");
    const double rma_bytes = in.scalars.number("rma_analysis_bytes");
    std::snprintf(line, sizeof line,
                  "@ Replay          : %.0f messages, %.1f B per message to match them, %.1f B per "
                  "message in all (collectives, one-sided notes and the delay analysis included), "
                  "%.0f unmatched",
                  msgs, msgs > 0 ? bytes / msgs : 0.0,
                  msgs > 0 ? (bytes + coll_bytes + rma_bytes + delay_bytes) / msgs : 0.0, unmatched);
    in.header_lines.push_back(line);
    {
      // Threads that called MPI (MPI_THREAD_MULTIPLE): each is a location of its own.
      double most = 0, total = 0;
      int ranks_with_more = 0;
      for (const auto& row : in.rank_stats) {
        most = std::max(most, row[kStatMpiThreads]);
        total += row[kStatMpiThreads];
        ranks_with_more += row[kStatMpiThreads] > 1 ? 1 : 0;
      }
      if (most > 1) {
        std::snprintf(line, sizeof line,
                      "@ MPI threads     : %.0f threads called MPI (up to %.0f per rank, on %d of %d "
                      "ranks more than one); a rank's time is the sum of its threads' times",
                      total, most, ranks_with_more, int(in.rank_stats.size()));
        in.header_lines.push_back(line);
      }
    }
    // Window by window (engine/window.h): how, and what it left out.
    in.scalars.set("analysis_windowed", windowed);
    in.scalars.set("analysis_windows", sum.windows);
    if (plan.candidates > 0 || windowed) {  // the run was scanned for cuts
      in.scalars.set("analysis_window_candidates", plan.candidates);
      in.scalars.set("analysis_window_cuts", plan.cuts.size());
    }
    if (windowed) {
      std::snprintf(line, sizeof line, "@ Analysis windows: %.0f, cut at %zu of %.0f collectives over all ranks; "
                    "at most %.0f events per window on a rank", double(sum.windows), plan.cuts.size(),
                    double(plan.candidates), plan.largest_window);
      in.header_lines.push_back(line);
    }
    notes.insert(notes.end(), in.notes.begin(), in.notes.end());  // the passes' notes last
    // What the counters say about the trace's quality, in words (text and JSON alike). What
    // the analysis could not use is an `analysis incomplete:` note naming the ranks.
    {
      double exits = 0, unclosed = 0;
      for (const auto& row : in.rank_stats) {
        exits += row[kStatUnmatchedExits];
        unclosed += row[kStatUnclosedFrames];
      }
      char q[256];
      if (exits > 0) {
        std::snprintf(q, sizeof q, "trace: %.0f region exits without their enter (unmatched_exits): "
                      "user regions closed in another order than opened, or begun before recording", exits);
        notes.push_back(q);
      }
      if (unclosed > 0) {
        std::snprintf(q, sizeof q, "trace: %.0f frames still open at the end of a trace (unclosed_frames)",
                      unclosed);
        notes.push_back(q);
      }
      for (std::string& n : incomplete_notes(in.rank_stats)) notes.push_back(std::move(n));
      if (engine::watchdog_expired()) {
        std::snprintf(q, sizeof q, "analysis incomplete: CRITPATH_ANALYSIS_TIMEOUT=%d s passed before "
                      "the report was written; a step that did not finish is named in its own note",
                      cfg.analysis_timeout);
        notes.push_back(q);
      }
      size_t incomplete = 0;
      for (const std::string& n : notes) incomplete += n.find("analysis incomplete: ") != std::string::npos;
      in.scalars.set("analysis_complete", incomplete == 0);
      in.scalars.set("analysis_incomplete_notes", incomplete);
      if (incomplete > 0) {
        std::snprintf(line, sizeof line, "@ Completeness    : analysis incomplete: %zu note%s what is left "
                      "out (Notes)", incomplete, incomplete == 1 ? " says" : "s say");
        in.header_lines.push_back(line);
      }
    }
    in.notes = std::move(notes);
    in.config_text = config::describe(cfg);
    in.report_threshold_pct = std::atof(cfg.report_threshold.c_str());
    in.write_html = cfg.html;
    phases.mark("report_input");
    in.analysis_phases = phases.take();
    in.analysis_s = double(clock::monotonic_ns() - analysis0) * 1e-9;
    in.analysis_memory_peak_bytes = mem_peak.first;
    in.analysis_memory_peak_rank = mem_peak.second;
    in.finalize_wait_s = finalize_wait_s;
    run.analysis_seconds = in.analysis_s;
    const Status ws = write_reports(in);
    if (ws == Status::kOk)
      log::info0(1, "report in %s/summary.txt", run.output_dir.c_str());
    else
      warn(location, "writing the report into %s failed (%s): %s; no partial file is left",
           run.output_dir.c_str(), to_string(ws), last_write_error().c_str());
  }
}

}  // namespace critpath::analyzer
