// critpath — analyzer/report/report.cpp: summary.txt, report.json and critpath.cfg.
#include "analyzer/report/report.h"

#include "analyzer/engine/atomic_file.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analyzer/report/findings.h"
#include "analyzer/report/hatchet.h"
#include "analyzer/report/html.h"
#include "critpath_version.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer {

namespace {

std::string human_bytes(double b) {
  char buf[64];
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", b, unit[u]);
  return buf;
}

std::string section(const std::string& title) {
  std::string s = "@--- " + title + " ";
  while (s.size() < 75) s += '-';
  return s + "\n";
}

double sum_stat(const ReportInput& in, int stat) {
  double s = 0;
  for (const auto& r : in.rank_stats) s += r[size_t(stat)];
  return s;
}
double max_stat(const ReportInput& in, int stat) {
  double m = 0;
  for (const auto& r : in.rank_stats) m = std::max(m, r[size_t(stat)]);
  return m;
}

// MPI seconds in each call path's subtree (for the MPI% column).
std::vector<double> subtree_mpi(const GlobalProfile& p) {
  std::vector<double> mpi(p.callpaths.size(), 0.0);
  for (size_t i = p.callpaths.size(); i-- > 0;) {
    mpi[i] += p.callpaths[i].sum[kColMpi];
    if (p.callpaths[i].parent >= 0) mpi[size_t(p.callpaths[i].parent)] += mpi[i];
  }
  return mpi;
}

// The compiler instrumentation behind the kFunction call paths, the largest figures over the
// ranks (docs/instrumentation.md).
struct InstrumentationSummary {
  bool gcc = false, xray = false;
  double functions = 0, patched = 0, unpatched = 0, filtered = 0, auto_filtered = 0, sites_patched_out = 0;
  const char* mode() const { return gcc && xray ? "gcc+xray" : xray ? "xray" : gcc ? "gcc" : "none"; }
};
InstrumentationSummary instrumentation_of(const ReportInput& in) {
  InstrumentationSummary x;
  for (const auto& r : in.rank_stats) {
    const int modes = int(r[kStatInstrModes]);
    x.gcc = x.gcc || (modes & 1) != 0;
    x.xray = x.xray || (modes & 2) != 0;
    x.functions = std::max(x.functions, r[kStatInstrFunctions]);
    x.patched = std::max(x.patched, r[kStatInstrPatched]);
    x.unpatched = std::max(x.unpatched, r[kStatInstrUnpatched]);
    x.filtered = std::max(x.filtered, r[kStatInstrFiltered]);
    x.auto_filtered = std::max(x.auto_filtered, r[kStatInstrAutoFiltered]);
    x.sites_patched_out = std::max(x.sites_patched_out, r[kStatInstrSitesPatchedOut]);
  }
  return x;
}

std::string describe_instrumentation(const InstrumentationSummary& x) {
  char buf[512];
  if (x.xray)
    std::snprintf(buf, sizeof buf,
                  "%s (-fxray-instrument): %.0f functions instrumented, %.0f patched, %.0f unpatched "
                  "by the automatic filter, %.0f filtered (CRITPATH_FILTER, never patched)",
                  x.mode(), x.functions, x.patched, x.unpatched, x.filtered);
  else if (x.gcc)
    std::snprintf(buf, sizeof buf,
                  "gcc (-finstrument-functions): %.0f functions instrumented (hooks ran), %.0f "
                  "filtered (CRITPATH_FILTER), %.0f auto-filtered; %.0f of their hook call sites "
                  "patched out",
                  x.functions, x.filtered, x.auto_filtered, x.sites_patched_out);
  else std::snprintf(buf, sizeof buf, "none (no compiler-instrumented function ran)");
  return buf;
}

// Auto-filtered regions (compiler_hooks' automatic filter), one row per region name.
struct AutoFiltered {
  std::string region;
  double visits = 0;
  double inclusive_s = 0;
};
std::vector<AutoFiltered> auto_filtered_regions(const GlobalProfile& p) {
  std::vector<AutoFiltered> out;
  for (const GlobalCallpath& c : p.callpaths) {
    if (!c.auto_filtered) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const AutoFiltered& a) { return a.region == c.region; });
    if (it == out.end()) {
      out.push_back({c.region, 0, 0});
      it = out.end() - 1;
    }
    it->visits += c.sum[kColVisits];
    it->inclusive_s += c.sum[kColInclusive];
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AutoFiltered& a, const AutoFiltered& b) { return a.visits > b.visits; });
  return out;
}

