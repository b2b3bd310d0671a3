// critpath — analyzer/passes/pass_list.h
//
// The explicit list of the analysis passes, with what each declares: its name, the passes whose
// results it reads (engine/results.h: a pass publishes its results under keys named as the
// pass), its metrics and its scalars (engine/metric_store.h). The engine reduces the passes in the list's
// order (the report's sections follow it) and analyses them in the order of their needs: a
// pass after those it needs, which must run too; before reducing a pass it checks that the
// results it needs are there. Adding an analysis means one folder under analyzer/passes/ and
// one row in pass_list.cpp.
//
// Needs no MPI: unit tests and the docs generator read the list.
#pragma once

#include <vector>

#include "analyzer/engine/pass_info.h"

namespace critpath::analyzer {

namespace passes {

// The rows, made on first use; the engine reads them through engine::pass_table() (this module
// installs the list at load).
const std::vector<PassInfo>& pass_list();

// Each pass folder's metric declarations (passes/<name>/<name>_metrics.cpp).
std::vector<engine::MetricDecl> wait_state_metric_decls();
std::vector<engine::MetricDecl> critical_path_metric_decls();
std::vector<engine::MetricDecl> delay_metric_decls();
// The one-sided wait-state patterns (WaitPattern kRma*, in that order), then all rma metrics.
std::vector<engine::MetricDecl> rma_pattern_decls();
std::vector<engine::MetricDecl> rma_metric_decls();
std::vector<engine::MetricDecl> whatif_metric_decls();
// Their scalars (the same files).
std::vector<engine::ScalarDecl> critical_path_scalar_decls();
std::vector<engine::ScalarDecl> delay_scalar_decls();
std::vector<engine::ScalarDecl> rma_scalar_decls();
std::vector<engine::ScalarDecl> whatif_scalar_decls();

}  // namespace passes
}  // namespace critpath::analyzer
