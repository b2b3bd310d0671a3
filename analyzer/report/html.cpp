// critpath — analyzer/report/html.cpp: report.html from the report.json object (html.h).
#include "analyzer/report/html.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

namespace critpath::analyzer {
namespace {

using nlohmann::json;

// Chart geometry, in SVG user units (the page scales the SVGs to its width).
constexpr double kWidth = 960;
constexpr double kLabelW = 330;  // call-path labels left of horizontal bars
constexpr double kValueW = 110;  // value text right of them
constexpr double kRowH = 22;
constexpr size_t kTopPaths = 15;
constexpr size_t kLabelChars = 48;  // longer call paths keep their tail: the leaf tells most

// The primary wait-state patterns: disjoint, so their sum per rank is the rank's waiting time
// (the *_wrong_order* metrics are parts of late_sender and would count twice).
constexpr const char* kWaitPatterns[] = {
    "late_sender",        "late_receiver",       "wait_barrier",         "wait_nxn",
    "late_broadcast",     "early_reduce",        "early_scan",           "wait_finalize",
    "barrier_completion", "nxn_completion",      "init_completion",      "rma_late_post",
    "rma_early_transfer", "rma_early_wait",      "rma_wait_at_fence",    "rma_wait_at_create",
    "rma_wait_at_free",   "rma_lock_contention", "rma_wait_for_progress"};

// Lookups that never throw: a report written by an older or partial analysis lacks fields,
// and the page should still render what is there.
const json& at(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}
double num(const json& j) { return j.is_number() ? j.get<double>() : 0.0; }
std::string str(const json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }
double rank_value(const json& list, size_t r) {
  return list.is_array() && r < list.size() ? num(list[r]) : 0.0;
}

std::string format(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  const int n = std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return n < 0 ? std::string() : std::string(buf, std::min(size_t(n), sizeof buf - 1));
}

std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

// Seconds with a unit that keeps three significant digits readable across µs..hours.
std::string seconds(double s) {
  const double a = s < 0 ? -s : s;
  if (a == 0) return "0 s";
  if (a >= 100) return format("%.0f s", s);
  if (a >= 1) return format("%.2f s", s);
  if (a >= 1e-3) return format("%.2f ms", s * 1e3);
  return format("%.1f \xC2\xB5s", s * 1e6);
}

// The tail of a long call path, cut on a UTF-8 character boundary.
std::string short_path(const std::string& p) {
  if (p.size() <= kLabelChars) return p;
  size_t cut = p.size() - kLabelChars;
  while (cut < p.size() && (static_cast<unsigned char>(p[cut]) & 0xC0) == 0x80) ++cut;
  return "\xE2\x80\xA6" + p.substr(cut);
}

std::string rect(double x, double y, double w, double h, const std::string& attrs, const std::string& title) {
  return format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" ", x, y, std::max(w, 0.0), h) +
         attrs + "><title>" + esc(title) + "</title></rect>";
}

std::string text(double x, double y, const std::string& attrs, const std::string& body) {
  return format("<text x=\"%.1f\" y=\"%.1f\" ", x, y) + attrs + ">" + esc(body) + "</text>";
}

// A legend row of coloured swatches at the top of a chart.
std::string legend(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string o;
  double x = kLabelW;
  for (const auto& [fill, label] : items) {
    o += format("<rect x=\"%.1f\" y=\"4\" width=\"12\" height=\"12\" ", x) + fill + "/>";
    o += text(x + 16, 14, "class=\"legend\"", label);
    x += 24 + 7.5 * double(label.size());
  }
  return o;
}

std::string svg_open(const char* cls, double h, const std::string& label) {
  return format("<svg class=\"%s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", cls, kWidth, h) +
         esc(label) + "\">";
}

std::string no_data(const char* cls, const std::string& why) {
  return std::string("<p class=\"no-data ") + cls + "\">" + esc(why) + "</p>\n";
}

// critical_path.callpaths as (path, field values...) rows.
struct CpRow {
  std::string path;
  double cp = 0, cp_imb = 0, impact = 0, intra = 0, inter = 0;
};
std::vector<CpRow> cp_rows(const json& report) {
  std::vector<CpRow> rows;
  const json& list = at(at(report, "critical_path"), "callpaths");
  if (!list.is_array()) return rows;
  for (const json& c : list) {
    CpRow r;
    r.path = str(at(c, "path"));
    r.cp = num(at(c, "critical_path_s"));
    r.cp_imb = std::clamp(num(at(c, "critical_path_imbalance_s")), 0.0, r.cp);
    r.impact = num(at(c, "performance_impact_s"));
    r.intra = num(at(c, "imbalance_cost_intra_s"));
    r.inter = num(at(c, "imbalance_cost_inter_s"));
    rows.push_back(std::move(r));
  }
  return rows;
}

// Where report.html shows what backs a finding (report.json `findings`, findings.h): the
// anchor of its section, or of the wait-state table's row of its pattern; "" for a part the
// page does not show. Every anchor named here exists on the page (check_html.py follows them).
std::pair<std::string, std::string> finding_anchor(const json& report, const json& finding) {
  const std::string section = str(at(finding, "section")), pattern = str(at(finding, "pattern"));
  if (section == "wait_state_stats") {
    if (!pattern.empty() && num(at(at(at(report, "wait_state_stats"), pattern.c_str()), "sum")) > 0)
      return {"wait-" + pattern, "wait states"};
    return {"wait-states", "wait states"};
  }
  if (section == "critical_path") return {"critical-path", "critical path"};
  if (section == "whatif") return {"whatif", "what if"};
  if (section == "callpaths") return {"callpaths", "call paths"};
  if (section == "notes") {
    const json& notes = at(report, "notes");
    return notes.is_array() && !notes.empty() ? std::pair<std::string, std::string>{"notes", "notes"}
                                              : std::pair<std::string, std::string>{"run", "run"};
  }
  return {};
}

// 1a. The findings, numbered as in summary.txt, each linking to what backs it (and to the
// delay costs per rank when it names a causing rank).
std::string findings(const json& report) {
  const json& list = at(report, "findings");
  std::string o = "<h2 id=\"findings\">Findings</h2>\n";
  if (!list.is_array() || list.empty()) return o + no_data("findings", "No findings in report.json.");
  o += "<ol class=\"findings\">";
  size_t k = 0;
  for (const json& f : list) {
    ++k;
    o += format("<li id=\"finding-%zu\" value=\"%zu\"><span class=\"finding-text\">", k, k) +
         esc(str(at(f, "text"))) + "</span>";
    const auto [anchor, label] = finding_anchor(report, f);
    if (!anchor.empty()) o += " <a class=\"backing\" href=\"#" + anchor + "\">" + esc(label) + "</a>";
    if (at(f, "cause").is_boolean() && at(f, "cause").get<bool>())
      o += " <a class=\"backing\" href=\"#per-rank\">delay costs</a>";
    o += "</li>";
  }
  return o + "</ol>\n";
}

// 1b. Header: what ran, on how many ranks, for how long, and what the analysis cost; a fact
// the run does not give (an imported archive's start time, say) is left out.
std::string header(const json& report) {
  const json& run = at(report, "run");
  const json& sc = at(report, "scalars");
  std::string cmd = str(at(run, "executable"));
  if (const json& args = at(run, "args"); args.is_array() && !cmd.empty())
    for (const json& a : args) cmd += " " + str(a);
  const double wall = num(at(run, "wall_time_s"));
  std::string o = "<header><h1>critpath report: " + esc(str(at(run, "executable"))) + "</h1>\n";
  o += findings(report);
  o += "<dl class=\"run\" id=\"run\">";
  auto row = [&o](const char* k, const std::string& v) {
    if (!v.empty()) o += std::string("<dt>") + k + "</dt><dd>" + esc(v) + "</dd>";
  };
  row("Command", cmd);
  row("Ranks", format("%.0f", num(at(run, "ranks"))));
  row("Wall time", seconds(wall));
  row("Analysis time", seconds(num(at(sc, "analysis_s"))) +
                           format(" (%.1f %% of wall time)", num(at(sc, "analysis_pct_of_wall"))));
  if (const json& cp = at(report, "critical_path"); cp.is_object()) {
    row("Critical path", seconds(num(at(cp, "length_s"))) + format(", %.0f hops", num(at(cp, "hops"))));
    row("Average parallelism", format("%.2f", num(at(cp, "average_parallelism"))));
  }
  row("MPI library", str(at(run, "mpi_library")));
  row("Started (UTC)", str(at(run, "start_utc")));
  row("Imported from", str(at(run, "imported_from")));
  row("critpath", str(at(run, "critpath_version")));
  o += "</dl>\n";
  if (const json& notes = at(report, "notes"); notes.is_array() && !notes.empty()) {
    o += "<ul class=\"notes\" id=\"notes\">";
    for (const json& n : notes) o += "<li>" + esc(str(n)) + "</li>";
    o += "</ul>\n";
  }
  return o + "</header>\n";
}

// 2. Critical-path profile ([Böhme2012] Fig. 1b): the time each call path spends on the critical
// path; the hatched tail is its critical-path imbalance, the part that shortening the slowest
// rank's instances alone would remove.
std::string cp_profile(const json& report) {
  std::vector<CpRow> rows = cp_rows(report);
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const CpRow& r) { return !(r.cp > 0); }),
             rows.end());
  std::sort(rows.begin(), rows.end(), [](const CpRow& a, const CpRow& b) { return a.cp > b.cp; });
  if (rows.size() > kTopPaths) rows.resize(kTopPaths);
  std::string o = "<h2 id=\"critical-path\">Critical-path profile</h2>\n";
  if (rows.empty()) return o + no_data("cp-profile", "No critical-path data in report.json.");
  const double max = rows.front().cp, bar_w = kWidth - kLabelW - kValueW;
  const double h = 26 + kRowH * double(rows.size());
  o += svg_open("cp-profile", h, "critical-path time per call path");
  o += "<defs><pattern id=\"hatch-cp\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#4e79a7\"/>"
       "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#fff\" stroke-width=\"3\"/>"
       "</pattern></defs>";
  o += legend(
      {{"fill=\"#4e79a7\"", "critical-path time"}, {"fill=\"url(#hatch-cp)\"", "critical-path imbalance"}});
  for (size_t i = 0; i < rows.size(); ++i) {
    const CpRow& r = rows[i];
    const double y = 24 + kRowH * double(i), w = bar_w * r.cp / max;
    const double wi = bar_w * r.cp_imb / max;
    o += text(kLabelW - 6, y + 14, "class=\"label\" text-anchor=\"end\"", short_path(r.path));
    o += rect(kLabelW, y + 3, w - wi, kRowH - 6, "fill=\"#4e79a7\"",
              r.path + ": " + seconds(r.cp) + " on the critical path");
    o += rect(kLabelW + w - wi, y + 3, wi, kRowH - 6, "fill=\"url(#hatch-cp)\"",
              r.path + ": critical-path imbalance " + seconds(r.cp_imb));
    o += text(kLabelW + w + 6, y + 14, "class=\"value\"", seconds(r.cp));
  }
  return o + "</svg>\n";
}

