// critpath — analyzer/passes/whatif/whatif.cpp: the what-if replay (see whatif.h).
#include "analyzer/passes/whatif/whatif.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <thread>
#include <unordered_map>

#include "analyzer/engine/big_memory.h"
#include "analyzer/engine/mailbox.h"
#include "libtrace/buffer/varint.h"
#include "libtrace/clock/clock.h"

namespace critpath::analyzer::passes {
namespace {

constexpr double kNone = -1e300;  // "no dependency" in a ready time

std::vector<std::string> split(const std::string& s, char c) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t end = s.find(c, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// Appended byte by byte: into reserved room this is a few stores, where resize() would zero
// the bytes first (a memset call per value).
template <typename T>
void put(std::vector<unsigned char>& b, T v) {
  unsigned char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  for (unsigned char c : bytes) b.push_back(c);
}

template <typename T>
bool get(const std::vector<unsigned char>& b, size_t& at, T& v) {
  if (at + sizeof v > b.size()) return false;
  std::memcpy(&v, b.data() + at, sizeof v);
  at += sizeof v;
  return true;
}

// LEB128 for the small integers of a replay entry (keys, lane masks), read at offset `at`.
using trace::put_varint;

bool get_var(const std::vector<unsigned char>& b, size_t& at, uint64_t& v) {
  const unsigned char* p = b.data() + at;
  const bool ok = trace::get_varint(p, b.data() + b.size(), v);
  at = size_t(p - b.data());
  return ok;
}

// What a replay message entry is about. Point to point: (sender's group, position) of the
// message (P2pMatch). Collectives: (communicator or window id, instance ordinal on it).
enum EntryType : uint32_t {
  kP2p = 0,
  kCollIn = 1,   // a member's enter' to the coordinator / root / every member
  kCollOut = 2,  // the coordinator's result to a member
  kWinIn = 3,
  kWinOut = 4,
  kRma = 5,  // a one-sided wait's cause time to the waiter: (the waiter's wait index, 0)
};

struct Key {
  int32_t src;
  uint32_t type, a, b;
  bool operator==(const Key& o) const { return src == o.src && type == o.type && a == o.a && b == o.b; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = uint64_t(uint32_t(k.src)) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t(k.type) << 32 | k.a) + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
    h ^= uint64_t(k.b) * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    return size_t(h);
  }
};

// Call-index lists, read in call order: (call, item) pairs sorted by call, one call's items in
// the order given (sized by the items, not by the calls: most calls have none of a kind). The
// list ends in a sentinel after every call (kEnd), so that the lookups of every call of the
// compile need no bounds check.
// A (call, item) pair. Left unset when default-constructed: a list sized for its pairs before
// they are stored (index_calls) is not zeroed first.
struct CallItem {
  uint32_t first, second;
  CallItem() {}  // NOLINT(modernize-use-equals-default): = default would zero it in resize()
  CallItem(uint32_t call, uint32_t item) : first(call), second(item) {}
};
struct ByCall {
  static constexpr uint32_t kEnd = UINT32_MAX;
  std::vector<CallItem> list{{kEnd, 0}};
  size_t at = 0;  // the first pair of a call not before the last one asked for
  // `sorted`: the caller knows the pairs are in call order already.
  void build(std::vector<CallItem>&& call_item, bool sorted = false) {
    list = std::move(call_item);
    list.reserve(list.size() + 1);  // the sentinel (a no-op where the caller left room for it)
    const auto by_call = [](const auto& x, const auto& y) { return x.first < y.first; };
    if (!sorted && !std::is_sorted(list.begin(), list.end(), by_call))
      std::stable_sort(list.begin(), list.end(), by_call);
    list.push_back({kEnd, 0});
    at = 0;
  }
  // Call k's pairs, [first, second) of `list`; k never below the last call asked for.
  [[gnu::always_inline]] std::pair<size_t, size_t> of(size_t k) {
    from(k);
    size_t e = at;
    while (list[e].first == k) ++e;
    return {at, e};
  }
  // The first call from k on with pairs (kEnd: none).
  [[gnu::always_inline]] uint32_t from(size_t k) {
    while (list[at].first < k) ++at;
    return list[at].first;
  }
  [[gnu::always_inline]] bool any(size_t k) { return from(k) == k; }
};

// The replay program as written: a byte string appended to through a pointer (millions of
// small appends, where vector::push_back's call and capacity check cost more than the store).
class ProgramWriter {
 public:
  // Room for n bytes, on huge pages when that many (engine/big_memory.h): a message-bound
  // run's program is tens of MB, its room left unwritten (no zeroing: the bytes are written
  // front to back, and the room past the end is never read).
  void reserve(size_t n) {
    if (n > cap_) regrow(n);
  }
  // Inline, a few per call (a call each cost as much as the store).
  [[gnu::always_inline]] void byte(uint8_t v) {
    *room(1) = v;
    ++n_;
  }
  template <typename T>
  [[gnu::always_inline]] void raw(T v) {
    std::memcpy(room(sizeof v), &v, sizeof v);
    n_ += sizeof v;
  }
  [[gnu::always_inline]] void var(uint64_t v) {  // LEB128
    unsigned char* p = room(10);
    size_t i = 0;
    for (; v >= 0x80; v >>= 7) p[i++] = uint8_t(v | 0x80);
    p[i++] = uint8_t(v);
    n_ += i;
  }
  size_t size() const { return n_; }
  // An operation written through a pointer of the caller's after one check for its largest
  // size (a message's: kMaxMessageOp), instead of a check per operand: at(k), the puts, then
  // done() with where the pointer ended.
  [[gnu::always_inline]] unsigned char* at(size_t k) { return room(k); }
  [[gnu::always_inline]] void done(const unsigned char* p) { n_ = size_t(p - b_.get()); }
  template <typename T>
  [[gnu::always_inline]] static unsigned char* put_raw(unsigned char* p, T v) {
    std::memcpy(p, &v, sizeof v);
    return p + sizeof v;
  }
  [[gnu::always_inline]] static unsigned char* put_var(unsigned char* p, uint64_t v) {
    for (; v >= 0x80; v >>= 7) *p++ = uint8_t(v | 0x80);
    *p++ = uint8_t(v);
    return p;
  }
  unsigned char* data() { return b_.get(); }
  void release() {
    b_.reset();
    cap_ = n_ = 0;
  }