// Backslash-escapes the filter-file wildcard characters and blanks (compiler_hooks/filter.h
// syntax; the same as hooks::escape_wildcard, which the analyzer cannot link).
std::string filter_escape(const std::string& name) {
  std::string o;
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' || c == '#' || c == ' ' || c == '\t')
      o += '\\';
    o += c;
  }
  return o;
}

std::string suggested_filter(const std::vector<AutoFiltered>& af) {
  std::string o = "# critpath: suggested filter file. These functions were auto-filtered at run time (many\n"
                  "# visits, short mean duration). Rebuild with `critpath-cxx --filter <this file>` (also\n"
                  "# critpath-cc, critpath-f90) so that GCC does not instrument them at all, or run with\n"
                  "# CRITPATH_FILTER=<this file> to leave them out from the start (XRay: never patched).\n"
                  "# Score-P filter syntax; blanks inside names are escaped (\\ ).\n"
                  "SCOREP_REGION_NAMES_BEGIN\n";
  for (const AutoFiltered& a : af) o += "  EXCLUDE " + filter_escape(a.region) + "\n";
  return o + "SCOREP_REGION_NAMES_END\n";
}

std::vector<size_t> depth_first_order(const GlobalProfile& p, std::vector<int>& depth) {
  std::vector<std::vector<size_t>> kids(p.callpaths.size());
  std::vector<size_t> roots;
  for (size_t i = 0; i < p.callpaths.size(); ++i) {
    if (p.callpaths[i].parent < 0) roots.push_back(i);
    else kids[size_t(p.callpaths[i].parent)].push_back(i);
  }
  // Children by inclusive time, largest first: the expensive paths come first.
  for (auto& k : kids)
    std::stable_sort(k.begin(), k.end(), [&](size_t a, size_t b) {
      return p.callpaths[a].sum[kColInclusive] > p.callpaths[b].sum[kColInclusive];
    });
  std::vector<size_t> order;
  depth.assign(p.callpaths.size(), 0);
  std::vector<std::pair<size_t, int>> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, 0});
  while (!stack.empty()) {
    auto [n, d] = stack.back();
    stack.pop_back();
    order.push_back(n);
    depth[n] = d;
    for (auto it = kids[n].rbegin(); it != kids[n].rend(); ++it) stack.push_back({*it, d + 1});
  }
  return order;
}

// Appends printf-formatted text to `o`.
template <class... Args>
void appendf(std::string& o, const char* fmt, Args... args) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, fmt, args...);
  o += buf;
}

// The analysis's own cost (scalars analysis_cpu_s, analysis_rounds, analysis_bytes,
// analysis_memory): one header line, empty when the engine did not gather them.
std::string analysis_cost_line(const ReportInput& in) {
  const nlohmann::json& sc = in.scalars.json();
  if (!sc.contains("analysis_cpu_s") || !sc.contains("analysis_bytes") || !sc.contains("analysis_memory"))
    return {};
  const nlohmann::json &cpu = sc["analysis_cpu_s"], &bytes = sc["analysis_bytes"],
                       &mem = sc["analysis_memory"];
  const double polling = sc.contains("analysis_cpu_polling_s")
                             ? sc["analysis_cpu_polling_s"].value("mean", 0.0)
                             : 0.0;
  char line[640], hosted[128] = "";
  if (in.run && in.run->hosted_ranks > 0)
    std::snprintf(hosted, sizeof hosted, "; hosted: rank 0 analysed all %d ranks on %d thread%s",
                  in.run->hosted_ranks, in.run->hosted_workers, in.run->hosted_workers == 1 ? "" : "s");
  std::snprintf(line, sizeof line,
                "@ Analysis cost   : %.3f s CPU/rank (%.3f polling; max %.3f, rank 0 %.3f), %.0f rounds, "
                "rank 0 sent %s received %s, memory rank 0 +%s / median +%s%s\n",
                cpu.value("mean", 0.0), polling, cpu.value("max", 0.0), cpu.value("rank0", 0.0),
                sc.value("analysis_rounds", 0.0), human_bytes(bytes.value("sent_rank0", 0.0)).c_str(),
                human_bytes(bytes.value("recv_rank0", 0.0)).c_str(),
                human_bytes(mem.value("rank0_bytes", 0.0)).c_str(),
                human_bytes(mem.value("median_bytes", 0.0)).c_str(), hosted);
  return line;
}

// A header field the trace may lack: "unknown" in words when it is empty.
const char* known(const std::string& s) { return s.empty() ? "unknown" : s.c_str(); }

