// critpath — analyzer/engine/timeline.cpp
#include "analyzer/engine/timeline.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "analyzer/engine/big_memory.h"
#include "analyzer/engine/global_time.h"
#include "libtrace/defs/definitions.h"

namespace critpath::analyzer::engine {

CollKind coll_kind(defs::MpiSync sync) {
  switch (sync) {
    case defs::MpiSync::kBarrier: return CollKind::kBarrier;
    case defs::MpiSync::kNxN: return CollKind::kNxN;
    case defs::MpiSync::kOneToN: return CollKind::kOneToN;
    case defs::MpiSync::kNToOne: return CollKind::kNToOne;
    case defs::MpiSync::kScan: return CollKind::kScan;
    case defs::MpiSync::kNone:
    case defs::MpiSync::kOther: break;
  }
  return CollKind::kOther;
}

CollFlow coll_flow(const char* mpi_name) {
  if (!mpi_name) return CollFlow::kEvery;
  const std::string_view n(mpi_name);
  if (n.find("eighbor_") != n.npos) return CollFlow::kNeighbor;
  if (n.find("lltoallv") != n.npos || n.find("lltoallw") != n.npos) return CollFlow::kPairwise;
  return CollFlow::kEvery;
}

void TimelineBuilder::reserve(uint64_t events) {
  reserve_big(t_.calls, size_t(events / 2));
  if (gaps_on_) {
    reserve_big(t_.gap_begin, size_t(events / 2 + 1));
    reserve_big(t_.gaps, size_t(events / 3));
  }
  reserve_big(t_.sends, size_t(events / 3));
  reserve_big(t_.recvs, size_t(events / 3));
}

TimelineBuilder::TimelineBuilder(std::function<double(uint64_t)> to_global, int32_t my_world_rank,
                                 const defs::Definitions& definitions)
    : to_global_(std::move(to_global)), defs_(definitions), me_(my_world_rank) {}

TimelineBuilder::TimelineBuilder(const GlobalTime& time, int32_t my_world_rank,
                                 const defs::Definitions& definitions)
    : to_global_([t = &time](uint64_t ticks) { return t->seconds(ticks); }), time_(&time), defs_(definitions),
      me_(my_world_rank) {}

uint8_t TimelineBuilder::region_class_slow(uint32_t region) {
  // Region ids are dense (libtrace/defs), so a flat table answers (region_class), with a map
  // for outliers. Entries: 0 not looked up yet, else the class.
  const auto classify = [&] {
    if (region > UINT16_MAX) return uint8_t(kNotMpi);
    const defs::RegionDef def = defs_.regions.get(region);
    if (def.kind != defs::RegionKind::kMpi) return uint8_t(kNotMpi);
    if (def.mpi.lifecycle == defs::MpiLifecycle::kInit) return uint8_t(kMpiInit);
    if (def.mpi.lifecycle == defs::MpiLifecycle::kFinalize) return uint8_t(kMpiFinalize);
    return def.name == "MPI_Probe" || def.name == "MPI_Mprobe" ? uint8_t(kBlockingProbe) : uint8_t(kMpi);
  };
  constexpr uint32_t kFlatRegions = 1u << 20;
  if (region < kFlatRegions) {
    if (region >= mpi_flat_.size())
      mpi_flat_.resize(std::max<size_t>(size_t(region) + 1, 2 * mpi_flat_.size()));
    uint8_t& f = mpi_flat_[region];
    if (f == 0) f = classify();
    return f;
  }
  auto it = mpi_region_.find(region);
  if (it == mpi_region_.end()) it = mpi_region_.emplace(region, classify()).first;
  return it->second;
}

int32_t TimelineBuilder::world_rank_slow(uint32_t comm, int32_t peer) {
  if (comm == defs::kCommSelf) return peer == 0 ? me_ : -1;
  auto it = peers_.find(comm);
  if (it == peers_.end()) it = peers_.emplace(comm, defs::p2p_peers(defs_.comms, comm)).first;
  const std::vector<int32_t>& peers = it->second;
  if (peer < 0 || size_t(peer) >= peers.size()) {
    ++t_.unresolved_peers;
    return -1;
  }
  return peers[size_t(peer)];
}

void TimelineBuilder::begin_location(uint16_t location) {
  clear_open();
  probe_call_ = probe_for_open_ = kNoCall;
  location_ = location;
  gap_here_ = gaps_on_ && location == 0;
  location_has_mpi_ = false;
}

void TimelineBuilder::on_event(const trace::Event& e, int32_t node) {
  using K = trace::EventKind;
  // An ENTER's or EXIT's gap tick is on_enter's or on_exit's (one that opens or closes a call
  // ticks as the call's bounds).
  if (e.kind != K::kEnter && e.kind != K::kExit) gap_tick_outside(e.time);
  const uint32_t cur = open_top_;
  switch (e.kind) {
    case K::kEnter: on_enter(e.time, e.region, node); break;
    case K::kExit: on_exit(e.time, e.region); break;
    case K::kSend:
    case K::kIsend: add_send(e, cur); break;
    case K::kIsendComplete: {
      auto it = isend_by_req_.find(e.request);
      if (it != isend_by_req_.end()) {
        t_.sends[it->second].complete_call = cur;
        isend_by_req_.erase(it);
      }
      break;
    }
    case K::kRecv: add_recv(e, cur); break;
    case K::kIrecvRequest:
      irecv_post_[e.request] = {cur, post_seq_++};
      probe_for_open_ = kNoCall;
      break;
    case K::kIrecv: add_irecv(e, cur); break;
    case K::kRequestCancel:
      irecv_post_.erase(e.request);
      isend_by_req_.erase(e.request);
      icoll_by_req_.erase(e.request);
      break;
    case K::kCollEnd:
    case K::kIcollPost: add_coll(e, cur); break;
    case K::kIcollComplete: {
      auto it = icoll_by_req_.find(e.request);
      if (it != icoll_by_req_.end()) {
        t_.colls[it->second].complete_call = cur;
        icoll_by_req_.erase(it);
      }
      break;
    }
    default:
      if (e.kind >= K::kRmaFirst && e.kind <= K::kRmaLast) on_rma(e, cur);
      break;
  }
  prev_node_ = node;  // active after this event: the next gap_tick books to it
}

namespace {

// A call's raw tick time, as open_call() and close_call() hold it in the bits of a double.
uint64_t held_ticks(double d) {
  uint64_t ticks;
  std::memcpy(&ticks, &d, sizeof ticks);
  return ticks;
}

}  // namespace

void TimelineBuilder::first_mpi_call() {
  location_has_mpi_ = true;
  ++t_.mpi_locations;
}

void TimelineBuilder::close_call_rare(uint32_t idx) {
  if (open_class_ == kMpiInit) t_.init_call = idx;
  if (open_class_ == kMpiFinalize) t_.finalize_call = idx;
  if (open_class_ == kBlockingProbe) probe_call_ = idx;
  if (open_outer_.empty()) {
    clear_open();
    return;
  }
  // The call it was nested in is the open one again.
  open_top_ = open_outer_.back();
  open_outer_.pop_back();
  open_region_ = t_.calls[open_top_].region;
  open_class_ = region_class(open_region_);
}

void TimelineBuilder::add_send(const trace::Event& e, uint32_t cur) {
  using K = trace::EventKind;
  const bool isend = e.kind == K::kIsend;
  if (append_send(e, cur, isend ? kNoCall : cur) && isend) isend_by_req_[e.request] = uint32_t(nsends_ - 1);
}

void TimelineBuilder::add_irecv(const trace::Event& e, uint32_t cur) {
  RecvRecord r;
  r.peer = world_rank(e.comm, e.peer);
  r.comm = e.comm;
  r.tag = e.tag;
  r.complete_call = cur;
  auto it = irecv_post_.find(e.request);
  if (it != irecv_post_.end()) {
    r.post_call = it->second.first;
    r.post_seq = it->second.second;
    irecv_post_.erase(it);
  } else {
    r.post_call = cur;
    r.post_seq = post_seq_++;
  }
  if (r.peer >= 0) append_counted(t_.recvs, nrecvs_) = r;
}

void TimelineBuilder::add_coll(const trace::Event& e, uint32_t cur) {
  using K = trace::EventKind;
  CollRecord c;
  c.comm = e.comm;
  c.op = e.region;
  auto k = coll_kind_.find(e.region);
  if (k == coll_kind_.end())
    k = coll_kind_
            .emplace(e.region, std::pair{coll_kind(defs_.regions.mpi(e.region).sync),
                                         coll_flow(defs_.regions.stable_name(e.region))})
            .first;
  auto inter = inter_.find(e.comm);
  if (inter == inter_.end()) {
    defs::CommDef d;
    inter = inter_.emplace(e.comm, defs_.comms.find(e.comm, d) && !d.remote.empty()).first;
  }
  c.kind = k->second.first;
  c.flow = inter->second ? CollFlow::kRemote : k->second.second;
  c.some_block_empty = e.root == trace::kRootSomeBlockEmpty;
  c.root = c.some_block_empty ? -1 : e.root;
  c.call = cur;
  c.complete_call = e.kind == K::kCollEnd ? cur : kNoCall;
  c.sent = e.bytes;
  c.received = e.bytes_received;
  t_.colls.push_back(c);
  if (e.kind == K::kIcollPost) icoll_by_req_[e.request] = uint32_t(t_.colls.size() - 1);
}

void TimelineBuilder::on_rma(const trace::Event& e, uint32_t cur) {
  using K = trace::EventKind;
  if (cur == kNoCall) return;  // outside a recorded MPI call: nothing to attribute it to
  RmaRecord r;
  r.call = cur;
  r.win = e.comm;
  r.kind = defs_.regions.mpi(t_.calls[cur].region).rma;
  switch (e.kind) {
    case K::kRmaPut: r.op = RmaRecord::kPut; break;
    case K::kRmaGet: r.op = RmaRecord::kGet; break;
    case K::kRmaAccumulate: r.op = RmaRecord::kAccumulate; break;
    case K::kRmaRequestComplete: return;  // completion of an R* operation: nothing to analyse
    default: break;
  }
  if (r.kind == defs::MpiRma::kNone) return;  // an archive from before the rma semantics
  r.peer = e.kind == K::kRmaWinCreate || e.kind == K::kRmaWinFree ? -1 : e.peer;
  r.lock = e.kind == K::kRmaSync && r.kind == defs::MpiRma::kLock ? uint8_t(e.root) : 0;
  r.bytes = e.bytes;
  t_.rma.push_back(r);
  // Window collectives (creation, fence, free) write one record per call: one instance each.
  if (r.kind == defs::MpiRma::kCreate || r.kind == defs::MpiRma::kFence || r.kind == defs::MpiRma::kFree) {
    CollRecord c;
    c.comm = e.comm;
    c.op = t_.calls[cur].region;
    c.kind = CollKind::kOther;
    c.call = c.complete_call = cur;
    t_.win_colls.push_back(c);
  }
}

// A probe tells which message it saw only to the thread that called it: where receives of
// several threads share a source, communicator and tag, another thread may take that message
// and the receive after the probe another one. Those receives are their own calls again.
void TimelineBuilder::unprobe_shared_receives() {
  std::map<std::tuple<int32_t, uint32_t, int32_t>, int32_t> location_of;  // -1: several threads
  for (const RecvRecord& r : t_.recvs) {
    if (r.complete_call == kNoCall) continue;
    const int32_t loc = t_.calls[r.complete_call].location;
    auto [it, fresh] = location_of.emplace(std::make_tuple(r.peer, r.comm, r.tag), loc);
    if (!fresh && it->second != loc) it->second = -1;
  }
  for (const auto& [index, own] : probed_) {
    RecvRecord& r = t_.recvs[index];
    if (location_of[std::make_tuple(r.peer, r.comm, r.tag)] < 0) r.post_call = r.complete_call = own;
  }
}

Timeline TimelineBuilder::take_window() {
  probe_call_ = probe_for_open_ = kNoCall;
  isend_by_req_.clear();
  irecv_post_.clear();
  icoll_by_req_.clear();
  clear_open();
  Timeline out = finish();
  t_ = Timeline{};
  t_.mpi_locations = out.mpi_locations;
  return out;
}

Timeline TimelineBuilder::finish(const std::vector<int32_t>& node_remap) {
  // The default records append_counted made ahead go.
  t_.calls.resize(ncalls_);
  t_.sends.resize(nsends_);
  t_.recvs.resize(nrecvs_);
  t_.gap_begin.resize(ngap_begin_);
  t_.gaps.resize(ngaps_);
  ncalls_ = nsends_ = nrecvs_ = ngap_begin_ = ngaps_ = 0;
  if (gaps_on_) t_.gap_begin.push_back(uint32_t(t_.gaps.size()));
  auto convert = [&](auto&& to_global) {
    for (CallRecord& c : t_.calls) {
      const uint64_t enter = held_ticks(c.enter), exit = held_ticks(c.exit);
      c.enter = to_global(enter);
      c.exit = exit == enter ? c.enter : to_global(exit);
      if (c.location != 0 && c.node >= 0 && size_t(c.node) < node_remap.size())
        c.node = node_remap[size_t(c.node)];
    }
  };
  if (time_) convert([t = time_](uint64_t ticks) { return t->seconds(ticks); });
  else convert(to_global_);
  // A send request never completed (e.g. MPI_Request_free) completes "at its post".
  for (auto& s : t_.sends)
    if (s.complete_call == kNoCall) s.complete_call = s.call;
  for (auto& c : t_.colls)
    if (c.complete_call == kNoCall) c.complete_call = c.call;
  if (t_.mpi_locations > 1 && !probed_.empty()) unprobe_shared_receives();
  probed_.clear();
  if (t_.mpi_locations > 1) {
    // Several threads called MPI: their records came location after location; put them in
    // time order (stable: within one location, call order is time order already).
    auto enter = [&](uint32_t call) { return call == kNoCall ? 0.0 : t_.calls[call].enter; };
    std::stable_sort(t_.sends.begin(), t_.sends.end(),
                     [&](const SendRecord& a, const SendRecord& b) { return enter(a.call) < enter(b.call); });
    std::stable_sort(t_.colls.begin(), t_.colls.end(),
                     [&](const CollRecord& a, const CollRecord& b) { return enter(a.call) < enter(b.call); });
    std::stable_sort(t_.win_colls.begin(), t_.win_colls.end(),
                     [&](const CollRecord& a, const CollRecord& b) { return enter(a.call) < enter(b.call); });
    std::stable_sort(t_.rma.begin(), t_.rma.end(),
                     [&](const RmaRecord& a, const RmaRecord& b) { return enter(a.call) < enter(b.call); });
    std::vector<uint32_t> order(t_.recvs.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const double ea = enter(t_.recvs[a].post_call), eb = enter(t_.recvs[b].post_call);
      return ea < eb || (ea == eb && t_.recvs[a].post_seq < t_.recvs[b].post_seq);
    });
    for (uint32_t k = 0; k < order.size(); ++k) t_.recvs[order[k]].post_seq = k;
  }
  return std::move(t_);
}

}  // namespace critpath::analyzer::engine