// 3. Performance impact per call path (allocation seconds): the work all ranks spent in it
// plus what its imbalance costs the other ranks of the partition and the other partitions.
std::string impact(const json& report) {
  std::vector<CpRow> rows = cp_rows(report);
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const CpRow& r) { return !(r.impact > 0); }),
             rows.end());
  std::sort(rows.begin(), rows.end(), [](const CpRow& a, const CpRow& b) { return a.impact > b.impact; });
  if (rows.size() > kTopPaths) rows.resize(kTopPaths);
  std::string o = "<h2 id=\"impact\">Performance impact</h2>\n";
  if (rows.empty()) return o + no_data("impact", "No performance-impact data in report.json.");
  double max = 0;
  for (const CpRow& r : rows) max = std::max(max, std::max(r.impact, r.intra + r.inter));
  const double bar_w = kWidth - kLabelW - kValueW;
  const double h = 26 + kRowH * double(rows.size());
  o += svg_open("impact", h, "performance impact per call path");
  o += legend({{"fill=\"#59a14f\"", "work (all ranks)"},
               {"fill=\"#f28e2b\"", "intra-partition imbalance"},
               {"fill=\"#e15759\"", "inter-partition imbalance"}});
  for (size_t i = 0; i < rows.size(); ++i) {
    const CpRow& r = rows[i];
    // performance_impact = sum_p d_p + intra + inter, so the work is what remains.
    const double work = std::max(r.impact - r.intra - r.inter, 0.0);
    const double y = 24 + kRowH * double(i);
    double x = kLabelW;
    o += text(kLabelW - 6, y + 14, "class=\"label\" text-anchor=\"end\"", short_path(r.path));
    const std::pair<double, const char*> parts[] = {
        {work, "#59a14f"}, {r.intra, "#f28e2b"}, {r.inter, "#e15759"}};
    const char* names[] = {"work", "intra-partition imbalance cost", "inter-partition imbalance cost"};
    for (size_t k = 0; k < 3; ++k) {
      const double w = bar_w * parts[k].first / max;
      o += rect(x, y + 3, w, kRowH - 6, std::string("fill=\"") + parts[k].second + "\"",
                r.path + ": " + names[k] + " " + seconds(parts[k].first));
      x += w;
    }
    o += text(x + 6, y + 14, "class=\"value\"", seconds(r.impact));
  }
  return o + "</svg>\n";
}