// The recording costs: unknown for a trace imported from another tool's archive.
std::string overhead_line(const ReportInput& in) {
  if (!in.run->imported_from.empty())
    return "@ Overhead        : unknown (" + in.run->imported_from + ": not recorded by critpath)\n";
  char line[256];
  std::snprintf(
      line, sizeof line,
      "@ Overhead        : %.6f s max per rank in buffer hand-offs; %.6f s compressing (all ranks)\n",
      max_stat(in, kStatOverheadSeconds), sum_stat(in, kStatCompressSeconds));
  return line;
}

// summary.txt's header: the "@ Key : value" lines. A fact the trace lacks reads "unknown".
void summary_header(const ReportInput& in, const InstrumentationSummary& instr, std::string& o) {
  const RunInfo& run = *in.run;
  std::string cmd = run.executable;
  for (const auto& a : run.args) cmd += " " + a;
  if (run.executable.empty()) cmd.clear();  // arguments without a program name say too little
  const double events = sum_stat(in, kStatEvents);
  const double cbytes = sum_stat(in, kStatCompressedBytes);
  appendf(o, "@ critpath %s - MPI performance summary\n", CRITPATH_VERSION);
  // The layout's version: bumped when sections or columns change (docs/report.md).
  appendf(o, "@ Format          : critpath-summary/2\n");
  appendf(o, "@ Command         : %s\n", known(cmd));
  appendf(o, "@ Ranks           : %d\n", run.size);
  appendf(o, "@ MPI library     : %s\n", known(run.mpi_library));
  appendf(o, "@ Start (UTC)     : %s\n", known(run.start_utc));
  appendf(o, "@ Wall time       : %.6f s (first MPI_Init entry to last MPI_Finalize entry)\n",
          in.wall_time_s);
  appendf(o, "@ Timer           : %s\n", known(run.timer_why));
  char per_event[48] = "";  // no events: no bytes per event
  if (events > 0) std::snprintf(per_event, sizeof per_event, " (%.2f B/event)", cbytes / events);
  appendf(o, "@ Trace           : %.0f events, %s compressed%s, %s spilled to disk\n", events,
          human_bytes(cbytes).c_str(), per_event, human_bytes(sum_stat(in, kStatSpilledBytes)).c_str());
  o += overhead_line(in);
  // Re-analysing a kept trace (critpath-analyze), no rank waits in MPI_Finalize: the wait is
  // for the last rank to begin the analysis.
  appendf(o,
          "@ Analysis        : %.6f s (%.2f %% of wall time); before it rank 0 waited %.6f s %s for the "
          "last rank; memory +%s at most (rank %d)\n",
          in.analysis_s, in.wall_time_s > 0 ? 100.0 * in.analysis_s / in.wall_time_s : 0.0,
          in.finalize_wait_s, run.offline ? "at the analysis's start" : "in MPI_Finalize",
          human_bytes(in.analysis_memory_peak_bytes).c_str(), in.analysis_memory_peak_rank);
  o += analysis_cost_line(in);
  appendf(o, "@ Output          : %s\n", run.output_dir.c_str());
  appendf(o, "@ Instrumentation : %s\n", describe_instrumentation(instr).c_str());
  for (const std::string& h : in.header_lines) o += h + "\n";
  appendf(o, "@ Notes           : %zu%s\n", in.notes.size(),
          in.notes.empty() ? "" : " (see the Notes section)");
  o += "\n";
}

// What to look at first: the findings, and where the allocation's time goes.
void summary_findings(const std::vector<Finding>& findings, const ReportInput& in, std::string& o) {
  char buf[16];
  // The costliest waits with the ranks that cause them.
  o += section("Findings");
  int k = 0;
  for (const Finding& f : findings) {
    std::snprintf(buf, sizeof buf, "%2d. ", ++k);
    o += buf + f.text + "\n";
  }
  o += "\n";
  o += section("Where the time goes");
  o += where_time_goes(in);
  o += "\n";
}

void summary_mpi_per_rank(const GlobalProfile& p, std::string& o) {
  o += section("MPI time per rank (seconds)");
  appendf(o, "%6s %14s %14s %8s\n", "Rank", "AppTime", "MPITime", "MPI%");
  double app_sum = 0, mpi_sum = 0;
  for (size_t r = 0; r < p.by_rank.size(); ++r) {
    const double app = p.by_rank[r][kColInclusive], mpi = p.by_rank[r][kColMpi];
    app_sum += app;
    mpi_sum += mpi;
    appendf(o, "%6zu %14.6f %14.6f %8.2f\n", r, app, mpi, app > 0 ? 100.0 * mpi / app : 0.0);
  }
  appendf(o, "%6s %14.6f %14.6f %8.2f\n", "*", app_sum, mpi_sum,
          app_sum > 0 ? 100.0 * mpi_sum / app_sum : 0.0);
  o += "\n";
}

