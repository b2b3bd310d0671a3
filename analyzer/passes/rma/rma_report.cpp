// critpath — analyzer/passes/rma/rma_report.cpp
#include "analyzer/passes/rma/rma_report.h"

#include <cstdio>

#include "analyzer/engine/metric_store.h"

namespace critpath::analyzer::passes {

Status report_rma(const RmaResult& res, const std::vector<int>& l2g, int n_callpaths,
                  const engine::Group& group, ReportInput& in) {
  engine::MetricStore store{size_t(n_callpaths)};
  const int slot[3] = {store.slot("rma_bytes_put"), store.slot("rma_bytes_get"),
                       store.slot("rma_bytes_accumulated")};
  std::vector<double> sums = {0, 0, 0, double(res.epochs), double(res.bytes_sent)};
  for (size_t n = 0; n < res.bytes_by_node.size() && n < l2g.size(); ++n)
    for (int k = 0; k < 3; ++k) {
      store.add(slot[k], l2g[n], res.bytes_by_node[n][size_t(k)]);
      sums[k] += res.bytes_by_node[n][size_t(k)];
    }
  if (res.any) {
    CRITPATH_FORWARD_IF_ERROR(store.reduce(group, in.extra_metrics, &in.rank_detail, &sums));
  } else {  // no rank has one-sided records: every figure is 0 everywhere, no collective
    store.reduce_zero(group, in.extra_metrics, &in.rank_detail);
  }
  if (!group.is_root()) return Status::kOk;
  in.scalars.set("rma_epochs", sums[3]);
  in.scalars.set("rma_analysis_bytes", sums[4]);
  if (sums[0] + sums[1] + sums[2] + sums[3] > 0) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "@ One-sided       : %.0f B put, %.0f B got, %.0f B accumulated; %.0f PSCW and "
                  "passive-target epochs analysed",
                  sums[0], sums[1], sums[2], sums[3]);
    in.header_lines.push_back(line);
  }
  return Status::kOk;
}

}  // namespace critpath::analyzer::passes
