// critpath — analyzer/profile/profile.cpp: call-tree pass and cross-rank unification.
#include "analyzer/engine/profile.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>
#include <unordered_map>

#include "analyzer/engine/callpath_union.h"
#include "analyzer/engine/gather.h"
#include "analyzer/engine/timeline.h"
#include "libtrace/buffer/codec_stream.h"

namespace critpath::analyzer {
namespace {

struct Frame {
  int32_t node;
  uint32_t region;
  uint64_t enter;
  uint64_t child_ticks;
  bool alias;                 // an instrumented `main` entered directly under the root: same node
  bool callsite;              // a call-site node (CALLSITE event) wrapping the MPI call above it
  bool has_counters = false;  // COUNTERS followed its ENTER
};

// A frame's counter state, on a stack parallel to the frames (kept only when the trace
// carries counters: most traces do not, and the frames stay small).
struct CounterFrame {
  std::array<uint64_t, trace::kMaxCounters> at_enter{};
  std::array<double, trace::kMaxCounters> child{};
};

// Child lookup for the call tree: (parent, region) -> node, an open-addressing table
// (linear probing, power-of-two size, at most half full), in front of which every parent
// remembers its last child (a loop enters the same children over and over).
class ChildIndex {
 public:
  ChildIndex() { rehash(64); }

  // The child of `parent` for `region`, or -1.
  // Per parent the two children entered last answer without hashing (a loop alternating two
  // calls, a send and a receive, finds both there).
  [[gnu::always_inline]] int32_t find(int32_t parent, uint32_t region) {
    if (size_t(parent) < last_.size()) {
      const Last& l = last_[size_t(parent)];
      if (l.region[0] == region && l.node[0] >= 0) return l.node[0];
      if (l.region[1] == region && l.node[1] >= 0) return l.node[1];
    }
    return find_slow(parent, region);
  }
  [[gnu::noinline]] int32_t find_slow(int32_t parent, uint32_t region) {
    const uint64_t key = make_key(parent, region);
    for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.node < 0) return -1;
      if (s.key == key) {
        remember(parent, region, s.node);
        return s.node;
      }
    }
  }

  void insert(int32_t parent, uint32_t region, int32_t node) {
    if (2 * (used_ + 1) > slots_.size()) rehash(2 * slots_.size());
    place(make_key(parent, region), node);
    ++used_;
    remember(parent, region, node);
  }

 private:
  struct Slot {
    uint64_t key = 0;
    int32_t node = -1;
  };
  struct Last {  // [0] the child entered last, [1] the one before
    uint32_t region[2] = {0, 0};
    int32_t node[2] = {-1, -1};
  };
  static uint64_t make_key(int32_t parent, uint32_t region) {
    return (uint64_t(uint32_t(parent)) << 32) | region;
  }
  static size_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return size_t(k);
  }
  void place(uint64_t key, int32_t node) {
    size_t i = hash(key) & mask_;
    while (slots_[i].node >= 0) i = (i + 1) & mask_;
    slots_[i].key = key;
    slots_[i].node = node;
  }
  void rehash(size_t n) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    for (const Slot& s : old)
      if (s.node >= 0) place(s.key, s.node);
  }
  void remember(int32_t parent, uint32_t region, int32_t node) {
    if (parent < 0) return;
    if (size_t(parent) >= last_.size()) last_.resize(std::max(size_t(parent) + 1, 2 * last_.size()));
    Last& l = last_[size_t(parent)];
    l.region[1] = l.region[0];
    l.node[1] = l.node[0];
    l.region[0] = region;
    l.node[0] = node;
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
  std::vector<Last> last_;  // by parent node
};

// The frame stacks: storage that only grows, reused slots (push() returns one holding old
// values; the caller sets every field), so pushes never take a reallocation path. Held as
// pointers, not a count: the top is one load, and no store of a 64-bit count (a call node's
// times are 64-bit too) makes the compiler read the count again.
template <class T>
class Stack {
 public:
  T& push() {
    if (end_ == cap_) grow();
    return *end_++;
  }
  void pop_back() { --end_; }
  // Forced inline: an EXIT asks for the top frame twice and GCC kept back() out of line in
  // the decode loop, a call each.
  [[gnu::always_inline]] T& back() { return end_[-1]; }
  [[gnu::always_inline]] const T& back() const { return end_[-1]; }
  T& operator[](size_t i) { return begin_[i]; }
  [[gnu::always_inline]] bool empty() const { return end_ == begin_; }
  size_t size() const { return size_t(end_ - begin_); }