// The call-path profile and the message volume, in depth-first `order`.
void summary_callpath_tables(const GlobalProfile& p, const std::vector<size_t>& order,
                             const std::vector<int>& depth, std::string& o) {
  o += section("Call-path profile (seconds; min/avg/max over the ranks that visit)");
  appendf(o, "%-40s %5s %12s %10s %10s %10s %10s %10s %10s %7s\n", "Call path", "Ranks", "Visits", "Incl.min",
          "Incl.avg", "Incl.max", "Excl.min", "Excl.avg", "Excl.max", "MPI%");
  const std::vector<double> mpi = subtree_mpi(p);
  for (size_t i : order) {
    const GlobalCallpath& c = p.callpaths[i];
    std::string label = std::string(size_t(2 * depth[i]), ' ') + c.region;
    const double n = c.ranks > 0 ? double(c.ranks) : 1.0;
    appendf(o, "%-40s %5d %12.0f %10.6f %10.6f %10.6f %10.6f %10.6f %10.6f %7.2f\n", label.c_str(), c.ranks,
            c.sum[kColVisits], c.min[kColInclusive], c.sum[kColInclusive] / n, c.max[kColInclusive],
            c.min[kColExclusive], c.sum[kColExclusive] / n, c.max[kColExclusive],
            c.sum[kColInclusive] > 0 ? 100.0 * mpi[i] / c.sum[kColInclusive] : 0.0);
  }
  o += "\n";

  o += section("Message volume per call path (bytes, summed over ranks)");
  appendf(o, "%-40s %16s %16s\n", "Call path", "Sent", "Received");
  for (size_t i : order) {
    const GlobalCallpath& c = p.callpaths[i];
    if (c.sum[kColBytesSent] == 0 && c.sum[kColBytesReceived] == 0) continue;
    std::string label = std::string(size_t(2 * depth[i]), ' ') + c.region;
    appendf(o, "%-40s %16.0f %16.0f\n", label.c_str(), c.sum[kColBytesSent], c.sum[kColBytesReceived]);
  }
  o += "\n";
}

// The hardware counters per call path and per rank (CRITPATH_PAPI_EVENTS).
void summary_counters(const GlobalProfile& p, const std::vector<size_t>& order, const std::vector<int>& depth,
                      std::string& o) {
  char buf[1024];
  if (p.counter_names.empty()) return;
  o += section("Hardware counters per call path (summed over ranks; inclusive / exclusive)");
  std::string head = "Call path                               ";
  for (const auto& n : p.counter_names) {
    std::snprintf(buf, sizeof buf, " %20s %20s", (n + ".incl").c_str(), (n + ".excl").c_str());
    head += buf;
  }
  o += head + "\n";
  for (size_t i : order) {
    const GlobalCallpath& c = p.callpaths[i];
    std::string label = std::string(size_t(2 * depth[i]), ' ') + c.region;
    std::snprintf(buf, sizeof buf, "%-40s", label.c_str());
    std::string row = buf;
    for (size_t k = 0; k < p.counter_names.size(); ++k) {
      std::snprintf(buf, sizeof buf, " %20.0f %20.0f",
                    k < c.counter_inclusive.size() ? c.counter_inclusive[k] : 0.0,
                    k < c.counter_exclusive.size() ? c.counter_exclusive[k] : 0.0);
      row += buf;
    }
    o += row + "\n";
  }
  appendf(o, "%-40s", "Per rank (total)");
  o += "\n";
  for (size_t r = 0; r < p.counters_by_rank.size(); ++r) {
    std::snprintf(buf, sizeof buf, "%-40zu", r);
    std::string row = buf;
    for (double v : p.counters_by_rank[r]) {
      std::snprintf(buf, sizeof buf, " %20.0f", v);
      row += buf;
    }
    o += row + "\n";
  }
  o += "\n";
}