// The x-axis labels of a per-rank or per-k chart: all of them when they fit, else ~16.
bool label_this(size_t i, size_t n) {
  const size_t step = n <= 33 ? 1 : (n + 15) / 16;
  return i % step == 0 || i + 1 == n;
}

// 4. Per rank: computation and waiting time (left column) and the delay cost the rank caused
// (right column: short- then long-term). A rank with a tall right column is a root cause.
std::string rank_bars(const json& report) {
  const json& m = at(report, "metrics");
  size_t P = size_t(std::max(0.0, num(at(at(report, "run"), "ranks"))));
  std::vector<double> comp(P), wait(P), d_short(P), d_long(P);
  const json& comp_list = at(at(m, "computation"), "by_rank");
  const json& time_list = at(at(m, "time"), "by_rank");
  const json& mpi_list = at(at(m, "mpi_time"), "by_rank");
  const json& short_list = at(at(m, "delay_cost_short_term"), "by_rank");
  const json& long_list = at(at(m, "delay_cost_long_term"), "by_rank");
  const bool has_delay = short_list.is_array() || long_list.is_array();
  double max = 0;
  for (size_t r = 0; r < P; ++r) {
    comp[r] = comp_list.is_array() ? rank_value(comp_list, r)
                                   : rank_value(time_list, r) - rank_value(mpi_list, r);
    for (const char* p : kWaitPatterns) wait[r] += rank_value(at(at(m, p), "by_rank"), r);
    d_short[r] = rank_value(short_list, r);
    d_long[r] = rank_value(long_list, r);
    max = std::max({max, comp[r] + wait[r], d_short[r] + d_long[r]});
  }
  std::string o = "<h2 id=\"per-rank\">Per rank</h2>\n";
  if (P == 0 || !(max > 0)) return o + no_data("rank-bars", "No per-rank data in report.json.");
  if (!has_delay) o += "<p class=\"hint\">Delay analysis off: no delay costs.</p>\n";
  constexpr double left = 70, top = 26, plot_h = 240;
  const double plot_w = kWidth - left - 10, slot = plot_w / double(P);
  const double col_w = slot * (has_delay ? 0.4 : 0.8);
  o += svg_open("rank-bars", top + plot_h + 24, "computation, waiting and delay cost per rank");
  std::vector<std::pair<std::string, std::string>> items = {{"fill=\"#4e79a7\"", "computation"},
                                                            {"fill=\"#e15759\"", "waiting"}};
  if (has_delay) {
    items.push_back({"fill=\"#b07aa1\"", "delay cost caused, short-term"});
    items.push_back({"fill=\"#d4a6c8\"", "long-term"});
  }
  o += legend(items);
  for (int t = 0; t <= 2; ++t) {  // y axis: 0, max/2, max
    const double y = top + plot_h - plot_h * t / 2.0;
    o += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", left, y,
                kWidth - 10, y);
    o += text(left - 4, y + 4, "class=\"axis\" text-anchor=\"end\"", seconds(max * t / 2.0));
  }
  auto column = [&](double x, double a, double b, const char* ca, const char* cb, const std::string& ta,
                    const std::string& tb) {
    const double ha = plot_h * a / max, hb = plot_h * b / max;
    o += rect(x, top + plot_h - ha, col_w, ha, std::string("fill=\"") + ca + "\"", ta);
    o += rect(x, top + plot_h - ha - hb, col_w, hb, std::string("fill=\"") + cb + "\"", tb);
  };
  for (size_t r = 0; r < P; ++r) {
    const double x = left + slot * double(r) + slot * 0.1;
    const std::string rk = format("rank %zu: ", r);
    column(x, comp[r], wait[r], "#4e79a7", "#e15759", rk + "computation " + seconds(comp[r]),
           rk + "waiting " + seconds(wait[r]));
    if (has_delay)
      column(x + col_w, d_short[r], d_long[r], "#b07aa1", "#d4a6c8",
             rk + "short-term delay cost caused " + seconds(d_short[r]),
             rk + "long-term delay cost caused " + seconds(d_long[r]));
    if (label_this(r, P))
      o += text(left + slot * (double(r) + 0.5), top + plot_h + 16, "class=\"axis\" text-anchor=\"middle\"",
                format("%zu", r));
  }
  return o + "</svg>\n";
}