 private:
  [[gnu::noinline]] void grow() {
    const size_t n = size();
    v_.resize(2 * v_.size() + 16);
    begin_ = v_.data();
    end_ = begin_ + n;
    cap_ = begin_ + v_.size();
  }
  std::vector<T> v_;
  T* begin_ = nullptr;
  T* end_ = nullptr;  // one past the top
  T* cap_ = nullptr;
};

class TreeBuilder {
 public:
  TreeBuilder(LocalProfile& p, const defs::RegionTable& regions) : p_(p), regions_(regions) {
    if (p_.nodes.empty()) {
      CallNode root;
      root.region = defs::kRootRegion;
      p_.nodes.push_back(root);
    }
    ncounters_ = p_.counters;
  }

  [[gnu::always_inline]] int32_t child(int32_t parent, uint32_t region) {
    const int32_t found = children_.find(parent, region);
    if (found >= 0) return found;
    return new_child(parent, region);
  }
  [[gnu::noinline]] int32_t new_child(int32_t parent, uint32_t region) {
    CallNode n;
    n.region = region;
    n.parent = parent;
    p_.nodes.push_back(n);
    const int32_t id = int32_t(p_.nodes.size() - 1);
    children_.insert(parent, region, id);
    return id;
  }

  struct RegionFacts {
    bool known = false;
    bool is_main = false;
    defs::RegionKind kind = defs::RegionKind::kUser;
  };
  // Region ids are dense (libtrace/defs): a flat table, with a map for outliers.
  static constexpr uint32_t kFlatRegions = 1u << 20;
  [[gnu::always_inline]] const RegionFacts& facts(uint32_t region) {
    if (region < flat_facts_.size() && flat_facts_[region].known) return flat_facts_[region];
    return facts_slow(region);
  }
  [[gnu::noinline]] const RegionFacts& facts_slow(uint32_t region) {
    if (region < kFlatRegions) {
      if (region >= flat_facts_.size())
        flat_facts_.resize(std::max<size_t>(size_t(region) + 1, 2 * flat_facts_.size()));
      RegionFacts& f = flat_facts_[region];
      if (!f.known) f = load_facts(region);
      return f;
    }
    auto it = facts_.find(region);
    if (it != facts_.end()) return it->second;
    return facts_.emplace(region, load_facts(region)).first->second;
  }
  RegionFacts load_facts(uint32_t region) const {
    const defs::RegionDef d = regions_.get(region);
    return RegionFacts{true, d.name == "main", d.kind};
  }
  bool is_main_function(uint32_t region) { return facts(region).is_main; }

  // Called before every event: a frame popped at the previous EXIT waits for the COUNTERS
  // event that may follow it; any other event means it has none. Without counters no frame
  // waits (pop) and nothing reads enter_pending_ (counters()): the test per event is one.
  [[gnu::always_inline]] void before_event(trace::EventKind kind) {
    if (kind == trace::EventKind::kCounters) return;
    if (ncounters_ != 0) [[unlikely]] {
      enter_pending_ = false;
      if (exit_pending_) {
        exit_pending_ = false;
        close_counters(pending_frame_, pending_counters_, nullptr);
      }
    }
    // Only an ENTER takes a pending call site (a CALLSITE sets the next one after this).
    if (kind != trace::EventKind::kEnter) pending_callsite_ = 0;
  }

  void counters(const trace::Event& e) {
    if (ncounters_ == 0) return;
    if (enter_pending_ && !stack_.empty()) {
      stack_.back().has_counters = true;
      CounterFrame& c = cstack_.back();
      for (size_t k = 0; k < ncounters_; ++k) c.at_enter[k] = e.counters[k];
    } else if (exit_pending_) {
      close_counters(pending_frame_, pending_counters_, e.counters);
    }
    enter_pending_ = exit_pending_ = false;
  }

  void callsite(uint32_t region) { pending_callsite_ = region; }

  // Field by field into the stack's storage: a Frame temporary copied in as a whole made
  // the CPU wait for its narrow stores (store forwarding) on every ENTER.
  [[gnu::always_inline]] void push(int32_t node, uint32_t region, uint64_t t, bool alias, bool callsite) {
    Frame& f = stack_.push();
    f.node = node;
    f.region = region;
    f.enter = t;
    f.child_ticks = 0;
    f.alias = alias;
    f.callsite = callsite;
    f.has_counters = false;
    if (ncounters_ != 0) cstack_.push() = CounterFrame{};
  }

