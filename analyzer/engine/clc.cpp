// critpath — analyzer/engine/clc.cpp
#include "analyzer/engine/clc.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace critpath::analyzer::engine {
namespace {

constexpr double kLmin = 1e-6;
constexpr int kMaxPasses = 8;

// Per call, the earliest time its exit may have: from receives it completed and collectives
// it completed.
std::vector<double> exit_bounds(const Timeline& t, const P2pMatch& m, const std::vector<CollSync>& cs) {
  std::vector<double> b(t.calls.size(), -std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < t.recvs.size(); ++i) {
    const RecvRecord& r = t.recvs[i];
    if (r.complete_call == kNoCall || std::isnan(m.send_enter[i])) continue;
    b[r.complete_call] = std::max(b[r.complete_call], m.send_enter[i] + kLmin);
  }
  for (size_t i = 0; i < t.colls.size() && i < cs.size(); ++i) {
    const CollRecord& c = t.colls[i];
    if (c.complete_call == kNoCall) continue;
    const double v = coll_ready(c, cs[i]);  // NaN: no constraint for this rank
    // The latest participant waits for nobody: a bound that is this rank's own entry (what it
    // contributed to the MAXLOC or the scan) is no constraint; a fast last rank may leave a
    // barrier well within l_min.
    const double own = c.call == kNoCall ? std::numeric_limits<double>::quiet_NaN() : t.calls[c.call].enter;
    if (!std::isnan(v) && v != own) b[c.complete_call] = std::max(b[c.complete_call], v + kLmin);
  }
  return b;
}

}  // namespace

uint64_t count_violations(const Timeline& t, const P2pMatch& m, const std::vector<CollSync>& cs) {
  const std::vector<double> b = exit_bounds(t, m, cs);
  uint64_t n = 0;
  // A tiny tolerance: times that meet the bound up to rounding are not violations.
  for (size_t c = 0; c < t.calls.size(); ++c)
    if (t.calls[c].exit + 1e-12 < b[c]) ++n;
  return n;
}

Status apply_clc(Timeline& t, const defs::Definitions& definitions, const Comm& world, P2pMatch& m,
                 std::vector<CollSync>& cs, CollExchangeStats& cstats, ClcStats& out) {
  uint64_t mine = count_violations(t, m, cs), total = 0;
  out.violations_before = mine;
  total = mine;
  CRITPATH_FORWARD_IF_ERROR(world.allreduce(&total, 1, MPI_UINT64_T, MPI_SUM));
  double gamma = 0.99999;
  std::vector<char> moved(t.calls.size() * 2, 0);
  while (total > 0 && out.passes < kMaxPasses) {
    ++out.passes;
    const std::vector<double> bound = exit_bounds(t, m, cs);
    // Forward amortization over enter/exit times in call order.
    double L_prev = -std::numeric_limits<double>::infinity(), t_prev = 0;
    auto advance = [&](double t_orig) {
      double L = t_orig;
      if (L_prev > -std::numeric_limits<double>::infinity())
        L = std::max(L, L_prev + gamma * (t_orig - t_prev));
      return L;
    };
    for (size_t c = 0; c < t.calls.size(); ++c) {
      CallRecord& call = t.calls[c];
      // Each thread's calls are a sequence of their own (Timeline: location after location).
      if (c > 0 && call.location != t.calls[c - 1].location)
        L_prev = -std::numeric_limits<double>::infinity();
      const double e0 = call.enter, x0 = call.exit;
      double e = advance(e0);
      L_prev = e;
      t_prev = e0;
      double x = std::max(advance(x0), bound[c]);
      L_prev = x;
      t_prev = x0;
      if (e != e0) moved[2 * c] = 1;
      if (x != x0) moved[2 * c + 1] = 1;
      out.max_shift_s = std::max({out.max_shift_s, e - e0, x - x0});
      call.enter = e;
      call.exit = x;
    }
    // Shifted sends and collective entries change the other ranks' bounds: exchange again.
    CRITPATH_FORWARD_IF_ERROR(exchange_p2p(t, world, m));
    CRITPATH_FORWARD_IF_ERROR(sync_collectives(t, definitions, world, cs, cstats));
    mine = count_violations(t, m, cs);
    total = mine;
    CRITPATH_FORWARD_IF_ERROR(world.allreduce(&total, 1, MPI_UINT64_T, MPI_SUM));
    gamma = out.passes == 1 ? 0.9999 : out.passes == 2 ? 0.999 : gamma * 0.9;
  }
  out.converged = total == 0;
  out.corrected = uint64_t(std::count(moved.begin(), moved.end(), 1));
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
