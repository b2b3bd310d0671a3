// critpath — analyzer/passes/delay/delay_report.h: the delay analysis's reduction and its
// summary.txt section "Root causes of waiting time" (top delaying call paths and ranks, and
// per-rank maps over each Cartesian topology the application created).
#pragma once

#include "analyzer/engine/group.h"
#include "analyzer/engine/metric_store.h"
#include "analyzer/engine/profile.h"
#include "analyzer/engine/report_input.h"
#include "analyzer/passes/delay/delay.h"
#include "libtrace/defs/definitions.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer::passes {

// Collective over `group`. On rank 0 appends the metrics, the section, scalars
// (delay_analysed_s, delay_remainder_s, delay_bytes) and notes to `in`. `definitions`: rank
// 0's (the Cartesian communicators it knows).
Status report_delay(const DelayResult& res, const engine::MetricStore& store, const engine::Group& group,
                    const defs::Definitions& definitions, const GlobalProfile& global, ReportInput& in);

}  // namespace critpath::analyzer::passes