  // Returns the node entered (current_node() after it).
  [[gnu::always_inline]] int32_t enter(uint32_t region, uint64_t t) {
    const uint32_t cs = pending_callsite_;
    pending_callsite_ = 0;
    enter_pending_ = true;
    if (region == defs::kRootRegion && stack_.empty()) {
      p_.nodes[0].visits++;
      push(0, region, t, false, false);
      return 0;
    }
    if (stack_.empty()) {
      // A thread other than the MPI_Init one: hang under the root, whose time then counts
      // this thread's span too (a rank's time is the sum of its threads' times, so that MPI
      // time summed over threads never exceeds it).
      push(0, defs::kRootRegion, t, false, false);
      thread_root_ = true;
    }
    if (stack_.back().node == 0 && is_main_function(region)) {
      push(0, region, t, true, false);
      return 0;
    }
    if (cs != 0 && facts(region).kind == defs::RegionKind::kMpi) {
      const int32_t c = child(stack_.back().node, cs);
      p_.nodes[size_t(c)].visits++;
      push(c, cs, t, false, true);
    }
    const int32_t n = child(stack_.back().node, region);
    p_.nodes[size_t(n)].visits++;
    push(n, region, t, false, false);
    return n;
  }

  // Books a popped frame's counter values. `at_exit` null: the frame has no exit values.
  void close_counters(const Frame& f, const CounterFrame& c, const uint64_t* at_exit) {
    if (ncounters_ == 0) return;
    CounterFrame* parent = cstack_.empty() ? nullptr : &cstack_.back();
    const bool own = f.has_counters && at_exit != nullptr;
    CallNode& n = p_.nodes[size_t(f.node)];
    for (size_t k = 0; k < ncounters_; ++k) {
      const double incl = own ? double(int64_t(at_exit[k] - c.at_enter[k])) : c.child[k];
      if (f.alias) {
        if (own) n.counter_exclusive[k] += incl - c.child[k];
      } else {
        n.counter_inclusive[k] += incl;
        if (own) n.counter_exclusive[k] += incl - c.child[k];
      }
      if (parent) parent->child[k] += incl;
    }
  }

  // Pops the top frame; `may_wait`: its COUNTERS event may follow (the EXIT's own frame).
  [[gnu::always_inline]] void pop(uint64_t t, bool may_wait = false) {
    // Field by field, not a Frame copy (see push: the frame is often only just written).
    const Frame& top = stack_.back();
    const int32_t node = top.node;
    const uint64_t enter = top.enter;
    const uint64_t child_ticks = top.child_ticks;
    const bool alias = top.alias;
    // The whole frame, for the counter bookkeeping below only: popping keeps its storage (Stack
    // never shrinks, and nothing is pushed before it is read), so no copy is made.
    const Frame& f = top;
    stack_.pop_back();
    const uint64_t dur = t >= enter ? t - enter : 0;
    if (alias) {
      if (!stack_.empty()) stack_.back().child_ticks += child_ticks;
    } else {
      CallNode& n = p_.nodes[size_t(node)];
      n.inclusive_ticks += dur;
      n.exclusive_ticks += dur >= child_ticks ? dur - child_ticks : 0;
      if (!stack_.empty()) stack_.back().child_ticks += dur;
    }
    if (ncounters_ == 0) return;  // no counter state: nothing waits, nothing to book
    const CounterFrame c = cstack_.back();
    cstack_.pop_back();
    if (may_wait && f.has_counters) {
      pending_frame_ = f;
      pending_counters_ = c;
      exit_pending_ = true;
    } else {
      close_counters(f, c, nullptr);
    }
  }

  [[gnu::always_inline]] int32_t current_node() const { return stack_.empty() ? -1 : stack_.back().node; }

