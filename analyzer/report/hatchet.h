// critpath — analyzer/report/hatchet.h: the call tree with every metric, as Hatchet's literal
// JSON (`calltree.hatchet.json`), for scripted comparisons across runs:
//
//   import hatchet as ht, json
//   gf = ht.GraphFrame.from_literal(json.load(open("calltree.hatchet.json")))
//
// A list of root nodes; each node {"frame": {"name", "type"}, "metrics": {...},
// "children": [...]}. Metrics are summed over ranks: "time (inc)" and "time" (inclusive and
// exclusive seconds), "visits", "mpi_time", bytes sent/received, and every metric of
// report.json's `metrics` under its id (wait states, delay costs, critical path, ...).
#pragma once

#include <nlohmann/json.hpp>

#include "analyzer/report/report.h"

namespace critpath::analyzer {

nlohmann::json render_hatchet(const ReportInput& in);

}  // namespace critpath::analyzer