 private:
  [[gnu::always_inline]] unsigned char* room(size_t k) {
    if (cap_ - n_ < k) grow(k);
    return b_.get() + n_;
  }
  [[gnu::noinline]] void grow(size_t k) { regrow(std::max(2 * cap_, n_ + k + 4096)); }
  void regrow(size_t cap) {
    std::unique_ptr<unsigned char[]> b(new unsigned char[cap]);  // default-initialized: not zeroed
    engine::prefer_huge_pages(b.get(), cap);
    if (n_ > 0) std::memcpy(b.get(), b_.get(), n_);
    b_ = std::move(b);
    cap_ = cap;
  }
  std::unique_ptr<unsigned char[]> b_;  // cap_ bytes, written up to n_
  size_t cap_ = 0, n_ = 0;
};

// A signed difference as an unsigned LEB128 value: small either way (zigzag).
using trace::unzigzag;
using trace::zigzag;

// One collective instance as the replay sees it.
struct CollRef {
  uint32_t index;  // in Timeline::colls or ::win_colls
  bool window;
};

// Overlap of [a, z] with the ascending, disjoint `segs`, from index `from` on (advanced).
double overlap(const std::vector<CpSegment>& segs, size_t& from, double a, double z) {
  while (from < segs.size() && segs[from].end <= a) ++from;
  double o = 0;
  for (size_t i = from; i < segs.size() && segs[i].begin < z; ++i)
    o += std::max(0.0, std::min(z, segs[i].end) - std::max(a, segs[i].begin));
  return o;
}

}  // namespace

bool parse_whatif(const std::string& text, std::vector<Hypothesis>& out, std::string& error) {
  for (const std::string& raw : split(text, ';')) {
    const std::string item = trim(raw);
    if (item.empty()) continue;
    const std::vector<std::string> f = split(item, ':');
    Hypothesis h;
    h.spec = item;
    const std::string word = trim(f[0]);
    if ((word == "balance" || word == "zero") && f.size() == 2) {
      h.kind = word == "balance" ? LaneKind::kBalance : LaneKind::kZero;
      h.factor = word == "zero" ? 0.0 : 1.0;
      h.callpath = trim(f[1]);
    } else if (word == "scale" && f.size() == 3) {
      h.kind = LaneKind::kScale;
      const std::string num = trim(f[1]);
      char* end = nullptr;
      h.factor = std::strtod(num.c_str(), &end);
      if (num.empty() || end == nullptr || *end != '\0' || !std::isfinite(h.factor) || h.factor < 0) {
        error = "'" + item + "': the factor must be a number >= 0";
        return false;
      }
      h.callpath = trim(f[2]);
    } else {
      error = "'" + item + "': expected balance:NAME, zero:NAME or scale:FACTOR:NAME";
      return false;
    }
    if (h.callpath.empty()) {
      error = "'" + item + "': no call path named";
      return false;
    }
    out.push_back(std::move(h));
  }
  return true;
}

std::vector<unsigned char> encode_lanes(const std::vector<Hypothesis>& lanes) {
  std::vector<unsigned char> b;
  put(b, uint32_t(lanes.size()));
  for (const Hypothesis& h : lanes) {
    put(b, uint8_t(h.kind));
    put(b, h.factor);
    put(b, uint32_t(h.callpaths.size()));
    for (int g : h.callpaths) put(b, int32_t(g));
  }
  return b;
}

bool decode_lanes(const std::vector<unsigned char>& b, std::vector<Hypothesis>& lanes) {
  size_t at = 0;
  uint32_t n = 0;
  if (!get(b, at, n) || n > (1u << 16)) return false;
  lanes.assign(n, Hypothesis{});
  for (Hypothesis& h : lanes) {
    uint8_t kind = 0;
    uint32_t m = 0;
    if (!get(b, at, kind) || kind > uint8_t(LaneKind::kSlack) || !get(b, at, h.factor) || !get(b, at, m) ||
        m > b.size())
      return false;
    h.kind = LaneKind(kind);
    h.callpaths.resize(m);
    for (int& g : h.callpaths) {
      int32_t v = 0;
      if (!get(b, at, v)) return false;
      g = v;
    }
  }
  return at == b.size();
}

namespace {

// One-sided waits (the RMA pass's): the waiter asks each causer for its cause's time, named
// by the waiter's own wait index; the causer tells it when it replays the call.
struct RmaAsk {
  uint32_t call;  // the causer's call
  uint32_t key;   // the waiter's wait index
  double time;    // the cause's measured time (enter or exit of `call`)
};
struct RmaTell {
  int32_t waiter;
  uint32_t key;
  bool at_exit;
  double time;  // measured: for causes the replay does not move
};

const std::vector<RmaWait>& no_rma_waits() {
  static const std::vector<RmaWait> none;
  return none;
}

// ---- The replay program ---------------------------------------------------------------------
//
// A rank's part of the replay is compiled from its timeline (Compiler) into a byte string of
// operations on a few per-lane registers — enter', cur' (the last exit'), ready' and acc (a
// coordinator's maximum) — which an Executor runs either on the rank itself, telling its peers
// the sim times they need as the run told them its messages (distributed), or on rank 0 with
// every rank's program, as one sequential discrete-event simulation that switches to another
// rank wherever one waits for a time not yet told (gathered). The same operations in the same
// order: both give the same figures. Integers are LEB128; durations are single precision
// (1e-7 of themselves), absolute times double.
enum Op : uint8_t {
  kOpEnterAt = 1,  // [t f64]: enter' = t on every lane (calls up to MPI_Init); ready' = none
  kOpEnterGap,     // [gap f32][n u8] n x [lane u8][delta f32]: enter' = cur' + max(0, gap + delta)
                   // (delta 0 for the lanes not listed); ready' = none
  kOpTell,         // [reg u8][dest][type][a][b]: the register's lanes to `dest` under (type, a, b)
  kOpTellAt,       // [dest][type][a][b][t f64]: t on every lane
  kOpNeed,         // [reg u8][src][type][a][b]: reg (ready' or acc) = max(reg, what src told)
  kOpSave,         // [slot]: saved[slot] = enter' (a nonblocking collective's post)
  kOpTakeSaved,    // [slot]: ready' = max(ready', saved[slot]); the slot is freed
  kOpTakeEnter,    // ready' = max(ready', enter')
  kOpAccEnter,     // acc = enter'
  kOpTakeAcc,      // ready' = max(ready', acc)
  kOpFlush,        // distributed: post what is queued (a peer waits for it)
  kOpExitAt,       // [t f64]: cur' = t
  kOpExit,         // [flags u8][own f32][after f32 when kExitDep and not kExitWaited]: exit'
  kOpEnd,          // [reg u8]: fin' = enter' or cur'; the program ends
  // The common cases in fewer bytes (a message costs a send's and a receive's enter, tell or
  // need, and exit):
  kOpEnterGap0,  // [gap f32]: kOpEnterGap with no lane's delta
  kOpTellP2p,    // [dest][a][b]: kOpTell of enter' under (kP2p, a, b)
  kOpNeedP2p,    // [src][a][b]: kOpNeed into ready' under (kP2p, a, b)
  kOpExit0,      // [own f32]: kOpExit with no flag
  kOpExitW,      // [own f32]: kOpExit with kExitDep | kExitWaited
  kOpExitD,      // [own f32][after f32]: kOpExit with kExitDep
  // A call that sends or receives one message and does nothing else, its gap changed on no
  // lane (a message-bound run's every call), in one operation: kOpEnterGap0, kOpTellP2p or
  // kOpNeedP2p, and kOpExit0, kOpExitW or kOpExitD. The message's position `b` is written as
  // its difference to the previous such send's (receive's) (zigzag): consecutive messages of
  // a program mostly have consecutive positions.
  kOpSend,   // [gap f32][own f32][dest][a][b - last b]
  kOpRecvW,  // [gap f32][own f32][src][a][b - last b]
  kOpRecvD,  // [gap f32][own f32][after f32][src][a][b - last b]
  // The same with the previous such send's (receive's) peer and `a`, and its `b` plus one: a
  // stream of messages between two ranks (a ping-pong's every call) in 9 bytes a call.
  kOpSendNext,   // [gap f32][own f32]
  kOpRecvWNext,  // [gap f32][own f32]
  kOpRecvDNext,  // [gap f32][own f32][after f32]
};
enum Reg : uint8_t { kRegEnter = 0, kRegCur = 1, kRegAcc = 2, kRegReady = 3 };
enum ExitFlag : uint8_t { kExitDep = 1, kExitWaited = 2 };

// The message of the last kOpSend* or kOpRecv* (the next one's base); peer none at first.
struct MessageKey {
  uint32_t peer = UINT32_MAX, a = 0, b = 0;
};

// What the compiler measured besides the program (the run's own figures for the check).
struct ProgramInfo {
  double clamped = 0, wait_m = 0, useful = 0, fin_m = 0;
};

// Where an executor's sim times go and come from.
class ReplayIo {
 public:
  virtual ~ReplayIo() = default;
  // The lanes `src` told `me` under the key, into `v`; `got` false when not told yet (the
  // executor then stops at this operation and resumes there).
  virtual Status need(int me, int src, uint32_t type, uint32_t a, uint32_t b, double* v, bool& got) = 0;
  virtual Status tell(int me, int dest, uint32_t type, uint32_t a, uint32_t b, const double* v) = 0;
  virtual Status flush() = 0;
};

// Runs one program.
class Executor {
 public:
  Executor(const unsigned char* p, size_t n, int me, const std::vector<uint8_t>& ideal, bool delayed)
      : p_(p), end_(p + n), me_(me), ideal_(ideal), V_(ideal.size()), enter_(V_, 0.0), cur_(V_, 0.0),
        ready_(V_, kNone), acc_(V_, 0.0), v_(V_, 0.0), fin_(V_, 0.0), wait_(V_, 0.0),
        two_(V_ == 2 && !ideal[0] && ideal[1]), delayed_(delayed) {}

  bool done() const { return done_; }
  // Blocked in a kOpRecv* (run() stopped there for its time): resume() completes it with the
  // time told, and run() goes on after it. Inline into the hand-over (a ping-pong's every
  // message): the call cost a tenth of what it does.
  bool in_receive() const { return pending_.at != nullptr && p_ == pending_.at; }
  [[gnu::always_inline]] void resume(const double* v) {
    if (two_) finish_receive<2>(v);
    else finish_receive<0>(v);
    p_ = pending_.next;
  }
  const std::vector<double>& fin() const { return fin_; }
  const std::vector<double>& wait() const { return wait_; }
  uint64_t needs() const { return needs_; }

  // Runs until the program ends, a time it needs is not told yet (`blocked`), or
  // `deadline_ns` passes (`late`). kCorrupt on a malformed program. `Io`: a ReplayIo (the
  // final class itself, so that its calls are direct).
  template <class Io>
  Status run(Io& io, uint64_t deadline_ns, bool& blocked, bool& late) {
    // Two lanes (identity and ideal network: the default) with the messages' loops unrolled.
    return two_ ? run_lanes<2>(io, deadline_ns, blocked, late) : run_lanes<0>(io, deadline_ns, blocked, late);
  }

 private:
  // The lanes: N, or V_ when N is 0.
  template <size_t N>
  size_t lanes() const {
    return N ? N : V_;
  }
  // Whether lane l is the ideal network's: N = 2 is the default's identity and ideal network
  // (two_), known at compile time.
  template <size_t N>
  [[gnu::always_inline]] bool ideal(size_t l) const {
    return N == 2 ? l == 1 : ideal_[l] != 0;
  }
  template <size_t N, class Io>
  Status run_lanes(Io& io, uint64_t deadline_ns, bool& blocked, bool& late) {
    blocked = late = false;
    if (done_) return Status::kOk;
    for (;; ++ops_) {  // until kOpEnd (no test of done_ per operation)
      if ((ops_ & 4095) == 4095 && clock::monotonic_ns() >= deadline_ns) {
        late = true;
        return Status::kOk;
      }
      const unsigned char* const at = p_;
      uint8_t op = 0;
      if (!byte(op)) return Status::kCorrupt;
      switch (op) {
        case kOpEnterAt: {
          double t = 0;
          if (!raw(t)) return Status::kCorrupt;
          std::fill(enter_.begin(), enter_.end(), t);
          std::fill(ready_.begin(), ready_.end(), kNone);
          break;
        }
        case kOpEnterGap: CRITPATH_FORWARD_IF_ERROR(enter_gap(true)); break;
        case kOpEnterGap0: CRITPATH_FORWARD_IF_ERROR(enter_gap(false)); break;
        case kOpTell: CRITPATH_FORWARD_IF_ERROR(tell(io, false)); break;
        case kOpTellP2p: CRITPATH_FORWARD_IF_ERROR(tell(io, true)); break;
        case kOpTellAt: CRITPATH_FORWARD_IF_ERROR(tell_at(io)); break;
        case kOpNeed:
        case kOpNeedP2p:
          CRITPATH_FORWARD_IF_ERROR(need(io, at, op == kOpNeedP2p, deadline_ns, blocked, late));
          if (blocked || late) return Status::kOk;
          break;
        case kOpSave: {
          uint64_t slot = 0;
          if (!var(slot)) return Status::kCorrupt;
          saved_[slot] = enter_;
          break;
        }
        case kOpTakeSaved: CRITPATH_FORWARD_IF_ERROR(take_saved()); break;
        case kOpTakeEnter: take(ready_, enter_); break;
        case kOpAccEnter: acc_ = enter_; break;
        case kOpTakeAcc: take(ready_, acc_); break;
        case kOpFlush: CRITPATH_FORWARD_IF_ERROR(io.flush()); break;
        case kOpExitAt: {
          double t = 0;
          if (!raw(t)) return Status::kCorrupt;
          std::fill(cur_.begin(), cur_.end(), t);
          break;
        }
        case kOpExit0: CRITPATH_FORWARD_IF_ERROR(exit_call(0)); break;
        case kOpExitW: CRITPATH_FORWARD_IF_ERROR(exit_call(kExitDep | kExitWaited)); break;
        case kOpExitD: CRITPATH_FORWARD_IF_ERROR(exit_call(kExitDep)); break;
        case kOpSend: CRITPATH_FORWARD_IF_ERROR(send<N>(io, false)); break;
        case kOpSendNext: CRITPATH_FORWARD_IF_ERROR(send<N>(io, true)); break;
        case kOpRecvW:
        case kOpRecvD:
        case kOpRecvWNext:
        case kOpRecvDNext:
          CRITPATH_FORWARD_IF_ERROR(receive<N>(io, at, op, deadline_ns, blocked, late));
          if (blocked || late) return Status::kOk;
          break;
        case kOpEnd: {
          uint8_t reg = 0;
          if (!byte(reg)) return Status::kCorrupt;
          fin_ = reg == kRegEnter ? enter_ : cur_;
          done_ = true;
          return Status::kOk;
        }
        default: return Status::kCorrupt;
      }
    }
  }