// 6. Parallelism histogram: the fraction of the run during which k ranks computed.
std::string parallelism(const json& report) {
  const json& f = at(at(at(report, "critical_path"), "parallelism_histogram"), "fraction");
  std::string o = "<h2 id=\"parallelism\">Parallelism</h2>\n";
  if (!f.is_array() || f.empty())
    return o + no_data("parallelism", "No parallelism histogram in report.json.");
  const size_t n = f.size();
  double max = 0;
  for (const json& v : f) max = std::max(max, num(v));
  if (!(max > 0)) max = 1;
  constexpr double left = 70, top = 10, plot_h = 200;
  const double plot_w = kWidth - left - 10, slot = plot_w / double(n);
  o += svg_open("parallelism", top + plot_h + 40, "fraction of the run with k ranks busy");
  for (int t = 0; t <= 2; ++t) {
    const double y = top + plot_h - plot_h * t / 2.0;
    o += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", left, y,
                kWidth - 10, y);
    o += text(left - 4, y + 4, "class=\"axis\" text-anchor=\"end\"", format("%.0f %%", 100 * max * t / 2.0));
  }
  for (size_t k = 0; k < n; ++k) {
    const double v = num(f[k]), h = plot_h * v / max;
    o += rect(left + slot * double(k) + slot * 0.1, top + plot_h - h, slot * 0.8, h, "fill=\"#76b7b2\"",
              format("%zu ranks busy: %.1f %% of the run", k, 100 * v));
    if (label_this(k, n))
      o += text(left + slot * (double(k) + 0.5), top + plot_h + 16, "class=\"axis\" text-anchor=\"middle\"",
                format("%zu", k));
  }
  o += text(left + plot_w / 2, top + plot_h + 34, "class=\"axis\" text-anchor=\"middle\"",
            "ranks computing at the same time");
  return o + "</svg>\n";
}

