// critpath — analyzer/report/findings.h
//
// What summary.txt says first: a few plain sentences, ranked by cost, each naming where ranks
// wait, how much, and which rank's which activity causes it (the delay analysis's costs and
// the critical path), then where the allocation's time goes, and per rank what it suffered
// and what it caused. Formatters over the reduced metrics of ReportInput (rank 0); they never
// compute anything an analysis did not book.
#pragma once

#include <string>
#include <vector>

#include "analyzer/report/report.h"

namespace critpath::analyzer {

// One finding: its sentence and the part of the report that backs it, named as report.json
// names it: "wait_state_stats" (with the wait-state pattern), "critical_path", "whatif",
// "callpaths" or "notes" (a finding the engine leads with, such as oversubscription, has its
// note). report.html links each finding to the section showing that part.
struct Finding {
  std::string text;
  std::string section;
  std::string pattern;  // a wait finding's pattern (metric id); "" otherwise
  bool cause = false;   // names the rank causing the waits: the delay costs back it too
};

// At most `max` findings, the costliest first (wait states by call path, with their causes;
// the critical path's largest call path; hints such as an undivided `main`). summary.txt
// numbers them from 1, report.json lists them in this order (`findings`).
std::vector<Finding> build_findings(const ReportInput& in, size_t max = 10);

// "Where the time goes": computation, MPI and waiting as shares of the allocation
// (ranks x wall time). Lines ending in '\n'.
std::string where_time_goes(const ReportInput& in);

// Per rank: time, MPI, waiting suffered, delay cost caused (short-/long-term), critical-path
// time. At most `max_rows` ranks (the ones that suffer or cause most), with a count of the rest.
std::string rank_causes_table(const ReportInput& in, size_t max_rows = 32);

}  // namespace critpath::analyzer
