// critpath — analyzer/engine/analysis_engine.cpp: the analysis's stages (see analysis_engine.h).
#include "analyzer/engine/analysis_engine.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>

#include "analyzer/engine/clc.h"
#include "analyzer/engine/clock_sync.h"
#include "analyzer/engine/exchange.h"
#include "analyzer/engine/fiber.h"
#include "analyzer/engine/global_time.h"
#include "analyzer/engine/group.h"
#include "analyzer/engine/header_lines.h"
#include "analyzer/engine/host_shm.h"
#include "analyzer/engine/pass_info.h"
#include "analyzer/engine/timeline.h"
#include "analyzer/engine/watchdog.h"
#include "libtrace/clock/clock.h"
#include "libtrace/runtime/log.h"

namespace critpath::analyzer::engine {

// The analysis's own figures of one rank (scalars analysis_cpu_s, analysis_cpu_polling_s,
// analysis_cpu_phases_s, analysis_cpu_polling_phases_s, analysis_faults_phases, analysis_bytes,
// analysis_rounds, analysis_memory): fixed size, gathered to rank 0 once.
constexpr size_t kFigurePhases = 24;
struct OwnFigures {
  double cpu_s = 0, polling_cpu_s = 0, sent = 0, received = 0, rounds = 0;
  double memory = 0, speaks = 0;  // the process's resident growth; whether this rank speaks for it
  double n_phases = 0;
  double phase_cpu[kFigurePhases] = {};
  float phase_polling[kFigurePhases] = {};  // of phase_cpu, the polling (fiber::PollClock)
  float phase_faults[kFigurePhases] = {};   // minor page faults (exact below 2^24)
};

// Where a rank ran: its host and the CPUs its affinity mask allows.
struct NodeInfo {
  char host[64];
  uint64_t mask[16];  // CPUs 0..1023
};

// What each rank sends rank 0 in the engine's last collective (report_input), followed by
// its notes as text: its statistics (report/report.h RankStat), where it ran, its memory
// growth (with its rank, for the peak) and the analysis's own figures.
struct EndRecord {
  double stats[kStatCount];
  NodeInfo node;
  double memory, memory_rank;
  OwnFigures figures;
};
static_assert(sizeof(EndRecord) <= 1024, "rank 0 receives at most 1 KiB per rank besides the notes");

// On rank 0, from every rank's EndRecord; `ok` false when the gather failed (then
// `figures` and `nodes` are empty, `notes` and `memory_peak` rank 0's own).
struct EndGathered {
  bool ok = false;
  std::vector<OwnFigures> figures;
  std::vector<NodeInfo> nodes;
  std::vector<std::string> notes;
  std::pair<double, int> memory_peak{0.0, 0};
};

namespace {

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
    log::info0(1, "analysis: %s %d%%", phase, int(100.0 * std::min(1.0, std::max(0.0, fraction))));
  }

 private:
  int rank_;
  uint64_t start_;
  uint64_t last_ = 0;
  const char* last_phase_ = nullptr;
};

// Rank 0's analysis time by phase (report.json scalars.analysis_phases_s): where a slow
// analysis spends its time. A phase ends at the next mark; waiting for other ranks inside a
// collective counts to the phase that waits. Also the resident memory the process grew by
// since the analysis began (sampled at every phase end, when a phase's structures are still
// alive; a peak within a phase is not seen).
//
// Every rank also keeps its own CPU time by phase (fiber::cpu_seconds(): the thread's, or on a
// hosted rank its fiber's), for scalars.analysis_cpu_phases_s, and the process's minor page
// faults by phase (scalars.analysis_faults_phases): first touches of fresh memory.
class PhaseClock {
 public:
  PhaseClock(uint64_t start, size_t rss0)
      : last_(start), rss0_(rss0), cpu0_(fiber::cpu_seconds()), polling0_(fiber::polling_cpu_seconds()) {
    cpu_last_ = cpu0_;
    polling_last_ = polling0_;
    faults_last_ = minor_faults();
  }
  void mark(const char* phase) {
    const uint64_t now = clock::monotonic_ns();
    phases_.push_back({phase, double(now - last_) * 1e-9});
    last_ = now;
    const double cpu = fiber::cpu_seconds(), polling = fiber::polling_cpu_seconds();
    cpu_.push_back(cpu - cpu_last_);
    polling_.push_back(polling - polling_last_);
    cpu_last_ = cpu;
    polling_last_ = polling;
    const uint64_t faults = minor_faults();
    faults_.push_back(double(faults - faults_last_));
    faults_last_ = faults;
    sample();
  }
  // CPU seconds since the analysis began, and by phase so far (in the order of the marks).
  double cpu_total() const { return fiber::cpu_seconds() - cpu0_; }
  // Of cpu_total(), the part in the engine's wait loops (fiber::PollClock).
  double polling_total() const { return fiber::polling_cpu_seconds() - polling0_; }
  const std::vector<double>& cpu_by_phase() const { return cpu_; }
  const std::vector<double>& polling_by_phase() const { return polling_; }
  const std::vector<double>& faults_by_phase() const { return faults_; }
  const std::vector<std::pair<std::string, double>>& wall_by_phase() const { return phases_; }
  size_t rss0() const { return rss0_; }
  // The memory alone (at the end of each analysis window).
  void sample() {
    const size_t h = AnalysisEngine::resident_bytes();
    if (h > rss0_ && h - rss0_ > rss_peak_) rss_peak_ = h - rss0_;
  }
  std::vector<std::pair<std::string, double>> take() { return std::move(phases_); }
  size_t rss_peak() const { return rss_peak_; }

 private:
  uint64_t last_;
  size_t rss0_;
  size_t rss_peak_ = 0;
  std::vector<std::pair<std::string, double>> phases_;
  double cpu0_, polling0_, cpu_last_ = 0, polling_last_ = 0;
  std::vector<double> cpu_, polling_;
  uint64_t faults_last_ = 0;
  std::vector<double> faults_;

  // The process's minor page faults so far: in critpath-analyze hosting several ranks, those of
  // the ranks that ran alongside too.
  static uint64_t minor_faults() {
    rusage u{};
    return getrusage(RUSAGE_SELF, &u) == 0 ? uint64_t(u.ru_minflt) : 0;
  }
};