// The call path with the largest value of metric `id`, or "".
std::string top_callpath(const json& metrics, const std::string& id) {
  const json& bc = at(at(metrics, id.c_str()), "by_callpath");
  std::string best;
  double best_v = 0;
  if (bc.is_object())
    for (const auto& [path, v] : bc.items())
      if (num(v) > best_v) best_v = num(v), best = path;
  return best;
}

std::string td_num(double v, const std::string& shown) {
  return format("<td data-v=\"%.9g\">", v) + esc(shown) + "</td>";
}

// 6b. What if: the simulated hypotheses, largest saving first, and the POP metrics.
std::string whatif_table(const json& report) {
  const json& w = at(report, "whatif");
  std::string o = "<h2 id=\"whatif\">What if (simulated)</h2>\n";
  if (!w.is_array()) return o + no_data("whatif", "No what-if simulation in report.json.");
  o += "<table class=\"whatif sortable\"><thead><tr><th>Hypothesis</th><th>Predicted span</th>"
       "<th>Saving</th><th>Saving %</th><th>Waiting time</th></tr></thead><tbody>";
  for (const json& e : w) {
    const double span = num(at(e, "predicted_span_s")), save = num(at(e, "saving_s"));
    const double pct = num(at(e, "saving_pct")), wait = num(at(e, "predicted_wait_s"));
    o += "<tr><td>" + esc(str(at(e, "hypothesis"))) + "</td>" + td_num(span, seconds(span)) +
         td_num(save, seconds(save)) + td_num(pct, format("%.1f %%", pct)) + td_num(wait, seconds(wait)) +
         "</tr>";
  }
  o += "</tbody></table>\n";
  const json& pop = at(report, "pop");
  if (pop.is_object()) {
    o += "<table class=\"pop\"><thead><tr><th>POP metric</th><th>Value</th></tr></thead><tbody>";
    for (const char* k : {"parallel_efficiency", "load_balance", "communication_efficiency",
                          "serialisation_efficiency", "transfer_efficiency"})
      o += "<tr><td>" + esc(k) + "</td>" + td_num(num(at(pop, k)), format("%.1f %%", 100 * num(at(pop, k)))) +
           "</tr>";
    o += "</tbody></table>\n";
  }
  return o;
}

