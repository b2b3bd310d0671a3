// critpath — analyzer/passes/whatif/whatif_report.h
//
// The what-if analysis end to end, after the delay and critical-path analyses:
//
//   rank 0: hypotheses = identity, ideal network, CRITPATH_WHATIF's, and for the top
//           CRITPATH_WHATIF_TOP call paths by critical-path time and by delay cost: balance,
//           zero, slack  --> broadcast
//   every rank: simulate (whatif.h), one replay for all lanes
//   rank 0: the summary.txt sections "What if" and "POP metrics", the header line
//           "@ What-if", report.json whatif[] / pop{} / scalars, metrics slack and
//           logical_zeroing (docs/metrics.md "What-if simulation", docs/report.md)
#pragma once

#include <string>

#include "analyzer/engine/group.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/report_input.h"
#include "analyzer/passes/whatif/whatif.h"

namespace critpath::analyzer::passes {

struct WhatIfOptions {
  std::string hypotheses;  // CRITPATH_WHATIF
  int top = 5;             // CRITPATH_WHATIF_TOP
};

// Collective over `group`. `global` and `report` are read and written on rank 0 only (the
// critical-path and delay metrics must already be in report.extra_metrics there).
Status analyze_whatif(const WhatIfInput& sim, const WhatIfOptions& options, const GlobalProfile& global,
                      const engine::Group& group, ReportInput& report);

}  // namespace critpath::analyzer::passes
