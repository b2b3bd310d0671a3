// critpath — analyzer/engine/header_lines.cpp (see header_lines.h)
#include "analyzer/engine/header_lines.h"

#include <cstdio>

namespace critpath::analyzer::engine {
namespace {

std::string plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string nodes_line(const std::vector<NodeCount>& nodes, size_t shown) {
  std::string line = "@ Nodes           : ";
  size_t named = 0, listed = 0;
  int unnamed_ranks = 0;
  for (const NodeCount& n : nodes) {
    if (n.host.empty()) unnamed_ranks += n.ranks;
    else ++named;
  }
  if (named == 0)
    return line + "unknown (the trace names no host for its " + plural(unnamed_ranks, "rank", "ranks") + ")";
  line += std::to_string(named) + (named == 1 ? " node" : " nodes");
  for (const NodeCount& n : nodes) {
    if (n.host.empty()) continue;
    if (listed++ == shown) {
      line += "; ...";
      break;
    }
    line += std::string(listed == 1 ? ": " : "; ") + n.host + " " + plural(n.ranks, "rank", "ranks");
    if (n.cores > 0) line += " on " + plural(n.cores, "core", "cores");
  }
  if (unnamed_ranks > 0)
    line += "; " + plural(unnamed_ranks, "rank", "ranks") + " on hosts the trace does not name";
  return line;
}

std::string clock_line(const RunInfo& run, double max_error_s, double p2p_violations,
                       double collective_violations) {
  const bool imported = !run.imported_from.empty();
  const char* how = imported                             ? "as the archive's writer left the time stamps"
                    : !run.clock_linear || run.size == 1 ? "no correction"
                    : run.all_on_one_host ? "one host: CLOCK_MONOTONIC shared, no correction needed"
                                          : "linear correction to rank 0";
  char error[64];
  if (imported) std::snprintf(error, sizeof error, "max error unknown");
  else std::snprintf(error, sizeof error, "max error %.1f us", max_error_s * 1e6);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "@ Clock           : %s; %s; clock-condition violations: %.0f p2p, %.0f collective", how,
                error, p2p_violations, collective_violations);
  return buf;
}

std::string replay_line(double messages, double match_bytes, double all_bytes, double unmatched) {
  char buf[512];
  if (messages > 0)
    std::snprintf(
        buf, sizeof buf,
        "@ Replay          : %.0f messages, %.1f B per message to match them, %.1f B per message in all "
        "(collectives, one-sided notes and the delay analysis included), %.0f unmatched",
        messages, match_bytes / messages, all_bytes / messages, unmatched);
  else std::snprintf(buf, sizeof buf, "@ Replay          : 0 messages, %.0f unmatched", unmatched);
  return buf;
}

}  // namespace critpath::analyzer::engine