  // The EXIT of the frame on top (every EXIT of a well-nested trace) inline, in the decode
  // loop; the others out of line. Returns current_node() after it.
  [[gnu::always_inline]] int32_t exit(uint32_t region, uint64_t t) {
    if (!stack_.empty() && stack_.back().region == region) [[likely]] {
      pop(t, /*may_wait=*/true);
      if (!exit_pending_ && !stack_.empty() && stack_.back().callsite) pop(t);
    } else {
      exit_nested(region, t);
    }
    return current_node();
  }
  [[gnu::noinline]] void exit_nested(uint32_t region, uint64_t t) {
    // Close frames until the matching one; an EXIT matching nothing is ignored.
    size_t i = stack_.size();
    while (i > 0 && stack_[i - 1].region != region) --i;
    if (i == 0) {
      p_.unmatched_exits++;
      return;
    }
    for (size_t j = i; j < stack_.size(); ++j) {
      // Functions still active at MPI_Finalize are closed by the root's EXIT: expected.
      if (region == defs::kRootRegion && facts(stack_[j].region).kind == defs::RegionKind::kFunction)
        p_.functions_open_at_finalize++;
      else p_.unmatched_exits++;
    }
    while (stack_.size() > i) pop(t);
    pop(t, /*may_wait=*/true);
    if (!exit_pending_ && !stack_.empty() && stack_.back().callsite) pop(t);
  }

  [[gnu::always_inline]] void bytes(uint64_t sent, uint64_t received) {
    if (stack_.empty()) return;
    CallNode& n = p_.nodes[size_t(stack_.back().node)];
    n.bytes_sent += sent;
    n.bytes_received += received;
  }

  void finish(uint64_t t) {
    if (exit_pending_) {
      exit_pending_ = false;
      close_counters(pending_frame_, pending_counters_, nullptr);
    }
    // A thread's own root frame (see enter) closes at its last event: not unclosed.
    p_.unclosed_frames += stack_.size() - (thread_root_ && !stack_.empty() ? 1 : 0);
    while (!stack_.empty()) pop(t);
  }

 private:
  LocalProfile& p_;
  const defs::RegionTable& regions_;
  Stack<Frame> stack_;
  Stack<CounterFrame> cstack_;  // parallel to stack_ when ncounters_ > 0, else empty
  ChildIndex children_;
  std::vector<RegionFacts> flat_facts_;
  std::unordered_map<uint32_t, RegionFacts> facts_;
  size_t ncounters_ = 0;
  uint32_t pending_callsite_ = 0;
  bool enter_pending_ = false;
  bool exit_pending_ = false;
  bool thread_root_ = false;  // this location's root frame is synthetic (not the main thread)
  Frame pending_frame_{};
  CounterFrame pending_counters_{};
};

// Visits and time the automatic filter counted but did not record (compiler_hooks; the time is
// estimated from timed samples): added to the region's call paths in proportion to their
// recorded visits, as leaf time (exclusive = inclusive), and taken out of the parents'
// exclusive time, where the trace had put it.
void add_unrecorded(LocalProfile& p, const defs::RegionTable& regions) {
  std::unordered_map<uint32_t, defs::RegionDef> defs_by_id;
  regions.for_each([&](const defs::RegionDef& d) {
    if (d.unrecorded_visits > 0) defs_by_id.emplace(d.id, d);
  });
  if (defs_by_id.empty()) return;
  std::unordered_map<uint32_t, uint64_t> recorded;
  for (const CallNode& n : p.nodes)
    if (defs_by_id.count(n.region)) recorded[n.region] += n.visits;
  for (CallNode& n : p.nodes) {
    auto it = defs_by_id.find(n.region);
    if (it == defs_by_id.end() || n.visits == 0) continue;
    const double share = double(n.visits) / double(recorded[n.region]);
    const uint64_t v = uint64_t(double(it->second.unrecorded_visits) * share + 0.5);
    uint64_t ticks = uint64_t(double(it->second.unrecorded_ticks) * share + 0.5);
    // The time is an estimate (sampled mean x visits); the parent's exclusive time, where the
    // trace put the real time, bounds it.
    if (n.parent >= 0) ticks = std::min(ticks, p.nodes[size_t(n.parent)].exclusive_ticks);
    n.visits += v;
    n.inclusive_ticks += ticks;
    n.exclusive_ticks += ticks;
    if (n.parent >= 0) {
      CallNode& par = p.nodes[size_t(n.parent)];
      par.exclusive_ticks = par.exclusive_ticks >= ticks ? par.exclusive_ticks - ticks : 0;
    }
  }
}

