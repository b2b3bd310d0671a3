// critpath — analyzer/engine/metric_store.cpp: the declarations' registry, the engine's own
// scalars, the undeclared-id check, Scalars and the reduction.
#include "analyzer/engine/metric_store.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "analyzer/engine/group.h"
#include "analyzer/engine/pass_info.h"

namespace critpath::analyzer::engine {

const std::vector<MetricDecl>& metric_declarations() {
  static const std::vector<MetricDecl> kAll = [] {
    std::vector<MetricDecl> all = profile_metric_decls();
    for (const PassInfo& p : pass_table()) all.insert(all.end(), p.metrics.begin(), p.metrics.end());
    return all;
  }();
  return kAll;
}

namespace {
PassTable g_pass_table = nullptr;  // set at load by passes/pass_list.cpp
}  // namespace

bool set_pass_table(PassTable table) {
  g_pass_table = table;
  return true;
}

const std::vector<PassInfo>& pass_table() {
  static const std::vector<PassInfo> kNone;
  return g_pass_table ? g_pass_table() : kNone;
}

const PassInfo* find_pass(const char* name) {
  for (const PassInfo& row : pass_table())
    if (std::strcmp(row.name, name) == 0) return &row;
  return nullptr;
}

const MetricDecl* find_metric(const std::string& id) {
  for (const MetricDecl& d : metric_declarations())
    if (id == d.id) return &d;
  return nullptr;
}

// The analysis's own cost per rank (analysis_engine.cpp gathers it once, at the end), declared
// after analysis_phases.
namespace {
std::vector<ScalarDecl> with_analysis_cost(std::vector<ScalarDecl> v) {
  static const ScalarDecl kCost[] = {
      {"analysis_cpu_s", "s",
       "The analysis's CPU time per analysis rank, `{mean, max, rank0}` over the ranks: from the "
       "start of the analysis to the gathering of these figures, the CPU time of the thread that "
       "runs the rank's analysis (`CLOCK_THREAD_CPUTIME_ID`); in `critpath-analyze` hosting several "
       "ranks per process, the CPU time of the rank's fiber (its worker thread's, while the fiber "
       "ran); in situ hosted (`CRITPATH_ANALYSIS_HOSTED`), that plus the hand-off: the rank writing its "
       "trace and rank 0 reading it back. Includes polling while waiting for other ranks "
       "(`analysis_cpu_polling_s`)."},
      {"analysis_cpu_polling_s", "s",
       "Of `analysis_cpu_s`, `{mean, max, rank0}`: the CPU time each rank spent in the engine's wait "
       "loops, polling for other ranks' part of a collective or for a replay message (from the first "
       "poll that found nothing to the end of the wait). With more analysis ranks than cores (in situ "
       "oversubscribed) this is what grows with the number of ranks; `analysis_cpu_s` minus it is the "
       "rank's own work."},
      {"analysis_cpu_phases_s", "s",
       "`{<phase>: mean over the ranks}` of the CPU seconds each rank spent in each phase of "
       "`analysis_phases` (same phase names, without the `_s`; the last, `report_input`, is not "
       "included), measured as `analysis_cpu_s`."},
      {"analysis_cpu_polling_phases_s", "s",
       "`{<phase>: mean over the ranks}`: of `analysis_cpu_phases_s`, the CPU seconds spent polling "
       "for other ranks, measured as `analysis_cpu_polling_s`: in which phases a rank waits."},
      {"analysis_faults_phases", "count",
       "`{<phase>: mean over the ranks}` of the minor page faults (`getrusage` `ru_minflt`: first "
       "touches of memory fresh from the kernel, a few microseconds each) the process took during "
       "each phase of `analysis_cpu_phases_s`; in `critpath-analyze` hosting several ranks per "
       "process, the faults of the ranks that ran alongside count too."},
      {"analysis_bytes", "bytes",
       "`{sent_max, recv_max, sent_rank0, recv_rank0}`: the payload bytes each analysis rank gave "
       "to and took from the engine's communication (`engine::Comm`: every collective's and point-"
       "to-point message's data as the rank's own buffers hold it, its own block of an all-to-all "
       "or gather included), the largest over the ranks and rank 0's, up to the gathering of these "
       "figures."},
      {"analysis_rounds", "count",
       "The largest number of synchronizing rounds any analysis rank took part in: each collective "
       "operation of `engine::Comm` is one (the Mailbox's included, communicator creations too, "
       "and the gathering of these figures), and each step of the call-path merge tree a rank "
       "waited through or fed (ceil(log2 P) on rank 0); other point-to-point messages are none."},
      {"analysis_memory", "bytes",
       "`{rank0_bytes, median_bytes}`: how much the resident memory of the process hosting rank 0, "
       "and of the median process, grew during the analysis beyond what it was at its start: the "
       "process's peak (`VmHWM`) if it made a new one during the analysis, else the largest sample "
       "at the phase ends (as `analysis_memory_peak_bytes`). In situ one process per rank."},
  };
  auto at = std::find_if(v.begin(), v.end(),
                         [](const ScalarDecl& d) { return std::strcmp(d.id, "analysis_phases") == 0; });
  v.insert(at == v.end() ? at : at + 1, std::begin(kCost), std::end(kCost));
  return v;
}

}  // namespace

const std::vector<ScalarDecl>& engine_scalar_decls() {
  static const std::vector<ScalarDecl> kEngine = with_analysis_cost({
      {"wall_time_s", "s", "See *Wall time* above."},
      {"events", "count", "Events recorded, all ranks and threads."},
      {"trace_compressed_bytes", "bytes", "Size of all compressed chunks (headers included)."},
      {"trace_encoded_bytes", "bytes", "Size of the varint-encoded streams before zstd."},
      {"trace_bytes_per_event", "B", "`trace_compressed_bytes / events`."},
      {"trace_spilled_bytes", "bytes",
       "Size of the compressed chunks written to the spill files because the in-memory budget "
       "(`CRITPATH_BUFFER_SIZE`) was exceeded. Nothing is ever dropped."},
      {"trace_chunks", "count", "Compressed chunks, all ranks and threads."},
      {"trace_chunks_spilled", "count",
       "Compressed chunks written to the spill files (as trace_spilled_bytes)."},
      {"overhead_max_rank_s", "s",
       "Max over ranks of the time the application threads spent in critpath's cold paths during "
       "the run (handing full chunks off, compressing inline when the compressor thread lagged). "
       "The per-event hot-path cost is not included (see `benchmarks/`)."},
      {"compression_s", "s",
       "Time spent compressing chunks, summed over ranks and threads (mostly on the background "
       "compression thread)."},
      {"analysis_s", "s",
       "The analysis alone: rank 0's time from the moment the last rank entered `MPI_Finalize` (a "
       "meeting on the analysis communicator: a barrier, or in situ the maximum that starts the "
       "shared-memory segment) to the report being rendered."},
      {"finalize_wait_s", "s",
       "Rank 0's time from its own `MPI_Finalize` entry to that moment: the application's "
       "imbalance at its end, not analysis cost (also in the `@ Analysis` header line)."},
      {"analysis_memory_peak_bytes", "bytes",
       "The most one rank's resident memory (`/proc/self/statm`) grew during the analysis beyond "
       "what it was when the analysis began, sampled at the end of every analysis phase (a peak "
       "inside a phase is not seen). In `critpath-analyze` the figure is per process (the ranks it "
       "hosts together). Also in the `@ Analysis` header line (`memory +82 MiB at most (rank 0)`)."},
      {"analysis_memory_peak_rank", "rank", "The rank of analysis_memory_peak_bytes."},
      {"analysis_memory_bytes_per_event", "B",
       "`analysis_memory_peak_bytes` / that rank's events: what the analysis needs per recorded "
       "event (the replay index holds every MPI call and message; memory grows with a rank's own "
       "trace, never with the others')."},
      {"analysis_phases", "s",
       "Rank 0's analysis time by phase, `<phase>_s`: `decode_profile_timeline` (decoding the "
       "trace, the call-path profile and the replay index), `exchange` (matching messages, "
       "synchronizing collectives; CLC; window collectives), `wait_states`, `rma` (one-sided wait "
       "states), `critical_path_walk` (the walk and the clip), `unify_profile` (call paths across "
       "ranks), `wait_state_reduction`, `rma_reduction`, `delay` (the delay analysis), "
       "`critical_path` (imbalance, parallelism, the report), `whatif` (the what-if replay), "
       "`report_input`; window by window, `window_scan` (the extra decode that finds the cuts, and "
       "the unification of the call paths) and `windows` (decoding, exchanging and analysing every "
       "window) replace the phases up to `critical_path_walk` and `unify_profile`. A phase that "
       "waits in a collective for slower ranks includes that wait."},
      {"analysis_pct_of_wall", "%", "`analysis_s / wall_time_s × 100`."},
      {"analysis_windowed", "bool",
       "Whether the analysis went window by window (see *Phase-by-phase analysis*)."},
      {"analysis_windows", "count", "In how many windows the analysis went (1 when it held the whole run)."},
      {"analysis_window_candidates", "count",
       "When the run was scanned for cuts: its blocking barriers and N × N collectives on "
       "communicators of every rank (the same number on every rank)."},
      {"analysis_window_cuts", "count",
       "When the run was scanned for cuts: how many candidates the analysis cut at."},
      {"analysis_complete", "bool", "False when the Notes hold an `analysis incomplete:` line."},
      {"analysis_incomplete_notes", "count", "The Notes' `analysis incomplete:` lines."},
      {"unmatched_exits", "count",
       "Trace consistency: EXIT events that closed no open region (or skipped open ones). "
       "Non-zero means unbalanced user regions."},
      {"unclosed_frames", "count", "Trace consistency: regions still open at the end."},
      {"partial_ranks", "count", "Ranks whose trace did not decode completely; their results are partial."},
      {"messages", "count", "Point-to-point messages sent."},
      {"unmatched_messages", "count",
       "Sends plus receives the replay could not match (cancelled, paused, truncated)."},
      {"collectives_left_out", "count",
       "Collectives beyond the count every member of their communicator recorded (not analysed), "
       "all ranks."},
      {"replay_bytes", "bytes",
       "Point-to-point matching payload over all passes (per message 8 B send time forward and a 4 "
       "B single-precision time difference back; messages are named by their (group, position), "
       "no index travels; 12-byte group headers, the per-pair counts). The delay analysis's "
       "payload is `delay_bytes`; summary.txt's `@ Replay` line gives both per message."},
      {"replay_bytes_per_message", "B", "`replay_bytes / messages`."},
      {"replay_collective_bytes", "bytes",
       "Payload of the collective synchronization of communicators and windows (one vector "
       "reduction per distinct member set)."},
      {"clock_violations_p2p", "count", "Point-to-point clock-condition violations. See *Wait states*."},
      {"clock_violations_collective", "count", "Collective clock-condition violations. See *Wait states*."},
      {"clock_max_error_s", "s",
       "Error bound of the clock correction: half the smallest ping-pong round trip (0 on one host)."},
      {"clc_passes", "count", "Passes of the controlled logical clock (the most on any rank)."},
      {"clc_violations_before", "count", "Clock-condition violations before the controlled logical clock."},
      {"clc_corrected_times", "count", "Call times the controlled logical clock moved, all ranks."},
      {"clc_max_shift_s", "s", "The largest such move."},
  });
  return kEngine;
}

const std::vector<ScalarDecl>& scalar_declarations() {
  static const std::vector<ScalarDecl> kAll = [] {
    std::vector<ScalarDecl> all = engine_scalar_decls();
    for (const PassInfo& p : pass_table()) all.insert(all.end(), p.scalars.begin(), p.scalars.end());
    return all;
  }();
  return kAll;
}

const ScalarDecl* find_scalar(const std::string& id) {
  for (const ScalarDecl& d : scalar_declarations())
    if (id == d.id) return &d;
  return nullptr;
}

namespace {

// The default UndeclaredIdHook: abort in debug builds, warn once per id in release builds.
void default_undeclared_id(const char* kind, const std::string& id) {
#if defined(CRITPATH_DEBUG_CHECKS) || !defined(NDEBUG)
  std::fprintf(stderr, "critpath: undeclared %s id \"%s\"\n", kind, id.c_str());
  std::abort();
#else
  static std::mutex mu;
  static std::set<std::string> warned;
  const std::lock_guard<std::mutex> lock(mu);
  if (warned.insert(std::string(kind) + ":" + id).second)
    std::fprintf(stderr, "critpath: warning: undeclared %s id \"%s\" dropped\n", kind, id.c_str());
#endif
}

UndeclaredIdHook g_undeclared_hook = default_undeclared_id;

// The depth of `d` in the parent chain (0: no parent).
int depth_of(const MetricDecl& d) {
  int depth = 0;
  const MetricDecl* cur = &d;
  while (cur && cur->parent[0] != '\0' && depth < 16) {
    cur = find_metric(cur->parent);
    ++depth;
  }
  return depth;
}

std::string escape_cell(const char* s) {
  std::string out;
  for (const char* p = s; *p; ++p) {
    if (*p == '|') out += "\\|";
    else if (*p == '\n') out += ' ';
    else out += *p;
  }
  return out;
}

}  // namespace

UndeclaredIdHook set_undeclared_id_hook(UndeclaredIdHook hook) {
  const UndeclaredIdHook previous = g_undeclared_hook;
  g_undeclared_hook = hook ? hook : default_undeclared_id;
  return previous;
}

void undeclared_id(const char* kind, const std::string& id) { g_undeclared_hook(kind, id); }

double Scalars::number(const std::string& id, double fallback) const {
  if (!find_scalar(id)) undeclared_id("scalar", id);
  const auto it = values_->find(id);
  return it != values_->end() && it->is_number() ? it->get<double>() : fallback;
}

bool Scalars::has(const std::string& id) const { return values_->contains(id); }

void Scalars::set(const std::string& id, const std::string& v) { put(id, nlohmann::json(v)); }
void Scalars::set_object(const std::string& id, nlohmann::json v) { put(id, std::move(v)); }
void Scalars::put_bool(const std::string& id, bool v) { put(id, nlohmann::json(v)); }
void Scalars::put_double(const std::string& id, double v) { put(id, nlohmann::json(v)); }
void Scalars::put_int(const std::string& id, int64_t v) { put(id, nlohmann::json(v)); }
void Scalars::put_uint(const std::string& id, uint64_t v) { put(id, nlohmann::json(v)); }

void Scalars::put(const std::string& id, nlohmann::json v) {
  if (!find_scalar(id)) {
    undeclared_id("scalar", id);
    return;
  }
  (*values_)[id] = std::move(v);
}

std::string render_metric_table() {
  std::string out;
  auto table = [&](const std::string& title, const std::vector<MetricDecl>& metrics) {
    if (metrics.empty()) return;
    out += "\n### " + title + "\n\n";
    out += "| id | unit | parent | combined over ranks | definition |\n";
    out += "|---|---|---|---|---|\n";
    for (const MetricDecl& d : metrics) {
      std::string indent;
      for (int i = depth_of(d); i > 0; --i) indent += "&nbsp;&nbsp;";
      out += "| " + indent + "`" + d.id + "` | " + d.unit + " | " +
             (d.parent[0] ? "`" + std::string(d.parent) + "`" : std::string("—")) + " | " +
             (d.combine == Combine::kSum ? "sum" : "max") + (d.rank_detail ? ", per rank kept" : "") + " | " +
             escape_cell(d.definition) + " |\n";
    }
  };
  table("Metrics of the call-path profile (the engine's)", profile_metric_decls());
  for (const PassInfo& p : pass_table())
    table("Metrics of the `" + std::string(p.name) + "` pass", p.metrics);
  return out;
}

std::string render_scalar_table() {
  std::string out = "\n| id | unit | declared by | definition |\n|---|---|---|---|\n";
  auto rows = [&](const char* owner, const std::vector<ScalarDecl>& decls) {
    for (const ScalarDecl& d : decls)
      out += "| `" + std::string(d.id) + "` | " + d.unit + " | " + owner + " | " + escape_cell(d.definition) +
             " |\n";
  };
  rows("engine", engine_scalar_decls());
  for (const PassInfo& p : pass_table()) rows(p.name, p.scalars);
  return out;
}

int MetricStore::slot(const std::string& id) {
  for (size_t i = 0; i < metrics_.size(); ++i)
    if (id == metrics_[i].decl->id) return int(i);
  const MetricDecl* d = find_metric(id);
  if (d == nullptr) {
    undeclared_id("metric", id);
    return kNoMetric;
  }
  metrics_.push_back({d, std::vector<double>(callpaths_, 0.0)});
  return int(metrics_.size() - 1);
}

const CallpathStats* ReducedMetric::stats_at(size_t g) const {
  const auto it = std::lower_bound(stats.begin(), stats.end(), g,
                                   [](const CallpathStats& s, size_t v) { return size_t(s.callpath) < v; });
  return it != stats.end() && size_t(it->callpath) == g ? &*it : nullptr;
}

namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

// The cells of the top-k reduction: (row, call path); rows [0, D) are the rank_detail slots,
// rows [D, D + J) the delay pairs' sums.
struct TopCells {
  std::vector<std::pair<size_t, size_t>> cells;
  std::vector<std::vector<RankValue>> top;  // per cell, largest first
};

// An entry of the top-k reduction's cells: a rank's positive value; none() pads.
struct TopEntry {
  double value;
  int rank;
  int pad;
  static TopEntry none() { return {kNone, std::numeric_limits<int>::max(), 0}; }
  // Larger values first, equal ones by lower rank: the order of MPI_MAXLOC's winners.
  static bool before(const TopEntry& a, const TopEntry& b) {
    return a.value > b.value || (a.value == b.value && a.rank < b.rank);
  }
};

// The top ranks of every cell, the kTopRanks largest positive values (Group::allreduce_top:
// one round, each rank offering its value when positive): the winners of kTopRanks rounds of
// a vector maxloc, each offering the values not yet won. A pair cell (row >= D) keeps its
// first.
Status top_rounds(const Group& group, size_t D, const std::function<double(size_t, size_t)>& own,
                  TopCells& tc) {
  const size_t n = tc.cells.size();
  tc.top.assign(n, {});
  std::vector<std::array<TopEntry, kTopRanks>> io(n);
  for (size_t c = 0; c < n; ++c) {
    io[c].fill(TopEntry::none());
    const double v = own(tc.cells[c].first, tc.cells[c].second);
    if (v > 0) io[c][0] = {v, group.rank(), 0};
  }
  CRITPATH_FORWARD_IF_ERROR(group.allreduce_top(io.data(), n));
  for (size_t c = 0; c < n; ++c)
    for (const TopEntry& e : io[c]) {
      if (!(e.value > 0) || (tc.cells[c].first >= D && !tc.top[c].empty())) break;
      tc.top[c].push_back({e.rank, e.value});
    }
  return Status::kOk;
}

// The (short-term, long-term) slot pairs: every slot <x>_short_term whose <x>_long_term is in
// the store too (the delay analysis's costs).
std::vector<std::pair<size_t, size_t>> delay_pairs(const std::vector<const MetricDecl*>& decls) {
  static const std::string kShort = "_short_term";
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t a = 0; a < decls.size(); ++a) {
    const std::string id = decls[a]->id;
    if (id.size() <= kShort.size() || id.compare(id.size() - kShort.size(), kShort.size(), kShort) != 0)
      continue;
    const std::string partner = id.substr(0, id.size() - kShort.size()) + "_long_term";
    for (size_t b = 0; b < decls.size(); ++b)
      if (partner == decls[b]->id) pairs.push_back({a, b});
  }
  return pairs;
}