  // The operations of run() with operands, each after its op byte.
  Status enter_gap(bool deltas) {
    float gap = 0;
    uint8_t k = 0;
    if (!raw(gap) || (deltas && !byte(k))) return Status::kCorrupt;
    std::fill(v_.begin(), v_.end(), double(gap));
    for (uint8_t i = 0; i < k; ++i) {
      uint8_t l = 0;
      float d = 0;
      if (!byte(l) || !raw(d) || l >= V_) return Status::kCorrupt;
      v_[l] += double(d);
    }
    for (size_t l = 0; l < V_; ++l) enter_[l] = cur_[l] + std::max(0.0, v_[l]);
    std::fill(ready_.begin(), ready_.end(), kNone);
    return Status::kOk;
  }
  template <class Io>
  Status tell(Io& io, bool p2p) {
    uint8_t reg = kRegEnter;
    uint64_t dest = 0, type = kP2p, a = 0, b = 0;
    if ((!p2p && !byte(reg)) || reg > kRegAcc || !var(dest) || (!p2p && !var(type)) || !var(a) || !var(b))
      return Status::kCorrupt;
    const std::vector<double>& r = reg == kRegEnter ? enter_ : reg == kRegCur ? cur_ : acc_;
    return io.tell(me_, int(dest), uint32_t(type), uint32_t(a), uint32_t(b), r.data());
  }
  template <class Io>
  Status tell_at(Io& io) {
    uint64_t dest = 0, type = 0, a = 0, b = 0;
    double t = 0;
    if (!var(dest) || !var(type) || !var(a) || !var(b) || !raw(t)) return Status::kCorrupt;
    std::fill(v_.begin(), v_.end(), t);
    return io.tell(me_, int(dest), uint32_t(type), uint32_t(a), uint32_t(b), v_.data());
  }
  // `at`: the op byte, where run() resumes when the time is not told yet (`blocked`) or the
  // deadline passed (`late`).
  template <class Io>
  Status need(Io& io, const unsigned char* at, bool p2p, uint64_t deadline_ns, bool& blocked, bool& late) {
    if (past(at, deadline_ns, late)) return Status::kOk;
    uint8_t reg = kRegReady;
    uint64_t src = 0, type = kP2p, a = 0, b = 0;
    if ((!p2p && !byte(reg)) || (reg != kRegReady && reg != kRegAcc) || !var(src) || (!p2p && !var(type)) ||
        !var(a) || !var(b))
      return Status::kCorrupt;
    bool got = false;
    CRITPATH_FORWARD_IF_ERROR(
        io.need(me_, int(src), uint32_t(type), uint32_t(a), uint32_t(b), v_.data(), got));
    if (!got) {
      p_ = at;  // resumes here
      blocked = true;
      return Status::kOk;
    }
    ++needs_;
    take(reg == kRegReady ? ready_ : acc_, v_);
    return Status::kOk;
  }
  // Before a dependency: whether the deadline passed (`late`; run() resumes at `at`). The clock
  // is read at every 64th dependency (and at every one when each sleeps: the testing aid),
  // beside every 4096th operation.
  bool past(const unsigned char* at, uint64_t deadline_ns, bool& late) {
    if (((needs_ & 63) == 0 || delayed_) && clock::monotonic_ns() >= deadline_ns) {
      p_ = at;
      late = true;
    }
    return late;
  }
  // kOpSend*, kOpRecv*: the entry (kOpEnterGap0) and the message's key (`next`: the one
  // after `last`).
  template <size_t N>
  [[gnu::always_inline]] bool one_message(bool delayed_exit, bool next, const MessageKey& last, float& own,
                                          float& after, MessageKey& key) {
    // The floats, read after one bounds check for all of them.
    float gap = 0;
    const size_t floats = (delayed_exit ? 3 : 2) * sizeof(float);
    if (size_t(end_ - p_) < floats) return false;
    std::memcpy(&gap, p_, sizeof gap);
    std::memcpy(&own, p_ + sizeof gap, sizeof own);
    if (delayed_exit) std::memcpy(&after, p_ + 2 * sizeof gap, sizeof after);
    p_ += floats;
    if (next) {
      if (last.peer == UINT32_MAX) return false;  // no message before
      key = {last.peer, last.a, last.b + 1};
    } else {
      uint64_t peer = 0, a = 0, db = 0;
      if (!var(peer) || !var(a) || !var(db)) return false;
      key = {uint32_t(peer), uint32_t(a), uint32_t(int64_t(last.b) + unzigzag(db))};
    }
    double* en = enter_.data();
    const double* cu = cur_.data();
    const double g = std::max(0.0, double(gap));  // a value: std::max's reference kept it in memory
    for (size_t l = 0; l < lanes<N>(); ++l) en[l] = cu[l] + g;
    return true;
  }
  template <size_t N, class Io>
  Status send(Io& io, bool next) {
    float own = 0, after = 0;
    MessageKey key;
    if (!one_message<N>(false, next, last_[0], own, after, key)) return Status::kCorrupt;
    // exit_call without a dependency: ready' is none. Before the tell, which reads only enter'
    // (and wakes another member, never this one): nothing is kept across it.
    for (size_t l = 0; l < lanes<N>(); ++l) cur_[l] = ideal<N>(l) ? enter_[l] : enter_[l] + double(own);
    last_[0] = key;
    return io.tell(me_, int(key.peer), kP2p, key.a, key.b, enter_.data());
  }
  // `at`: the op byte (need()).
  template <size_t N, class Io>
  Status receive(Io& io, const unsigned char* at, uint8_t op, uint64_t deadline_ns, bool& blocked,
                 bool& late) {
    if (past(at, deadline_ns, late)) return Status::kOk;
    Pending& x = pending_;
    if (x.at == at) {  // resumed: the entry is decoded already
      p_ = x.next;
    } else {
      x.waited = op == kOpRecvW || op == kOpRecvWNext;
      if (!one_message<N>(!x.waited, op == kOpRecvWNext || op == kOpRecvDNext, last_[1], x.own, x.after,
                          x.key))
        return Status::kCorrupt;
      x.at = at;
      x.next = p_;
    }
    bool got = false;
    CRITPATH_FORWARD_IF_ERROR(io.need(me_, int(x.key.peer), kP2p, x.key.a, x.key.b, v_.data(), got));
    if (!got) {  // pending_ keeps the entry
      p_ = at;   // resumes here
      blocked = true;
      return Status::kOk;
    }
    finish_receive<N>(v_.data());
    return Status::kOk;
  }
  // The pending receive's exit, its time told (`v`): exit_call with ready' = max(none, v).
  template <size_t N>
  [[gnu::always_inline]] void finish_receive(const double* v) {
    Pending& x = pending_;
    x.at = nullptr;
    ++needs_;
    const double own = x.own, after = x.after;
    if constexpr (N == 2) {  // unrolled: GCC keeps the loop, testing for the ideal lane per lane
      receive_lane<N>(0, v[0], own, after, x.waited);
      receive_lane<N>(1, v[1], own, after, x.waited);
    } else {
      for (size_t l = 0; l < lanes<N>(); ++l) receive_lane<N>(l, v[l], own, after, x.waited);
    }
    last_[1] = x.key;
  }
  template <size_t N>
  [[gnu::always_inline]] void receive_lane(size_t l, double told, double own, double after, bool waited) {
    const double en = enter_[l], ready = std::max(kNone, told);
    if (ready > kNone) wait_[l] += std::max(0.0, ready - en);
    if (ideal<N>(l)) cur_[l] = std::max(en, ready);
    else if (waited) cur_[l] = std::max(en, ready) + own;
    else cur_[l] = std::max(en + own, ready + after);
  }
  Status take_saved() {
    uint64_t slot = 0;
    if (!var(slot)) return Status::kCorrupt;
    auto it = saved_.find(slot);
    if (it == saved_.end()) return Status::kCorrupt;
    take(ready_, it->second);
    saved_.erase(it);
    return Status::kOk;
  }
  Status exit_call(uint8_t flags) {
    float own_f = 0, after_f = 0;
    if (!raw(own_f)) return Status::kCorrupt;
    const bool has_dep = flags & kExitDep, waited = flags & kExitWaited;
    if (has_dep && !waited && !raw(after_f)) return Status::kCorrupt;
    const double own = own_f, after = after_f;
    for (size_t l = 0; l < V_; ++l) {
      if (ready_[l] > kNone) wait_[l] += std::max(0.0, ready_[l] - enter_[l]);
      if (ideal_[l]) cur_[l] = std::max(enter_[l], ready_[l]);
      else if (waited || !has_dep) cur_[l] = std::max(enter_[l], ready_[l]) + own;
      else cur_[l] = std::max(enter_[l] + own, ready_[l] + after);
    }
    return Status::kOk;
  }
  void take(std::vector<double>& reg, const std::vector<double>& x) {
    for (size_t l = 0; l < V_; ++l) reg[l] = std::max(reg[l], x[l]);
  }
  // The operand readers, a few per operation: inline (a call each cost as much as the read).
  [[gnu::always_inline]] bool byte(uint8_t& v) {
    if (p_ >= end_) return false;
    v = *p_++;
    return true;
  }
  template <typename T>
  [[gnu::always_inline]] bool raw(T& v) {
    if (size_t(end_ - p_) < sizeof v) return false;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return true;
  }
  [[gnu::always_inline]] bool var(uint64_t& v) {
    if (p_ < end_ && *p_ < 0x80) {
      v = *p_++;
      return true;
    }
    return var_long(v);
  }
  [[gnu::noinline]] bool var_long(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const uint8_t c = *p_++;
      v |= uint64_t(c & 0x7f) << shift;
      if (!(c & 0x80)) return true;
    }
    return false;
  }

