// critpath — analyzer/passes/rma/rma_report.h: the one-sided pass's byte metrics, scalars and
// summary lines (the patterns themselves are reported with the other wait states).
#pragma once

#include <vector>

#include "analyzer/engine/group.h"
#include "analyzer/engine/report_input.h"
#include "analyzer/passes/rma/rma.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::passes {

// Collective over `group`. `l2g`: local call-path node -> global call path.
Status report_rma(const RmaResult& res, const std::vector<int>& l2g, int n_callpaths,
                  const engine::Group& group, ReportInput& in);

}  // namespace critpath::analyzer::passes