// 7a. Wait states: one row per pattern with waiting time, largest first.
std::string wait_table(const json& report) {
  const json& stats = at(report, "wait_state_stats");
  const json& m = at(report, "metrics");
  const json& run = at(report, "run");
  const double alloc = num(at(run, "wall_time_s")) * num(at(run, "ranks"));
  struct Row {
    std::string id;
    double sum, count;
  };
  std::vector<Row> rows;
  size_t hidden = 0;
  if (stats.is_object())
    for (const auto& [id, s] : stats.items()) {
      if (num(at(s, "sum")) > 0) rows.push_back({id, num(at(s, "sum")), num(at(s, "count"))});
      else ++hidden;
    }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.sum > b.sum; });
  std::string o = "<h2 id=\"wait-states\">Wait states</h2>\n";
  if (rows.empty()) return o + no_data("wait-states", "No waiting time in report.json.");
  o += "<table class=\"wait-states sortable\"><thead><tr><th>Pattern</th><th>Instances</th>"
       "<th>Seconds</th><th>% of allocation</th><th>Top call path</th></tr></thead><tbody>";
  for (const Row& r : rows) {
    o += "<tr id=\"wait-" + esc(r.id) + "\"><td>" + esc(r.id) + "</td>" +
         td_num(r.count, format("%.0f", r.count)) + td_num(r.sum, seconds(r.sum));
    const double pct = alloc > 0 ? 100 * r.sum / alloc : 0;
    o += td_num(pct, format("%.2f %%", pct)) + "<td>" + esc(top_callpath(m, r.id)) + "</td></tr>";
  }
  o += "</tbody></table>\n";
  if (hidden)
    o += format("<p class=\"hint\">%zu patterns without waiting time not shown. The "
                "late_sender_wrong_order rows are parts of late_sender.</p>\n",
                hidden);
  return o;
}