  const unsigned char* p_;
  const unsigned char* end_;
  int me_;
  const std::vector<uint8_t>& ideal_;  // per lane: the ideal network (c = 0)
  size_t V_;
  std::vector<double> enter_, cur_, ready_, acc_, v_, fin_, wait_;
  bool two_;  // the lanes are identity and ideal network (run_lanes<2>)
  std::unordered_map<uint64_t, std::vector<double>> saved_;
  bool done_ = false;
  uint64_t needs_ = 0, ops_ = 0;
  MessageKey last_[2];  // the last kOpSend*'s and kOpRecv*'s message
  // The kOpRecv* being run or waiting for its time (at: its op byte, or none), decoded:
  // receive() goes on from next.
  struct Pending {
    const unsigned char *at = nullptr, *next = nullptr;
    float own = 0, after = 0;
    MessageKey key;
    bool waited = false;  // kOpRecvW*
  };
  Pending pending_;
  bool delayed_ = false;  // every dependency sleeps (CRITPATH_DEBUG_SIMULATION_DELAY)
};

// The replay of one group of consecutive ranks (ranks_per_group of them; the last group may be
// smaller): its first rank, the leader, holds every member's program and runs them as one
// discrete-event simulation, switching to another member wherever one waits for a time not
// told yet; what a member tells a member waits in memory under (receiver, sender, key), what it
// tells another group's member travels to that group's leader through the engine's mailbox.
// One group of every rank is the gathered replay, groups of one rank the distributed one.
//
// A mailbox batch begins with its kind: a member's program ([ProgramInfo][program], once, to
// its leader), or sim-time entries, each
//   [dest - dest's leader][src - src's leader][type][a][b][lane 0 f64][mask][wide][offsets]
// with the other lanes as offsets to lane 0, only those that differ (`mask` says which): most
// hypotheses leave most of a run's times where they were. An offset is single precision when
// that is exact to a picosecond, else double (`wide` says which).
enum BatchKind : uint8_t { kBatchEntries = 0, kBatchProgram = 1 };
constexpr size_t kProgramHeader = 1 + sizeof(ProgramInfo);  // a program batch's, before the program

// A sim time's name: (receiver, sender, key).
struct Key5 {
  int32_t dest, src;
  uint32_t type, a, b;
  [[gnu::always_inline]] bool operator==(const Key5& o) const { return is(o.dest, o.src, o.type, o.a, o.b); }
  // The comparison and assignment field by field (an executor's every message: no Key5 built
  // in memory to be read back whole).
  [[gnu::always_inline]] bool is(int32_t d, int32_t s, uint32_t t, uint32_t x, uint32_t y) const {
    return ((b ^ y) | (a ^ x) | (type ^ t) | uint32_t(src ^ s) | uint32_t(dest ^ d)) == 0;
  }
  [[gnu::always_inline]] void set(int32_t d, int32_t s, uint32_t t, uint32_t x, uint32_t y) {
    dest = d, src = s, type = t, a = x, b = y;
  }
};

// Key5 -> an index, open addressing (linear probing, deletion by backward shift): a replay
// stores and takes one entry per dependency, most of them soon after, without allocating.
class EntryTable {
 public:
  // False when the key is there already (its index kept).
  bool insert(const Key5& k, size_t v) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    size_t i = home(k);
    for (; slots_[i].full; i = (i + 1) & mask_)
      if (slots_[i].k == k) return false;
    slots_[i] = Slot{k, v, true};
    ++used_;
    return true;
  }
  bool empty() const { return used_ == 0; }
  // The key's index, removed; false when absent.
  bool take(const Key5& k, size_t& v) {
    if (used_ == 0) return false;
    size_t i = home(k);
    for (; slots_[i].full; i = (i + 1) & mask_)
      if (slots_[i].k == k) break;
    if (!slots_[i].full) return false;
    v = slots_[i].v;
    // Backward shift: every later entry of the run that may move to the hole moves there.
    for (size_t j = (i + 1) & mask_; slots_[j].full; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].k);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].full = false;
    --used_;
    return true;
  }

 private:
  struct Slot {
    Key5 k;
    size_t v;
    bool full;
  };
  size_t home(const Key5& k) const {
    const size_t h = KeyHash{}(Key{k.src, k.type, k.a, k.b}) ^
                     (uint64_t(uint32_t(k.dest)) * 0xD6E8FEB86659FD93ull);
    return (h ^ (h >> 29)) & mask_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, 2 * old.size()), Slot{});
    mask_ = slots_.size() - 1;
    used_ = 0;
    for (const Slot& s : old)
      if (s.full) insert(s.k, s.v);
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0, used_ = 0;
};

class GroupReplay final : public ReplayIo {
 public:
  GroupReplay(const engine::Group& group, size_t lanes, int ranks_per_group, double timeout_s,
              uint32_t delay_us)
      : V_(lanes), G_(ranks_per_group), me_(group.rank()), first_(me_ / G_ * G_),
        n_(std::min(G_, group.size() - first_)), box_(group, timeout_s), progs_(size_t(n_)),
        infos_(size_t(n_)), blocked_on_(size_t(n_)), state_(size_t(n_), kRunning), handed_(size_t(n_) * V_),
        delay_us_(delay_us) {}

  bool leader() const { return me_ == first_; }
  bool past_deadline() const { return box_.past_deadline(); }
  uint64_t dependencies() const { return dependencies_; }
  uint64_t bytes() const { return bytes_; }

  // A member: its program (a program batch, kProgramHeader: Simulator::compile) to the leader,
  // as the batch itself.
  Status send_program(std::vector<unsigned char>&& prog) {
    std::vector<unsigned char>& b = box_.batch(first_);
    if (b.empty()) b.swap(prog);
    else b.insert(b.end(), prog.begin(), prog.end());
    return box_.flush_all();
  }

  // The leader: every member's program (its own first: `own`, n bytes as a program batch,
  // which the caller keeps until the replay ended), then the group's replay until every
  // program ended. `late` when the deadline passed first.
  Status run(const unsigned char* own, size_t n, const std::vector<uint8_t>& ideal, uint64_t deadline,
             bool& late) {
    late = false;
    if (!count_program(0, own, n)) return Status::kCorrupt;
    while (programs_ < n_) CRITPATH_FORWARD_IF_ERROR(receive());
    ex_.reserve(size_t(n_));
    ex_.emplace_back(own + kProgramHeader, n - kProgramHeader, first_, ideal, delay_us_ > 0);
    for (int m = 1; m < n_; ++m)
      ex_.emplace_back(progs_[size_t(m)].data() + kProgramHeader, progs_[size_t(m)].size() - kProgramHeader,
                       first_ + m, ideal, delay_us_ > 0);
    resume_here_ = delay_us_ == 0;
    std::vector<int> runnable;
    for (int m = n_ - 1; m >= 0; --m) runnable.push_back(m);
    for (;;) {
      while (!runnable.empty()) {
        int m = runnable.back();
        runnable.pop_back();
        for (;;) {
          bool blocked = false;
          CRITPATH_FORWARD_IF_ERROR(ex_[size_t(m)].run(*this, deadline, blocked, late));
          if (late) return Status::kOk;
          // One member woken and no other to run (a ping-pong's every message): it runs next,
          // as it would from the stack, without the stack.
          if (woken_.size() != 1 || !runnable.empty()) break;
          m = woken_.back();
          woken_.clear();
        }
        for (auto it = woken_.rbegin(); it != woken_.rend(); ++it) runnable.push_back(*it);
        woken_.clear();
      }
      bool all_done = true;
      for (const Executor& e : ex_) all_done &= e.done();
      if (all_done) return Status::kOk;
      // Every member waits for another group: what they wait for needs this group's times.
      CRITPATH_FORWARD_IF_ERROR(flush());
      const Status s = receive();
      if (s != Status::kOk) {
        late = box_.past_deadline();
        return late ? Status::kOk : s;
      }
      for (auto it = woken_.rbegin(); it != woken_.rend(); ++it) runnable.push_back(*it);
      woken_.clear();
    }
  }

  const std::vector<Executor>& executors() const { return ex_; }
  const std::vector<ProgramInfo>& infos() const { return infos_; }

  // After the replay (every rank, also after a failure): what is still under way delivered.
  Status finish() {
    return box_.finish([this](int src, const std::vector<unsigned char>& in) { return take(src, in); });
  }