// The regions the automatic filter dropped, with how to leave them out at build time.
void summary_auto_filtered(const ReportInput& in, const InstrumentationSummary& instr, std::string& o) {
  const RunInfo& run = *in.run;
  const std::vector<AutoFiltered> af = auto_filtered_regions(*in.profile);
  if (!af.empty()) {
    const std::string filter = run.output_dir + "/suggested-filter.txt";
    o += section("Auto-filtered regions");
    // How to leave their hooks out at compile time (GCC mode).
    const std::string rebuild = "    critpath-cxx --filter " + filter +
                                " ...\nor set CRITPATH_FILTER=" + filter +
                                " for the build.\n`critpath-filter --explain " + filter +
                                "` lists what GCC cannot match exactly.\n";
    if (instr.gcc && instr.sites_patched_out > 0)
      o += "Not recorded after their first CRITPATH_AUTOFILTER_VISITS visits on a thread (mean below\n"
           "CRITPATH_AUTOFILTER_NS); then each of their hook calls was patched out at its next call\n"
           "(CRITPATH_PATCH_HOOKS): later visits are not counted, their time is their callers' own time.\n"
           "A build without their hooks at all (GCC mode; critpath-cc and critpath-f90 alike):\n" +
           rebuild;
    else if (instr.gcc || !instr.xray)
      o += "Not recorded after their first visits (mean below CRITPATH_AUTOFILTER_NS); visits and time\n"
           "stay in the profile. Their hooks still ran at every call: rebuild with them left out at\n"
           "compile time (GCC mode; critpath-cc and critpath-f90 alike):\n" +
           rebuild;
    else
      o += "Unpatched after their first CRITPATH_AUTOFILTER_VISITS visits on a thread (mean below\n"
           "CRITPATH_AUTOFILTER_NS): later calls run XRay's nop sleds and are not counted; their time is\n"
           "their callers' own time. To leave them unpatched from the start, run with\n"
           "    CRITPATH_FILTER=" +
           filter + "\n";
    appendf(o, "%-60s %14s %14s\n", "Region", "Visits", "Mean (ns)");
    for (const AutoFiltered& a : af)
      appendf(o, "%-60s %14.0f %14.1f\n", a.region.c_str(), a.visits,
              a.visits > 0 ? 1e9 * a.inclusive_s / a.visits : 0.0);
    o += "\n";
  }
}

std::string render_summary(const ReportInput& in, const std::vector<Finding>& findings) {
  const GlobalProfile& p = *in.profile;
  const InstrumentationSummary instr = instrumentation_of(in);
  std::string o;
  summary_header(in, instr, o);
  summary_findings(findings, in, o);
  summary_mpi_per_rank(p, o);
  std::vector<int> depth;
  const std::vector<size_t> order = depth_first_order(p, depth);
  summary_callpath_tables(p, order, depth, o);
  summary_counters(p, order, depth, o);
  summary_auto_filtered(in, instr, o);
  for (const ReportSection& sec : in.sections) {
    o += section(sec.title);
    o += sec.body;
    o += "\n";
  }
  o += section("Per rank: waiting suffered, delay caused, critical path (seconds)");
  o += rank_causes_table(in);
  o += "\n";
  o += section("Notes");
  if (in.notes.empty()) o += "none\n";
  for (const auto& n : in.notes) o += n + "\n";
  o += "\n";
  o += section("End of Report");
  return o;
}

using nlohmann::json;

// report.json `run`: the command, the ranks, the MPI library, the timer.
json render_run(const ReportInput& in) {
  const RunInfo& run = *in.run;
  json r;
  r["executable"] = run.executable;
  r["args"] = run.args;
  r["ranks"] = run.size;
  if (!run.start_utc.empty()) r["start_utc"] = run.start_utc;  // left out when unknown
  r["wall_time_s"] = in.wall_time_s;
  r["mpi_library"] = run.mpi_library;
  r["critpath_version"] = CRITPATH_VERSION;
  r["partitions"] = json::array({json{{"name", run.executable}, {"first_rank", 0}, {"ranks", run.size}}});
  r["timer"] = clock::to_string(run.timer);
  r["thread_level"] = run.thread_level;
  r["output_dir"] = run.output_dir;
  if (!run.imported_from.empty()) r["imported_from"] = run.imported_from;
  if (run.hosted_ranks > 0)
    r["analysis_hosted"] = json{{"ranks", run.hosted_ranks}, {"workers", run.hosted_workers}};
  return r;
}