// Where the events go after the tree: a TimelineBuilder (ProfileObserver::builder(): no
// virtual call per event), or an observer if any, each event as a whole Event.
struct BuilderFeed {
  engine::TimelineBuilder& b;
  [[gnu::always_inline]] void operator()(uint64_t time, uint32_t region, uint16_t, trace::EventKind kind,
                                         const trace::Event* wide, int32_t node) {
    if (wide) b.on_wide(*wide, node);
    else b.on_narrow(time, region, kind, node);
  }
  // An ENTER or EXIT (narrow kinds), `kind` known where it is inlined.
  [[gnu::always_inline]] void enter_exit(uint64_t time, uint32_t region, uint16_t, trace::EventKind kind,
                                         int32_t node) {
    b.on_narrow(time, region, kind, node);
  }
};
struct ObserverFeed {
  ProfileObserver* obs;
  // Narrow events are handed on as this Event: only their time, region, flags and kind are
  // ever written, every other field stays zero.
  trace::Event narrow{};
  void operator()(uint64_t time, uint32_t region, uint16_t flags, trace::EventKind kind,
                  const trace::Event* wide, int32_t node) {
    if (!obs) return;
    if (!wide) {
      narrow.time = time;
      narrow.region = region;
      narrow.flags = flags;
      narrow.kind = kind;
    }
    obs->on_event(wide ? *wide : narrow, node);
  }
  void enter_exit(uint64_t time, uint32_t region, uint16_t flags, trace::EventKind kind, int32_t node) {
    (*this)(time, region, flags, kind, nullptr, node);
  }
};

// The forward pass over one location: each chunk decoded straight into the call tree and
// `feed`, event by event (trace::visit_chunk), so that no decoded chunk is written and read
// back. A chunk that does not decode ends the location's pass (p.status): the events before
// the damage are booked (docs/reliability.md, *Inconsistent traces*). Returns the time of
// the last event booked.
template <class Feed>
uint64_t profile_location(const trace::ChunkStore& store, uint16_t location, TreeBuilder& tb, Feed feed,
                          ProfileObserver* obs, LocalProfile& p) {
  trace::ChunkDecoder decoder;
  std::vector<uint8_t> raw;
  uint64_t last = 0;
  // The kinds that book bytes are wide (their layouts carry peers or communicators). ENTER
  // and EXIT, narrow, go to `feed` from their own case: there their kind is a constant (no
  // second dispatch on it in the replay index).
  // The feed by value and the visitor handed to each chunk as a copy: the decode loop then
  // holds the tree builder's and the feed's addresses itself, not behind this frame's.
  auto visit = [&tb, feed ](uint64_t time, uint32_t region, uint16_t flags, trace::EventKind kind,
                            const trace::Event* wide) mutable __attribute__((always_inline)) {
    tb.before_event(kind);
    switch (kind) {
      case trace::EventKind::kEnter:
        feed.enter_exit(time, region, flags, trace::EventKind::kEnter, tb.enter(region, time));
        return;
      case trace::EventKind::kExit:
        feed.enter_exit(time, region, flags, trace::EventKind::kExit, tb.exit(region, time));
        return;
      case trace::EventKind::kCounters: tb.counters(*wide); break;
      case trace::EventKind::kCallsite: tb.callsite(region); break;
      case trace::EventKind::kSend:
      case trace::EventKind::kIsend: tb.bytes(wide->bytes, 0); break;
      case trace::EventKind::kRecv:
      case trace::EventKind::kIrecv: tb.bytes(0, wide->bytes); break;
      case trace::EventKind::kCollEnd:
      case trace::EventKind::kIcollPost: tb.bytes(wide->bytes, wide->bytes_received); break;
      default: break;
    }
    feed(time, region, flags, kind, wide, tb.current_node());
  };
  for (size_t chunk : store.chunks_of(location)) {
    const uint32_t count = store.ref(chunk).header.event_count;
    if (count == 0) continue;
    trace::ChunkHeader h;
    uint32_t given = 0;
    Status s = store.read(chunk, raw);
    if (s == Status::kOk)
      s = trace::visit_chunk(decoder, raw.data(), raw.size(), h, decltype(visit)(visit), given, last);
    // The index and the chunk agree on the count (as TraceReader::load checks).
    if (s == Status::kOk && h.event_count != count) s = Status::kCorrupt;
    p.events += given;
    if (std::is_same_v<Feed, BuilderFeed> && given > 0) obs->on_events(given);
    if (s != Status::kOk) {
      p.status = s;
      break;
    }
  }
  return last;
}

}  // namespace

