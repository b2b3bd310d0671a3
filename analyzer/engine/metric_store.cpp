// critpath — analyzer/engine/metric_store.cpp: the declarations' registry, the engine's own
// scalars, the undeclared-id check, Scalars and the reduction.
#include "analyzer/engine/metric_store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
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
       "ran). Includes polling while waiting for other ranks."},
      {"analysis_cpu_phases_s", "s",
       "`{<phase>: mean over the ranks}` of the CPU seconds each rank spent in each phase of "
       "`analysis_phases` (same phase names, without the `_s`; the last, `report_input`, is not "
       "included), measured as `analysis_cpu_s`."},
      {"analysis_bytes", "bytes",
       "`{sent_max, recv_max, sent_rank0, recv_rank0}`: the payload bytes each analysis rank gave "
       "to and took from the engine's communication (`engine::Comm`: every collective's and point-"
       "to-point message's data as the rank's own buffers hold it, its own block of an all-to-all "
       "or gather included), the largest over the ranks and rank 0's, up to the gathering of these "
       "figures."},
      {"analysis_rounds", "count",
       "The largest number of synchronizing rounds any analysis rank took part in: each collective "
       "operation of `engine::Comm` is one (the Mailbox's included, communicator creations too, "
       "and the gathering of these figures); point-to-point messages are none."},
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
       "barrier on the analysis communicator) to the report being rendered."},
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
  const auto it = values_.find(id);
  return it != values_.end() && it->is_number() ? it->get<double>() : fallback;
}

void Scalars::put(const std::string& id, nlohmann::json v) {
  if (!find_scalar(id)) {
    undeclared_id("scalar", id);
    return;
  }
  values_[id] = std::move(v);
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

Status MetricStore::reduce(const Group& group, std::vector<ReducedMetric>& out) const {
  const size_t G = callpaths_, M = metrics_.size(), P = size_t(group.size());
  // Per call path: one reduction per combine kind over all slots of that kind.
  std::vector<double> sums(G * M, 0.0), totals(M, 0.0);
  for (size_t m = 0; m < M; ++m)
    for (size_t g = 0; g < G; ++g) {
      sums[m * G + g] = metrics_[m].values[g];
      totals[m] += metrics_[m].values[g];
    }
  std::vector<double> reduced_sum, reduced_max, by_rank;
  CRITPATH_FORWARD_IF_ERROR(group.reduce_to_root(sums.data(), sums.size(), ReduceOp::kSum, reduced_sum));
  bool any_max = false;
  for (const Slot& s : metrics_) any_max |= s.decl->combine == Combine::kMax;
  if (any_max)
    CRITPATH_FORWARD_IF_ERROR(group.reduce_to_root(sums.data(), sums.size(), ReduceOp::kMax, reduced_max));
  CRITPATH_FORWARD_IF_ERROR(group.gather_rows(totals.data(), M, by_rank));
  // Per (call path, rank), sparse: (slot, call path, value) for the non-zero values.
  std::vector<double> triples, all_triples;
  std::vector<int> counts, displs;
  for (size_t m = 0; m < M; ++m) {
    if (!metrics_[m].decl->rank_detail) continue;
    for (size_t g = 0; g < G; ++g)
      if (metrics_[m].values[g] != 0) {
        triples.push_back(double(m));
        triples.push_back(double(g));
        triples.push_back(metrics_[m].values[g]);
      }
  }
  CRITPATH_FORWARD_IF_ERROR(
      group.gather_to_root(triples.data(), triples.size(), all_triples, counts, displs));
  if (!group.is_root()) return Status::kOk;

  const size_t first = out.size();
  for (size_t m = 0; m < M; ++m) {
    const MetricDecl& d = *metrics_[m].decl;
    ReducedMetric r;
    r.id = d.id;
    r.unit = d.unit;
    r.description = d.definition;
    const std::vector<double>& src = d.combine == Combine::kMax ? reduced_max : reduced_sum;
    r.by_callpath.assign(src.begin() + long(m * G), src.begin() + long((m + 1) * G));
    r.by_rank.resize(P);
    for (size_t q = 0; q < P; ++q) r.by_rank[q] = by_rank[q * M + m];
    out.push_back(std::move(r));
  }
  // Rows of by_callpath_rank in call-path order.
  std::vector<std::vector<long>> row_of(M);
  for (size_t q = 0; q < P; ++q)
    for (int i = displs[q]; i + 2 < displs[q] + counts[q]; i += 3) {
      const size_t m = size_t(all_triples[size_t(i)]), g = size_t(all_triples[size_t(i) + 1]);
      if (m >= M || g >= G) continue;
      auto& rows = out[first + m].by_callpath_rank;
      if (row_of[m].empty()) row_of[m].assign(G, -1);
      if (row_of[m][g] < 0) {
        row_of[m][g] = long(rows.size());
        rows.push_back({int(g), std::vector<double>(P, 0.0)});
      }
      rows[size_t(row_of[m][g])].second[q] = all_triples[size_t(i) + 2];
    }
  for (size_t m = 0; m < M; ++m) {
    auto& rows = out[first + m].by_callpath_rank;
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
