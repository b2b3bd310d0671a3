// critpath — analyzer/engine/window.cpp: cutting the run into windows (see window.h).
#include "analyzer/engine/window.h"

#include <algorithm>
#include <unordered_set>

#include "analyzer/engine/group.h"
#include "libtrace/buffer/trace_reader.h"

namespace critpath::analyzer::engine {

bool is_window_candidate(const trace::Event& e, const defs::Definitions& definitions) {
  if (e.kind != trace::EventKind::kCollEnd || e.comm != defs::kCommWorld) return false;
  const defs::MpiSync sync = definitions.regions.mpi(e.region).sync;
  return sync == defs::MpiSync::kBarrier || sync == defs::MpiSync::kNxN;
}

bool window_candidate_synchronizes(const trace::Event& e, const defs::Definitions& definitions) {
  return definitions.regions.mpi(e.region).sync == defs::MpiSync::kBarrier ||
         (e.bytes > 0 && e.bytes_received > 0);
}

WindowScan scan_windows(const trace::ChunkStore& store, const defs::Definitions& definitions) {
  using K = trace::EventKind;
  WindowScan out;
  std::vector<uint8_t> mpi_flat;  // region -> 0 unknown, 1 not MPI, 2 MPI
  auto is_mpi = [&](uint32_t region) {
    if (region >= mpi_flat.size()) mpi_flat.resize(std::max<size_t>(region + 1, 2 * mpi_flat.size()), 0);
    uint8_t& f = mpi_flat[region];
    if (f == 0) f = definitions.regions.get(region).kind == defs::RegionKind::kMpi ? 2 : 1;
    return f == 2;
  };
  for (uint16_t loc : store.locations()) {
    trace::TraceReader r(store, loc);
    r.seek_begin();
    const trace::DecodedChunk* chunk = nullptr;
    size_t first = 0;
    std::vector<uint32_t> open;  // open MPI calls (regions), as TimelineBuilder keeps them
    std::unordered_set<uint64_t> pending;  // nonblocking requests posted, not yet completed
    int64_t net = 0;
    bool cut_pending = false, cut_syncs = false;
    trace::Event e;
    while (r.next_chunk(chunk, first)) {
      for (size_t i = first; i < chunk->size(); ++i) {
        const trace::CompactEvent& c = chunk->events[i];
        if (loc != 0) {
          // Other threads: only whether they called MPI (their records would interleave with
          // the main thread's windows).
          if (c.kind == K::kEnter && is_mpi(c.wide ? chunk->wide[c.ref].region : c.ref)) {
            out.ineligible = "a thread other than the main one called MPI";
            return out;
          }
          continue;
        }
        ++out.events;
        if (c.kind >= K::kRmaFirst && c.kind <= K::kRmaLast) {
          out.ineligible = "the run used one-sided communication";
          return out;
        }
        switch (c.kind) {
          case K::kEnter: {
            const uint32_t region = c.wide ? chunk->wide[c.ref].region : c.ref;
            if (is_mpi(region)) open.push_back(region);
            break;
          }
          case K::kExit: {
            const uint32_t region = c.wide ? chunk->wide[c.ref].region : c.ref;
            if (!open.empty() && open.back() == region) open.pop_back();
            if (cut_pending && open.empty()) {
              cut_pending = false;
              out.at.push_back(out.events);
              out.busy.push_back(pending.empty() && cut_syncs ? 0 : 1);
              out.net.push_back(net);
            }
            break;
          }
          case K::kSend:
            ++net;
            break;
          case K::kIsend:
            ++net;
            chunk->get(i, e);
            pending.insert(e.request);
            break;
          case K::kRecv:
            --net;
            break;
          case K::kIrecv:
            --net;
            chunk->get(i, e);
            pending.erase(e.request);
            break;
          case K::kIrecvRequest:
          case K::kIcollPost:
            chunk->get(i, e);
            pending.insert(e.request);
            break;
          case K::kIsendComplete:
          case K::kIcollComplete:
          case K::kRequestCancel:
            chunk->get(i, e);
            pending.erase(e.request);
            break;
          case K::kCollEnd:
            chunk->get(i, e);
            if (!open.empty() && is_window_candidate(e, definitions)) {
              cut_pending = true;
              cut_syncs = window_candidate_synchronizes(e, definitions);
            }
            break;
          default:
            break;
        }
      }
    }
    if (r.status() != Status::kOk) {
      out.status = r.status();
      out.ineligible = "the trace did not decode completely";
      return out;
    }
  }
  return out;
}

std::vector<uint64_t> choose_cuts(const std::vector<double>& span, const std::vector<uint8_t>& ok,
                                  double target) {
  std::vector<uint64_t> cuts;
  double acc = 0;
  for (size_t k = 0; k < span.size() && k < ok.size(); ++k) {
    acc += span[k];
    if (ok[k] && acc >= target) {
      cuts.push_back(k);
      acc = 0;
    }
  }
  return cuts;
}

Status plan_windows(const WindowScan& mine, const Group& group, double target_events, WindowPlan& out) {
  out = WindowPlan{};
  // Eligibility and the number of candidates, agreed.
  uint64_t g[3] = {mine.ineligible ? 1u : 0u, mine.at.size(), ~uint64_t(mine.at.size())};
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(g, 3, ReduceOp::kMax));
  const uint64_t n = mine.at.size(), lo = ~g[2];
  if (g[0] != 0) {
    out.why_not = mine.ineligible ? mine.ineligible : "another rank's trace cannot be cut (see its notes)";
    // Every rank gets a reason; a rank that can be cut names the others'.
    return Status::kOk;
  }
  if (g[1] != lo) {
    out.why_not = "the ranks recorded different numbers of MPI_COMM_WORLD collectives";
    return Status::kOk;
  }
  out.candidates = n;
  if (n == 0) {
    out.why_not = "the run has no MPI_COMM_WORLD barrier or N x N collective to cut at";
    return Status::kOk;
  }
  // At most 2^20 candidates take part (8 MiB per reduction): every s-th, the spans of the
  // skipped ones added to the next considered one.
  const uint64_t s = (n + (uint64_t(1) << 20) - 1) >> 20;
  const size_t m = size_t(n / s);  // considered: s - 1, 2s - 1, ...
  std::vector<double> maxes(2 * m), sums(m);
  for (size_t j = 0; j < m; ++j) {
    const uint64_t k = (j + 1) * s - 1;
    const uint64_t before = j == 0 ? 0 : mine.at[size_t(k - s)];
    maxes[j] = double(mine.at[size_t(k)] - before);
    maxes[m + j] = mine.busy[size_t(k)];
    sums[j] = double(mine.net[size_t(k)]);
  }
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(maxes.data(), maxes.size(), ReduceOp::kMax));
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(sums.data(), sums.size(), ReduceOp::kSum));
  std::vector<double> span(maxes.begin(), maxes.begin() + long(m));
  std::vector<uint8_t> ok(m);
  for (size_t j = 0; j < m; ++j) ok[j] = maxes[m + j] == 0 && sums[j] == 0 ? 1 : 0;
  for (uint64_t j : choose_cuts(span, ok, target_events)) out.cuts.push_back((j + 1) * s - 1);
  // The largest window, bounded above by the sums of the per-candidate maxima.
  double acc = 0;
  size_t c = 0;
  for (size_t j = 0; j < m; ++j) {
    acc += span[j];
    if (c < out.cuts.size() && out.cuts[c] == (j + 1) * s - 1) {
      out.largest_window = std::max(out.largest_window, acc);
      acc = 0;
      ++c;
    }
  }
  // The tail after the last considered candidate: at most the rest of the largest trace.
  double events = double(mine.events - (mine.at.empty() ? 0 : mine.at[size_t(m * s - 1)]));
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(&events, 1, ReduceOp::kMax));
  out.largest_window = std::max(out.largest_window, acc + events);
  if (out.cuts.empty()) out.why_not = "no MPI_COMM_WORLD collective was a clean cut (messages or requests in flight at every one)";
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