LocalProfile build_profile(const trace::ChunkStore& store, const defs::Definitions& definitions,
                           ProfileObserver* observer) {
  LocalProfile p;
  p.counters = std::min<size_t>(definitions.counter_names().size(), trace::kMaxCounters);
  for (uint16_t loc : store.locations()) {
    TreeBuilder tb(p, definitions.regions);
    ProfileObserver* const obs = observer && observer->wants_location(loc) ? observer : nullptr;
    if (obs) obs->begin_location(loc);
    ++p.locations;
    engine::TimelineBuilder* const builder = obs ? obs->builder() : nullptr;
    tb.finish(builder ? profile_location(store, loc, tb, BuilderFeed{*builder}, obs, p)
                      : profile_location(store, loc, tb, ObserverFeed{obs}, obs, p));
  }
  // Children of different locations must share nodes: TreeBuilder instances share the node
  // vector but not the child index, so merge duplicates (same parent and region) here.
  std::map<std::pair<int32_t, uint32_t>, int32_t> canon;
  std::vector<int32_t> remap(p.nodes.size());
  std::vector<CallNode> merged;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    CallNode n = p.nodes[i];
    const int32_t parent = n.parent < 0 ? -1 : remap[size_t(n.parent)];
    auto key = std::make_pair(parent, n.region);
    auto it = canon.find(key);
    if (it == canon.end()) {
      n.parent = parent;
      merged.push_back(n);
      remap[i] = int32_t(merged.size() - 1);
      canon.emplace(key, remap[i]);
    } else {
      CallNode& m = merged[size_t(it->second)];
      m.visits += n.visits;
      m.inclusive_ticks += n.inclusive_ticks;
      m.exclusive_ticks += n.exclusive_ticks;
      m.bytes_sent += n.bytes_sent;
      m.bytes_received += n.bytes_received;
      for (size_t k = 0; k < trace::kMaxCounters; ++k) {
        m.counter_inclusive[k] += n.counter_inclusive[k];
        m.counter_exclusive[k] += n.counter_exclusive[k];
      }
      remap[i] = it->second;
    }
  }
  p.nodes = std::move(merged);
  p.node_remap = std::move(remap);
  add_unrecorded(p, definitions.regions);
  return p;
}

