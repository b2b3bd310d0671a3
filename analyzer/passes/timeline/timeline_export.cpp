// critpath — analyzer/passes/timeline/timeline_export.cpp (see timeline_export.h)
#include "analyzer/passes/timeline/timeline_export.h"

#include "analyzer/engine/atomic_file.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace critpath::analyzer {

void SliceRecorder::on_event(const trace::Event& e, double t) {
  if (e.kind == trace::EventKind::kEnter) {
    open_.push_back({e.region, t});
  } else if (e.kind == trace::EventKind::kExit) {
    size_t i = open_.size();
    while (i > 0 && open_[i - 1].first != e.region) --i;
    if (i == 0) return;  // an exit without its enter
    while (open_.size() >= i) {
      const auto [region, begin] = open_.back();
      open_.pop_back();
      if (slices_.size() < cap_) slices_.push_back({loc_, region, begin, t});
      else ++dropped_;
    }
  }
}

namespace {

// A region's name as a JSON string literal, once per region.
class Names {
 public:
  explicit Names(const defs::Definitions& d) : defs_(d) {}
  const std::string& operator()(uint32_t region) {
    auto it = cache_.find(region);
    if (it == cache_.end())
      it = cache_.emplace(region, nlohmann::json(defs_.regions.get(region).name).dump()).first;
    return it->second;
  }

 private:
  const defs::Definitions& defs_;
  std::unordered_map<uint32_t, std::string> cache_;
};

}  // namespace

Status write_timeline(const TimelineInput& t, const engine::Group& group, const std::string& output_dir,
                      ReportInput& in) {
  Names names(*t.definitions);
  std::string o;
  char buf[512];
  uint64_t events = 0, dropped = t.slices ? t.slices->dropped() : 0;
  auto us = [&](double s) { return (s - t.t0) * 1e6; };
  auto room = [&] {
    if (events < t.cap) return ++events, true;
    ++dropped;
    return false;
  };
  if (t.slices)
    for (const auto& s : t.slices->slices()) {
      if (!room()) continue;
      std::snprintf(
          buf, sizeof buf,
          ",\n{\"ph\":\"X\",\"cat\":\"region\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"name\":",
          t.rank, unsigned(s.location), us(s.begin), std::max(0.0, (s.end - s.begin) * 1e6));
      o += buf + names(s.region) + "}";
    }
  const engine::Timeline& tl = *t.timeline;
  for (const passes::WaitRecord& r : t.waits->records) {
    const engine::CallRecord& c = tl.calls[r.call];
    if (r.wait_end > c.enter && room()) {
      std::snprintf(buf, sizeof buf,
                    ",\n{\"ph\":\"X\",\"cat\":\"wait\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                    "\"name\":\"waiting\",\"args\":{\"cause_rank\":%d}}",
                    t.rank, 1000u + c.location, us(c.enter), (r.wait_end - c.enter) * 1e6, r.cause_rank);
      o += buf;
    }
    if (c.exit > r.completion_begin && room()) {
      std::snprintf(buf, sizeof buf,
                    ",\n{\"ph\":\"X\",\"cat\":\"wait\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                    "\"name\":\"waiting for completion\"}",
                    t.rank, 1000u + c.location, us(r.completion_begin), (c.exit - r.completion_begin) * 1e6);
      o += buf;
    }
  }
  // Messages: the receiver knows the send's entry and rank, so it writes both ends.
  for (uint32_t i = 0; i < tl.recvs.size(); ++i) {
    const engine::RecvRecord& r = tl.recvs[i];
    const double ts = t.match->send_enter[i];
    if (std::isnan(ts) || r.complete_call == engine::kNoCall || events + 2 > t.cap) {
      if (!std::isnan(ts)) dropped += 2;
      continue;
    }
    events += 2;
    const unsigned long long id = (static_cast<unsigned long long>(t.rank) << 32) | i;
    const engine::CallRecord& c = tl.calls[r.complete_call];
    std::snprintf(
        buf, sizeof buf,
        ",\n{\"ph\":\"s\",\"cat\":\"msg\",\"name\":\"message\",\"id\":%llu,\"pid\":%d,\"tid\":0,\"ts\":%.3f}"
        ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"msg\",\"name\":\"message\",\"id\":%llu,\"pid\":%d,\"tid\":%u,\"ts\":%.3f}",
        id, r.peer, us(ts), id, t.rank, unsigned(c.location), us(c.enter));
    o += buf;
  }
  uint64_t counts[2] = {events, dropped};
  CRITPATH_FORWARD_IF_ERROR(group.allreduce(counts, 2, engine::ReduceOp::kSum));
  std::vector<char> all;
  std::vector<int> lens, displs;
  CRITPATH_FORWARD_IF_ERROR(group.gather_to_root(o.data(), o.size(), all, lens, displs));
  if (!group.is_root()) return Status::kOk;

  const int P = group.size();
  std::string head =
      "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"critpath\"},\"traceEvents\":[\n";
  head += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(P) +
          ",\"args\":{\"name\":\"critical path\"}}";
  for (int r = 0; r < P; ++r)
    head += ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(r) +
            ",\"args\":{\"name\":\"rank " + std::to_string(r) + "\"}}" +
            ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + std::to_string(r) +
            ",\"args\":{\"sort_index\":" + std::to_string(r + 1) + "}}";
  std::string cp;
  const nlohmann::json* list = nullptr;
  auto it = in.extra_json->find("critical_path");
  if (it != in.extra_json->end() && it->contains("segments") && (*it)["segments"].contains("list"))
    list = &(*it)["segments"]["list"];
  if (list)
    for (const auto& s : *list) {
      const double b = s.value("begin_s", 0.0), e = s.value("end_s", 0.0);
      std::snprintf(
          buf, sizeof buf,
          ",\n{\"ph\":\"X\",\"cat\":\"critical_path\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"dur\":%.3f,"
          "\"args\":{\"rank\":%d},\"name\":",
          P, b * 1e6, std::max(0.0, (e - b) * 1e6), s.value("rank", -1));
      cp += buf + nlohmann::json(s.value("callpath", std::string("?"))).dump() + "}";
    }
  CRITPATH_FORWARD_IF_ERROR(write_file_atomic(output_dir + "/timeline.json",
                                              head + std::string(all.begin(), all.end()) + cp + "\n]}\n"));
  if (counts[1] > 0)
    in.notes.push_back("timeline: " + std::to_string(counts[1]) + " events beyond " +
                       "CRITPATH_TIMELINE_MAX_EVENTS left out of timeline.json (" +
                       std::to_string(counts[0]) + " written)");
  return Status::kOk;
}

}  // namespace critpath::analyzer