// report.json `callpaths`: the unified call tree, parents first, with their time statistics
// and hardware counters; `mangled` beside a region's name where an imported archive held it
// mangled.
json render_callpaths(const GlobalProfile& p, const std::map<std::string, std::string>& mangled) {
  json cps = json::array();
  for (size_t i = 0; i < p.callpaths.size(); ++i) {
    const GlobalCallpath& c = p.callpaths[i];
    const double n = c.ranks > 0 ? double(c.ranks) : 1.0;
    json e;
    e["id"] = i;
    e["path"] = c.path;
    e["region"] = c.region;
    if (auto m = mangled.find(c.region); m != mangled.end()) e["mangled"] = m->second;
    e["parent"] = c.parent < 0 ? json(nullptr) : json(c.parent);
    e["kind"] = defs::to_string(c.kind);
    e["ranks"] = c.ranks;
    e["inclusive_s"] = {{"min", c.min[kColInclusive]},
                        {"avg", c.sum[kColInclusive] / n},
                        {"max", c.max[kColInclusive]},
                        {"sum", c.sum[kColInclusive]}};
    e["exclusive_s"] = {{"min", c.min[kColExclusive]},
                        {"avg", c.sum[kColExclusive] / n},
                        {"max", c.max[kColExclusive]},
                        {"sum", c.sum[kColExclusive]}};
    if (!p.counter_names.empty()) {
      json pj = json::object();
      for (size_t k = 0; k < p.counter_names.size(); ++k)
        pj[p.counter_names[k]] = {
            {"inclusive", k < c.counter_inclusive.size() ? c.counter_inclusive[k] : 0.0},
            {"exclusive", k < c.counter_exclusive.size() ? c.counter_exclusive[k] : 0.0}};
      e["papi"] = std::move(pj);
    }
    if (c.auto_filtered) e["auto_filtered"] = true;
    cps.push_back(std::move(e));
  }
  return cps;
}

// The metrics declared with a profile column (MetricDecl::column): values from the profile.
void render_profile_metrics(const GlobalProfile& p, json& metrics) {
  for (const engine::MetricDecl& m : engine::metric_declarations()) {
    if (m.column < 0) continue;
    json mj;
    mj["unit"] = m.unit;
    mj["description"] = m.definition;
    json by_cp = json::object();
    double total = 0;
    for (const GlobalCallpath& c : p.callpaths) {
      by_cp[c.path] = c.sum[m.column];
      total += c.sum[m.column];
    }
    json by_rank = json::array();
    for (const auto& row : p.by_rank) by_rank.push_back(row[size_t(m.column)]);
    mj["total"] = total;
    mj["by_callpath"] = std::move(by_cp);
    mj["by_rank"] = std::move(by_rank);
    metrics[m.id] = std::move(mj);
  }
}

// papi_<event>: by_callpath = exclusive values summed over ranks (like "time"),
// by_callpath_inclusive, by_rank = the rank's total.
void render_papi_metrics(const GlobalProfile& p, json& metrics) {
  const engine::MetricDecl* decl = engine::find_metric(engine::kPapiMetricId);
  const std::string event = "<event>";
  for (size_t k = 0; decl && k < p.counter_names.size(); ++k) {
    json mj;
    mj["unit"] = decl->unit;
    std::string description = decl->definition;
    const size_t at = description.find(event);
    if (at != std::string::npos) description.replace(at, event.size(), p.counter_names[k]);
    mj["description"] = description;
    json by_cp = json::object(), by_cp_incl = json::object();
    double total = 0;
    for (const GlobalCallpath& c : p.callpaths) {
      const double ex = k < c.counter_exclusive.size() ? c.counter_exclusive[k] : 0.0;
      by_cp[c.path] = ex;
      by_cp_incl[c.path] = k < c.counter_inclusive.size() ? c.counter_inclusive[k] : 0.0;
      total += ex;
    }
    json by_rank = json::array();
    for (const auto& row : p.counters_by_rank) by_rank.push_back(k < row.size() ? row[k] : 0.0);
    mj["total"] = total;
    mj["by_callpath"] = std::move(by_cp);
    mj["by_callpath_inclusive"] = std::move(by_cp_incl);
    mj["by_rank"] = std::move(by_rank);
    metrics[std::string("papi_") + p.counter_names[k]] = std::move(mj);
  }
}

// A rank_detail metric's statistics over the ranks: {path: {min, mean, max, stddev, top:
// [[rank, value], ...]}} for the call paths where some rank's value is non-zero.
json callpath_stats(const ExtraMetric& m, const GlobalProfile& p) {
  json out = json::object();
  for (const engine::CallpathStats& st : m.stats) {
    if (st.callpath < 0 || size_t(st.callpath) >= p.callpaths.size()) continue;
    json top = json::array();
    for (const engine::RankValue& rv : st.top) top.push_back(json::array({rv.rank, rv.value}));
    out[p.callpaths[size_t(st.callpath)].path] = {
        {"min", st.min}, {"mean", st.mean}, {"max", st.max}, {"stddev", st.stddev}, {"top", std::move(top)}};
  }
  return out;
}

