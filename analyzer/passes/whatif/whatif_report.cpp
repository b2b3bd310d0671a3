// critpath — analyzer/passes/whatif/whatif_report.cpp: hypotheses in, predictions out (see
// whatif_report.h).
#include "analyzer/passes/whatif/whatif_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "analyzer/passes/pass_list.h"
#include "libtrace/runtime/log.h"

namespace critpath::analyzer::passes {
namespace {

const engine::ReducedMetric* find(const ReportInput& rep, const char* id) {
  for (const auto& m : rep.extra_metrics)
    if (m.id == id) return &m;
  return nullptr;
}

double at(const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : 0.0; }

// The global call paths NAME denotes, with their callees: a call path whose path is NAME or
// ends in "/NAME", or whose region is NAME.
std::vector<int> resolve(const GlobalProfile& global, const std::string& name) {
  const auto& cps = global.callpaths;
  std::vector<uint8_t> in(cps.size(), 0);
  for (size_t g = 0; g < cps.size(); ++g) {
    const std::string& p = cps[g].path;
    in[g] = p == name || cps[g].region == name ||
            (p.size() > name.size() && p.compare(p.size() - name.size(), name.size(), name) == 0 &&
             p[p.size() - name.size() - 1] == '/');
  }
  std::vector<int> out;
  for (size_t g = 0; g < cps.size(); ++g) {
    bool under = false;
    for (int a = int(g); a >= 0 && size_t(a) < cps.size() && !under; a = cps[size_t(a)].parent)
      under = in[size_t(a)];
    if (under) out.push_back(int(g));
  }
  return out;
}

bool is_computation(const GlobalCallpath& c) { return c.kind != defs::RegionKind::kMpi && c.parent >= 0; }

// The automatic hypotheses' call paths: the top `k` by critical-path time, then the top `k`
// by delay cost not already chosen.
std::vector<int> top_callpaths(const ReportInput& rep, const GlobalProfile& global, int k) {
  std::vector<int> chosen;
  const auto* cp = find(rep, "critical_path");
  const auto* st = find(rep, "delay_cost_short_term");
  const auto* lt = find(rep, "delay_cost_long_term");
  auto pick = [&](auto value) {
    std::vector<std::pair<double, int>> v;
    for (size_t g = 0; g < global.callpaths.size(); ++g)
      if (is_computation(global.callpaths[g]) && value(g) > 0) v.push_back({-value(g), int(g)});
    std::sort(v.begin(), v.end());
    int n = 0;
    for (const auto& [neg, g] : v) {
      if (n >= k) break;
      if (std::find(chosen.begin(), chosen.end(), g) == chosen.end()) chosen.push_back(g);
      ++n;
    }
  };
  if (cp) pick([&](size_t g) { return at(cp->by_callpath, g); });
  if (st || lt)
    pick([&](size_t g) { return (st ? at(st->by_callpath, g) : 0.0) + (lt ? at(lt->by_callpath, g) : 0.0); });
  return chosen;
}

std::string pct(double part, double whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", whole > 0 ? 100.0 * part / whole : 0.0);
  return b;
}

// Rank 0: the lanes, the identity and the ideal network first, then CRITPATH_WHATIF's
// hypotheses, then balance / zero / slack for each of the top call paths.
void choose_lanes(const WhatIfOptions& options, const GlobalProfile& global, const ReportInput& rep,
                  std::vector<Hypothesis>& lanes, std::vector<std::string>& notes) {
  Hypothesis id, ideal;
  id.spec = "identity";
  ideal.kind = LaneKind::kIdealNetwork;
  ideal.spec = "ideal network";
  lanes.push_back(id);
  lanes.push_back(ideal);
  std::vector<Hypothesis> user;
  std::string error;
  if (!parse_whatif(options.hypotheses, user, error)) {
    notes.push_back("what-if: CRITPATH_WHATIF ignored: " + error);
    user.clear();
  }
  for (Hypothesis& h : user) {
    h.callpaths = resolve(global, h.callpath);
    if (h.callpaths.empty()) {
      notes.push_back("what-if: '" + h.spec + "' names no call path of the run; not simulated");
      continue;
    }
    lanes.push_back(std::move(h));
  }
  for (int g : top_callpaths(rep, global, std::max(0, options.top))) {
    const std::string& path = global.callpaths[size_t(g)].path;
    for (LaneKind kind : {LaneKind::kBalance, LaneKind::kZero, LaneKind::kSlack}) {
      Hypothesis h;
      h.kind = kind;
      h.factor = kind == LaneKind::kBalance ? 1.0 : 0.0;
      h.automatic = true;
      h.target = g;
      h.callpath = path;
      h.spec = std::string(kind == LaneKind::kBalance ? "balance"
                           : kind == LaneKind::kZero  ? "zero"
                                                      : "slack") +
               ":" + path;
      h.callpaths = {g};
      lanes.push_back(std::move(h));
    }
  }
}

// Collective over `group`: rank 0's lanes to every rank.
Status share_lanes(const engine::Group& group, std::vector<Hypothesis>& lanes) {
  std::vector<unsigned char> bytes;
  if (group.is_root()) bytes = encode_lanes(lanes);
  uint64_t n = bytes.size();
  CRITPATH_FORWARD_IF_ERROR(group.broadcast(&n, 1));
  bytes.resize(size_t(n));
  CRITPATH_FORWARD_IF_ERROR(group.broadcast(bytes.data(), bytes.size()));
  if (!group.is_root() && !decode_lanes(bytes, lanes)) return Status::kCorrupt;
  return Status::kOk;
}

// POP metrics: the ideal network is lane 1. Rank 0.
void pop_metrics(const WhatIfResult& res, ReportInput& rep) {
  char buf[512];
  const double T = res.measured_pop_span, T_ideal = T - (res.pop_span[0] - res.pop_span[1]);
  const double avg = res.ranks > 0 ? res.useful_sum / res.ranks : 0.0, mx = res.useful_max;
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const double lb = ratio(avg, mx), ce = ratio(mx, T), se = ratio(mx, T_ideal), te = ratio(T_ideal, T);
  nlohmann::json pj;
  pj["parallel_efficiency"] = lb * ce;
  pj["load_balance"] = lb;
  pj["communication_efficiency"] = ce;
  pj["serialisation_efficiency"] = se;
  pj["transfer_efficiency"] = te;
  pj["runtime_s"] = T;
  pj["ideal_network_runtime_s"] = T_ideal;
  pj["useful_avg_s"] = avg;
  pj["useful_max_s"] = mx;
  (*rep.extra_json)["pop"] = pj;
  std::string pop;
  auto row = [&](const char* name, double v) {
    std::snprintf(buf, sizeof buf, "%-30s %7.1f %%\n", name, 100.0 * v);
    pop += buf;
  };
  row("Parallel efficiency", lb * ce);
  row("  Load balance", lb);
  row("  Communication efficiency", ce);
  row("    Serialisation efficiency", se);
  row("    Transfer efficiency", te);
  std::snprintf(buf, sizeof buf,
                "Runtime %.6f s (earliest MPI_Init exit to last MPI_Finalize entry); on an ideal "
                "network (simulated: MPI costs only its waiting) %.6f s. Useful computation per "
                "rank: average %.6f s, maximum %.6f s.\n",
                T, T_ideal, avg, mx);
  pop += buf;
  rep.sections.push_back({"POP metrics (ideal network simulated in situ)", pop});
}

void whatif_scalars(const WhatIfResult& res, size_t lanes, double span_err, double wait_err,
                    engine::Scalars& sc) {
  const double id_span = res.span[0], id_wait = res.wait[0];
  sc.set("whatif_identity_span_error_pct", span_err);
  sc.set("whatif_identity_wait_error_pct", wait_err);
  sc.set("whatif_lanes", lanes);
  sc.set("whatif_messages", res.messages);
  sc.set("whatif_bytes", res.bytes_sent);
  sc.set("whatif_clamped_calls", res.clamped);
  sc.set("whatif_gathered", res.gathered ? 1 : 0);
  sc.set("whatif_group_ranks", res.group_ranks);
  sc.set("whatif_analysis_s", res.seconds);  // an analysis time: volatile
  sc.set("whatif_measured_wait_s", res.measured_wait);
  sc.set("whatif_identity_wait_s", id_wait);
  sc.set("whatif_identity_span_s", id_span);
}

// Slack and logical zeroing per automatic call path ([Hollingsworth1994], Fig. 5): the metrics `lz` and
// `slack`, and summary.txt's table of the bounds ("" when no automatic lane). Rank 0.
std::string tuning_bounds(const std::vector<Hypothesis>& lanes, const WhatIfResult& res,
                          const GlobalProfile& global, const ReportInput& rep, engine::ReducedMetric& lz,
                          engine::ReducedMetric& slack) {
  const double span = res.measured_span, id_span = res.span[0];
  auto predicted = [&](size_t l) { return span - (id_span - res.span[l]); };
  char buf[512];
  const size_t G = global.callpaths.size();
  for (const engine::MetricDecl& d : whatif_metric_decls()) {
    engine::ReducedMetric& m = std::string(d.id) == "slack" ? slack : lz;
    m.id = d.id;
    m.unit = d.unit;
    m.description = d.title;
    m.by_callpath.assign(G, 0.0);
  }
  const auto* cp = find(rep, "critical_path");
  std::string bounds;
  for (size_t l = 2; l < lanes.size(); ++l) {
    const Hypothesis& h = lanes[l];
    if (!h.automatic || h.target < 0 || size_t(h.target) >= G) continue;
    if (h.kind == LaneKind::kZero) lz.by_callpath[size_t(h.target)] = span - predicted(l);
    if (h.kind == LaneKind::kSlack) slack.by_callpath[size_t(h.target)] = span - predicted(l);
  }
  std::set<int> shown;
  for (size_t l = 2; l < lanes.size(); ++l) {
    const int g = lanes[l].target;
    if (!lanes[l].automatic || g < 0 || size_t(g) >= G || !shown.insert(g).second) continue;
    std::snprintf(buf, sizeof buf, "%-44s %14.6f %16.6f %12.6f\n",
                  lanes[l].callpath.size() > 44
                      ? ("..." + lanes[l].callpath.substr(lanes[l].callpath.size() - 41)).c_str()
                      : lanes[l].callpath.c_str(),
                  cp ? at(cp->by_callpath, size_t(g)) : 0.0, lz.by_callpath[size_t(g)],
                  slack.by_callpath[size_t(g)]);
    bounds += buf;
  }
  std::string body;
  if (!bounds.empty()) {
    body += "\nWhat tuning a call path's own computation can buy: critical-path time "
            "(upper bound) >= logical zeroing >= slack (lower bound), seconds:\n";
    std::snprintf(buf, sizeof buf, "%-44s %14s %16s %12s\n", "Call path", "Critical path", "Logical zeroing",
                  "Slack");
    body += buf + bounds;
  }
  return body;
}

// The "@ What-if" header line (how the replay ran, the model check) and the notes on clamped
// calls and a model check that is off. Rank 0.
void model_check_lines(const WhatIfResult& res, size_t lanes, double span_err, double wait_err,
                       ReportInput& rep) {
  const double span = res.measured_span, id_span = res.span[0], id_wait = res.wait[0];
  char buf[512];
  char how[128];
  if (res.gathered)
    std::snprintf(how, sizeof how, "gathered on rank 0: %.1f MB of replay programs, %llu dependencies",
                  double(res.bytes_sent) * 1e-6, (unsigned long long)res.messages);
  else
    std::snprintf(
        how, sizeof how,
        "distributed over groups of %d ranks: %.1f MB of replay programs and sim times, %llu dependencies",
        res.group_ranks, double(res.bytes_sent) * 1e-6, (unsigned long long)res.messages);
  std::snprintf(buf, sizeof buf,
                "@ What-if         : %zu hypotheses in one replay (%s); model check: the unmodified "
                "trace replays to the span within %.2f %% and the waiting time within %.2f %%",
                lanes - 1, how, span_err, wait_err);
  rep.header_lines.push_back(buf);
  if (res.clamped > 0)
    rep.notes.push_back("what-if: " + std::to_string(res.clamped) +
                        " MPI calls ended before what they waited for began (clock errors): the "
                        "replay delays them, and the model check shows by how much");
  if (span_err > 2.0 || wait_err > 5.0)
    rep.notes.push_back("what-if: the model check is off (span " + pct(std::fabs(id_span - span), span) +
                        ", waiting time " + pct(std::fabs(id_wait - res.measured_wait), res.measured_wait) +
                        "); its predictions are less reliable");
}

}  // namespace

Status analyze_whatif(const WhatIfInput& sim, const WhatIfOptions& options, const GlobalProfile& global,
                      const engine::Group& group, ReportInput& rep) {
  // --- Rank 0 decides the lanes.
  std::vector<Hypothesis> lanes;
  std::vector<std::string> notes;
  if (group.is_root()) choose_lanes(options, global, rep, lanes, notes);
  if (lanes.size() > kMaxLanes) {
    notes.push_back("what-if: " + std::to_string(lanes.size() - kMaxLanes) +
                    " hypotheses left out (at most " + std::to_string(kMaxLanes - 2) + " per run)");
    lanes.resize(kMaxLanes);
  }
  CRITPATH_FORWARD_IF_ERROR(share_lanes(group, lanes));
  WhatIfResult res;
  CRITPATH_FORWARD_IF_ERROR(simulate(sim, lanes, group, res));
  if (!group.is_root()) return Status::kOk;

  // --- Rank 0: the report.
  for (const std::string& note : notes) {
    log::warn("%s", note.c_str());
    rep.notes.push_back(note);
  }
  if (!res.ok) {
    rep.notes.push_back("what-if: not simulated: " + res.failure);
    rep.header_lines.push_back("@ What-if         : not simulated (" + res.failure + ")");
    return Status::kOk;
  }
  const double span = res.measured_span, id_span = res.span[0], id_wait = res.wait[0];
  const double span_err = span > 0 ? 100.0 * std::fabs(id_span - span) / span : 0.0;
  const double wait_err = res.measured_wait > 0
                              ? 100.0 * std::fabs(id_wait - res.measured_wait) / res.measured_wait
                              : 100.0 * std::fabs(id_wait) / std::max(span, 1e-9);
  char buf[512];
  model_check_lines(res, lanes.size(), span_err, wait_err, rep);

  // Predictions relative to the identity lane, so the model's own error cancels.
  auto predicted = [&](size_t l) { return span - (id_span - res.span[l]); };
  auto predicted_wait = [&](size_t l) { return std::max(0.0, res.measured_wait - (id_wait - res.wait[l])); };
  nlohmann::json wj = nlohmann::json::array();
  std::vector<size_t> order;
  for (size_t l = 2; l < lanes.size(); ++l)
    if (lanes[l].kind != LaneKind::kSlack) order.push_back(l);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return res.span[a] < res.span[b]; });
  std::string body;
  std::snprintf(buf, sizeof buf,
                "Model check: replaying the unmodified trace gives the span within %.2f %% and the "
                "waiting time within %.2f %% (Böhme et al. 2010: 1.5 %% and 1.0 %%).\n",
                span_err, wait_err);
  body += buf;
  body += "Measured span " + std::to_string(span).substr(0, 10) + " s. Ranked by saving:\n";
  std::snprintf(buf, sizeof buf, "%-44s %14s %12s %9s %14s\n", "Hypothesis", "Predicted span", "Saving",
                "Saving %", "Waiting time");
  body += buf;
  for (size_t l : order) {
    const Hypothesis& h = lanes[l];
    const double p = predicted(l), save = span - p;
    nlohmann::json e;
    e["hypothesis"] = h.spec;
    e["callpath"] = h.callpath;
    e["automatic"] = h.automatic;
    e["predicted_span_s"] = p;
    // The same from the earliest MPI_Init exit (POP's window: without the launch skew).
    e["predicted_runtime_s"] = res.measured_pop_span - (res.pop_span[0] - res.pop_span[l]);
    e["saving_s"] = save;
    e["saving_pct"] = span > 0 ? 100.0 * save / span : 0.0;
    e["predicted_wait_s"] = predicted_wait(l);
    wj.push_back(e);
    std::string name = h.spec.size() > 44 ? "..." + h.spec.substr(h.spec.size() - 41) : h.spec;
    std::snprintf(buf, sizeof buf, "%-44s %12.6f s %10.6f s %8.2f%% %12.6f s\n", name.c_str(), p, save,
                  span > 0 ? 100.0 * save / span : 0.0, predicted_wait(l));
    body += buf;
  }
  if (order.empty()) body += "  (no hypotheses: no call path with critical-path time or delay cost)\n";

  // Slack and logical zeroing per automatic call path ([Hollingsworth1994], Fig. 5).
  engine::ReducedMetric lz, slack;
  body += tuning_bounds(lanes, res, global, rep, lz, slack);
  rep.sections.push_back({"What if (trace-based simulation, ranked by saving)", body});
  rep.extra_metrics.push_back(std::move(lz));
  rep.extra_metrics.push_back(std::move(slack));
  (*rep.extra_json)["whatif"] = std::move(wj);

  pop_metrics(res, rep);

  whatif_scalars(res, lanes.size(), span_err, wait_err, rep.scalars);
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