// The start of a /proc file into `buf` (`size` bytes, NUL-terminated); false when unreadable.
bool read_proc(const char* path, char* buf, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// The process's peak resident memory so far (VmHWM of /proc/self/status), 0 when unknown.
size_t resident_peak_bytes() {
  char buf[4096];
  if (!read_proc("/proc/self/status", buf, sizeof buf)) return 0;
  const char* at = std::strstr(buf, "VmHWM:");
  unsigned long long kb = 0;
  if (at == nullptr || std::sscanf(at + 6, "%llu", &kb) != 1) return 0;
  return size_t(kb) * 1024;
}

// Rank 0: the figures of every rank (`all`, in rank order) as report.json scalars; the phase
// names are rank 0's (`wall`), a phase's mean taken over the ranks that marked as many phases.
void set_own_figures(const std::vector<OwnFigures>& all,
                     const std::vector<std::pair<std::string, double>>& wall, Scalars& out) {
  if (all.empty()) return;
  double cpu_sum = 0, cpu_max = 0, poll_sum = 0, poll_max = 0, sent_max = 0, recv_max = 0, rounds = 0;
  std::vector<double> memory;
  for (const OwnFigures& f : all) {
    cpu_sum += f.cpu_s;
    cpu_max = std::max(cpu_max, f.cpu_s);
    poll_sum += f.polling_cpu_s;
    poll_max = std::max(poll_max, f.polling_cpu_s);
    sent_max = std::max(sent_max, f.sent);
    recv_max = std::max(recv_max, f.received);
    rounds = std::max(rounds, f.rounds);
    if (f.speaks > 0) memory.push_back(f.memory);
  }
  const double n = double(all.size());
  out.set_object("analysis_cpu_s",
                 nlohmann::json{{"mean", cpu_sum / n}, {"max", cpu_max}, {"rank0", all[0].cpu_s}});
  out.set_object("analysis_cpu_polling_s",
                 nlohmann::json{{"mean", poll_sum / n}, {"max", poll_max}, {"rank0", all[0].polling_cpu_s}});
  nlohmann::json phases = nlohmann::json::object(), polling = nlohmann::json::object();
  nlohmann::json faults = nlohmann::json::object();
  const size_t k = std::min<size_t>(size_t(all[0].n_phases), std::min(kFigurePhases, wall.size()));
  for (size_t i = 0; i < k; ++i) {
    double sum = 0, poll = 0, fault_sum = 0, ranks = 0;
    for (const OwnFigures& f : all)
      if (f.n_phases == all[0].n_phases) {
        sum += f.phase_cpu[i];
        poll += f.phase_polling[i];
        fault_sum += f.phase_faults[i];
        ++ranks;
      }
    phases[wall[i].first] = ranks > 0 ? sum / ranks : 0.0;
    polling[wall[i].first] = ranks > 0 ? poll / ranks : 0.0;
    faults[wall[i].first] = ranks > 0 ? std::round(fault_sum / ranks) : 0.0;
  }
  out.set_object("analysis_cpu_phases_s", std::move(phases));
  out.set_object("analysis_cpu_polling_phases_s", std::move(polling));
  out.set_object("analysis_faults_phases", std::move(faults));
  out.set_object("analysis_bytes", nlohmann::json{{"sent_max", sent_max},
                                                  {"recv_max", recv_max},
                                                  {"sent_rank0", all[0].sent},
                                                  {"recv_rank0", all[0].received}});
  out.set("analysis_rounds", rounds);
  std::sort(memory.begin(), memory.end());
  const double median = memory.empty() ? 0.0 : memory[(memory.size() - 1) / 2];
  out.set_object("analysis_memory", nlohmann::json{{"rank0_bytes", all[0].memory}, {"median_bytes", median}});
}

// Notes one a line (own_notes' text of one or more ranks) as a list.
std::vector<std::string> split_notes(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') {
      out.emplace_back(text, start, i - start);
      start = i + 1;
    }
  return out;
}

// The engine's one forward traversal: every location's events, with their call-path nodes,
// into the replay index and to the passes that want events (engine/pass.h), fused.
class TimelineObserver : public ProfileObserver {
 public:
  TimelineObserver(TimelineBuilder& b, Progress& p, uint64_t total, const std::vector<Pass*>& passes,
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
  // CandidateTracker as scan_windows counts them.
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
  // Without window cuts and event passes the builder is all on_event feeds.
  TimelineBuilder* builder() override { return candidates_ || !passes_.empty() ? nullptr : &b_; }
  void on_events(uint64_t n) override {  // after a chunk: the progress on_event reports
    const uint64_t before = seen_;
    seen_ += n;
    if ((before >> 20) != (seen_ >> 20))
      progress_.report("replay index", double(seen_ & ~uint64_t(0xfffff)) / double(total_));
  }

 private:
  TimelineBuilder& b_;
  Progress& progress_;
  uint64_t total_;
  uint64_t seen_ = 0;
  const std::vector<Pass*>& passes_;
  const std::function<double(uint64_t)>& to_global_;
  uint16_t location_ = 0;
  const std::vector<uint64_t>* cuts_ = nullptr;
  std::optional<CandidateTracker> candidates_;
  std::function<void()> on_cut_;
  size_t next_cut_ = 0;
};

// The window scan's decode, fused with the call-path profile's.
class ScanObserver : public ProfileObserver {
 public:
  explicit ScanObserver(WindowScanner& s) : s_(s) {}
  bool wants_location(uint16_t) override { return true; }
  void begin_location(uint16_t location) override { s_.begin_location(location); }
  void on_event(const trace::Event& e, int32_t) override { s_.on_event(e); }

 private:
  WindowScanner& s_;
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
constexpr double kMinBytesPerEvent = kBytesPerEvent,
                 kMaxBytesPerEvent = kBytesPerMpiCall / 4 + kBytesPerEvent;

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

// How many ranks of `group` ran on `host` (by a 31-bit hash of its name), in at most
// kHostRounds sums over the ranks of kHostBuckets buckets each, whatever the number of ranks:
// each rank adds 1, its hash's low bits and their squares to its host's bucket; a bucket
// whose ranks all share one hash has count * sum(q^2) == sum(q)^2 (and then its count is
// exact). While any bucket holds two hosts, another round with other buckets; a host never
// alone in its bucket gets the smallest of its buckets' counts (more than its own ranks: a
// smaller memory budget, never a larger one).
constexpr size_t kHostBuckets = 256, kHostRounds = 3;

}  // namespace

uint64_t host_bucket_count(const std::vector<uint64_t>& sums, size_t mine, bool& exact, bool& mixed) {
  mixed = false;
  exact = true;
  for (size_t b = 0; 3 * b + 2 < sums.size(); ++b) {
    const unsigned __int128 n = sums[3 * b], s1 = sums[3 * b + 1], s2 = sums[3 * b + 2];
    const bool m = n * s2 != s1 * s1;  // Cauchy-Schwarz: equal only when every q is the same
    mixed = mixed || m;
    if (b == mine) exact = !m;
  }
  return 3 * mine < sums.size() ? sums[3 * mine] : 0;
}

namespace {

// The cores this rank may run on: its affinity set, else the host's online ones.
double host_cores(const RunInfo& run) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return double(run.cpus.empty() ? std::max(1L, online) : long(run.cpus.size()));
}
// The cores the ranks on this host share: those all of them may run on when the meeting
// counted them (meet_ranks), else this rank's own.
double host_cores(const RunInfo& run, const RanksMet& met) {
  return met.host_cpus > 0 ? double(met.host_cpus) : host_cores(run);
}

// The ranks the launcher started on this host, where its environment says (MPICH's Hydra:
// MPI_LOCALNRANKS, Open MPI: OMPI_COMM_WORLD_LOCAL_SIZE), else 1: a hint for waiting only.
double launcher_local_ranks() {
  for (const char* name : {"MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"})
    if (const char* v = std::getenv(name)) {
      const long n = std::strtol(v, nullptr, 10);
      if (n > 0) return double(n);
    }
  return 1;
}

uint64_t host_hash(const std::string& host) { return std::hash<std::string>{}(host); }

// In situ: one analysis rank per process, on the host and cores that ran it.
bool in_situ(const Group& group, const RunInfo& run) {
  return !run.offline && group.comm().native_handle() != MPI_COMM_NULL;
}

// First one small maximum of the host name's hash and its complement: when every rank's is the
// same, every rank runs on one host (the common case in situ on one node), and the buckets'
// sums (768 words: more MPI steps than a short message) are not needed. Where the ranks'
// meeting took that maximum already (meet_ranks), its verdict, no round here.
Status ranks_sharing_host(const Group& group, const std::string& host, double& sharing, const RanksMet& met) {
  const uint64_t full = host_hash(host);
  bool one_host = met.one_host;
  if (!met.carried) {
    uint64_t one[2] = {full, ~full};
    CRITPATH_FORWARD_IF_ERROR(group.allreduce(one, 2, ReduceOp::kMax));
    one_host = one[0] == full && ~one[1] == full;
  }
  if (one_host) {
    sharing = double(group.size());
    return Status::kOk;
  }
  const uint64_t h = full & 0x7fffffff;
  // The bits of the hash compared: sum(q^2) over all ranks must fit 64 bits.
  int bits = 20;
  while (bits > 1 && double(group.size()) * std::ldexp(1.0, 2 * bits) >= std::ldexp(1.0, 63)) --bits;
  const uint64_t q = (h ^ (h >> 11)) & ((uint64_t(1) << bits) - 1);
  uint64_t best = UINT64_MAX;
  for (size_t round = 0; round < kHostRounds; ++round) {
    const uint64_t salted = (h + round) * 0x9e3779b97f4a7c15ull;
    const size_t mine = size_t(salted >> 56) % kHostBuckets;
    std::vector<uint64_t> v(3 * kHostBuckets, 0);
    v[3 * mine] = 1;
    v[3 * mine + 1] = q;
    v[3 * mine + 2] = q * q;
    CRITPATH_FORWARD_IF_ERROR(group.allreduce(v.data(), v.size(), ReduceOp::kSum));
    bool exact = false, mixed = false;
    const uint64_t count = host_bucket_count(v, mine, exact, mixed);
    best = exact ? count : std::min(best, count);
    if (!mixed) break;
  }
  sharing = double(std::max<uint64_t>(1, best));
  return Status::kOk;
}

// Whether the analysis goes window by window, agreed over the group, in two steps: before
// decoding, from the events alone (`decide`: kWhole when even an MPI-heavy trace would fit
// every rank's budget, kWindows when even a trace of user regions would not, else kScan);
// after the scan, from the MPI calls it counted (`confirm`).
class WindowChoice {
 public:
  enum Verdict : uint8_t { kWhole, kScan, kWindows };