// The metrics the passes booked in the store, reduced over the ranks.
void render_store_metrics(const ReportInput& in, json& metrics) {
  const GlobalProfile& p = *in.profile;
  for (const ExtraMetric& m : in.extra_metrics) {
    json mj;
    mj["unit"] = m.unit;
    mj["description"] = m.description;
    json by_cp = json::object();
    double total = 0;
    for (size_t g = 0; g < p.callpaths.size() && g < m.by_callpath.size(); ++g) {
      by_cp[p.callpaths[g].path] = m.by_callpath[g];
      total += m.by_callpath[g];
    }
    mj["total"] = total;
    mj["by_callpath"] = std::move(by_cp);
    mj["by_rank"] = m.by_rank;
    if (!m.stats.empty()) mj["by_callpath_stats"] = callpath_stats(m, p);
    metrics[m.id] = std::move(mj);
  }
}

// report.json `scalars`: the report's own (from the per-rank statistics), then the analyses'.
json render_scalars(const ReportInput& in) {
  const double events = sum_stat(in, kStatEvents);
  const double cbytes = sum_stat(in, kStatCompressedBytes);
  engine::Scalars s;
  s.set("wall_time_s", in.wall_time_s);
  s.set("events", events);
  s.set("trace_compressed_bytes", cbytes);
  s.set("trace_encoded_bytes", sum_stat(in, kStatEncodedBytes));
  s.set("trace_bytes_per_event", events > 0 ? cbytes / events : 0.0);
  s.set("trace_spilled_bytes", sum_stat(in, kStatSpilledBytes));
  s.set("trace_chunks", sum_stat(in, kStatChunks));
  s.set("trace_chunks_spilled", sum_stat(in, kStatChunksSpilled));
  s.set("overhead_max_rank_s", max_stat(in, kStatOverheadSeconds));
  s.set("compression_s", sum_stat(in, kStatCompressSeconds));
  s.set("analysis_s", in.analysis_s);
  s.set("finalize_wait_s", in.finalize_wait_s);
  s.set("analysis_memory_peak_bytes", in.analysis_memory_peak_bytes);
  s.set("analysis_memory_peak_rank", in.analysis_memory_peak_rank);
  {
    // Per event of the rank with the peak (its events: the rank stats' row).
    const size_t r = size_t(in.analysis_memory_peak_rank);
    const double ev = r < in.rank_stats.size() ? in.rank_stats[r][kStatEvents] : 0.0;
    s.set("analysis_memory_bytes_per_event", ev > 0 ? in.analysis_memory_peak_bytes / ev : 0.0);
  }
  json phases = json::object();
  for (const auto& [name, sec] : in.analysis_phases) phases[name + "_s"] = sec;
  s.set_object("analysis_phases", std::move(phases));
  s.set("analysis_pct_of_wall", in.wall_time_s > 0 ? 100.0 * in.analysis_s / in.wall_time_s : 0.0);
  s.set("unmatched_exits", sum_stat(in, kStatUnmatchedExits));
  s.set("unclosed_frames", sum_stat(in, kStatUnclosedFrames));
  s.set("partial_ranks", sum_stat(in, kStatPartial));
  const double msgs = sum_stat(in, kStatMessages);
  s.set("messages", msgs);
  s.set("replay_bytes", sum_stat(in, kStatReplayBytes));
  s.set("replay_bytes_per_message", msgs > 0 ? sum_stat(in, kStatReplayBytes) / msgs : 0.0);
  s.set("replay_collective_bytes", sum_stat(in, kStatReplayCollBytes));
  s.set("unmatched_messages", sum_stat(in, kStatUnmatched));
  s.set("collectives_left_out", sum_stat(in, kStatCollsDropped));
  s.set("clock_violations_p2p", sum_stat(in, kStatP2pViolations));
  s.set("clock_violations_collective", sum_stat(in, kStatCollViolations));
  s.set("clock_max_error_s", max_stat(in, kStatClockError));
  s.set("clc_passes", max_stat(in, kStatClcPasses));
  s.set("clc_violations_before", sum_stat(in, kStatClcViolationsBefore));
  s.set("clc_corrected_times", sum_stat(in, kStatClcCorrected));
  s.set("clc_max_shift_s", max_stat(in, kStatClcMaxShift));
  json out = s.json();  // engine::Scalars: declared ids only
  out.update(in.scalars.json());
  return out;
}

