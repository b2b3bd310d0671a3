// critpath — analyzer/engine/window.cpp: cutting the run into windows (see window.h).
#include "analyzer/engine/window.h"

#include <algorithm>

#include "analyzer/engine/group.h"
#include "libtrace/buffer/trace_reader.h"

namespace critpath::analyzer::engine {

bool WorldComms::spans_world(uint32_t comm) {
  if (comm == defs::kCommWorld) return true;
  if (comm == defs::kCommSelf) return size_ == 1;
  auto it = known_.find(comm);
  if (it != known_.end()) return it->second;
  defs::CommDef d;
  bool all = defs_.comms.find(comm, d) && d.members.size() == size_t(size_);
  if (all) {
    std::vector<int32_t> m = d.members;
    std::sort(m.begin(), m.end());
    for (int32_t r = 0; r < size_ && all; ++r) all = m[size_t(r)] == r;
  }
  known_.emplace(comm, all);
  return all;
}

bool CandidateTracker::is_mpi(uint32_t region) {
  if (region >= mpi_flat_.size())
    mpi_flat_.resize(std::max<size_t>(size_t(region) + 1, 2 * mpi_flat_.size()), 0);
  uint8_t& f = mpi_flat_[region];
  if (f == 0) f = defs_.regions.get(region).kind == defs::RegionKind::kMpi ? 2 : 1;
  return f == 2;
}

bool CandidateTracker::on_event(const trace::Event& e) {
  using K = trace::EventKind;
  switch (e.kind) {
    case K::kEnter:
      if (is_mpi(e.region)) {
        open_.push_back(e.region);
        ++mpi_calls_;
      }
      return false;
    case K::kExit:
      if (!open_.empty() && open_.back() == e.region) open_.pop_back();
      if (!pending_ || !open_.empty()) return false;
      pending_ = false;
      ++completed_;
      return true;
    case K::kCollEnd: {
      if (open_.empty() || !world_.spans_world(e.comm)) return false;
      const defs::MpiSync sync = defs_.regions.mpi(e.region).sync;
      if (sync != defs::MpiSync::kBarrier && sync != defs::MpiSync::kNxN) return false;
      pending_ = true;
      syncs_ = sync == defs::MpiSync::kBarrier || (e.bytes > 0 && e.bytes_received > 0);
      return false;
    }
    default: return false;
  }
}

void WindowScanner::on_event(const trace::Event& e) {
  using K = trace::EventKind;
  if (out_.ineligible != nullptr) return;
  if (location_ != 0) {
    // Other threads: only whether they called MPI (their records would interleave with the
    // main thread's windows).
    if (e.kind == K::kEnter && tracker_.is_mpi(e.region))
      out_.ineligible = "a thread other than the main one called MPI";
    return;
  }
  ++out_.events;
  if (e.kind >= K::kRmaFirst && e.kind <= K::kRmaLast) {
    out_.ineligible = "the run used one-sided communication";
    return;
  }
  if (tracker_.on_event(e)) {
    out_.at.push_back(out_.events);
    out_.busy.push_back(pending_.empty() && tracker_.synchronized() ? 0 : 1);
    out_.net.push_back(net_);
    return;
  }
  switch (e.kind) {
    case K::kSend: ++net_; break;
    case K::kIsend:
      ++net_;
      pending_.insert(e.request);
      break;
    case K::kRecv: --net_; break;
    case K::kIrecv:
      --net_;
      pending_.erase(e.request);
      break;
    case K::kIrecvRequest:
    case K::kIcollPost: pending_.insert(e.request); break;
    case K::kIsendComplete:
    case K::kIcollComplete:
    case K::kRequestCancel: pending_.erase(e.request); break;
    default: break;
  }
}

WindowScan WindowScanner::finish(Status decode) {
  out_.mpi_calls = tracker_.mpi_calls();
  out_.status = decode;
  if (decode != Status::kOk && out_.ineligible == nullptr)
    out_.ineligible = "the trace did not decode completely";
  return std::move(out_);
}

WindowScan scan_windows(const trace::ChunkStore& store, const defs::Definitions& definitions,
                        int world_size) {
  WindowScanner scanner(definitions, world_size);
  Status status = Status::kOk;
  trace::Event e;
  for (uint16_t loc : store.locations()) {
    trace::TraceReader r(store, loc);
    r.seek_begin();
    scanner.begin_location(loc);
    while (r.next(e)) scanner.on_event(e);
    if (r.status() != Status::kOk) status = r.status();
  }
  return scanner.finish(status);
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
    out.why_not = "the ranks recorded different numbers of collectives over all ranks";
    return Status::kOk;
  }
  out.candidates = n;
  if (n == 0) {
    out.why_not = "the run has no barrier or N x N collective over all ranks to cut at";
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
  if (out.cuts.empty())
    out.why_not =
        "no collective over all ranks was a clean cut (messages or requests in flight at every one)";
  return Status::kOk;
}

}  // namespace critpath::analyzer::engine