  Status decide(const Group& group, const RunInfo& run, const EngineSettings& settings, const RanksMet& met) {
    forced_ = settings.debug_window > 0;
    if (forced_) {
      target_ = double(settings.debug_window);
      verdict_ = kWindows;
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "CRITPATH_DEBUG_ANALYSIS_WINDOW=%d asked for an analysis window by window",
                    settings.debug_window);
      why_ = buf;
      return Status::kOk;
    }
    double sharing = 1;
    // (The shared-memory segment, where the small collectives may go in situ, is the ranks'
    // meeting's: meet_ranks attached it or left it out.)
    CRITPATH_FORWARD_IF_ERROR(ranks_sharing_host(group, run.host, sharing, met));
    // In situ the ranks per core set how long a waiting rank sleeps between polls (fiber::nap).
    if (in_situ(group, run)) fiber::set_ranks_per_core(sharing / host_cores(run, met));
    budget_ = settings.memory_mib > 0 ? double(settings.memory_mib) * 1048576.0
                                      : 0.5 * mem_available_bytes() / sharing;
    events_ = double(run.store.events);
    // [0] a rank may not fit, [1] a rank cannot fit, [2] -(the smallest budget).
    double v[3] = {0, 0, -1e300};
    if (budget_ > 0) {
      v[0] = events_ * kMaxBytesPerEvent > budget_ ? 1 : 0;
      v[1] = events_ * kMinBytesPerEvent > budget_ ? 1 : 0;
      v[2] = -budget_;
    }
    CRITPATH_FORWARD_IF_ERROR(group.allreduce(v, 3, ReduceOp::kMax));
    min_budget_ = -v[2];
    verdict_ = v[1] > 0 ? kWindows : v[0] > 0 ? kScan : kWhole;
    // A window holds at most half the smallest budget's worth of an MPI-heavy trace's events
    // (the profile, the chunk store and the allocator's slack take the rest).
    target_ = std::max(1.0, 0.5 * min_budget_ / kMaxBytesPerEvent);
    return Status::kOk;
  }

  // After the scan: the estimate from this rank's events and MPI calls.
  Status confirm(const Group& group, const WindowScan& scan) {
    if (forced_) return Status::kOk;
    const double need = events_ * kBytesPerEvent + double(scan.mpi_calls) * kBytesPerMpiCall;
    double v[2] = {budget_ > 0 && need > budget_ ? 1.0 : 0.0, need};
    CRITPATH_FORWARD_IF_ERROR(group.allreduce(v, 2, ReduceOp::kMax));
    verdict_ = v[0] > 0 ? kWindows : kWhole;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "the analysis of the whole run would need about %.0f MiB on a rank, more "
                  "than the %.0f MiB it may use (CRITPATH_ANALYSIS_MEMORY)",
                  v[1] / 1048576.0, min_budget_ / 1048576.0);
    why_ = buf;
    return Status::kOk;
  }

  Verdict verdict() const { return verdict_; }
  double target() const { return target_; }        // events per window
  const std::string& why() const { return why_; }  // when kWindows

 private:
  bool forced_ = false;
  Verdict verdict_ = kWhole;
  double budget_ = 0, min_budget_ = 0, events_ = 0, target_ = 0;
  std::string why_;
};

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

// The sum (or the largest value) of column `stat` over the ranks' rows.
double column_sum(const std::vector<std::vector<double>>& rows, int stat) {
  double s = 0;
  for (const auto& row : rows) s += row[size_t(stat)];
  return s;
}
double column_max(const std::vector<std::vector<double>>& rows, int stat) {
  double m = 0;
  for (const auto& row : rows) m = std::max(m, row[size_t(stat)]);
  return m;
}

// Rank 0: the `analysis incomplete:` notes of what the ranks' statistics say the analysis
// could not use: partial traces, unmatched messages, collectives not all members recorded.
std::vector<std::string> incomplete_notes(const std::vector<std::vector<double>>& rows) {
  std::vector<std::string> out;
  const double partial = column_sum(rows, kStatPartial), unmatched = column_sum(rows, kStatUnmatched);
  const double dropped = column_sum(rows, kStatCollsDropped),
               comms = column_max(rows, kStatInconsistentComms);
  char q[512];
  if (partial > 0) {
    std::string who;
    for (size_t r = 0; r < rows.size(); ++r)
      if (rows[r][kStatPartial] > 0) who += (who.empty() ? "" : ",") + std::to_string(r);
    std::snprintf(q, sizeof q,
                  "analysis incomplete: the traces of %.0f ranks are partial (ranks %s; "
                  "see their notes)",
                  partial, who.c_str());
    out.emplace_back(q);
  }
  if (unmatched > 0) {
    std::snprintf(q, sizeof q,
                  "analysis incomplete: %.0f message%s could not be matched, %s waits "
                  "not analysed (rank (messages): %s)",
                  unmatched, unmatched == 1 ? "" : "s", unmatched == 1 ? "its" : "their",
                  ranks_with(rows, kStatUnmatched).c_str());
    out.emplace_back(q);
  }
  if (dropped > 0) {
    std::snprintf(q, sizeof q,
                  "analysis incomplete: on %.0f communicator%s the members recorded "
                  "different numbers of collectives; the %.0f beyond what every member recorded are not "
                  "analysed (rank (collectives left out): %s)",
                  comms, comms == 1 ? "" : "s", dropped, ranks_with(rows, kStatCollsDropped).c_str());
    out.emplace_back(q);
  }
  return out;
}

}  // namespace

