// critpath — analyzer/engine/pass_info.h
//
// A pass's row in the pass list (analyzer/passes/pass_list.cpp): its name, the passes whose
// results it reads, its metrics and its scalars. The engine reads the rows (needs, the
// declarations' registry in metric_store.h, docs/metrics.md's tables) without depending on the
// passes: the passes module hands it the list at load time (set_pass_table), as a function
// that makes it on first use.
#pragma once

#include <vector>

#include "analyzer/engine/metric_store.h"

namespace critpath::analyzer {

struct PassInfo {
  const char* name;
  std::vector<const char*> needs;  // names of the passes whose results it reads
  std::vector<engine::MetricDecl> metrics;
  std::vector<engine::ScalarDecl> scalars;  // report.json `scalars` it sets
};

namespace engine {

using PassTable = const std::vector<PassInfo>& (*)();
// Installs the pass list (passes/pass_list.cpp does, at load); returns true.
bool set_pass_table(PassTable table);
// The pass list's rows; none before set_pass_table.
const std::vector<PassInfo>& pass_table();
// The row of pass `name`; nullptr when none.
const PassInfo* find_pass(const char* name);

}  // namespace engine
}  // namespace critpath::analyzer