// 7b. Every call path: time, MPI time, critical path and the delay cost it caused.
std::string callpath_table(const json& report) {
  const json& m = at(report, "metrics");
  const json& time = at(at(m, "time"), "by_callpath");
  std::string o = "<h2 id=\"callpaths\">Call paths</h2>\n";
  if (!time.is_object() || time.empty()) return o + no_data("callpaths", "No call paths.");
  auto value = [&m](const char* id, const std::string& path) {
    return num(at(at(at(m, id), "by_callpath"), path.c_str()));
  };
  const bool has_delay = at(m, "delay_cost_short_term").is_object();
  const bool has_cp = at(m, "critical_path").is_object();
  o += "<table class=\"callpaths sortable\"><thead><tr><th>Call path</th><th>Visits</th>"
       "<th>Time</th><th>MPI</th>";
  if (has_cp) o += "<th>Critical path</th>";
  if (has_delay) o += "<th>Delay cost</th>";
  o += "</tr></thead><tbody>";
  for (const auto& [path, t] : time.items()) {
    const double visits = value("visits", path), mpi = value("mpi_time", path);
    o += "<tr><td>" + esc(path) + "</td>" + td_num(visits, format("%.0f", visits)) +
         td_num(num(t), seconds(num(t))) + td_num(mpi, seconds(mpi));
    if (has_cp) o += td_num(value("critical_path", path), seconds(value("critical_path", path)));
    if (has_delay) {
      const double d = value("delay_cost_short_term", path) + value("delay_cost_long_term", path);
      o += td_num(d, seconds(d));
    }
    o += "</tr>";
  }
  return o + "</tbody></table>\n<p class=\"hint\">Click a column header to sort.</p>\n";
}