  // need() and tell() inline where a member hands a member of the group what it waits for
  // (a 2-rank ping-pong's every message), the rest out of line.
  [[gnu::always_inline]] Status need(int me, int src, uint32_t type, uint32_t a, uint32_t b, double* v,
                                     bool& got) override {
    const size_t m = size_t(me - first_);
    if (delay_us_ == 0 && state_[m] == kHanded &&
        blocked_on_[m].is(me, src, type, a, b)) {  // woken: asks again
      state_[m] = kRunning;
      const double* h = handed_.data() + m * V_;
      for (size_t l = 0; l < V_; ++l) v[l] = h[l];
      got = true;
      return Status::kOk;
    }
    if (delay_us_ == 0 && state_[m] == kRunning && where_.empty()) {  // need_stored's answer
      blocked_on_[m].set(me, src, type, a, b);
      state_[m] = kBlocked;
      got = false;
      return Status::kOk;
    }
    return need_stored(Key5{me, src, type, a, b}, v, got);
  }
  [[gnu::noinline]] Status need_stored(const Key5& k, double* v, bool& got) {
    if (delay_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    const size_t m = size_t(k.dest - first_);
    if (state_[m] == kHanded) {  // woken: asks again for what it waited for
      state_[m] = kRunning;
      if (blocked_on_[m] == k) {
        std::copy(handed_.begin() + long(m * V_), handed_.begin() + long(m * V_ + V_), v);
        got = true;
        return Status::kOk;
      }
      --dependencies_;  // (not so: a malformed program) the table's as any other (running now)
      store_in_table(blocked_on_[m], handed_.data() + m * V_);
    }
    size_t at = 0;
    got = where_.take(k, at);
    if (!got) {
      blocked_on_[m] = k;
      state_[m] = kBlocked;
      return Status::kOk;
    }
    std::copy(pool_.begin() + long(at), pool_.begin() + long(at + V_), v);
    free_.push_back(at);
    return Status::kOk;
  }

  [[gnu::always_inline]] Status tell(int me, int dest, uint32_t type, uint32_t a, uint32_t b,
                                     const double* v) override {
    if (dest >= first_ && dest < first_ + n_) {
      store(dest, me, type, a, b, v);
      return Status::kOk;
    }
    return tell_other_group(me, dest, type, a, b, v);
  }
  [[gnu::noinline]] Status tell_other_group(int me, int dest, uint32_t type, uint32_t a, uint32_t b,
                                            const double* v) {
    if (dest < 0 || dest >= box_.size()) return Status::kInvalidArgument;
    const int to = dest / G_ * G_;
    std::vector<unsigned char>& o = box_.batch(to);
    if (o.empty()) {
      o.push_back(kBatchEntries);
      dirty_.push_back(to);
    }
    const size_t at = o.size();
    put_varint(o, uint64_t(dest - to));
    put_varint(o, uint64_t(me - first_));
    put_varint(o, type);
    put_varint(o, a);
    put_varint(o, b);
    put(o, v[0]);
    uint64_t mask = 0, wide = 0;
    for (size_t l = 1; l < V_; ++l) {
      const double d = v[l] - v[0];
      if (d == 0.0) continue;
      mask |= uint64_t(1) << (l - 1);
      if (std::fabs(double(float(d)) - d) > 1e-12) wide |= uint64_t(1) << (l - 1);
    }
    put_varint(o, mask);
    put_varint(o, wide);
    for (size_t l = 1; l < V_; ++l) {
      if (!(mask >> (l - 1) & 1)) continue;
      if (wide >> (l - 1) & 1) put(o, v[l] - v[0]);
      else put(o, float(v[l] - v[0]));
    }
    bytes_ += o.size() - at;
    return box_.appended(to);
  }

  // Posts what other groups wait for.
  Status flush() override {
    for (int d : dirty_) CRITPATH_FORWARD_IF_ERROR(box_.flush(d));
    dirty_.clear();
    return Status::kOk;
  }

 private:
  Status receive() {
    int from = -1;
    std::vector<unsigned char> in;
    CRITPATH_FORWARD_IF_ERROR(box_.next(from, in));
    if (!in.empty() && in[0] == kBatchProgram) return take_program(from, std::move(in));
    return take(from, in);
  }

  // The program batch of the member `src` (not the leader's own: run()).
  Status take_program(int src, std::vector<unsigned char>&& in) {
    const int m = src - first_;
    if (!leader() || m <= 0 || m >= n_ || !progs_[size_t(m)].empty() ||
        !count_program(size_t(m), in.data(), in.size()))
      return Status::kCorrupt;
    progs_[size_t(m)] = std::move(in);
    return Status::kOk;
  }
  // Member m's program batch (n bytes at p) arrived: its facts kept, its bytes and it counted.
  // False when it is no program batch.
  bool count_program(size_t m, const unsigned char* p, size_t n) {
    if (n < kProgramHeader || p[0] != kBatchProgram) return false;
    std::memcpy(&infos_[m], p + 1, sizeof(ProgramInfo));
    bytes_ += n - 1;
    ++programs_;
    return true;
  }

  // A batch from the leader `src` (entries) or from a member (its program).
  Status take(int src, const std::vector<unsigned char>& in) {
    if (in.empty()) return Status::kCorrupt;
    if (in[0] == kBatchProgram) return take_program(src, std::vector<unsigned char>(in));
    size_t at = 1;
    std::vector<double>& v = scratch_;
    v.resize(V_);
    while (at < in.size()) {
      uint64_t dest = 0, from = 0, type = 0, a = 0, b = 0, mask = 0, wide = 0;
      double v0 = 0;
      if (!get_var(in, at, dest) || !get_var(in, at, from) || !get_var(in, at, type) || !get_var(in, at, a) ||
          !get_var(in, at, b) || !get(in, at, v0) || !get_var(in, at, mask) || !get_var(in, at, wide) ||
          dest >= uint64_t(n_))
        return Status::kCorrupt;
      std::fill(v.begin(), v.end(), v0);
      for (size_t l = 1; l < V_; ++l) {
        if (!(mask >> (l - 1) & 1)) continue;
        double d = 0;
        float f = 0;
        if (wide >> (l - 1) & 1 ? !get(in, at, d) : !get(in, at, f)) return Status::kCorrupt;
        v[l] = v0 + (wide >> (l - 1) & 1 ? d : double(f));
      }
      store(first_ + int(dest), src + int(from), uint32_t(type), uint32_t(a), uint32_t(b), v.data());
    }
    return Status::kOk;
  }

  // A time told to a member of this group; wakes it when it waits for just that, handing it
  // over (kHanded) without the table. The key as its fields, in Key5's order (the member told,
  // the teller, ...): no Key5 built in memory on the path a message-bound run's every message
  // takes.
  [[gnu::always_inline]] void store(int32_t dest, int32_t src, uint32_t type, uint32_t a, uint32_t b,
                                    const double* v) {
    const size_t m = size_t(dest - first_);
    if (state_[m] != kRunning && blocked_on_[m].is(dest, src, type, a, b)) {
      if (state_[m] == kBlocked) hand_over(m, v);  // else told twice: the first is kept (inconsistent trace)
      return;
    }
    store_in_table(Key5{dest, src, type, a, b}, v);
  }
  // Member m, blocked on what `v` holds: woken with it, its receive completed right here when
  // it waits in one (a ping-pong's every message: no second look at the operation).
  [[gnu::always_inline]] void hand_over(size_t m, const double* v) {
    // m is a member (below n_), and resume_here_ is set once every member has its executor.
    if (resume_here_ && ex_[m].in_receive()) {
      ex_[m].resume(v);
      state_[m] = kRunning;
    } else {
      double* h = handed_.data() + m * V_;
      for (size_t l = 0; l < V_; ++l) h[l] = v[l];
      state_[m] = kHanded;
    }
    ++dependencies_;
    woken_.push_back(int(m));
  }
  [[gnu::noinline]] void store_in_table(const Key5& k, const double* v) {
    size_t at;
    if (!free_.empty()) {
      at = free_.back();
      free_.pop_back();
    } else {
      at = pool_.size();
      pool_.resize(at + V_);
    }
    std::copy(v, v + V_, pool_.begin() + long(at));
    if (!where_.insert(k, at)) {  // told twice: the first is kept (inconsistent trace)
      free_.push_back(at);
      return;
    }
    ++dependencies_;
  }

  size_t V_;
  int G_, me_, first_, n_;
  engine::Mailbox box_;
  std::vector<std::vector<unsigned char>> progs_;  // the leader's: per member, as its batch
  std::vector<ProgramInfo> infos_;
  int programs_ = 0;  // programs taken (the leader's own too)
  std::vector<Executor> ex_;
  EntryTable where_;  // -> the lanes' first index in pool_
  std::vector<double> pool_, scratch_;
  std::vector<size_t> free_;
  // Per member: running, blocked on blocked_on_, or woken with blocked_on_'s lanes in handed_.
  enum State : uint8_t { kRunning, kBlocked, kHanded };
  std::vector<Key5> blocked_on_;
  std::vector<State> state_;
  std::vector<double> handed_;      // [member][lane]
  std::vector<int> woken_, dirty_;  // members; leaders with a batch not posted
  uint32_t delay_us_;
  // Every member has its executor and no dependency sleeps: hand_over() completes a member's
  // waiting receive itself (one flag where the hand-over tested both).
  bool resume_here_ = false;
  uint64_t dependencies_ = 0, bytes_ = 0;
};

// Ranks per replay group by default (CRITPATH_DEBUG_SIMULATION_REPLAY=auto): as many as
// kGroupBytes of programs (the mean rank's counted for every member: not the largest, since a
// world collective's coordinator, comm rank 0, has a program that grows with the ranks and would
// shrink every group as P grows), at least kGroupMinRanks (a leader holds their programs, about
// 9 to 20 B per MPI call each, beside its own analysis, about 100 B per event) and at most
// kGroupMaxRanks. Dependencies inside a group cost
// no message latency: an oversubscribed run's replay of small programs crosses few groups.
constexpr uint64_t kGroupBytes = uint64_t(1) << 20;
constexpr int kGroupMinRanks = 4, kGroupMaxRanks = 64;

// The replay of one rank (whatif.h: the model): set_factors, index_calls and ask_rma_causes
// prepare (the first and last are collective), compile() turns every call of the main thread,
// in order, into the program's operations (enter, post, complete, exit), and run() executes
// the programs distributed or gathered and reduces the lanes' figures.
class Simulator {
 public:
  Simulator(const WhatIfInput& in, const std::vector<Hypothesis>& lanes, const engine::Group& group)
      : in_(in), t_(*in.timeline), match_(*in.match), lanes_(lanes), group_(group), V_(lanes.size()),
        me_(group.rank()), P_(group.size()), rw_(in.rma_waits ? *in.rma_waits : no_rma_waits()), delta_(V_) {
    for (const Hypothesis& h : lanes) ideal_.push_back(h.kind == LaneKind::kIdealNetwork ? 1 : 0);
  }

  Status run(WhatIfResult& out) {
    const uint64_t t0 = clock::monotonic_ns();
    locate_calls();
    bool threads = false;
    CRITPATH_FORWARD_IF_ERROR(set_factors(threads));
    if (threads) {
      out.failure = "threads other than the main one call MPI (the model replays the main thread)";
      return Status::kOk;
    }
    index_calls();
    CRITPATH_FORWARD_IF_ERROR(ask_rma_causes());
    compile();
    uint64_t total = w_.size() - kProgramHeader;
    CRITPATH_FORWARD_IF_ERROR(group_.allreduce(&total, 1, engine::ReduceOp::kSum));
    out.group_ranks = in_.replay == ReplayMode::kGathered      ? P_
                      : in_.replay == ReplayMode::kDistributed ? 1
                                                               : group_ranks(total / uint64_t(P_));
    out.gathered = out.group_ranks >= P_;
    // The budget is the replay's: the collectives before it (slow when oversubscribed) are not.
    const uint64_t deadline = clock::monotonic_ns() + uint64_t(std::max(1.0, in_.timeout_s) * 1e9);
    return run_grouped(out.group_ranks, t0, deadline, out);
  }

 private:
  int group_ranks(uint64_t mean) const {
    const uint64_t fit = kGroupBytes / std::max<uint64_t>(mean, 1);
    const int g = int(std::clamp<uint64_t>(fit, kGroupMinRanks, kGroupMaxRanks));
    return std::min(g, P_);
  }

  // A communicator's or window's members, their world ranks by comm rank. MPI_COMM_WORLD's
  // are its ranks: held as their number alone, so that no rank holds a list sized by P.
  struct Members {
    bool world = false;
    std::vector<int32_t> list;  // unless world
    int P = 0;                  // world: the ranks
    int32_t operator[](size_t m) const { return world ? int32_t(m) : list[m]; }
    size_t size() const { return world ? size_t(P) : list.size(); }
  };

  // A collective instance as this rank replays it.
  struct Inst {
    const engine::CollRecord* rec;
    const engine::CollSync* cs;
    engine::CollKind kind;
    const Members* members;
    uint32_t in_type, out_type, a, b;  // its keys: (communicator or window, ordinal)
    int n, my, root;
    bool blocking;
  };

  // Location 0's calls are [0, n0_), in call order; the replay runs to MPI_Finalize's entry.
  void locate_calls() {
    if (t_.mpi_locations <= 1 && !t_.calls.empty() && t_.calls.back().location == 0)
      n0_ = t_.calls.size();  // one location calls MPI: every call is location 0's
    while (n0_ < t_.calls.size() && t_.calls[n0_].location == 0) ++n0_;
    init_ = t_.init_call != engine::kNoCall && t_.init_call < n0_ ? t_.init_call : 0;
    fin_ = t_.finalize_call != engine::kNoCall && t_.finalize_call < n0_ ? t_.finalize_call
           : n0_ > 0                                                     ? n0_ - 1
                                                                         : 0;
    have_gaps_ = t_.gap_begin.size() == t_.calls.size() + 1;
  }

  // Factors per lane and local call-path node; balance needs every rank's time in the lane's
  // call paths (the mean over the ranks with any). Collective: one allreduce, which also
  // tells whether any rank's other threads call MPI (`threads`: the model replays the main
  // thread only) and whether any rank asks about one-sided causes (ask_rma_causes).
  Status set_factors(bool& threads) {
    const std::vector<int>& l2g = *in_.local_to_global;
    N_ = l2g.size();
    fac_.assign(V_ * N_, 1.0);
    hit_.assign(V_ * N_, 0);
    for (size_t l = 0; l < V_; ++l) {
      any_slack_ |= lanes_[l].kind == LaneKind::kSlack;
      std::vector<int> ids = lanes_[l].callpaths;
      std::sort(ids.begin(), ids.end());
      for (size_t n = 0; n < N_ && !ids.empty(); ++n)
        if (std::binary_search(ids.begin(), ids.end(), l2g[n])) {
          hit_[l * N_ + n] = 1;
          any_hit_ = true;
        }
    }
    std::vector<double> mine(V_, 0.0);  // (the useful time: compile())
    for (size_t k = init_ + 1; have_gaps_ && any_hit_ && k <= fin_ && k < n0_; ++k) {
      for (uint32_t e = t_.gap_begin[k]; e < t_.gap_begin[k + 1]; ++e) {
        const engine::GapEntry& g = t_.gaps[e];
        if (g.node < 0 || size_t(g.node) >= N_) continue;
        for (size_t l = 0; l < V_; ++l)
          if (hit_[l * N_ + size_t(g.node)]) mine[l] += g.seconds;
      }
    }
    std::vector<double> sums(2 * V_ + 2, 0.0);  // time, ranks with any; threads; one-sided asks
    for (size_t l = 0; l < V_; ++l) {
      sums[l] = mine[l];
      sums[V_ + l] = mine[l] > 0 ? 1.0 : 0.0;
    }
    sums[2 * V_] = t_.mpi_locations > 1 ? 1.0 : 0.0;
    for (uint32_t i = 0; i < rw_.size(); ++i) sums[2 * V_ + 1] += rma_asked(rw_[i]) ? 1.0 : 0.0;
    CRITPATH_FORWARD_IF_ERROR(group_.allreduce(sums.data(), sums.size(), engine::ReduceOp::kSum));
    threads = sums[2 * V_] > 0;
    any_rma_asks_ = sums[2 * V_ + 1] > 0;
    for (size_t l = 0; l < V_; ++l) {
      double f = 1.0;
      switch (lanes_[l].kind) {
        case LaneKind::kBalance:
          f = mine[l] > 0 && sums[V_ + l] > 0 ? (sums[l] / sums[V_ + l]) / mine[l] : 1.0;
          break;
        case LaneKind::kZero:
        case LaneKind::kSlack: f = 0.0; break;
        case LaneKind::kScale: f = lanes_[l].factor; break;
        default: break;
      }
      for (size_t n = 0; n < N_; ++n)
        if (hit_[l * N_ + n]) fac_[l * N_ + n] = f;
    }
    return Status::kOk;
  }