// report.json `instrumentation` and `auto_filtered`.
void render_instrumentation(const ReportInput& in, json& j) {
  json afj = json::array();
  for (const AutoFiltered& a : auto_filtered_regions(*in.profile))
    afj.push_back({{"region", a.region},
                   {"visits", a.visits},
                   {"inclusive_s", a.inclusive_s},
                   {"mean_s", a.visits > 0 ? a.inclusive_s / a.visits : 0.0}});
  j["auto_filtered"] = std::move(afj);
  const InstrumentationSummary instr = instrumentation_of(in);
  j["instrumentation"] = {{"mode", instr.mode()},
                          {"functions", instr.functions},
                          {"patched", instr.patched},
                          {"unpatched", instr.unpatched},
                          {"filtered", instr.filtered},
                          {"auto_filtered", instr.auto_filtered},
                          {"sites_patched_out", instr.sites_patched_out}};
}

// report.json `ranks`: the measurement statistics of each rank.
json render_ranks(const ReportInput& in) {
  json ranks = json::array();
  for (size_t i = 0; i < in.rank_stats.size(); ++i) {
    const auto& row = in.rank_stats[i];
    ranks.push_back({{"rank", i},
                     {"events", row[kStatEvents]},
                     {"threads", row[kStatThreads]},
                     {"mpi_threads", row[kStatMpiThreads]},
                     {"compressed_bytes", row[kStatCompressedBytes]},
                     {"spilled_bytes", row[kStatSpilledBytes]},
                     {"chunks_spilled", row[kStatChunksSpilled]},
                     {"overhead_s", row[kStatOverheadSeconds]},
                     {"partial", row[kStatPartial] != 0}});
  }
  return ranks;
}

// report.json `findings`: summary.txt's, in its order, each with what backs it.
json render_findings(const std::vector<Finding>& findings) {
  json out = json::array();
  for (const Finding& f : findings) {
    json e = {{"text", f.text}, {"section", f.section}};
    if (!f.pattern.empty()) e["pattern"] = f.pattern;
    if (f.cause) e["cause"] = true;
    out.push_back(std::move(e));
  }
  return out;
}

nlohmann::json render_json(ReportInput& in, const std::vector<Finding>& findings) {
  json j;
  j["schema"] = "critpath-report/2";
  j["run"] = render_run(in);
  j["callpaths"] = render_callpaths(*in.profile, in.run->mangled_names);
  json metrics = json::object();
  render_profile_metrics(*in.profile, metrics);
  render_papi_metrics(*in.profile, metrics);
  render_store_metrics(in, metrics);
  j["metrics"] = std::move(metrics);
  render_instrumentation(in, j);
  j["scalars"] = render_scalars(in);
  j["ranks"] = render_ranks(in);
  j["notes"] = in.notes;
  j["findings"] = render_findings(findings);
  // Analyses' JSON, moved in: new top-level keys are added; objects that exist ("run") are
  // extended key by key.
  for (auto& [key, value] : in.extra_json->items()) {
    if (j.contains(key) && j[key].is_object() && value.is_object()) j[key].update(value);
    else j[key] = std::move(value);
  }
  return j;
}

Status write_text(const std::string& path, const std::string& text) { return write_file_atomic(path, text); }

}  // namespace

Status write_reports(ReportInput& in) {
  const std::string& dir = in.run->output_dir;
  // One list of findings leads summary.txt and report.json (and so the page).
  const std::vector<Finding> findings = build_findings(in);
  CRITPATH_FORWARD_IF_ERROR(write_text(dir + "/summary.txt", render_summary(in, findings)));
  // One report.json object feeds both files, so the page never disagrees with the JSON.
  const nlohmann::json report = render_json(in, findings);
  const std::string json_text = report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  CRITPATH_FORWARD_IF_ERROR(write_text(dir + "/report.json", json_text));
  if (in.write_html) CRITPATH_FORWARD_IF_ERROR(write_text(dir + "/report.html", render_html(report)));
  CRITPATH_FORWARD_IF_ERROR(write_text(dir + "/critpath.cfg", in.config_text));
  CRITPATH_FORWARD_IF_ERROR(write_text(dir + "/calltree.hatchet.json", render_hatchet(in).dump() + "\n"));
  const std::vector<AutoFiltered> af = auto_filtered_regions(*in.profile);
  if (!af.empty()) CRITPATH_FORWARD_IF_ERROR(write_text(dir + "/suggested-filter.txt", suggested_filter(af)));
  return Status::kOk;
}

Status write_config_only(const std::string& dir, const std::string& config_text) {
  return write_text(dir + "/critpath.cfg", config_text);
}

}  // namespace critpath::analyzer