// What the root receives, by the reduction's steps (MetricStore::reduce).
struct Reduced {
  std::vector<size_t> detail;                    // the rank_detail slots
  std::vector<std::pair<size_t, size_t>> pairs;  // delay_pairs()
  std::vector<double> mx, sums, part_sums;
  std::vector<size_t> live;     // the slots with a non-zero value on some rank
  std::vector<double> by_rank;  // [rank][live slot]
  TopCells tc;
};

// The root's ReducedMetric of every slot, from the reduction's results.
void assemble(const std::vector<const MetricDecl*>& decls, size_t G, size_t P, const Reduced& r,
              std::vector<ReducedMetric>& out) {
  const size_t M = decls.size(), D = r.detail.size(), first = out.size();
  for (size_t m = 0; m < M; ++m) {
    const MetricDecl& d = *decls[m];
    ReducedMetric rm;
    rm.id = d.id;
    rm.unit = d.unit;
    rm.description = d.definition;
    const std::vector<double>& src = d.combine == Combine::kMax ? r.mx : r.sums;
    rm.by_callpath.assign(src.begin() + long(m * G), src.begin() + long((m + 1) * G));
    rm.by_rank.assign(P, 0.0);
    const auto live = std::find(r.live.begin(), r.live.end(), m);
    if (live != r.live.end())
      for (size_t q = 0; q < P; ++q)
        rm.by_rank[q] = r.by_rank[q * r.live.size() + size_t(live - r.live.begin())];
    out.push_back(std::move(rm));
  }
  std::vector<std::vector<long>> stats_row(D, std::vector<long>(G, -1));
  for (size_t i = 0; i < D; ++i) {
    const size_t m = r.detail[i];
    ReducedMetric& rm = out[first + m];
    for (size_t g = 0; g < G; ++g) {
      const double mx = r.mx[m * G + g], mn = -r.mx[(M + i) * G + g];
      if (mx == 0 && mn == 0) continue;
      CallpathStats st;
      st.callpath = int(g);
      st.min = mn;
      st.max = mx;
      st.mean = r.sums[m * G + g] / double(P);
      st.stddev = std::sqrt(std::max(0.0, r.sums[(M + i) * G + g] / double(P) - st.mean * st.mean));
      stats_row[i][g] = long(rm.stats.size());
      rm.stats.push_back(std::move(st));
    }
  }
  size_t part = 0;
  for (size_t c = 0; c < r.tc.cells.size(); ++c) {
    const auto [row, g] = r.tc.cells[c];
    if (r.tc.top[c].empty()) continue;
    if (row < D) {
      if (stats_row[row][g] >= 0)
        out[first + r.detail[row]].stats[size_t(stats_row[row][g])].top = r.tc.top[c];
      continue;
    }
    PairedTop pt{int(g), r.tc.top[c][0].rank, r.part_sums[part], r.part_sums[part + 1]};
    part += 2;
    out[first + r.pairs[row - D].first].paired.push_back(pt);
  }
}