// Everything the stages share.
struct AnalysisEngine::State {
  State(const RunInfo& run, uint64_t wall0, uint64_t analysis0, size_t rss0)
      : progress(run.rank, wall0), phases(analysis0, rss0), hwm0(resident_peak_bytes()) {}
  std::vector<std::unique_ptr<Pass>> owned;
  std::vector<Pass*> analyze_order, reduce_order, event_passes;
  std::vector<std::string> left_out;  // passes a windowed analysis leaves out
  Results results;
  std::optional<GlobalTime> gtime;
  std::function<double(uint64_t)> to_global;
  std::function<void(const std::string&)> pass_warn;
  std::optional<PassContext> ctx;
  Progress progress;
  PhaseClock phases;
  size_t hwm0;  // the process's peak resident memory when the analysis began
  // Window by window (engine/window.h): the plan and why.
  WindowPlan plan;
  std::string window_why;  // what asked for windows (and, if the run cannot be cut, why not)
  bool windowed = false;
  // The call paths across ranks.
  LocalProfile local;
  GlobalProfile global;
  std::vector<int> local_to_global;
  int n_callpaths = 0;
  bool unified = false;
  // The current window's (or the whole run's) replay products.
  Timeline timeline;
  P2pMatch match;
  std::vector<CollSync> csync, wsync;
  std::vector<uint32_t> inconsistent_windows;
  CollExchangeStats cstats;
  ClcStats clc;
  double latest_init_enter = 0, earliest_init_exit = 0, latest_finalize_enter = 0;
  // The run's span: -(the earliest MPI_Init entry), the latest MPI_Finalize entry (exchange()).
  std::optional<std::pair<double, double>> span;
  std::optional<WindowContext> whole;  // the whole run's, kept for reduce()
  // Over the windows: what the per-rank statistics report.
  struct {
    uint64_t messages = 0, unmatched = 0, replay_bytes = 0, coll_bytes = 0, dropped = 0;
    uint64_t inconsistent_comms = 0, windows = 0;
  } sum;
  std::optional<UnifiedCallPaths> unified_view;
  double first_init_enter = 0, wall_time_s = 0;
  // How many of the location's notes go to the report: those before the reduce stage.
  static constexpr size_t kNoNotes = SIZE_MAX;
  size_t notes_for_report = kNoNotes;
  ReportInput in;
};

AnalysisEngine::AnalysisEngine(LocationTrace& location, const Group& group, const EngineSettings& settings,
                               std::vector<std::unique_ptr<Pass>> passes, const AnalysisClock& clock,
                               Warn warn)
    : location_(location), group_(group), settings_(settings), clock_(clock), warn_(std::move(warn)),
      s_(std::make_unique<State>(location.run, clock.wall0, clock.analysis0, clock.rss0)) {
  const RunInfo& run = location_.run;
  // One time base: this rank's offset to rank 0 at finalize, interpolated with MPI_Init's.
  s_->gtime.emplace(run);
  s_->to_global = [this](uint64_t ticks) { return s_->gtime->seconds(ticks); };
  s_->pass_warn = [this](const std::string& w) { warn_(w); };
  s_->ctx.emplace(PassContext{run, *location_.definitions, s_->to_global, s_->results, s_->pass_warn});
  s_->owned = std::move(passes);
  for (const auto& p : s_->owned)
    if (p->enabled()) s_->reduce_order.push_back(p.get());
}

AnalysisEngine::~AnalysisEngine() = default;

size_t AnalysisEngine::resident_bytes() {
  // /proc/self/statm, not the allocator's own figures: mallinfo2 walks glibc's arenas, which
  // crashes when another allocator (a sanitizer's, jemalloc) serves malloc.
  char buf[128];
  if (!read_proc("/proc/self/statm", buf, sizeof buf)) return 0;
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  return size_t(resident) * size_t(page > 0 ? page : 4096);
}

// `what` failed: no report, or, when the deadline passed (every rank stops alike), a report
// of what is there.
void AnalysisEngine::fail(const std::string& what) {
  warn_(watchdog_expired() ? "analysis incomplete: " + what + "; the report lacks what needed it"
                           : what + "; no report");
  failed_ = true;
}

bool AnalysisEngine::report_possible() const { return !failed_ || watchdog_expired(); }

// CRITPATH_DEBUG_ANALYSIS_STALL with _STAGE: the chosen rank sits here until the deadline has
// passed, as a rank stuck in its own work would.
void AnalysisEngine::stall_if_chosen(const char* stage) {
  if (settings_.stall_rank != location_.run.rank || settings_.stall_stage != stage) return;
  if (settings_.timeout_s <= 0) return;  // would stall forever
  while (!watchdog_expired()) {
    if (fiber::current()) {  // a hosted rank: its worker's other ranks go on
      fiber::yield();
      continue;
    }
    const timespec ms = {0, 10000000};
    nanosleep(&ms, nullptr);
  }
}

