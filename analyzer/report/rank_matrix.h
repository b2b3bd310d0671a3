// critpath — analyzer/report/rank_matrix.h
//
// The call-path x rank matrix of the rank_detail metrics (engine::MetricDecl::rank_detail),
// in its own file beside report.json, which holds only statistics over the ranks per call
// path (metrics.<id>.by_callpath_stats). Written by every analysis rank, never funnelled
// through one rank's memory:
//
//   every rank   its own values (engine::RankDetail, metric after metric, G float64 each)
//                -> one zstd frame
//   every rank   exclusive prefix sum of the frames' sizes -> its offset
//   every rank   pwrite()s its frame at its offset into <dir>/rank_matrix.zst
//   root         <dir>/rank_matrix.json: the metrics, the call paths, the layout
//
// Concatenated zstd frames are one valid zstd stream: `zstd -d rank_matrix.zst` gives rank
// 0's block, then rank 1's, ... (docs/report.md, "rank_matrix.zst"). The output directory
// must be the same directory on every rank (a shared file system), as for the kept trace.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/engine/group.h"
#include "analyzer/engine/metric_store.h"
#include "libtrace/runtime/status.h"

namespace critpath::analyzer {

struct GlobalProfile;

// CRITPATH_RANK_MATRIX=auto writes the matrix up to this many ranks.
inline constexpr int kRankMatrixAutoRanks = 1024;

// Whether the matrix is written for `ranks` ranks under CRITPATH_RANK_MATRIX's `setting`
// ("auto", "true", "false").
bool rank_matrix_wanted(const std::string& setting, int ranks);

// Collective over `group`: writes <dir>/rank_matrix.zst (every rank its own frame of `mine`)
// and, on the root, <dir>/rank_matrix.json naming `profile`'s call paths (root only; nullptr
// elsewhere). On the root `summary` becomes report.json's `rank_matrix` object. kMpiError or
// kIoError on every rank when any rank failed (the root then removes the file).
Status write_rank_matrix(const engine::Group& group, const std::vector<engine::RankDetail>& mine,
                         const std::string& dir, const GlobalProfile* profile, nlohmann::json& summary);

// Collective: on the root, the value of the rank_detail metric `id` at every (call path,
// rank) a PairedTop of `metrics` names (the findings' causing ranks), appended to that
// metric's `cells`; every rank answers for itself from `mine`. `metrics`: the root's reduced
// metrics (ignored elsewhere). Three collectives, cells bounded by pairs x call paths.
Status look_up_cells(const engine::Group& group, const std::vector<engine::RankDetail>& mine,
                     const std::string& id, std::vector<engine::ReducedMetric>& metrics);

// The index file's object (rank_matrix.json): the format, the file, the ranks, the metrics'
// ids and the call paths, in the matrix's order.
nlohmann::json rank_matrix_index(const std::vector<engine::RankDetail>& mine, int ranks,
                                 const GlobalProfile& profile);

}  // namespace critpath::analyzer
