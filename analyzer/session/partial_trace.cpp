// critpath — analyzer/session/partial_trace.cpp: the consistent prefix of a partial run
// (partial_trace.h).
#include "analyzer/session/partial_trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "libtrace/buffer/codec.h"
#include "libtrace/buffer/trace_reader.h"
#include "libtrace/config/config.h"
#include "libtrace/runtime/log.h"
#include "libtrace/runtime/recorder_control.h"

namespace critpath::analyzer {
namespace {

using trace::Event;
using trace::EventKind;

constexpr size_t kSlotsPerChunk = 16384;

// One traced rank's events, per thread (trace location), while it is being cut.
struct RankEvents {
  LocationTrace* trace = nullptr;
  std::vector<uint16_t> threads;
  std::vector<std::vector<Event>> events;  // per thread, in order
  std::vector<size_t> keep;                // per thread: events [0, keep) stay
  uint64_t recorded = 0;
  std::unordered_map<uint32_t, bool> is_mpi;  // region id -> an MPI call

  bool mpi_region(uint32_t region) {
    auto it = is_mpi.find(region);
    if (it != is_mpi.end()) return it->second;
    const bool mpi = trace->definitions->regions.get(region).kind == defs::RegionKind::kMpi;
    is_mpi.emplace(region, mpi);
    return mpi;
  }
  // Where thread t must end so that it ends neither after `limit` nor inside an MPI call: the
  // ENTER of an MPI call still open at `limit`, or `limit`.
  size_t call_boundary(size_t t, size_t limit) {
    const std::vector<Event>& ev = events[t];
    size_t open_mpi = SIZE_MAX;
    std::vector<std::pair<uint32_t, size_t>> stack;
    for (size_t i = 0; i < limit; ++i) {
      if (ev[i].kind == EventKind::kEnter) {
        stack.push_back({ev[i].region, i});
      } else if (ev[i].kind == EventKind::kExit && !stack.empty()) {
        stack.pop_back();
      }
    }
    for (const auto& [region, at] : stack)
      if (mpi_region(region)) {
        open_mpi = at;
        break;
      }
    return std::min(limit, open_mpi);
  }
};

double to_ns(const RunInfo& run, uint64_t ticks) { return run.conv.to_ns(ticks); }

// The tick of `run`'s clock at CLOCK_MONOTONIC time `ns` (the inverse of run.conv).
uint64_t to_ticks(const RunInfo& run, double ns) {
  const double span_ns = double(run.end.ns) - double(run.begin.ns);
  const double span_ticks = double(run.end.ticks - run.begin.ticks);
  const double per_ns = span_ns > 0 && span_ticks > 0 ? span_ticks / span_ns : 1.0;
  const double d = (ns - double(run.begin.ns)) * per_ns;
  return run.begin.ticks + uint64_t(int64_t(std::llround(d)));
}

bool read_all(int fd, void* out, size_t n) {
  auto* p = static_cast<uint8_t*>(out);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

// Gathers `mine` (a block of values) from every process into `all`, in process order.
template <class T>
Status allgather(const std::vector<T>& mine, const engine::Comm& procs, std::vector<T>& all) {
  std::vector<unsigned char> bytes;
  CRITPATH_FORWARD_IF_ERROR(procs.allgatherv(mine.data(), int(mine.size()), sizeof(T), bytes));
  all.resize(bytes.size() / sizeof(T));
  if (!all.empty()) std::memcpy(all.data(), bytes.data(), all.size() * sizeof(T));
  return Status::kOk;
}

// Collective instances per communicator on one rank: (time, thread, index) of every COLL_END
// and ICOLL_POST among the kept events, in time order.
std::map<uint32_t, std::vector<std::tuple<uint64_t, size_t, size_t>>> instances(const RankEvents& r) {
  std::map<uint32_t, std::vector<std::tuple<uint64_t, size_t, size_t>>> out;
  for (size_t t = 0; t < r.events.size(); ++t)
    for (size_t i = 0; i < r.keep[t]; ++i) {
      const Event& e = r.events[t][i];
      if (e.kind == EventKind::kCollEnd || e.kind == EventKind::kIcollPost)
        out[e.comm].push_back({e.time, t, i});
    }
  for (auto& [comm, v] : out) std::sort(v.begin(), v.end());
  return out;
}

// Step 3 of the header: equal collective counts per communicator, until nothing changes.
Status equalize_collectives(std::vector<RankEvents>& ranks, const engine::Comm& procs) {
  for (int round = 0; round < 64; ++round) {
    std::vector<int> mine;  // per rank: comm, count pairs
    std::vector<std::map<uint32_t, std::vector<std::tuple<uint64_t, size_t, size_t>>>> inst;
    for (RankEvents& r : ranks) {
      inst.push_back(instances(r));
      std::map<uint32_t, int> counts;
      for (const defs::CommDef& c : r.trace->definitions->comms.snapshot()) counts[c.id] = 0;
      for (const auto& [comm, v] : inst.back()) counts[comm] = int(v.size());
      for (const auto& [comm, n] : counts) {
        mine.push_back(int(comm));
        mine.push_back(n);
      }
    }
    std::vector<int> all;
    CRITPATH_FORWARD_IF_ERROR(allgather(mine, procs, all));
    std::map<uint32_t, int> fewest;
    for (size_t i = 0; i + 1 < all.size(); i += 2) {
      const auto comm = uint32_t(all[i]);
      auto it = fewest.find(comm);
      if (it == fewest.end()) fewest[comm] = all[i + 1];
      else it->second = std::min(it->second, all[i + 1]);
    }
    int changed = 0;
    for (size_t k = 0; k < ranks.size(); ++k) {
      RankEvents& r = ranks[k];
      // The instances past `allowed`: each thread ends before its first one, at the ENTER of
      // the MPI call holding it.
      std::vector<size_t> first_excess(r.events.size(), SIZE_MAX);
      for (const auto& [comm, v] : inst[k]) {
        const size_t allowed = size_t(std::max(0, fewest[comm]));
        for (size_t j = allowed; j < v.size(); ++j) {
          const auto& [time, t, index] = v[j];
          first_excess[t] = std::min(first_excess[t], index);
        }
      }
      for (size_t t = 0; t < r.events.size(); ++t) {
        if (first_excess[t] == SIZE_MAX) continue;
        const size_t boundary = std::min(r.call_boundary(t, first_excess[t] + 1), first_excess[t]);
        if (boundary < r.keep[t]) {
          r.keep[t] = boundary;
          changed = 1;
        }
      }
    }
    CRITPATH_FORWARD_IF_ERROR(procs.allreduce(&changed, 1, MPI_INT, MPI_MAX));
    if (!changed) return Status::kOk;
  }
  return Status::kOk;
}

// Step 4: the kept events, open regions closed at `end_ticks`, as a fresh store.
std::unique_ptr<trace::ChunkStore> rebuild(RankEvents& r, uint64_t end_ticks, uint64_t& kept) {
  auto store = std::make_unique<trace::ChunkStore>();
  trace::ChunkCompressor z(config::current().compression_level);
  std::vector<trace::Slot> slots(kSlotsPerChunk + trace::kMaxEventSlots);
  uint64_t lost = 0;  // chunks that could not be compressed or stored
  for (size_t t = 0; t < r.events.size(); ++t) {
    std::vector<Event> ev(r.events[t].begin(), r.events[t].begin() + ptrdiff_t(r.keep[t]));
    std::vector<uint32_t> stack;
    uint64_t last = 0;
    for (const Event& e : ev) {
      if (e.kind == EventKind::kEnter) stack.push_back(e.region);
      else if (e.kind == EventKind::kExit && !stack.empty()) stack.pop_back();
      last = std::max(last, e.time);
    }
    const uint64_t close = std::max(last, end_ticks);
    while (!stack.empty()) {
      Event e;
      e.kind = EventKind::kExit;
      e.region = stack.back();
      e.time = close;
      stack.pop_back();
      ev.push_back(e);
    }
    kept += ev.size();
    uint32_t sequence = 0;
    size_t n = 0;
    auto flush = [&] {
      if (n == 0) return;
      std::vector<uint8_t> chunk;
      if (z.compress(slots.data(), slots.data() + n, r.threads[t], sequence++, chunk) != Status::kOk ||
          store->append(std::move(chunk)) != Status::kOk)
        ++lost;
      n = 0;
    };
    for (const Event& e : ev) {
      n += trace::event_to_slots(e, slots.data() + n);
      if (n >= kSlotsPerChunk) flush();
    }
    flush();
  }
  // The decode of the cut trace then ends early and marks it partial.
  if (lost > 0)
    log::warn("the cut trace lost %llu chunks (compression or memory failed)", (unsigned long long)lost);
  return store;
}

}  // namespace

std::string format_rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

Status merge_tail(const std::string& path, trace::ChunkStore& store) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::kOk;
  std::set<std::pair<uint16_t, uint32_t>> have;
  for (size_t i = 0; i < store.size(); ++i)
    have.insert({store.ref(i).header.location, store.ref(i).header.sequence});
  trace::ChunkCompressor z(config::current().compression_level);
  Status result = Status::kOk;
  for (;;) {
    uint8_t head[runtime::kTailHeaderSize];
    const ssize_t got = ::read(fd, head, 1);
    if (got == 0) break;  // the end
    uint32_t magic = 0, sequence = 0, n = 0;
    uint16_t location = 0;
    if (got != 1 || !read_all(fd, head + 1, sizeof head - 1)) {
      result = Status::kCorrupt;
      break;
    }
    std::memcpy(&magic, head, 4);
    std::memcpy(&location, head + 4, 2);
    std::memcpy(&sequence, head + 8, 4);
    std::memcpy(&n, head + 12, 4);
    if (magic != runtime::kTailMagic || n == 0 || n > (64u << 20) / sizeof(trace::Slot)) {
      result = Status::kCorrupt;
      break;
    }
    std::vector<trace::Slot> slots(n);
    if (!read_all(fd, slots.data(), n * sizeof(trace::Slot))) {
      result = Status::kCorrupt;
      break;
    }
    if (have.count({location, sequence})) continue;  // compressed while the dump ran
    // Whole events only: a thread writing one when the dump ran may have left its head without
    // the extra slots, or slots of no known kind.
    std::vector<Event> events;
    size_t whole = 0;
    while (whole < n && whole + 1 + slots[whole].nextra <= n) {
      const size_t next = whole + 1 + slots[whole].nextra;
      if (trace::slots_to_events(slots.data() + whole, slots.data() + next, events) != Status::kOk) break;
      whole = next;
    }
    if (whole == 0) continue;
    std::vector<uint8_t> chunk;
    if (z.compress(slots.data(), slots.data() + whole, location, sequence, chunk) == Status::kOk &&
        store.append(std::move(chunk)) == Status::kOk)
      have.insert({location, sequence});
  }
  ::close(fd);
  return result;
}

Status cut_to_consistent_prefix(const std::vector<LocationTrace*>& locations,
                                std::vector<std::unique_ptr<trace::ChunkStore>>& cut,
                                const engine::Comm& procs, std::string& summary) {
  summary.clear();
  int partial = 0;
  double t_cut = INFINITY;
  for (const LocationTrace* l : locations)
    if (!l->run.partial.empty()) {
      partial = 1;
      t_cut = std::min(t_cut, to_ns(l->run, l->run.partial_end_ticks));
    }
  CRITPATH_FORWARD_IF_ERROR(procs.allreduce(&partial, 1, MPI_INT, MPI_MAX));
  if (!partial) return Status::kOk;
  double t_global = t_cut;
  CRITPATH_FORWARD_IF_ERROR(procs.allreduce(&t_global, 1, MPI_DOUBLE, MPI_MIN));

  // Step 1 happened at loading; step 2: decode, cut at T and at open MPI calls.
  std::vector<RankEvents> ranks(locations.size());
  for (size_t k = 0; k < locations.size(); ++k) {
    RankEvents& r = ranks[k];
    r.trace = locations[k];
    for (uint16_t thread : r.trace->chunks->locations()) {
      trace::TraceReader reader(*r.trace->chunks, thread);
      reader.seek_begin();
      std::vector<Event> ev;
      Event e;
      while (reader.next(e)) ev.push_back(e);
      r.recorded += ev.size();
      size_t limit = 0;
      while (limit < ev.size() && to_ns(r.trace->run, ev[limit].time) <= t_global) ++limit;
      r.threads.push_back(thread);
      r.events.push_back(std::move(ev));
      r.keep.push_back(limit);
      r.keep.back() = r.call_boundary(r.events.size() - 1, limit);
    }
  }
  CRITPATH_FORWARD_IF_ERROR(equalize_collectives(ranks, procs));

  // Step 4, and what each rank says about itself.
  cut.clear();
  for (size_t k = 0; k < ranks.size(); ++k) {
    RankEvents& r = ranks[k];
    RunInfo& run = r.trace->run;
    const uint64_t end_ticks = to_ticks(run, t_global);
    uint64_t kept = 0;
    cut.push_back(rebuild(r, end_ticks, kept));
    r.trace->chunks = cut.back().get();
    uint64_t in_prefix = 0;
    for (size_t k2 : r.keep) in_prefix += k2;
    const uint64_t left_out = r.recorded - std::min(r.recorded, in_prefix);
    char note[512];
    if (!run.partial.empty()) {
      std::snprintf(note, sizeof note,
                    "partial trace: the rank ended by %s%s; %llu of its %llu recorded "
                    "events are after the consistent prefix and left out",
                    run.partial.c_str(),
                    run.partial_complete ? "" : " (some of its data could not be written)",
                    static_cast<unsigned long long>(left_out), static_cast<unsigned long long>(r.recorded));
    } else {
      std::snprintf(note, sizeof note,
                    "partial run: %llu of the rank's %llu recorded events are after the "
                    "consistent prefix and left out",
                    static_cast<unsigned long long>(left_out), static_cast<unsigned long long>(r.recorded));
    }
    r.trace->notes.emplace_back(note);
    run.end = clock::ClockPair{end_ticks, uint64_t(std::llround(std::max(t_global, double(run.begin.ns))))};
    run.conv = clock::TickConverter(run.timer, run.begin, run.end);
    run.finalize_enter_ticks = end_ticks;
    run.store = cut.back()->stats();
  }
  // The summary: which ranks ended how (reasons gathered as text, one fixed-size slot each).
  constexpr size_t kReason = 96;
  std::vector<char> reasons(std::max<size_t>(1, locations.size()) * kReason, '\0');
  for (size_t k = 0; k < locations.size(); ++k)
    std::strncpy(reasons.data() + k * kReason, locations[k]->run.partial.c_str(), kReason - 1);
  std::vector<char> all;
  CRITPATH_FORWARD_IF_ERROR(allgather(reasons, procs, all));
  bool hosts_rank0 = false;
  for (const LocationTrace* l : locations) hosts_rank0 |= l->run.rank == 0;
  if (!hosts_rank0) return Status::kOk;
  std::map<std::string, std::vector<int>> by_reason;
  const int traced = int(all.size() / kReason);
  for (int r = 0; r < traced; ++r) {
    std::string reason(all.data() + size_t(r) * kReason, strnlen(all.data() + size_t(r) * kReason, kReason));
    if (!reason.empty()) by_reason[reason].push_back(r);
  }
  std::string ended;
  for (const auto& [reason, rs] : by_reason)
    ended += (ended.empty() ? "" : "; ") + reason + " on rank" + (rs.size() > 1 ? "s " : " ") +
             format_rank_list(rs);
  const RunInfo& run0 = locations.front()->run;
  char line[1024];
  std::snprintf(line, sizeof line,
                "partial run: %s. The report covers the consistent prefix, the first "
                "%.3f s after MPI_Init (events after it, and MPI calls unfinished then, are left out)",
                ended.c_str(), (t_global - to_ns(run0, run0.init_enter_ticks)) * 1e-9);
  summary = line;
  return Status::kOk;
}

}  // namespace critpath::analyzer