namespace {

// Serialized node for the unification: parent (local index), kind, name.
void put_u32(std::vector<char>& b, uint32_t v) {
  char tmp[4];
  std::memcpy(tmp, &v, 4);
  b.insert(b.end(), tmp, tmp + 4);
}

// 1. A rank's call tree as bytes: [parent u32][kind u32][name\0] per node.
std::vector<char> serialize_tree(const LocalProfile& local, const defs::Definitions& definitions) {
  std::vector<char> mine;
  for (const CallNode& n : local.nodes) {
    const defs::RegionDef def = definitions.regions.get(n.region);
    put_u32(mine, uint32_t(n.parent));
    // kind in the low byte; bit 8: auto-filtered (compiler_hooks' automatic filter)
    put_u32(mine, uint32_t(def.kind) | (def.auto_filtered ? 0x100u : 0u));
    mine.insert(mine.end(), def.name.begin(), def.name.end());
    mine.push_back('\0');
  }
  return mine;
}

// 2. Rank 0: the union's call paths, in its order, into out.callpaths.
void set_callpaths(const engine::CallpathUnion& all, GlobalProfile& out) {
  out.callpaths.clear();
  out.callpaths.reserve(all.nodes.size());
  for (const engine::CallpathUnion::Node& n : all.nodes) {
    GlobalCallpath cp;
    cp.region = n.name;
    cp.kind = defs::RegionKind(n.kind_word & 0xff);
    cp.auto_filtered = (n.kind_word & 0x100u) != 0;
    cp.parent = n.parent;
    cp.path = n.parent < 0 ? n.name : out.callpaths[size_t(n.parent)].path + "/" + n.name;
    for (int c = 0; c < kColCount; ++c) {
      cp.min[c] = std::numeric_limits<double>::infinity();
      cp.max[c] = 0;
    }
    out.callpaths.push_back(std::move(cp));
  }
}

// What rank 0 gets from the reductions of steps 3 and 4 (empty elsewhere).
struct ProfileSums {
  std::vector<double> sum, min, max, present;  // G x C, G x C, G x C, G
  std::vector<double> totals;                  // per rank, C
  int K = 0;                                   // counters every rank carries
  std::vector<double> counters;                // G x (K inclusive, K exclusive)
  std::vector<double> counter_totals;          // per rank, K
};

// 3. This rank's figures per global call path: the columns and the counters' sums (G x C,
//    G x 2K), whether it visited each call path (G), its totals (C, then K).
struct RankColumns {
  std::vector<double> val, present, counters, totals;
};

RankColumns rank_columns(const LocalProfile& local, const defs::Definitions& definitions,
                         const clock::TickConverter& conv, const std::vector<int>& my_map, size_t G,
                         size_t K) {
  const size_t C = kColCount;
  RankColumns rc;
  rc.val.assign(G * C, 0.0);
  rc.present.assign(G, 0.0);
  rc.counters.assign(G * 2 * K, 0.0);
  rc.totals.assign(C + K, 0.0);
  for (size_t i = 0; i < local.nodes.size(); ++i) {
    const CallNode& n = local.nodes[i];
    const size_t g = size_t(my_map[i]);
    double* v = &rc.val[g * C];
    v[kColVisits] += double(n.visits);
    v[kColExclusive] += conv.ticks_to_seconds(n.exclusive_ticks);
    v[kColInclusive] += conv.ticks_to_seconds(n.inclusive_ticks);
    const defs::RegionDef def = definitions.regions.get(n.region);
    if (def.kind == defs::RegionKind::kMpi) v[kColMpi] += conv.ticks_to_seconds(n.exclusive_ticks);
    v[kColBytesSent] += double(n.bytes_sent);
    v[kColBytesReceived] += double(n.bytes_received);
    if (n.visits > 0) rc.present[g] = 1.0;
    double* cv = rc.counters.data() + g * 2 * K;  // no counters: an empty vector
    for (size_t k = 0; k < K; ++k) {
      cv[k] += n.counter_inclusive[k];
      cv[K + k] += n.counter_exclusive[k];
      rc.totals[C + k] += n.counter_exclusive[k];
    }
  }
  for (size_t g = 0; g < G; ++g)
    for (size_t c = 0; c < C; ++c)
      if (c != kColInclusive) rc.totals[c] += rc.val[g * C + c];
  // A rank's inclusive total is its root's inclusive time (= its measured span).
  if (!local.nodes.empty()) rc.totals[kColInclusive] = conv.ticks_to_seconds(local.nodes[0].inclusive_ticks);
  return rc;
}

// 4. The figures to rank 0 in three rounds: one sum (columns, presence, counters), one
//    maximum (the columns' maxima, then their minima negated: min = -max(-x); both over the
//    visiting ranks only), and the per-rank totals gathered.
Status reduce_columns(const RankColumns& rc, const engine::Comm& comm, size_t G, size_t K,
                      ProfileSums& sums) {
  const size_t C = kColCount;
  const bool root = comm.rank() == 0;
  std::vector<double> sum_in;
  sum_in.reserve(G * C + G + G * 2 * K);
  sum_in.insert(sum_in.end(), rc.val.begin(), rc.val.end());
  sum_in.insert(sum_in.end(), rc.present.begin(), rc.present.end());
  sum_in.insert(sum_in.end(), rc.counters.begin(), rc.counters.end());
  std::vector<double> max_in(2 * G * C);
  for (size_t g = 0; g < G; ++g)
    for (size_t c = 0; c < C; ++c) {
      const bool here = rc.present[g] > 0;
      const double v = rc.val[g * C + c];
      max_in[g * C + c] = here ? v : 0.0;
      max_in[G * C + g * C + c] = here ? -v : -std::numeric_limits<double>::infinity();
    }
  std::vector<double> sum_out(root ? sum_in.size() : 0), max_out(root ? max_in.size() : 0);
  CRITPATH_FORWARD_IF_ERROR(
      comm.reduce(sum_in.data(), sum_out.data(), int(sum_in.size()), MPI_DOUBLE, MPI_SUM, 0));
  CRITPATH_FORWARD_IF_ERROR(
      comm.reduce(max_in.data(), max_out.data(), int(max_in.size()), MPI_DOUBLE, MPI_MAX, 0));
  std::vector<double> totals;
  std::vector<int> counts, displs;
  CRITPATH_FORWARD_IF_ERROR(
      engine::gather_to_root(rc.totals.data(), int(C + K), comm, totals, counts, displs));
  sums.K = int(K);
  if (!root) return Status::kOk;
  sums.sum.assign(sum_out.begin(), sum_out.begin() + ptrdiff_t(G * C));
  sums.present.assign(sum_out.begin() + ptrdiff_t(G * C), sum_out.begin() + ptrdiff_t(G * C + G));
  sums.counters.assign(sum_out.begin() + ptrdiff_t(G * C + G), sum_out.end());
  sums.max.assign(max_out.begin(), max_out.begin() + ptrdiff_t(G * C));
  sums.min.resize(G * C);
  for (size_t i = 0; i < G * C; ++i) sums.min[i] = -max_out[G * C + i];
  const size_t P = size_t(comm.size());
  sums.totals.resize(P * C);
  sums.counter_totals.resize(P * K);
  for (size_t r = 0; r < P && totals.size() >= (r + 1) * (C + K); ++r) {
    std::copy_n(&totals[r * (C + K)], C, &sums.totals[r * C]);
    std::copy_n(totals.data() + r * (C + K) + C, K, sums.counter_totals.data() + r * K);
  }
  return Status::kOk;
}

// Rank 0: the reduced figures into `out`.
void fill_global(const ProfileSums& sums, const defs::Definitions& definitions, int size, size_t G,
                 GlobalProfile& out) {
  const size_t C = kColCount;
  if (sums.K > 0) {
    const size_t KK = size_t(sums.K);
    const std::vector<double>& csum = sums.counters;
    out.counter_names = definitions.counter_names();
    out.counter_names.resize(KK);
    for (size_t g = 0; g < G; ++g) {
      out.callpaths[g].counter_inclusive.assign(&csum[g * 2 * KK], &csum[g * 2 * KK] + KK);
      out.callpaths[g].counter_exclusive.assign(&csum[g * 2 * KK + KK], &csum[g * 2 * KK] + 2 * KK);
    }
    out.counters_by_rank.assign(size_t(size), std::vector<double>(KK));
    for (int r = 0; r < size; ++r)
      for (size_t k = 0; k < KK; ++k)
        out.counters_by_rank[size_t(r)][k] = sums.counter_totals[size_t(r) * KK + k];
  }
  for (size_t g = 0; g < G; ++g) {
    GlobalCallpath& cp = out.callpaths[g];
    cp.ranks = int(sums.present[g] + 0.5);
    for (size_t c = 0; c < C; ++c) {
      cp.sum[c] = sums.sum[g * C + c];
      cp.min[c] = cp.ranks > 0 ? sums.min[g * C + c] : 0.0;
      cp.max[c] = sums.max[g * C + c];
    }
  }
  out.by_rank.assign(size_t(size), std::vector<double>(C));
  for (int r = 0; r < size; ++r)
    for (size_t c = 0; c < C; ++c) out.by_rank[size_t(r)][c] = sums.totals[size_t(r) * C + c];
}

}  // namespace