namespace {

__attribute__((format(printf, 1, 2))) std::string strf(const char* fmt, ...) {
  char buf[1024];  // as log::warn: a longer line is cut
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

}  // namespace

// ---- The ranks' meeting -----------------------------------------------------------------------

Status meet_ranks(const Group& group, const RunInfo& run, const EngineSettings& settings, RanksMet& out) {
  out = RanksMet{};
  const bool situ = in_situ(group, run);
  // The launcher's count of this host's ranks, where it says (a local hint, no collective),
  // sets how the meeting waits: guessed uncrowded, each of 256 ranks on 2 cores spun and napped
  // through MPICH's progress (2.7 ms of polling CPU per rank in one collective).
  const double cores = situ ? host_cores(run) : 1;
  if (situ) fiber::set_ranks_per_core(launcher_local_ranks() / cores);
  // (A window forced by CRITPATH_DEBUG_ANALYSIS_WINDOW runs without the segment, as always.)
  if (!situ || !settings.host_shm || settings.debug_window > 0) return group.barrier();
  // The meeting is the maximum of the host names' hashes (and their complements) that
  // WindowChoice::decide needs first, with rank 0's offer of the shared-memory segment (its
  // name and cookie, zeros on the other ranks) riding along: every rank waits for the last one
  // either way, and so the analysis opens with no MPI round of its own (1.6 ms of polling CPU
  // per rank at 256 ranks on 2 cores, bench_wavefront in situ).
  // Also riding: the CPUs each rank may run on (sched_getaffinity), one word per CPU, 1 where
  // it may: their maximum is the union, the host's CPUs in use when every rank runs on it. A
  // rank's own mask says 1 CPU when the launcher bound the ranks to a core each (Open MPI
  // binds 2 ranks so by default, MPICH's `-bind-to core`): 2 ranks on 2 cores looked 2 to a
  // core, crowded, and napped through every wait (a 2-rank ping-pong's analysis 11 % slower).
  // A CPU past kCpuWords sets the word before them: not known, the rank's own count stands.
  constexpr size_t kCpuWords = 256, kCpuAt = 2 + host_shm::kOfferWords;
  host_shm::Offer offer = host_shm::offer(group.comm());
  const uint64_t mine = host_hash(run.host);
  uint64_t words[kCpuAt + 1 + kCpuWords] = {mine, ~mine};
  std::copy(offer.words, offer.words + host_shm::kOfferWords, words + 2);
  for (const int cpu : run.cpus) {
    const bool counted = cpu >= 0 && size_t(cpu) < kCpuWords;
    words[counted ? kCpuAt + 1 + size_t(cpu) : kCpuAt] = 1;
  }
  if (Status s = group.allreduce(words, std::size(words), ReduceOp::kMax); s != Status::kOk) {
    host_shm::attach(group.comm(), offer, false, false);  // rank 0's segment unlinked
    return s;
  }
  out.carried = true;
  out.one_host = words[0] == mine && ~words[1] == mine;  // the same verdict on every rank
  if (out.one_host && words[kCpuAt] == 0)
    out.host_cpus = int(std::count(words + kCpuAt + 1, std::end(words), uint64_t(1)));
  // Attached at once: rank 0 unlinks the name once every rank has mapped it, before anything
  // else of the analysis can fail. Every rank on this host: the segment; else none.
  std::copy(words + 2, words + kCpuAt, offer.words);
  host_shm::attach(group.comm(), offer, out.one_host,
                   out.one_host && double(group.size()) / host_cores(run, out) > 1);
  return Status::kOk;
}

// ---- Stage: choose_windows -----------------------------------------------------------------

void AnalysisEngine::choose_windows() {
  stall_if_chosen("windows");
  State& s = *s_;
  const RunInfo& run = location_.run;
  WindowChoice choice;
  if (choice.decide(group_, run, settings_, clock_.met) != Status::kOk)
    return fail("the analysis's memory estimate could not be agreed");
  if (choice.verdict() != WindowChoice::kWhole) {
    // One more decode: the MPI calls (for the estimate), the cut candidates, and the
    // call-path profile, unified at once when the run is cut, so that the windows' passes
    // book to the global call paths (the second decode builds the same profile again).
    WindowScanner scanner(*location_.definitions, run.size);
    ScanObserver so(scanner);
    LocalProfile scan_profile = build_profile(*location_.chunks, *location_.definitions, &so);
    const WindowScan scan = scanner.finish(scan_profile.status);
    if (choice.confirm(group_, scan) != Status::kOk)
      return fail("the analysis's memory estimate could not be agreed");
    if (choice.verdict() == WindowChoice::kWindows) {
      s.window_why = choice.why();
      if (plan_windows(scan, group_, choice.target(), s.plan) != Status::kOk)
        return fail("planning the analysis windows failed");
      if (s.plan.cuts.empty()) s.window_why += "; it cannot be cut: " + s.plan.why_not;
      else if (!unify_call_paths(scan_profile)) return;
    }
    s.phases.mark("window_scan");
  }
  s.windowed = !s.plan.cuts.empty();
  order_passes();
}

// The passes that run: the enabled ones (window by window, those that can), reduced in the
// pass list's order, analysed in the order of their needs (a pass after those whose results
// it reads; otherwise in list order).
void AnalysisEngine::order_passes() {
  State& s = *s_;
  if (s.windowed) {
    std::vector<Pass*> kept;
    for (Pass* p : s.reduce_order) {
      if (p->windowed()) kept.push_back(p);
      else s.left_out.push_back(p->name());
    }
    s.reduce_order = kept;
  }
  auto needs_of = [](const Pass* p) -> std::vector<const char*> {
    const PassInfo* row = find_pass(p->name());
    return row ? row->needs : std::vector<const char*>{};
  };
  std::vector<Pass*> pending = s.reduce_order;
  while (!pending.empty()) {
    auto ready = std::find_if(pending.begin(), pending.end(), [&](const Pass* p) {
      for (const char* need : needs_of(p))
        for (const Pass* q : pending)
          if (q != p && std::strcmp(q->name(), need) == 0) return false;
      return true;
    });
    if (ready == pending.end()) ready = pending.begin();  // a cycle: the list's order decides
    s.analyze_order.push_back(*ready);
    pending.erase(ready);
  }
  for (Pass* p : s.reduce_order)
    if (p->wants_events()) {
      p->prepare(*s.ctx);
      s.event_passes.push_back(p);
    }
}

// ---- Stage: decode (and, per window: exchange, clocks, analyze) -----------------------------

void AnalysisEngine::decode() {
  if (failed_) return;
  stall_if_chosen("decode");
  State& s = *s_;
  const RunInfo& run = location_.run;
  // One forward pass: the call-path profile and the replay index of the MPI activity; window
  // by window, each window's index is exchanged and analysed at its cut and then dropped.
  TimelineBuilder tb(*s.gtime, run.rank, *location_.definitions);
  // Time between MPI calls per call path: the delay analysis's time vectors and the
  // critical path's clip (instead of a second pass over the trace).
  tb.profile_gaps(run.conv.ticks_to_seconds(1000000000ull) * 1e-9);
  if (!s.windowed) tb.reserve(run.store.events);
  TimelineObserver observer(tb, s.progress, run.store.events, s.event_passes, s.to_global);
  int next_window = 0;
  if (s.windowed)
    observer.cut_at(&s.plan.cuts, *location_.definitions, run.size, [&] {
      if (failed_) return;  // an exchange failed: no more windows
      s.timeline = tb.take_window();
      analyze_window(next_window++, false);
      s.timeline = Timeline{};  // the window is done: its memory goes
    });
  s.local = build_profile(*location_.chunks, *location_.definitions, &observer);
  s.timeline = s.windowed ? tb.take_window() : tb.finish(s.local.node_remap);
  if (!s.windowed) s.phases.mark("decode_profile_timeline");
  if (s.local.status != Status::kOk)
    warn_(strf("analysis incomplete: the trace of rank %d did not decode completely (%s); its results are "
               "partial",
               run.rank, to_string(s.local.status)));
  if (!failed_) analyze_window(next_window, true);
  if (failed_) return;
  if (s.windowed) s.phases.mark("windows");
  note_windows();
}

// The engine's exchanges and the passes' analyze() over the timeline in hand: the whole run,
// or window `w` (`last`: the window that ends the run). Collective.
void AnalysisEngine::analyze_window(int w, bool last) {
  if (last) stall_if_chosen("last_window");
  State& s = *s_;
  ++s.sum.windows;
  if (!exchange(w, last)) return;
  if (settings_.clc && !s.windowed) correct_clocks();
  sync_windows();
  if (!s.windowed) s.phases.mark("exchange");
  s.sum.messages += s.timeline.sends.size();
  s.sum.unmatched += s.match.unmatched_sends + s.match.unmatched_recvs;
  s.sum.replay_bytes += s.match.bytes_sent;
  s.sum.coll_bytes += s.cstats.bytes_sent;
  s.sum.dropped += s.cstats.dropped;
  s.sum.inconsistent_comms = std::max(s.sum.inconsistent_comms, s.cstats.inconsistent_comms);
  run_analyze_steps(w, last);
  s.phases.sample();
}

// Matching and the synchronization of the collectives, with the run-wide facts of MPI_Init
// (first window) and MPI_Finalize (last) the wait-state patterns need.
bool AnalysisEngine::exchange(int w, bool last) {
  State& s = *s_;
  const Timeline& t = s.timeline;
  // One maximum: the latest MPI_Init entry and MPI_Finalize entry, the earliest MPI_Init exit
  // (negated), and the first time for the run's span (reduce(): the earliest MPI_Init entry,
  // negated, and the latest MPI_Finalize entry in the corrected time base).
  const RunInfo& run = location_.run;
  double mx[5] = {t.init_call != kNoCall ? t.calls[t.init_call].enter : 0,
                  t.finalize_call != kNoCall ? t.calls[t.finalize_call].enter : 0,
                  t.init_call != kNoCall ? -t.calls[t.init_call].exit : 0, -s.to_global(run.init_enter_ticks),
                  s.to_global(run.finalize_enter_ticks)};
  if (group_.allreduce(mx, 5, ReduceOp::kMax) != Status::kOk) {
    fail("the replay exchange failed");
    return false;
  }
  if (w <= 0) {
    s.latest_init_enter = mx[0];
    s.earliest_init_exit = -mx[2];
    s.span = {mx[3], mx[4]};
  }
  if (last) s.latest_finalize_enter = mx[1];
  s.match = P2pMatch{};
  s.csync.clear();
  s.cstats = CollExchangeStats{};
  if (w <= 0) s.progress.report("exchange", 0.0);
  if (exchange_p2p(t, group_.comm(), s.match) != Status::kOk ||
      sync_collectives(t, *location_.definitions, group_.comm(), s.csync, s.cstats) != Status::kOk) {
    fail("the replay exchange failed");
    return false;
  }
  return true;
}

// CRITPATH_CLOCK_CORRECTION=clc: the controlled logical clock over the whole run.
void AnalysisEngine::correct_clocks() {
  State& s = *s_;
  if (apply_clc(s.timeline, *location_.definitions, group_.comm(), s.match, s.csync, s.cstats, s.clc) !=
      Status::kOk)
    warn_("analysis incomplete: the controlled-logical-clock pass failed; times are only linearly corrected");
}

// Window collectives (creation, fences, free), synchronized like collectives.
void AnalysisEngine::sync_windows() {
  State& s = *s_;
  s.wsync.clear();
  s.inconsistent_windows.clear();
  CollExchangeStats wstats;
  if (sync_window_collectives(s.timeline, *location_.definitions, group_.comm(), s.wsync, wstats,
                              s.inconsistent_windows) != Status::kOk)
    warn_("analysis incomplete: synchronizing the window collectives failed; the one-sided analysis lacks "
          "them");
  s.cstats.bytes_sent += wstats.bytes_sent;  // the RMA notes: scalars.rma_analysis_bytes
}

// The passes' analyze() over the window, in the order of their needs.
void AnalysisEngine::run_analyze_steps(int w, bool last) {
  State& s = *s_;
  const Timeline& t = s.timeline;
  // Window by window the profile is still being built: the nodes the window's calls name.
  size_t nodes = last ? s.local.nodes.size() : 0;
  for (const CallRecord& call : t.calls) nodes = std::max(nodes, size_t(call.node + 1));
  // The cut that ends the window: the collective of the window's last call (a blocking
  // collective's call holds no other).
  double cut_time = 0;
  int cut_rank = -1;
  if (!last && !t.calls.empty())
    for (size_t i = std::min(t.colls.size(), s.csync.size()); i-- > 0;) {
      if (t.colls[i].complete_call + 1 != t.calls.size()) continue;
      if (s.csync[i].valid) {
        cut_time = s.csync[i].latest_begin;
        cut_rank = s.csync[i].latest_rank;
      }
      break;
    }
  if (s.unified && !s.unified_view)
    s.unified_view.emplace(UnifiedCallPaths{s.global, s.local_to_global, s.n_callpaths});
  const WindowContext wc{t,
                         s.match,
                         s.csync,
                         s.wsync,
                         s.inconsistent_windows,
                         nodes,
                         s.windowed ? w : -1,
                         last,
                         cut_time,
                         cut_rank,
                         s.latest_init_enter,
                         s.earliest_init_exit,
                         s.latest_finalize_enter,
                         last ? &s.local : nullptr,
                         s.windowed ? &*s.unified_view : nullptr};
  for (Pass* p : s.analyze_order) {
    const Status ps = p->analyze(*s.ctx, wc, group_);
    if (ps != Status::kOk) warn_("analysis incomplete: " + p->failure(ps, Pass::Step::kAnalyze));
    if (!s.windowed && p->analyze_phase()) s.phases.mark(p->analyze_phase());
  }
  if (!s.windowed) s.whole.emplace(wc);
}

// Rank 0: how the windows went, and what a windowed analysis left out.
void AnalysisEngine::note_windows() {
  State& s = *s_;
  if (location_.run.rank != 0) return;
  if (s.windowed && settings_.clc)
    warn_("analysis incomplete: window by window, the controlled logical clock is not applied "
          "(CRITPATH_CLOCK_CORRECTION=clc); times are only linearly corrected");
  if (s.window_why.empty()) return;
  if (!s.windowed) return warn_("analysis: " + s.window_why + "; the analysis holds the whole run");
  std::string names;
  for (const std::string& n : s.left_out) names += (names.empty() ? "" : ", ") + n;
  if (names.empty())
    warn_(strf("analysis: window by window (%llu windows): %s", (unsigned long long)s.sum.windows,
               s.window_why.c_str()));
  else
    warn_(strf("analysis incomplete: window by window (%llu windows; %s), without the passes that need the "
               "whole run at once: %s",
               (unsigned long long)s.sum.windows, s.window_why.c_str(), names.c_str()));
}

// ---- Stage: unify ----------------------------------------------------------------------------

void AnalysisEngine::unify() {
  if (failed_ || s_->unified) return;  // window by window the call paths were unified before the windows
  stall_if_chosen("unify");
  s_->progress.report("unification", 0.0);
  if (unify_call_paths(s_->local)) s_->phases.mark("unify_profile");
}

bool AnalysisEngine::unify_call_paths(const LocalProfile& profile) {
  State& s = *s_;
  // The tree's waits: up to the analysis timeout (none: as long as a collective would wait).
  const double timeout_s = settings_.timeout_s > 0 ? double(settings_.timeout_s) : 1e9;
  int n_callpaths = 0;
  const Status us = unify_profile(profile, *location_.definitions, location_.run.conv, group_.comm(),
                                  s.global, &s.local_to_global, &n_callpaths, timeout_s);
  if (us != Status::kOk) {
    fail(strf("call-path unification failed (%s)", to_string(us)));
    return false;
  }
  s.n_callpaths = n_callpaths;
  s.unified = true;
  return true;
}

// ---- Stage: reduce ---------------------------------------------------------------------------

void AnalysisEngine::reduce() {
  State& s = *s_;
  // The notes so far go to the report (report_input); a pass's warnings during its reduce()
  // reach stderr only, its report notes go through ReportInput::notes.
  s.notes_for_report = location_.notes.size();
  if (failed_) return;
  stall_if_chosen("reduce");
  // Wall time in the corrected time base: earliest MPI_Init entry to latest MPI_Finalize entry
  // (agreed with the first exchange).
  if (!s.span) return fail("the run's span could not be agreed");
  s.first_init_enter = -s.span->first;
  s.wall_time_s = s.span->second + s.span->first;
  if (!s.unified_view) s.unified_view.emplace(UnifiedCallPaths{s.global, s.local_to_global, s.n_callpaths});
  const ReduceContext rc{
      s.local, *s.unified_view, s.first_init_enter, s.wall_time_s, s.whole ? &*s.whole : nullptr, s.in};
  for (Pass* p : s.reduce_order) {
    if (!needs_present(p)) continue;
    const Status ps = p->reduce(*s.ctx, rc, group_);
    if (ps != Status::kOk) warn_("analysis incomplete: " + p->failure(ps, Pass::Step::kReduce));
    if (p->reduce_phase()) s.phases.mark(p->reduce_phase());
  }
}

// Whether the results `p` reads are there (PassInfo::needs); if not, it is not reduced, with
// a note.
bool AnalysisEngine::needs_present(const Pass* p) {
  const PassInfo* row = find_pass(p->name());
  if (row == nullptr) return true;
  for (const char* need : row->needs)
    if (!s_->results.has(need)) {
      warn_(strf("analysis incomplete: the %s analysis did not run: it needs the results of %s, which are "
                 "missing",
                 p->name(), need));
      return false;
    }
  return true;
}

// ---- Stage: report_input ---------------------------------------------------------------------

// This rank's measurement and analysis statistics (report/report.h RankStat).
std::vector<double> AnalysisEngine::rank_stats() const {
  const State& s = *s_;
  const RunInfo& run = location_.run;
  const trace::ChunkStoreStats& ss = run.store;
  const runtime::RecorderStats& rs = run.recorder;
  std::vector<double> st(kStatCount, 0.0);
  st[kStatEvents] = double(s.local.events);
  st[kStatChunks] = double(ss.chunks);
  st[kStatCompressedBytes] = double(ss.bytes_total);
  st[kStatEncodedBytes] = double(ss.encoded_bytes);
  st[kStatSpilledBytes] = double(ss.bytes_spilled);
  st[kStatChunksSpilled] = double(ss.chunks_spilled);
  st[kStatOverheadSeconds] = run.conv.ticks_to_seconds(rs.overhead_ticks_max_thread);
  st[kStatCompressSeconds] = run.conv.ticks_to_seconds(rs.compress_ticks);
  st[kStatInitNs] = s.to_global(run.init_enter_ticks) * 1e9;
  st[kStatFinalizeNs] = s.to_global(run.finalize_enter_ticks) * 1e9;
  st[kStatReplayBytes] = double(s.sum.replay_bytes);
  st[kStatReplayCollBytes] = double(s.sum.coll_bytes);
  st[kStatMessages] = double(s.sum.messages);
  st[kStatUnmatched] = double(s.sum.unmatched);
  st[kStatClockError] = s.gtime->max_error_s();
  st[kStatClcPasses] = double(s.clc.passes);
  st[kStatClcCorrected] = double(s.clc.corrected);
  st[kStatClcMaxShift] = s.clc.max_shift_s;
  st[kStatClcViolationsBefore] = double(s.clc.violations_before);
  st[kStatUnmatchedExits] = double(s.local.unmatched_exits);
  st[kStatUnclosedFrames] = double(s.local.unclosed_frames);
  // Partial: the trace did not decode completely, or recording stopped early on some thread
  // (out of memory on the recording path; the note says which).
  st[kStatPartial] = s.local.status == Status::kOk && rs.threads_stopped == 0 && rs.rank_stopped == 0 ? 0.0
                                                                                                      : 1.0;
  st[kStatThreads] = double(rs.threads);
  st[kStatMpiThreads] = double(s.timeline.mpi_locations);
  const defs::Instrumentation instr = location_.definitions->instrumentation();
  st[kStatInstrModes] = double((instr.gcc ? 1 : 0) | (instr.xray ? 2 : 0));
  st[kStatInstrFunctions] = double(instr.instrumented);
  st[kStatInstrPatched] = double(instr.patched);
  st[kStatInstrUnpatched] = double(instr.unpatched);
  st[kStatInstrFiltered] = double(instr.filtered);
  st[kStatInstrAutoFiltered] = double(instr.auto_filtered);
  st[kStatInstrSitesPatchedOut] = double(instr.sites_patched_out);
  st[kStatInconsistentComms] = double(s.sum.inconsistent_comms);
  st[kStatCollsDropped] = double(s.sum.dropped);
  for (const Pass* p : s.reduce_order) p->add_rank_stats(*s.ctx, st);  // the clock-condition violations
  return st;
}

// Every rank's statistics, host, memory growth, own figures and notes on rank 0 in one
// gather, the engine's last collective (rank 0's own statistics and notes alone when it
// failed: the deadline passed).
void AnalysisEngine::gather_end(ReportInput& in, EndGathered& got) {
  EndRecord mine{};
  const std::vector<double> st = rank_stats();
  std::copy_n(st.data(), std::min(st.size(), size_t(kStatCount)), mine.stats);
  mine.node = node_info();
  mine.memory = double(s_->phases.rss_peak());
  mine.memory_rank = double(location_.run.rank);
  mine.figures = own_figures();
  const std::string notes = own_notes();
  // The gather's bytes count but for the figures' own (as when they came alone).
  const size_t counted = sizeof mine - sizeof mine.figures + notes.size();
  mine.figures.sent += double(counted);
  std::vector<char> bytes(sizeof mine + notes.size());
  std::memcpy(bytes.data(), &mine, sizeof mine);
  std::memcpy(bytes.data() + sizeof mine, notes.data(), notes.size());
  std::vector<char> all;
  std::vector<int> counts, displs;
  const Status gs = group_.gather_to_root(bytes.data(), bytes.size(), all, counts, displs);
  if (location_.run.rank != 0) return;
  bool ok = gs == Status::kOk && counts.size() == size_t(location_.run.size);
  for (size_t r = 0; ok && r < counts.size(); ++r) ok = size_t(counts[r]) >= sizeof mine;
  if (!ok) {
    in.rank_stats.assign(1, st);
    in.notes.push_back("analysis incomplete: the other ranks' statistics could not be gathered; the "
                       "per-rank figures are rank 0's alone");
    got.notes = split_notes(notes);
    got.memory_peak = {mine.memory, location_.run.rank};
    return;
  }
  std::string text;
  for (size_t r = 0; r < counts.size(); ++r) {
    EndRecord rec;
    std::memcpy(&rec, all.data() + displs[r], sizeof rec);
    in.rank_stats.emplace_back(rec.stats, rec.stats + kStatCount);
    got.nodes.push_back(rec.node);
    got.figures.push_back(rec.figures);
    // As MPI_MAXLOC: the largest growth, the smallest rank of those with it.
    const std::pair<double, int> m{rec.memory, int(rec.memory_rank)};
    if (r == 0 || m.first > got.memory_peak.first ||
        (m.first == got.memory_peak.first && m.second < got.memory_peak.second))
      got.memory_peak = m;
    text.append(all.data() + displs[r] + sizeof rec, size_t(counts[r]) - sizeof rec);
  }
  got.notes = split_notes(text);
  got.figures[0].received += double(all.size() - counts.size() * sizeof(OwnFigures));
  got.ok = true;
}

// This rank's host and the CPUs its affinity mask allows.
NodeInfo AnalysisEngine::node_info() const {
  const RunInfo& run = location_.run;
  NodeInfo mine{};
  std::snprintf(mine.host, sizeof mine.host, "%s", run.host.c_str());
  for (int c : run.cpus)
    if (c >= 0 && c < 1024) mine.mask[c / 64] |= uint64_t(1) << (c % 64);
  return mine;
}

// Rank 0: where the ranks ran (`all`, every rank's NodeInfo): per host, how many ranks and
// how many distinct cores their affinity masks allow. Ranks outnumbering cores wait for a
// core inside MPI as well as outside: the report must say so before anyone reads the
// waiting times. A host or mask the trace lacks is left out of the line
// (engine/header_lines.h), never counted as 0 cores.
void AnalysisEngine::describe_nodes(ReportInput& in, const std::vector<NodeInfo>& all) {
  if (all.empty()) return;
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
  std::vector<NodeCount> rows;
  for (const auto& [host, node] : nodes) {
    int cores = 0;
    for (uint64_t w : node.mask) cores += __builtin_popcountll(w);
    rows.push_back({host, node.ranks, cores});
    if (!host.empty() && cores > 0 && node.ranks > cores) {
      const std::string msg = strf(
          "%d ranks share %d cores on %s (oversubscribed %.1fx): their waiting and MPI "
          "times include the time a rank waits for a core, not only for other ranks",
          node.ranks, cores, host.c_str(), double(node.ranks) / cores);
      in.lead_findings.push_back(msg + ".");
      in.notes.push_back("oversubscribed: " + msg);
    }
  }
  in.header_lines.push_back(nodes_line(rows));
}

// This rank's notes up to the reduce stage, "rank <r>: " before each, one a line.
std::string AnalysisEngine::own_notes() const {
  std::string mine;
  const size_t n = std::min(s_->notes_for_report, location_.notes.size());
  for (size_t i = 0; i < n; ++i)
    mine += "rank " + std::to_string(group_.rank()) + ": " + location_.notes[i] + "\n";
  return mine;
}

ReportInput AnalysisEngine::report_input() {
  stall_if_chosen("report");
  State& s = *s_;
  if (s.notes_for_report == State::kNoNotes)
    s.notes_for_report = location_.notes.size();  // reduce() did not run
  ReportInput& in = s.in;
  EndGathered got;
  gather_end(in, got);
  if (location_.run.rank != 0) {
    ReportInput mine;  // the matrix file's rows (report/rank_matrix.h), written by every rank
    mine.rank_detail = std::move(in.rank_detail);
    return mine;
  }
  describe_nodes(in, got.nodes);
  in.run = &location_.run;
  in.profile = &s.global;
  double init_min = 0, fin_max = 0;
  for (size_t r = 0; r < in.rank_stats.size(); ++r) {
    const std::vector<double>& row = in.rank_stats[r];
    if (r == 0 || row[kStatInitNs] < init_min) init_min = row[kStatInitNs];
    if (r == 0 || row[kStatFinalizeNs] > fin_max) fin_max = row[kStatFinalizeNs];
  }
  in.wall_time_s = (fin_max - init_min) * 1e-9;
  add_header_lines(in);
  add_notes(in, std::move(got.notes));
  if (got.ok && got.figures.size() == size_t(group_.size()))
    set_own_figures(got.figures, s.phases.wall_by_phase(), in.scalars);
  s.phases.mark("report_input");
  in.analysis_phases = s.phases.take();
  in.analysis_s = double(clock::monotonic_ns() - clock_.analysis0) * 1e-9;
  // The analysis's memory: the largest growth over the ranks (in-situ; critpath-analyze: per
  // process, the ranks it hosts together).
  in.analysis_memory_peak_bytes = got.memory_peak.first;
  in.analysis_memory_peak_rank = got.memory_peak.second;
  in.finalize_wait_s = double(clock_.analysis0 - std::min(clock_.analysis0, clock_.wall0)) * 1e-9;
  return std::move(in);
}

// The analysis's own figures of this rank, for rank 0: taken just before the engine's last
// collective (gather_end), which they count as a round of its own; gather_end adds its bytes
// but for the figures' own.
OwnFigures AnalysisEngine::own_figures() const {
  const State& s = *s_;
  const Comm::Traffic t = group_.comm().traffic();
  OwnFigures mine;
  mine.cpu_s = s.phases.cpu_total() + location_.run.handoff_cpu_s;
  mine.polling_cpu_s = s.phases.polling_total();
  mine.sent = double(t.sent);
  mine.received = double(t.received);
  mine.rounds = double(t.rounds + 1);
  mine.speaks = group_.comm().first_in_process() ? 1 : 0;
  // Growth beyond the resident memory at the start: the process's new peak, if it made one
  // during the analysis, else the largest sample at the phase ends.
  const size_t hwm = resident_peak_bytes(), rss0 = s.phases.rss0();
  const size_t grown = hwm > s.hwm0 && hwm > rss0 ? hwm - rss0 : 0;
  mine.memory = double(std::max(grown, s.phases.rss_peak()));
  const std::vector<double>& cpu = s.phases.cpu_by_phase();
  mine.n_phases = double(std::min(cpu.size(), kFigurePhases));
  const std::vector<double>& polling = s.phases.polling_by_phase();
  const std::vector<double>& faults = s.phases.faults_by_phase();
  for (size_t i = 0; i < size_t(mine.n_phases); ++i) {
    mine.phase_cpu[i] = cpu[i];
    mine.phase_polling[i] = float(polling[i]);
    mine.phase_faults[i] = float(faults[i]);
  }
  return mine;
}

// Rank 0: the header lines of the clocks, the replay, the threads and the windows.
void AnalysisEngine::add_header_lines(ReportInput& in) {
  const State& s = *s_;
  const RunInfo& run = location_.run;
  const auto& rows = in.rank_stats;
  const double msgs = column_sum(rows, kStatMessages), bytes = column_sum(rows, kStatReplayBytes);
  in.header_lines.push_back(clock_line(run, column_max(rows, kStatClockError),
                                       column_sum(rows, kStatP2pViolations),
                                       column_sum(rows, kStatCollViolations)));
  if (settings_.clc)
    in.header_lines.push_back(strf(
        "@ Logical clock   : %.0f violations before, %.0f passes, %.0f call times moved, max shift %.1f us",
        column_sum(rows, kStatClcViolationsBefore), column_max(rows, kStatClcPasses),
        column_sum(rows, kStatClcCorrected), column_max(rows, kStatClcMaxShift) * 1e6));
  const double delay_bytes = in.scalars.number("delay_bytes");
  const double rma_bytes = in.scalars.number("rma_analysis_bytes");
  in.header_lines.push_back(
      replay_line(msgs, bytes, bytes + column_sum(rows, kStatReplayCollBytes) + rma_bytes + delay_bytes,
                  column_sum(rows, kStatUnmatched)));
  // Threads that called MPI (MPI_THREAD_MULTIPLE): each is a location of its own.
  const double most = column_max(rows, kStatMpiThreads);
  if (most > 1) {
    int ranks_with_more = 0;
    for (const auto& row : rows) ranks_with_more += row[kStatMpiThreads] > 1 ? 1 : 0;
    in.header_lines.push_back(
        strf("@ MPI threads     : %.0f threads called MPI (up to %.0f per rank, on %d of %d "
             "ranks more than one); a rank's time is the sum of its threads' times",
             column_sum(rows, kStatMpiThreads), most, ranks_with_more, int(rows.size())));
  }
  // Window by window (engine/window.h): how, and what it left out.
  in.scalars.set("analysis_windowed", s.windowed);
  in.scalars.set("analysis_windows", s.sum.windows);
  if (s.plan.candidates > 0 || s.windowed) {  // the run was scanned for cuts
    in.scalars.set("analysis_window_candidates", s.plan.candidates);
    in.scalars.set("analysis_window_cuts", s.plan.cuts.size());
  }
  if (s.windowed)
    in.header_lines.push_back(
        strf("@ Analysis windows: %.0f, cut at %zu of %.0f collectives over all ranks; at most "
             "%.0f events per window on a rank",
             double(s.sum.windows), s.plan.cuts.size(), double(s.plan.candidates), s.plan.largest_window));
}

// Rank 0: the report's notes: the ranks' (gathered), the passes', then what the counters say
// about the trace's quality, in words (text and JSON alike). What the analysis could not use
// is an `analysis incomplete:` note naming the ranks.
void AnalysisEngine::add_notes(ReportInput& in, std::vector<std::string> notes) {
  notes.insert(notes.end(), in.notes.begin(), in.notes.end());  // the passes' notes last
  const double exits = column_sum(in.rank_stats, kStatUnmatchedExits);
  const double unclosed = column_sum(in.rank_stats, kStatUnclosedFrames);
  if (exits > 0)
    notes.push_back(
        strf("trace: %.0f region exits without their enter (unmatched_exits): user regions closed "
             "in another order than opened, or begun before recording",
             exits));
  if (unclosed > 0)
    notes.push_back(strf("trace: %.0f frames still open at the end of a trace (unclosed_frames)", unclosed));
  for (std::string& n : incomplete_notes(in.rank_stats)) notes.push_back(std::move(n));
  if (watchdog_expired())
    notes.push_back(strf("analysis incomplete: CRITPATH_ANALYSIS_TIMEOUT=%d s passed before the report was "
                         "written; a step that did not finish is named in its own note",
                         settings_.timeout_s));
  size_t incomplete = 0;
  for (const std::string& n : notes) incomplete += n.find("analysis incomplete: ") != std::string::npos;
  in.scalars.set("analysis_complete", incomplete == 0);
  in.scalars.set("analysis_incomplete_notes", incomplete);
  if (incomplete > 0)
    in.header_lines.push_back(
        strf("@ Completeness    : analysis incomplete: %zu note%s what is left out (Notes)", incomplete,
             incomplete == 1 ? " says" : "s say"));
  in.notes = std::move(notes);
}

}  // namespace critpath::analyzer::engine