constexpr const char* kStyle = R"(<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;
max-width:1000px;color:#222;background:#fff}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
dl.run{display:grid;grid-template-columns:max-content auto;gap:2px 16px}
dt{font-weight:600}dd{margin:0;font-family:ui-monospace,monospace;word-break:break-all}
svg{width:100%;height:auto;display:block}
svg text{font:12px ui-monospace,monospace;fill:#333}svg text.legend{font-family:sans-serif}
svg .grid{stroke:#e3e3e3}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #eee;padding:3px 8px;text-align:right}
th:first-child,td:first-child,.wait-states th:last-child,.wait-states td:last-child{
text-align:left;word-break:break-all}
th{cursor:pointer;background:#f5f5f5;user-select:none}
th[data-dir=asc]::after{content:" \25B2"}th[data-dir=desc]::after{content:" \25BC"}
.hint,.no-data{color:#666;font-size:12px}.notes{color:#8a4b00}
ol.findings li{margin:4px 0}a.backing{font-size:12px;white-space:nowrap}
</style>
)";

// Sortable tables: a click on a header sorts by that column, numerically when the cells carry
// data-v, else as text; a second click reverses.
constexpr const char* kScript = R"(<script>
(function(){
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function(t){
    var heads = t.querySelectorAll("th");
    Array.prototype.forEach.call(heads, function(th, i){
      th.addEventListener("click", function(){
        var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var asc = th.getAttribute("data-dir") !== "asc";
        Array.prototype.forEach.call(heads, function(h){ h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", asc ? "asc" : "desc");
        rows.sort(function(x, y){
          var a = x.cells[i], b = y.cells[i];
          var va = a.getAttribute("data-v"), vb = b.getAttribute("data-v");
          var r = (va !== null && vb !== null) ? parseFloat(va) - parseFloat(vb)
                                               : a.textContent.localeCompare(b.textContent);
          return asc ? r : -r;
        });
        rows.forEach(function(r){ body.appendChild(r); });
      });
    });
  });
})();
</script>
)";

}  // namespace

// Per-rank maps over each Cartesian topology the application created (report.json's
// `topologies`): waiting time, short- and long-term delay cost, one cell per rank, darker is
// more ([Böhme2010] Fig. 5). Rows: the second-to-last coordinate; 3-D and more as stacked slices.
std::string heatmaps(const json& report) {
  const json& topos = at(report, "topologies");
  if (!topos.is_array() || topos.empty()) return "";
  const json& m = at(report, "metrics");
  const size_t P = size_t(std::max(0.0, num(at(at(report, "run"), "ranks"))));
  std::vector<double> wait(P, 0.0);
  for (size_t r = 0; r < P; ++r)
    for (const char* p : kWaitPatterns) wait[r] += rank_value(at(at(m, p), "by_rank"), r);
  const json& st = at(at(m, "delay_cost_short_term"), "by_rank");
  const json& lt = at(at(m, "delay_cost_long_term"), "by_rank");
  std::string o = "<h2 id=\"topologies\">Cartesian topologies</h2>\n";
  for (const json& t : topos) {
    const json& dims = at(t, "dims");
    const json& members = at(t, "members");
    if (!dims.is_array() || dims.empty() || !members.is_array()) continue;
    const size_t nd = dims.size();
    const int cols = int(num(dims[nd - 1])), rows = nd >= 2 ? int(num(dims[nd - 2])) : 1;
    int slices = 1;
    for (size_t i = 0; i + 2 < nd; ++i) slices *= int(num(dims[i]));
    if (cols <= 0 || rows <= 0 || slices <= 0) continue;
    std::string shape;
    for (size_t i = 0; i < nd; ++i) shape += (i ? "x" : "") + format("%.0f", num(dims[i]));
    o += "<p class=\"hint\">" + esc(shape + " grid (" + str(at(t, "created_by")) + ")") + "</p>\n";
    const struct {
      const char* title;
      std::vector<double> v;
    } maps[] = {{"waiting time", wait},
                {"short-term delay cost",
                 [&] {
                   std::vector<double> v(P);
                   for (size_t r = 0; r < P; ++r) v[r] = rank_value(st, r);
                   return v;
                 }()},
                {"long-term delay cost", [&] {
                   std::vector<double> v(P);
                   for (size_t r = 0; r < P; ++r) v[r] = rank_value(lt, r);
                   return v;
                 }()}};
    const double cell = std::min(36.0, (kWidth / 3.0 - 20) / double(cols));
    const double map_h = cell * rows * slices + 6.0 * (slices - 1);
    o += svg_open("heatmap", map_h + 40, "per-rank maps over the " + shape + " grid");
    for (int k = 0; k < 3; ++k) {
      double max = 0;
      for (double v : maps[k].v) max = std::max(max, v);
      const double x0 = k * (kWidth / 3.0) + 10;
      o += text(x0, 14, "class=\"legend\"", std::string(maps[k].title) + " (max " + seconds(max) + ")");
      for (int s = 0; s < slices; ++s)
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c) {
            const size_t cart = size_t((s * rows + r) * cols + c);
            if (cart >= members.size()) continue;
            const size_t rank = size_t(num(members[cart]));
            const double v = rank < maps[k].v.size() ? maps[k].v[rank] : 0.0;
            const double a = max > 0 ? v / max : 0.0;
            const double y = 22 + s * (cell * rows + 6.0) + r * cell;
            o += rect(x0 + c * cell, y, cell - 1, cell - 1,
                      format("fill=\"#b2182b\" fill-opacity=\"%.3f\" stroke=\"#ccc\"", 0.05 + 0.95 * a),
                      format("rank %zu: %s", rank, seconds(v).c_str()));
          }
    }
    o += "</svg>\n";
  }
  return o;
}

std::string render_html(const json& report) {
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
                  // An empty data: icon so the browser does not request /favicon.ico (no network).
                  "<link rel=\"icon\" href=\"data:,\">\n<title>critpath: " +
                  esc(str(at(at(report, "run"), "executable"))) + "</title>\n" + kStyle + "</head><body>\n";
  o += header(report);
  o += cp_profile(report);
  o += impact(report);
  o += rank_bars(report);
  o += heatmaps(report);
  o += parallelism(report);
  o += whatif_table(report);
  o += wait_table(report);
  o += callpath_table(report);
  o += format("<footer class=\"hint\">schema %s</footer>\n", esc(str(at(report, "schema"))).c_str());
  return o + kScript + "</body></html>\n";
}

}  // namespace critpath::analyzer