Status unify_profile(const LocalProfile& local, const defs::Definitions& definitions,
                     const clock::TickConverter& conv, const engine::Comm& comm, GlobalProfile& out,
                     std::vector<int>* local_to_global, int* n_callpaths, double timeout_s) {
  const int rank = comm.rank(), size = comm.size();

  // 1, 2. The call trees merged up a binomial tree, the union back to every rank; each maps
  //    its local nodes onto it (engine/callpath_union.h: the ids in the order of first
  //    occurrence, rank after rank).
  const std::vector<char> mine = serialize_tree(local, definitions);
  engine::CallpathUnion all;
  CRITPATH_FORWARD_IF_ERROR(
      engine::reduce_union(engine::union_of_tree(mine, rank, int32_t(local.counters)), comm, timeout_s, all));
  const std::vector<int> my_map = engine::map_tree(mine, all);
  if (my_map.size() != local.nodes.size()) return Status::kMpiError;
  for (int g : my_map)
    if (g < 0) return Status::kMpiError;
  if (local_to_global) *local_to_global = my_map;
  const size_t G = all.nodes.size();
  if (n_callpaths) *n_callpaths = int(G);
  if (rank == 0) set_callpaths(all, out);

  // 3, 4. The columns and the hardware counters (those every rank carries), to rank 0.
  const size_t K = size_t(std::max(0, all.counters));
  ProfileSums sums;
  CRITPATH_FORWARD_IF_ERROR(
      reduce_columns(rank_columns(local, definitions, conv, my_map, G, K), comm, G, K, sums));
  if (rank == 0) fill_global(sums, definitions, size, G, out);
  return Status::kOk;
}

}  // namespace critpath::analyzer