  // The pairs (call_of(i), i) of the replayed calls' items i < n that `keep` keeps (the sends'
  // or receives' matched messages), into `out`: stored by index into room for all of them
  // (unset until stored), then cut, with no capacity check per pair. Whether they came in call
  // order is told as they come (ByCall::build then need not look again).
  template <class CallOf, class Keep>
  bool collect(size_t n, CallOf call_of, Keep keep, std::vector<CallItem>& out) const {
    out.reserve(n + 1);  // and ByCall's sentinel: no regrowth copy for it
    out.resize(n);
    size_t kept = 0;
    bool sorted = true;
    uint32_t last = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t call = call_of(i);
      if (call >= n0_ || !keep(i)) continue;
      sorted &= call >= last;
      last = call;
      out[kept++] = {call, i};
    }
    out.resize(kept);
    return sorted;
  }

  // What each call posts and completes; the collective instances replayed, their ordinals per
  // communicator / window (as sync_collectives numbers them) and members' world ranks.
  void index_calls() {
    std::vector<CallItem> s, r, p, c;
    const bool s_sorted = collect(
        std::min(t_.sends.size(), match_.group.size()), [&](uint32_t i) { return t_.sends[i].call; },
        [&](uint32_t i) { return match_.group[i] != UINT32_MAX; }, s);
    const bool r_sorted = collect(
        std::min(t_.recvs.size(), match_.send_group.size()),
        [&](uint32_t i) { return t_.recvs[i].complete_call; },
        [&](uint32_t i) { return match_.send_group[i] != UINT32_MAX; }, r);
    std::vector<uint32_t> ref_of[2] = {std::vector<uint32_t>(t_.colls.size(), UINT32_MAX),
                                       std::vector<uint32_t>(t_.win_colls.size(), UINT32_MAX)};
    for (int w = 0; w < 2; ++w) {
      const auto& recs = w ? t_.win_colls : t_.colls;
      const std::vector<engine::CollSync>* sync = w ? in_.wsync : in_.csync;
      for (uint32_t i = 0; sync && i < recs.size() && i < sync->size(); ++i) {
        const engine::CollSync& cs = (*sync)[i];
        const engine::CollKind kind = w ? engine::CollKind::kBarrier : recs[i].kind;
        if (!cs.valid || kind == engine::CollKind::kOther || !engine::synchronizes(kind, recs[i].flow, cs))
          continue;
        if (recs[i].call >= n0_ || recs[i].complete_call >= n0_) continue;
        ref_of[w][i] = uint32_t(colls_.size());
        p.push_back({recs[i].call, uint32_t(colls_.size())});
        c.push_back({recs[i].complete_call, uint32_t(colls_.size())});
        colls_.push_back({i, w == 1});
      }
    }
    sends_at_.build(std::move(s), s_sorted);
    recvs_at_.build(std::move(r), r_sorted);
    posts_at_.build(std::move(p));
    completes_at_.build(std::move(c));
    // Every record counts towards its key's ordinal, replayed or not.
    ordinal_.assign(colls_.size(), 0);
    std::map<std::pair<bool, uint32_t>, uint32_t> next;
    for (int w = 0; w < 2; ++w) {
      const auto& recs = w ? t_.win_colls : t_.colls;
      for (uint32_t i = 0; i < recs.size(); ++i) {
        const uint32_t o = next[{w == 1, recs[i].comm}]++;
        if (ref_of[w][i] != UINT32_MAX) ordinal_[ref_of[w][i]] = o;
      }
    }
    std::map<uint32_t, std::vector<int32_t>> windows;
    for (const defs::WindowDef& w : in_.definitions->windows.snapshot()) windows[w.id] = w.members;
    for (const CollRef& c : colls_) {
      const engine::CollRecord& rec = c.window ? t_.win_colls[c.index] : t_.colls[c.index];
      const std::pair<bool, uint32_t> key{c.window, rec.comm};
      if (members_.count(key)) continue;
      Members& m = members_[key];
      m.world = !c.window && rec.comm == defs::kCommWorld;
      m.P = P_;
      if (!m.world)
        m.list = c.window ? windows[rec.comm]
                          : engine::comm_members(in_.definitions->comms, rec.comm, P_, me_);
    }
  }

  // Whether this rank asks the causer of one-sided wait `w` for its cause's time.
  bool rma_asked(const RmaWait& w) const {
    return !w.window_coll && w.causer >= 0 && w.causer < P_ && w.causer != me_ && w.call < n0_ &&
           w.cause_call != engine::kNoCall;
  }

  // Collective unless no rank asks (set_factors): tells every causer which of its calls this
  // rank's one-sided waits depend on.
  Status ask_rma_causes() {
    if (!any_rma_asks_) return Status::kOk;       // rma_need_at_ stays empty
    std::map<int32_t, std::vector<RmaAsk>> asks;  // per causer asked (few: nothing sized by P)
    std::vector<CallItem> need;                   // (waiting call, wait index)
    for (uint32_t i = 0; i < rw_.size(); ++i) {
      const RmaWait& w = rw_[i];
      if (!rma_asked(w)) continue;
      asks[w.causer].push_back({w.cause_call, i, w.cause_time});
      need.push_back({w.call, i});
    }
    rma_need_at_.build(std::move(need));
    std::vector<engine::Comm::Piece> pieces;
    for (const auto& [d, a] : asks)
      pieces.push_back({d, reinterpret_cast<const unsigned char*>(a.data()), a.size() * sizeof(RmaAsk)});
    std::vector<engine::Comm::Parcel> recv;
    CRITPATH_FORWARD_IF_ERROR(group_.exchange(pieces, recv));
    for (const engine::Comm::Parcel& parcel : recv) {
      const int src = parcel.peer;
      const size_t n = parcel.bytes.size() / sizeof(RmaAsk);
      for (size_t j = 0; j < n; ++j) {
        RmaAsk a;
        std::memcpy(&a, parcel.bytes.data() + j * sizeof a, sizeof a);
        const bool replayed = a.call < n0_ && a.call < fin_ && a.call > init_;
        const bool at_exit = replayed && std::fabs(a.time - t_.calls[a.call].exit) <
                                             std::fabs(a.time - t_.calls[a.call].enter);
        (replayed ? rma_tell_[a.call] : rma_tell_now_).push_back({src, a.key, at_exit, a.time});
      }
    }
    return Status::kOk;
  }

  bool instance(uint32_t ref, Inst& x) {
    const CollRef& c = colls_[ref];
    x.rec = c.window ? &t_.win_colls[c.index] : &t_.colls[c.index];
    x.cs = c.window ? &(*in_.wsync)[c.index] : &(*in_.csync)[c.index];
    x.kind = c.window ? engine::CollKind::kBarrier : x.rec->kind;
    x.members = &members_[{c.window, x.rec->comm}];
    x.in_type = c.window ? kWinIn : kCollIn;
    x.out_type = c.window ? kWinOut : kCollOut;
    x.a = x.rec->comm;
    x.b = ordinal_[ref];
    x.n = int(x.members->size());
    x.my = x.cs->my_comm_rank;
    x.root = x.rec->root;
    x.blocking = x.rec->call == x.rec->complete_call;
    return x.n == x.cs->comm_size && x.my >= 0 && x.my < x.n;
  }

  // ---- Emitting operations.
  void op(uint8_t o) { w_.byte(o); }
  // kOpTell / kOpNeed: [reg][peer][type][a][b].
  void keyed(Op o, Reg reg, int peer, uint32_t type, uint32_t a, uint32_t b) {
    if (type == kP2p && (o == kOpTell ? reg == kRegEnter : reg == kRegReady)) {
      op(o == kOpTell ? kOpTellP2p : kOpNeedP2p);
      for (uint64_t v : {uint64_t(peer), uint64_t(a), uint64_t(b)}) w_.var(v);
      return;
    }
    op(o);
    w_.byte(reg);
    for (uint64_t v : {uint64_t(peer), uint64_t(type), uint64_t(a), uint64_t(b)}) w_.var(v);
  }
  void tell(Reg reg, int dest, uint32_t type, uint32_t a, uint32_t b) {
    keyed(kOpTell, reg, dest, type, a, b);
  }
  void need(Reg into, int src, uint32_t type, uint32_t a, uint32_t b) {
    keyed(kOpNeed, into, src, type, a, b);
  }

  // Every call of the main thread, in order, as operations (and the useful time, info_.useful).
  void compile() {
    w_.reserve(size_t(n0_) * 14 + 64);
    for (size_t i = 0; i < kProgramHeader; ++i) w_.byte(0);  // the batch's header (run_grouped)
    for (const RmaTell& x : rma_tell_now_) {                 // causes the replay does not move: as measured
      op(kOpTellAt);
      for (uint64_t v : {uint64_t(x.waiter), uint64_t(kRma), uint64_t(x.key), uint64_t(0)}) w_.var(v);
      w_.raw(x.time);
    }
    bool reached = false;
    // The bound in a local: the program's byte stores may alias any member, which the
    // condition would otherwise read again at every call.
    const size_t end = std::min(n0_, fin_ + 1);
    for (size_t k = 0; k < end; ++k) {
      if (k <= init_) {  // entry as measured
        op(kOpEnterAt);
        w_.raw(t_.calls[k].enter);
      } else {
        const double gap_d = t_.calls[k].enter - t_.calls[k - 1].exit;
        if (have_gaps_) info_.useful += std::max(0.0, gap_d);
        const float gap = float(gap_d);
        const uint8_t changed = gap_deltas(k);
        if (changed == 0 && k != fin_ && one_message(k, gap)) continue;
        enter_gap(gap, changed);
      }
      if (k == fin_) {
        op(kOpEnd);
        w_.byte(kRegEnter);
        info_.fin_m = t_.calls[k].enter;
        reached = true;
        break;
      }
      post(k);
      double ready_m = kNone;
      complete(k, ready_m);
      exit_call(k, ready_m);
    }
    if (!reached) {
      op(kOpEnd);
      w_.byte(kRegCur);
    }
  }