// The reduction's layout: the rank_detail slots and the delay pairs.
Reduced layout(const std::vector<const MetricDecl*>& decls) {
  Reduced r;
  for (size_t m = 0; m < decls.size(); ++m)
    if (decls[m]->rank_detail) r.detail.push_back(m);
  r.pairs = delay_pairs(decls);
  return r;
}

}  // namespace

std::vector<const MetricDecl*> MetricStore::declarations() const {
  std::vector<const MetricDecl*> decls;
  for (const Slot& sl : metrics_) decls.push_back(sl.decl);
  return decls;
}

void MetricStore::append_mine(const std::vector<size_t>& detail, std::vector<RankDetail>* mine) const {
  if (mine)
    for (size_t m : detail) mine->push_back({metrics_[m].decl->id, metrics_[m].values});
}

void MetricStore::reduce_zero(const Group& group, std::vector<ReducedMetric>& out,
                              std::vector<RankDetail>* mine) const {
  const size_t G = callpaths_, M = metrics_.size();
  const std::vector<const MetricDecl*> decls = declarations();
  Reduced r = layout(decls);
  append_mine(r.detail, mine);
  if (!group.is_root()) return;
  r.mx.assign((M + r.detail.size() + r.pairs.size()) * G + M, 0.0);
  r.sums.assign((M + r.detail.size()) * G, 0.0);
  assemble(decls, G, size_t(group.size()), r, out);
}

