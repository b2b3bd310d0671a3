// critpath — analyzer/report/hatchet.cpp (see hatchet.h)
#include "analyzer/report/hatchet.h"

#include <vector>

namespace critpath::analyzer {

nlohmann::json render_hatchet(const ReportInput& in) {
  using nlohmann::json;
  const GlobalProfile& p = *in.profile;
  const size_t G = p.callpaths.size();
  std::vector<std::vector<size_t>> children(G);
  std::vector<size_t> roots;
  for (size_t g = 0; g < G; ++g) {
    const int32_t parent = p.callpaths[g].parent;
    if (parent >= 0 && size_t(parent) < G) children[size_t(parent)].push_back(g);
    else roots.push_back(g);
  }
  auto type_of = [](defs::RegionKind k) {
    switch (k) {
      case defs::RegionKind::kMpi: return "mpi";
      case defs::RegionKind::kUser: return "region";
      case defs::RegionKind::kCallsite: return "callsite";
      case defs::RegionKind::kFunction:
      case defs::RegionKind::kArtificial: break;
    }
    return "function";
  };
  // Nodes built bottom-up: a call path's parent always precedes it (profile.h), so walking
  // the ids backwards finishes every child before its parent.
  std::vector<json> node(G);
  for (size_t i = G; i-- > 0;) {
    const GlobalCallpath& c = p.callpaths[i];
    json m;
    m["time (inc)"] = c.sum[kColInclusive];
    m["time"] = c.sum[kColExclusive];
    m["visits"] = c.sum[kColVisits];
    m["mpi_time"] = c.sum[kColMpi];
    m["bytes_sent"] = c.sum[kColBytesSent];
    m["bytes_received"] = c.sum[kColBytesReceived];
    m["ranks"] = c.ranks;
    for (const auto& em : in.extra_metrics)
      if (i < em.by_callpath.size()) m[em.id] = em.by_callpath[i];
    json kids = json::array();
    for (size_t k : children[i]) kids.push_back(std::move(node[k]));
    node[i] = {{"frame", {{"name", c.region}, {"type", type_of(c.kind)}}},
               {"metrics", std::move(m)},
               {"children", std::move(kids)}};
  }
  json out = json::array();
  for (size_t r : roots) out.push_back(std::move(node[r]));
  return out;
}

}  // namespace critpath::analyzer