  // The change of call k's gap (after MPI_Init) per lane into delta_; the lanes it changes.
  uint8_t gap_deltas(size_t k) {
    if (!have_gaps_ || !any_hit_) return 0;
    const engine::CallRecord& call = t_.calls[k];
    double frac = 1.0;  // of the gap on the critical path (slack lanes)
    if (any_slack_) {
      static const std::vector<CpSegment> none;
      const double gap = call.enter - t_.calls[k - 1].exit;
      const double o = overlap(in_.cp_segments ? *in_.cp_segments : none, seg_from_, t_.calls[k - 1].exit,
                               call.enter);
      frac = gap > 0 ? std::min(1.0, o / gap) : 0.0;
    }
    std::fill(delta_.begin(), delta_.end(), 0.0);
    for (uint32_t e = t_.gap_begin[k]; e < t_.gap_begin[k + 1]; ++e) {
      const engine::GapEntry& g = t_.gaps[e];
      if (g.node < 0 || size_t(g.node) >= N_) continue;
      for (size_t l = 0; l < V_; ++l)
        if (hit_[l * N_ + size_t(g.node)])
          delta_[l] += g.seconds * (fac_[l * N_ + size_t(g.node)] - 1.0) *
                       (lanes_[l].kind == LaneKind::kSlack ? frac : 1.0);
    }
    uint8_t n = 0;
    for (size_t l = 0; l < V_; ++l) n += float(delta_[l]) != 0.0f ? 1 : 0;
    return n;
  }

  // Entry after MPI_Init: the previous exit' plus the gap, changed on `changed` lanes (delta_).
  void enter_gap(float gap, uint8_t changed) {
    op(changed ? kOpEnterGap : kOpEnterGap0);
    w_.raw(gap);
    if (changed == 0) return;
    w_.byte(changed);
    for (size_t l = 0; l < V_; ++l)
      if (float(delta_[l]) != 0.0f) {
        w_.byte(uint8_t(l));
        w_.raw(float(delta_[l]));
      }
  }

  // Call k (after MPI_Init, before MPI_Finalize, its gap changed on no lane) as kOpSend or
  // kOpRecv* when it sends or receives one message and does nothing else the replay sees.
  bool one_message(size_t k, float gap) {
    // A send or a receive, not both, and not two of its kind (the pair after the call's first is
    // another call's, or the sentinel): the first pairs alone, not counted to their ends.
    const bool sends = sends_at_.from(k) == k;
    if (sends == (recvs_at_.from(k) == k)) return false;
    // The rest once for each kind (its list, key and exit known there, not chosen per call).
    return sends ? message<true>(k, gap) : message<false>(k, gap);
  }
  template <bool kSends>
  [[gnu::always_inline]] bool message(size_t k, float gap) {
    ByCall& mine = kSends ? sends_at_ : recvs_at_;
    if (mine.list[mine.at + 1].first == k || (!rma_tell_.empty() && rma_tell_.count(uint32_t(k))))
      return false;
    if (k >= quiet_until_) {
      quiet_until_ = std::min({posts_at_.from(k), completes_at_.from(k), rma_need_at_.from(k)});
      if (quiet_until_ == k) return false;
    }
    uint32_t peer, a, b;
    double ready_m = kNone;
    if constexpr (kSends) {
      const uint32_t s = mine.list[mine.at].second;
      peer = uint32_t(t_.sends[s].peer), a = match_.group[s], b = match_.pos[s];
    } else {
      const uint32_t r = mine.list[mine.at].second;
      peer = uint32_t(t_.recvs[r].peer), a = match_.send_group[r], b = match_.send_pos[r];
      ready_m = std::max(ready_m, match_.send_enter[r]);
      if (!(ready_m > kNone)) return false;  // no dependency after all: kOpNeedP2p, kOpExit0
    }
    float own = 0, after = 0;
    const uint8_t o = exit_op(k, ready_m, !kSends, own, after);
    MessageKey& last = last_[kSends ? 0 : 1];
    const bool next = peer == last.peer && a == last.a && b == last.b + 1;
    const uint64_t db = zigzag(int64_t(b) - int64_t(last.b));
    last = {peer, a, b};
    unsigned char* p = w_.at(kMaxMessageOp);
    if (next) *p++ = o == kOpExit0 ? kOpSendNext : o == kOpExitW ? kOpRecvWNext : kOpRecvDNext;
    else *p++ = o == kOpExit0 ? kOpSend : o == kOpExitW ? kOpRecvW : kOpRecvD;
    p = ProgramWriter::put_raw(p, gap);
    p = ProgramWriter::put_raw(p, own);
    if (o == kOpExitD) p = ProgramWriter::put_raw(p, after);
    if (!next) {
      p = ProgramWriter::put_var(p, peer);
      p = ProgramWriter::put_var(p, a);
      p = ProgramWriter::put_var(p, db);
    }
    w_.done(p);
    ++mine.at;  // past call k's one pair: the next call's look at the list starts at its own
    return true;
  }
  // The largest kOpSend* / kOpRecv*: the op, three floats, three varints.
  static constexpr size_t kMaxMessageOp = 1 + 3 * sizeof(float) + 3 * 10;

  void tell_rma(size_t k, bool at_exit, Reg reg) {
    if (rma_tell_.empty()) return;
    const auto it = rma_tell_.find(uint32_t(k));
    if (it == rma_tell_.end()) return;
    for (const RmaTell& x : it->second)
      if (x.at_exit == at_exit) tell(reg, x.waiter, kRma, x.key, 0);
  }

  // Posts: messages sent, one-sided causes at entry, collective contributions.
  void post(size_t k) {
    const auto [s0, s1] = sends_at_.of(k);
    for (size_t i = s0; i < s1; ++i) {
      const uint32_t s = sends_at_.list[i].second;
      tell(kRegEnter, t_.sends[s].peer, kP2p, match_.group[s], match_.pos[s]);
    }
    tell_rma(k, false, kRegEnter);
    const auto [p0, p1] = posts_at_.of(k);
    for (size_t i = p0; i < p1; ++i) post_coll(posts_at_.list[i].second);
  }

  // 1 -> N: the root to every member; N -> 1: every member to the root; blocking N x N,
  // barrier and scan: to the coordinator (comm rank 0); nonblocking ones: to every member
  // (a scan: to the higher ranks), since a completion may come long after the post. A
  // nonblocking post whose completion takes its own entry keeps it (kOpSave).
  void post_coll(uint32_t ref) {
    Inst x;
    if (!instance(ref, x)) return;
    const bool takes_own = x.kind == engine::CollKind::kNToOne ? x.my == x.root
                                                               : x.kind != engine::CollKind::kOneToN;
    if (!x.blocking && takes_own && !std::isnan(measured_ready(ref, x))) {
      op(kOpSave);
      w_.var(ref);
    }
    auto to = [&](int m) { tell(kRegEnter, (*x.members)[size_t(m)], x.in_type, x.a, x.b); };
    if (x.kind == engine::CollKind::kOneToN) {
      for (int m = 0; x.my == x.root && m < x.n; ++m)
        if (m != x.my) to(m);
    } else if (x.kind == engine::CollKind::kNToOne) {
      if (x.my != x.root && x.root >= 0 && x.root < x.n) to(x.root);
    } else if (x.blocking) {
      if (x.my != 0) to(0);
    } else {
      for (int m = 0; m < x.n; ++m)
        if (m != x.my && (x.kind != engine::CollKind::kScan || m > x.my)) to(m);
    }
  }

  // Completions: what the call waits for (`ready_m` measured).
  void complete(size_t k, double& ready_m) {
    const auto [r0, r1] = recvs_at_.of(k);
    for (size_t i = r0; i < r1; ++i) {
      const uint32_t r = recvs_at_.list[i].second;
      need(kRegReady, t_.recvs[r].peer, kP2p, match_.send_group[r], match_.send_pos[r]);
      ready_m = std::max(ready_m, match_.send_enter[r]);
    }
    const auto [c0, c1] = completes_at_.of(k);
    for (size_t i = c0; i < c1; ++i) complete_coll(completes_at_.list[i].second, ready_m);
    const auto [w0, w1] = rma_need_at_.of(k);
    for (size_t i = w0; i < w1; ++i) {
      const uint32_t wi = rma_need_at_.list[i].second;
      const RmaWait& w = rw_[wi];
      // A cause after the call's exit did not hold it up (a Win_complete that returned before
      // the late post): no dependency.
      if (w.cause_time > t_.calls[k].exit + 1e-6) continue;
      need(kRegReady, w.causer, kRma, wi, 0);
      ready_m = std::max(ready_m, w.cause_time);
    }
  }

  // What the call waited for in the run: engine::coll_ready's decision (a window collective:
  // every member); NaN: nothing, and the replay makes it wait for nothing either.
  double measured_ready(uint32_t ref, const Inst& x) const {
    return colls_[ref].window ? x.cs->latest_begin : engine::coll_ready(*x.rec, *x.cs);
  }

  // A call that did not wait in the run (NaN) still takes what it is told (the protocol's:
  // the coordinator tells every member), into acc: nothing reads it before the next
  // coordinator sets it (kOpAccEnter).
  void complete_coll(uint32_t ref, double& ready_m) {
    Inst x;
    if (!instance(ref, x)) return;
    const double measured = measured_ready(ref, x);
    const bool waits = !std::isnan(measured);
    const Reg into = waits ? kRegReady : kRegAcc;
    auto take_own = [&] {
      if (!waits) return;
      if (x.blocking) {
        op(kOpTakeEnter);
      } else {
        op(kOpTakeSaved);
        w_.var(ref);
      }
    };
    auto from = [&](Reg into, int m, uint32_t type) { need(into, (*x.members)[size_t(m)], type, x.a, x.b); };
    const bool scan = x.kind == engine::CollKind::kScan;
    const auto take_measured = [&] {
      if (waits) ready_m = std::max(ready_m, measured);
    };
    if (x.kind == engine::CollKind::kOneToN) {
      if (x.my == x.root || x.root < 0 || x.root >= x.n) return;
      from(into, x.root, x.in_type);
      take_measured();
    } else if (x.kind == engine::CollKind::kNToOne) {
      if (x.my != x.root) return;
      take_own();
      for (int m = 0; m < x.n; ++m)
        if (m != x.my) from(into, m, x.in_type);
      take_measured();
    } else if (x.blocking && x.my != 0) {
      from(into, 0, x.out_type);
      take_measured();
    } else if (x.blocking) {
      // The coordinator: every member's enter', the result (a scan: the prefix) to each.
      op(kOpAccEnter);
      for (int m = 1; m < x.n; ++m) {
        from(kRegAcc, m, x.in_type);
        if (scan) tell(kRegAcc, (*x.members)[size_t(m)], x.out_type, x.a, x.b);
      }
      for (int m = 1; !scan && m < x.n; ++m) tell(kRegAcc, (*x.members)[size_t(m)], x.out_type, x.a, x.b);
      if (waits) op(scan ? kOpTakeEnter : kOpTakeAcc);
      take_measured();
      op(kOpFlush);  // the members are waiting for it
    } else {
      take_own();
      for (int m = 0; m < x.n; ++m)
        if (m != x.my && !(scan && m > x.my)) from(into, m, x.in_type);
      take_measured();
    }
  }