Status MetricStore::reduce(const Group& group, std::vector<ReducedMetric>& out, std::vector<RankDetail>* mine,
                           std::vector<double>* root_sums, std::vector<double>* all_max) const {
  const size_t G = callpaths_, M = metrics_.size();
  const std::vector<const MetricDecl*> decls = declarations();
  Reduced r = layout(decls);
  append_mine(r.detail, mine);
  const std::vector<size_t>& detail = r.detail;
  const auto& pairs = r.pairs;
  const size_t D = detail.size(), J = pairs.size();
  auto v = [&](size_t m, size_t g) { return metrics_[m].values[g]; };
  // A row's value on this rank: a detail slot's, or a pair's sum.
  auto own = [&](size_t row, size_t g) {
    return row < D ? v(detail[row], g) : v(pairs[row - D].first, g) + v(pairs[row - D].second, g);
  };
  // 1. The maximum over ranks, on every rank: every slot's values, the detail slots' negated
  //    values (their minimum) and the pairs' sums.
  //    Last, per slot 1 when any of its values is non-zero on any rank.
  std::vector<double>& mx = r.mx;
  mx.assign((M + D + J) * G + M, 0.0);
  for (size_t m = 0; m < M; ++m)
    for (size_t g = 0; g < G; ++g) {
      mx[m * G + g] = v(m, g);
      if (v(m, g) != 0) mx[(M + D + J) * G + m] = 1;
    }
  for (size_t i = 0; i < D + J; ++i)
    for (size_t g = 0; g < G; ++g) mx[(M + i) * G + g] = i < D ? -v(detail[i], g) : own(i, g);
  const size_t layout_size = mx.size();
  if (all_max) mx.insert(mx.end(), all_max->begin(), all_max->end());
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(mx.data(), mx.size(), ReduceOp::kMax));
  if (all_max) all_max->assign(mx.begin() + long(layout_size), mx.end());
  mx.resize(layout_size);
  // 2. The top ranks of the cells where some rank's value is positive.
  TopCells& tc = r.tc;
  for (size_t i = 0; i < D + J; ++i)
    for (size_t g = 0; g < G; ++g)
      if (mx[(i < D ? detail[i] : M + i) * G + g] > 0) tc.cells.push_back({i, g});
  CRITPATH_FORWARD_IF_ERROR(top_rounds(group, D, own, tc));
  // 3. The sums to the root in one reduction: every slot's values, the detail slots' squares,
  //    then the pairs' winners' two values.
  std::vector<double> sq((M + D) * G);
  for (size_t m = 0; m < M; ++m)
    for (size_t g = 0; g < G; ++g) sq[m * G + g] = v(m, g);
  for (size_t i = 0; i < D; ++i)
    for (size_t g = 0; g < G; ++g) sq[(M + i) * G + g] = v(detail[i], g) * v(detail[i], g);
  for (size_t c = 0; c < tc.cells.size(); ++c) {
    const auto [row, g] = tc.cells[c];
    if (row < D || tc.top[c].empty()) continue;
    const bool me = tc.top[c][0].rank == group.rank();
    sq.push_back(me ? v(pairs[row - D].first, g) : 0.0);
    sq.push_back(me ? v(pairs[row - D].second, g) : 0.0);
  }
  const size_t extra = root_sums ? root_sums->size() : 0;
  if (extra) sq.insert(sq.end(), root_sums->begin(), root_sums->end());
  CRITPATH_FORWARD_IF_ERROR(group.reduce_to_root(sq.data(), sq.size(), ReduceOp::kSum, r.sums));
  if (group.is_root()) {
    if (extra) root_sums->assign(r.sums.end() - long(extra), r.sums.end());
    r.part_sums.assign(r.sums.begin() + long((M + D) * G), r.sums.end() - long(extra));
    r.sums.resize((M + D) * G);
  }
  // 4. The per-rank totals of the slots with a non-zero value somewhere (the others' are 0).
  std::vector<double> totals;
  for (size_t m = 0; m < M; ++m)
    if (mx[(M + D + J) * G + m] > 0) {
      r.live.push_back(m);
      totals.push_back(0.0);
      for (size_t g = 0; g < G; ++g) totals.back() += v(m, g);
    }
  CRITPATH_FORWARD_IF_ERROR(group.gather_rows(totals.data(), totals.size(), r.by_rank));
  if (!group.is_root()) return Status::kOk;
  assemble(decls, G, size_t(group.size()), r, out);
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
