// critpath — analyzer/report/html.h: report.html, a self-contained page of charts and tables.
//
// Built from the report.json object alone (render_json's result), so the page shows exactly
// what the machine-readable contract holds and can be re-rendered offline from a kept
// report.json. Static SVG and inline CSS, no network and no external fonts: the file must open
// on a cluster's login node. One small inline script makes the tables sortable.
//
// The page opens with the findings (report.json `findings`: summary.txt's, numbered the same,
// <ol class="findings">), each linking to the section that backs it: every section heading
// carries an id (findings, critical-path, impact, per-rank, topologies, parallelism, whatif,
// wait-states, callpaths), the wait-state table's rows "wait-<pattern>", the notes "notes",
// the run facts "run".
//
// Every chart is an <svg> with a stable class (tests/mpi/report/check_html.py counts them):
//   cp-profile   critical-path time per call path, the critical-path imbalance hatched
//   impact       performance impact per call path: work, intra- and inter-partition cost
//   rank-bars    per rank: computation + waiting, and delay cost caused (short + long term)
//   parallelism  fraction of the run with k ranks busy, k = 0..P
// Tables: class "wait-states" and "callpaths" (both "sortable").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace critpath::analyzer {

// The page for one report.json object (schema critpath-report/2). Missing or mistyped
// fields leave their chart empty instead of throwing: a partial report still gets a page.
std::string render_html(const nlohmann::json& report);

}  // namespace critpath::analyzer