  // The latency a dependency adds when the call did not wait for it in the run (the message
  // was there before the receive began): the median of what this rank's latest (up to 1024)
  // waited-for dependencies of the same class (receives / collectives and one-sided) cost
  // after they arrived. 0 before the first.
  // The median is taken of the window as it was after the first 16 and after every 64th
  // dependency (amortized), and only when read: the values are kept in a ring twice the window,
  // so that the window of the last point (at most 63 values back) is still whole there, with no
  // record of the slots overwritten since.
  struct Latency {
    static constexpr size_t kKeep = 1024;
    static constexpr size_t kRing = 2 * kKeep;  // > kKeep + 63, a power of two
    // Grown by doubling up to kRing as values come (most ranks add a few dozen: no 16 KiB
    // to clear per rank); below kRing nothing wrapped, so a value's slot is its index.
    std::vector<double> ring, scratch;
    uint64_t added = 0;
    uint64_t point = 0;  // `added` at the last point
    double median = 0;
    bool stale = false;  // median is not yet the last point's
    void add(double v) {
      if (added == ring.size() && ring.size() < kRing) ring.resize(std::max<size_t>(64, 2 * ring.size()));
      ring[added & (kRing - 1)] = v;
      ++added;
      if (added <= 16 || (added & 63) == 0) {
        point = added;
        stale = true;
      }
    }
    double get() {
      if (stale) {
        const uint64_t n = std::min<uint64_t>(point, kKeep);
        scratch.resize(size_t(n));
        for (uint64_t i = 0; i < n; ++i) scratch[size_t(i)] = ring[(point - n + i) & (kRing - 1)];
        std::nth_element(scratch.begin(), scratch.begin() + long(scratch.size() / 2), scratch.end());
        median = scratch[scratch.size() / 2];
        stale = false;
      }
      return median;
    }
  };

  // Exit: after the entry and what it waited for, plus what the call cost beyond that. A
  // call that waited costs c = exit - ready after its dependency; one that did not, its own
  // c = exit - enter after its entry, and after its dependency at least the latency the
  // rank's waited-for dependencies show (capped so that the unmodified trace replays exactly):
  //   waited:      exit' = max(enter', ready') + (exit - ready)
  //   not waited:  exit' = max(enter' + (exit - enter), ready' + min(L, exit - ready))
  // Only measured figures decide c and L: they are the program's constants.
  // exit_op() writes the exit's kind (kOpExit0, kOpExitW, kOpExitD) and operands (own = c,
  // after = the latency), exit_call() the operation. Inline: once per call, where the call
  // itself cost a fifth of what exit_op does.
  // `receives`: call k completes a receive (its latency class).
  [[gnu::always_inline]] uint8_t exit_op(size_t k, double ready_m, bool receives, float& own_f,
                                         float& after_f) {
    const engine::CallRecord& call = t_.calls[k];
    if (call.exit + 1e-6 < ready_m) ++info_.clamped;  // ended before what it waited for
    const bool has_dep = ready_m > kNone, waited = has_dep && ready_m > call.enter;
    Latency& lat = receives ? p2p_latency_ : coll_latency_;
    const double own = std::max(0.0, call.exit - std::max(call.enter, ready_m));
    double after_dep = own;
    if (waited) lat.add(own);
    else if (has_dep) after_dep = std::min(lat.get(), std::max(0.0, call.exit - ready_m));
    if (has_dep) info_.wait_m += std::max(0.0, ready_m - call.enter);
    own_f = float(own);
    after_f = float(after_dep);
    return !has_dep ? kOpExit0 : waited ? kOpExitW : kOpExitD;
  }
  void exit_call(size_t k, double ready_m) {
    if (k <= init_) {  // as measured
      if (t_.calls[k].exit + 1e-6 < ready_m) ++info_.clamped;
      op(kOpExitAt);
      w_.raw(t_.calls[k].exit);
      return;
    }
    float own = 0, after = 0;
    const uint8_t o = exit_op(k, ready_m, recvs_at_.any(k), own, after);
    op(o);
    w_.raw(own);
    if (o == kOpExitD) w_.raw(after);
    tell_rma(k, true, kRegCur);
  }

  // Every group's leader runs its members' programs, exchanging sim times with the other
  // groups; the lanes' figures reduced over every rank.
  Status run_grouped(int ranks_per_group, uint64_t t0, uint64_t deadline, WhatIfResult& out) {
    GroupReplay rp(group_, V_, ranks_per_group, in_.timeout_s, in_.debug_delay_us);
    bool late = false;
    unsigned char* const prog = w_.data();
    prog[0] = kBatchProgram;
    std::memcpy(prog + 1, &info_, sizeof info_);
    // The leader runs its own program where it was written; a member's travels as its batch.
    Status status = rp.leader() ? rp.run(prog, w_.size(), ideal_, deadline, late)
                                : rp.send_program(std::vector<unsigned char>(prog, prog + w_.size()));
    // Every rank ends its replay the same way, also after a failure (its deadline passed).
    const Status fs = rp.finish();
    w_.release();
    if (status == Status::kOk && !late) status = fs;
    // mx: per lane fin', measured fin, useful maximum, the replay's seconds, whether a rank
    // failed and whether one was late; sum: per lane the waiting time, measured waiting,
    // useful, dependencies, bytes, clamped calls.
    std::vector<double> mx(V_ + 5, -std::numeric_limits<double>::infinity()), sum(V_ + 5, 0.0);
    mx[V_ + 3] = status == Status::kOk && !late ? 0.0 : 1.0;
    mx[V_ + 4] = late || rp.past_deadline() ? 1.0 : 0.0;
    for (size_t m = 0; m < rp.executors().size(); ++m) {
      const Executor& e = rp.executors()[m];
      for (size_t l = 0; l < V_; ++l) {
        mx[l] = std::max(mx[l], e.fin()[l]);
        sum[l] += e.wait()[l];
      }
      const ProgramInfo& i = rp.infos()[m];
      mx[V_] = std::max(mx[V_], i.fin_m);
      mx[V_ + 1] = std::max(mx[V_ + 1], i.useful);
      sum[V_] += i.wait_m;
      sum[V_ + 1] += i.useful;
      sum[V_ + 4] += i.clamped;
    }
    sum[V_ + 2] = double(rp.dependencies());
    sum[V_ + 3] = double(rp.bytes());
    mx[V_ + 2] = double(clock::monotonic_ns() - t0) * 1e-9;
    CRITPATH_FORWARD_IF_ERROR(group_.allreduce(mx.data(), mx.size(), engine::ReduceOp::kMax));
    if (mx[V_ + 3] > 0) {
      // Every rank gives up at its deadline; before it, only an inconsistent trace stops one.
      fail(mx[V_ + 4] > 0, out);
      return Status::kOk;
    }
    CRITPATH_FORWARD_IF_ERROR(group_.allreduce(sum.data(), sum.size(), engine::ReduceOp::kSum));
    fill(mx, sum, mx[V_ + 2], out);
    return Status::kOk;
  }

  void fail(bool late, WhatIfResult& out) const {
    char why[256];
    if (late && in_.budgeted)
      std::snprintf(why, sizeof why,
                    "the replay did not finish within its budget (%.2f s, CRITPATH_SIMULATION_BUDGET "
                    "%% of the run): a message-bound run; `critpath-analyze --whatif` on the kept "
                    "trace (CRITPATH_KEEP_TRACE=1) has none",
                    in_.timeout_s);
    else if (late) std::snprintf(why, sizeof why, "the replay did not finish within %.0f s", in_.timeout_s);
    else std::snprintf(why, sizeof why, "the replay met an inconsistent trace");
    out.failure = why;
    out.over_budget = late;
  }

  // mx: per lane the latest fin', then the measured fin and useful maximum; sum: per lane the
  // waiting time, then measured waiting, useful time, messages, bytes, clamped calls.
  void fill(const std::vector<double>& mx, const std::vector<double>& sum, double seconds,
            WhatIfResult& out) const {
    out.ok = true;
    for (size_t l = 0; l < V_; ++l) {
      out.span.push_back(mx[l] - in_.first_init_enter);
      out.pop_span.push_back(mx[l] - in_.earliest_init_exit);
      out.wait.push_back(sum[l]);
    }
    out.measured_span = mx[V_] - in_.first_init_enter;
    out.measured_pop_span = mx[V_] - in_.earliest_init_exit;
    out.measured_wait = sum[V_];
    out.useful_max = mx[V_ + 1];
    out.useful_sum = sum[V_ + 1];
    out.messages = uint64_t(sum[V_ + 2]);
    out.bytes_sent = uint64_t(sum[V_ + 3]);
    out.clamped = uint64_t(sum[V_ + 4]);
    out.seconds = seconds;
  }

  const WhatIfInput& in_;
  const engine::Timeline& t_;
  const engine::P2pMatch& match_;
  const std::vector<Hypothesis>& lanes_;
  const engine::Group& group_;
  const size_t V_;
  const int me_, P_;
  const std::vector<RmaWait>& rw_;
  std::vector<uint8_t> ideal_;  // per lane
  size_t N_ = 0, n0_ = 0, init_ = 0, fin_ = 0, seg_from_ = 0;
  bool have_gaps_ = false, any_slack_ = false;
  std::vector<double> fac_;    // [lane][node]
  std::vector<uint8_t> hit_;   // [lane][node]: the lane changes the node's time
  bool any_hit_ = false;       // on any lane and node
  bool any_rma_asks_ = false;  // some rank asks about one-sided causes (set_factors)
  ByCall sends_at_, recvs_at_, posts_at_, completes_at_, rma_need_at_;
  // The calls before it post no collective, complete none and wait for no one-sided cause
  // (one_message: one look at the three lists per stretch of such calls, not three per call).
  size_t quiet_until_ = 0;
  std::vector<CollRef> colls_;
  std::vector<uint32_t> ordinal_;
  std::map<std::pair<bool, uint32_t>, Members> members_;
  std::map<uint32_t, std::vector<RmaTell>> rma_tell_;  // causer's call -> whom to tell
  std::vector<RmaTell> rma_tell_now_;                  // causes outside the replayed calls
  std::vector<double> delta_;                          // scratch: per lane, one gap's change
  ProgramWriter w_;                                    // the program
  MessageKey last_[2];                                 // the last kOpSend* / kOpRecv*'s message
  ProgramInfo info_;
  Latency p2p_latency_, coll_latency_;
};

}  // namespace

Status simulate(const WhatIfInput& in, const std::vector<Hypothesis>& lanes, const engine::Group& group,
                WhatIfResult& out) {
  out = WhatIfResult{};
  out.ranks = group.size();
  if (lanes.empty()) return Status::kOk;
  if (lanes.size() > kMaxLanes) return Status::kInvalidArgument;  // rank 0 keeps to it
  Simulator sim(in, lanes, group);
  return sim.run(out);
}

}  // namespace critpath::analyzer::passes
