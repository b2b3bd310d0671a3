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

// At most `max` sentences, the costliest first (wait states by call path, with their causes;
// the critical path's largest call path; hints such as an undivided `main`).
std::vector<std::string> build_findings(const ReportInput& in, size_t max = 10);

// "Where the time goes": computation, MPI and waiting as shares of the allocation
// (ranks x wall time). Lines ending in '\n'.
std::string where_time_goes(const ReportInput& in);

// Per rank: time, MPI, waiting suffered, delay cost caused (short-/long-term), critical-path
// time. At most `max_rows` ranks (the ones that suffer or cause most), with a count of the rest.
std::string rank_causes_table(const ReportInput& in, size_t max_rows = 32);

}  // namespace critpath::analyzer
