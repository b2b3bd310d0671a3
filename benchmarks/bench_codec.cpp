// critpath — benchmarks/bench_codec.cpp
//
// Figures for the buffer stage's codec (libtrace/buffer/codec.h): how many bytes an event
// costs after the varint stage and after zstd, and how fast chunks are encoded+compressed
// and decoded. Three synthetic traces, cut into raw chunks of 16384 slots as the recorder
// does:
//
//   loop    nested ENTER/EXIT of a few regions; TSC at 2.6 GHz, per-region durations with
//           1 % + 12 ticks of Gaussian jitter and a rare interrupt-sized gap
//   mpi     the same clock around an MPI-like halo loop: Irecv/Isend/Waitall with requests,
//           an Allreduce every 4th and a Send/Recv pair every 8th iteration, call sites,
//           exponentially distributed wait times
//   random  every kind with random field values (a worst case; nothing repeats)
//
// For comparison it also prints the size of an interleaved stream (kind, time delta, fields
// per event; no time prediction), the simple layout the column-split format replaced.
//
// Output: one `codec.<trace>.<figure>: <value> <unit>` line per figure. Benchmarks print,
// they never assert. Usage: critpath_bench_codec [events per trace, default 4000000]
#include <zstd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "libtrace/buffer/codec.h"
#include "libtrace/event/event.h"

using namespace critpath;
using namespace critpath::trace;

namespace {

// A benchmark whose setup fails measures nothing: it stops with the reason.
void must(Status s) {
  if (s == Status::kOk) return;
  std::fprintf(stderr, "benchmark setup failed: %s\n", to_string(s));
  std::exit(1);
}

constexpr size_t kChunkSlots = 16384;

// ---------------------------------------------------------------------------------------
// Trace generators.

// A TSC-like clock: advance(ns) moves by ns at `ghz` with relative and absolute jitter,
// and about one step in 2000 picks up an interrupt-sized gap (8-80 us).
struct Tsc {
  std::mt19937_64 rng;
  double ghz = 2.6;
  uint64_t t = 1234567890123ull;
  std::normal_distribution<double> normal{0.0, 1.0};
  explicit Tsc(uint64_t seed) : rng(seed) {}
  uint64_t advance(double ns, double rel = 0.01, double abs_ticks = 12) {
    const double base = ns * ghz;
    double d = base + normal(rng) * (base * rel + abs_ticks);
    if (rng() % 2000 == 0) d += std::uniform_real_distribution<double>(2e4, 2e5)(rng);
    t += d < 1 ? 1 : uint64_t(d);
    return t;
  }
};

std::vector<Event> gen_loop(size_t n, uint64_t seed) {
  Tsc c(seed);
  std::vector<Event> v;
  v.reserve(n + 16);
  auto rg = [&](EventKind k, uint32_t r, double ns) {
    Event e;
    e.kind = k;
    e.region = r;
    e.time = c.advance(ns);
    v.push_back(e);
  };
  while (v.size() < n) {
    rg(EventKind::kEnter, 1, 40);  // iteration
    rg(EventKind::kEnter, 2, 30);  //   compute
    rg(EventKind::kEnter, 3, 20);  //     kernel a
    rg(EventKind::kExit, 3, 1800);
    rg(EventKind::kEnter, 4, 15);  //     kernel b
    rg(EventKind::kExit, 4, 650);
    rg(EventKind::kExit, 2, 25);
    rg(EventKind::kEnter, 5, 30);  //   helper
    rg(EventKind::kExit, 5, 120);
    rg(EventKind::kExit, 1, 35);
  }
  v.resize(n);
  return v;
}

std::vector<Event> gen_mpi(size_t n, uint64_t seed) {
  Tsc c(seed);
  std::mt19937_64 rng(seed * 7 + 1);
  std::exponential_distribution<double> wait(1.0 / 2000.0);  // ns
  std::vector<Event> v;
  v.reserve(n + 64);
  uint64_t next_request = 1;
  const int left = 3, right = 5;
  auto push = [&](Event e, double ns, double rel = 0.01) {
    e.time = c.advance(ns, rel);
    v.push_back(e);
  };
  auto rg = [&](EventKind k, uint32_t r, double ns) {
    Event e;
    e.kind = k;
    e.region = r;
    push(e, ns);
  };
  auto callsite = [&](uint32_t id) { rg(EventKind::kCallsite, id, 10); };
  for (int it = 1; v.size() < n; ++it) {
    rg(EventKind::kEnter, 1, 40);  // iteration
    rg(EventKind::kEnter, 2, 30);  // compute
    rg(EventKind::kExit, 2, 20000);
    uint64_t req[4];
    for (int k = 0; k < 2; ++k) {
      callsite(100 + k);
      rg(EventKind::kEnter, 1001, 20);  // MPI_Irecv
      Event e;
      e.kind = EventKind::kIrecvRequest;
      e.request = req[k] = next_request++;
      push(e, 150);
      rg(EventKind::kExit, 1001, 60);
    }
    for (int k = 0; k < 2; ++k) {
      callsite(102 + k);
      rg(EventKind::kEnter, 1002, 20);  // MPI_Isend
      Event e;
      e.kind = EventKind::kIsend;
      e.peer = k ? right : left;
      e.tag = 17;
      e.comm = 1;
      e.bytes = 65536;
      e.request = req[2 + k] = next_request++;
      push(e, 400);
      rg(EventKind::kExit, 1002, 80);
    }
    callsite(104);
    rg(EventKind::kEnter, 1003, 20);  // MPI_Waitall
    for (int k = 0; k < 2; ++k) {
      Event e;
      e.kind = EventKind::kIrecv;
      e.peer = k ? left : right;
      e.tag = 17;
      e.comm = 1;
      e.bytes = 65536;
      e.request = req[k];
      push(e, k == 0 ? wait(rng) + 300 : 200, 0.05);
    }
    for (int k = 0; k < 2; ++k) {
      Event e;
      e.kind = EventKind::kIsendComplete;
      e.request = req[2 + k];
      push(e, 90);
    }
    rg(EventKind::kExit, 1003, 50);
    if (it % 4 == 0) {
      callsite(105);
      rg(EventKind::kEnter, 1004, 20);  // MPI_Allreduce
      Event b;
      b.kind = EventKind::kCollBegin;
      push(b, 30);
      Event e;
      e.kind = EventKind::kCollEnd;
      e.region = 1004;
      e.root = -1;
      e.bytes = 8;
      e.bytes_received = 8;
      push(e, wait(rng) * 2 + 1500, 0.05);
      rg(EventKind::kExit, 1004, 40);
    }
    if (it % 8 == 0) {
      callsite(106);
      rg(EventKind::kEnter, 1005, 20);  // MPI_Send
      Event s;
      s.kind = EventKind::kSend;
      s.peer = right;
      s.tag = 3;
      s.bytes = 1024;
      push(s, 600);
      rg(EventKind::kExit, 1005, 90);
      callsite(107);
      rg(EventKind::kEnter, 1006, 20);  // MPI_Recv
      Event r;
      r.kind = EventKind::kRecv;
      r.peer = left;
      r.tag = 3;
      r.bytes = 1024;
      push(r, wait(rng) + 400, 0.05);
      rg(EventKind::kExit, 1006, 60);
    }
    rg(EventKind::kExit, 1, 30);
  }
  v.resize(n);
  return v;
}

std::vector<Event> gen_random(size_t n, uint64_t seed) {
  // clang-format off
  static const EventKind kinds[] = {
      EventKind::kEnter,        EventKind::kExit,          EventKind::kSend,
      EventKind::kRecv,         EventKind::kIsend,         EventKind::kIsendComplete,
      EventKind::kIrecvRequest, EventKind::kIrecv,         EventKind::kRequestCancel,
      EventKind::kCollBegin,    EventKind::kCollEnd,       EventKind::kIcollPost,
      EventKind::kIcollComplete, EventKind::kRmaPut,       EventKind::kRmaSync,
      EventKind::kCounters,     EventKind::kCallsite};
  // clang-format on
  std::mt19937_64 rng(seed);
  std::vector<Event> v(n);
  uint64_t t = 1000;
  for (Event& e : v) {
    e.kind = kinds[rng() % (sizeof kinds / sizeof kinds[0])];
    t += rng() % 100000;
    e.time = t;
    switch (e.kind) {
      case EventKind::kEnter:
      case EventKind::kExit:
      case EventKind::kCallsite: e.region = uint32_t(rng() % 100000); break;
      case EventKind::kCollBegin: break;
      case EventKind::kCounters:
        e.bytes = kMaxCounters;
        for (uint64_t& x : e.counters) x = rng();
        break;
      default:
        e.region = e.kind == EventKind::kCollEnd || e.kind == EventKind::kIcollPost ||
                           e.kind == EventKind::kRmaSync
                       ? uint32_t(rng() % 1000)
                       : 0;
        e.comm = uint32_t(rng() % 1000);
        e.peer = int32_t(rng() % 100000) - 2;
        e.tag = int32_t(rng() >> 33);
        e.bytes = rng() >> 24;
        e.request = rng() >> 8;
        if (e.kind == EventKind::kIsendComplete || e.kind == EventKind::kIrecvRequest ||
            e.kind == EventKind::kRequestCancel || e.kind == EventKind::kIcollComplete)
          e.region = e.comm = 0, e.peer = e.tag = 0, e.bytes = 0;
        if (e.kind == EventKind::kCollEnd || e.kind == EventKind::kIcollPost) {
          e.root = e.peer, e.peer = 0, e.tag = 0, e.bytes_received = rng() >> 24;
          if (e.kind == EventKind::kCollEnd) e.request = 0;
        }
        if (e.kind == EventKind::kSend || e.kind == EventKind::kRecv) e.request = 0;
        break;
    }
  }
  return v;
}

// Raw chunks exactly as the recorder cuts them: a chunk is handed off once fewer than
// kMaxEventSlots slots are left.
std::vector<std::vector<Slot>> to_chunks(const std::vector<Event>& events) {
  std::vector<std::vector<Slot>> chunks;
  std::vector<Slot> cur(kChunkSlots + kMaxEventSlots);
  size_t pos = 0;
  for (const Event& e : events) {
    pos += event_to_slots(e, cur.data() + pos);
    if (pos + kMaxEventSlots > kChunkSlots) {
      chunks.emplace_back(cur.begin(), cur.begin() + long(pos));
      pos = 0;
    }
  }
  if (pos) chunks.emplace_back(cur.begin(), cur.begin() + long(pos));
  return chunks;
}

// ---------------------------------------------------------------------------------------
// The interleaved reference layout (per event: kind, zigzag time delta vs the previous
// event, fields; request ids delta-coded), kept only to document the layout choice.
void put_varint(std::vector<uint8_t>& o, uint64_t v) {
  while (v >= 0x80) {
    o.push_back(uint8_t(v) | 0x80);
    v >>= 7;
  }
  o.push_back(uint8_t(v));
}
uint64_t zz(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }

void encode_interleaved(const std::vector<Event>& ev, std::vector<uint8_t>& o) {
  o.clear();
  uint64_t prev_t = ev.empty() ? 0 : ev[0].time;
  uint64_t prev_req = 0;
  uint64_t prev_ctr[kMaxCounters] = {};
  auto req = [&](uint64_t r) {
    put_varint(o, zz(int64_t(r - prev_req)));
    prev_req = r;
  };
  for (const Event& e : ev) {
    o.push_back(uint8_t(e.kind));
    put_varint(o, zz(int64_t(e.time - prev_t)));
    prev_t = e.time;
    switch (e.kind) {
      case EventKind::kSend:
      case EventKind::kRecv:
      case EventKind::kIsend:
      case EventKind::kIrecv:
        put_varint(o, e.comm);
        put_varint(o, zz(e.peer));
        put_varint(o, zz(e.tag));
        put_varint(o, e.bytes);
        if (e.kind == EventKind::kIsend || e.kind == EventKind::kIrecv) req(e.request);
        break;
      case EventKind::kIsendComplete:
      case EventKind::kIrecvRequest:
      case EventKind::kRequestTest:
      case EventKind::kRequestCancel:
      case EventKind::kIcollComplete: req(e.request); break;
      case EventKind::kCollBegin: break;
      case EventKind::kCollEnd:
      case EventKind::kIcollPost:
        put_varint(o, e.region);
        put_varint(o, e.comm);
        put_varint(o, zz(e.root));
        put_varint(o, e.bytes);
        put_varint(o, e.bytes_received);
        req(e.request);
        break;
      case EventKind::kCounters:
        put_varint(o, e.bytes);
        for (uint64_t i = 0; i < e.bytes && i < kMaxCounters; ++i) {
          put_varint(o, zz(int64_t(e.counters[i] - prev_ctr[i])));
          prev_ctr[i] = e.counters[i];
        }
        break;
      default:
        if (uint8_t(e.kind) >= uint8_t(EventKind::kRmaFirst) &&
            uint8_t(e.kind) <= uint8_t(EventKind::kRmaLast)) {
          put_varint(o, e.comm);
          put_varint(o, zz(e.peer));
          put_varint(o, e.region);
          put_varint(o, e.bytes);
          put_varint(o, e.request);
          put_varint(o, zz(e.root));
        } else {
          put_varint(o, e.region);
        }
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void run(const char* name, const std::vector<Event>& events) {
  const double n = double(events.size());
  const std::vector<std::vector<Slot>> chunks = to_chunks(events);
  double slot_bytes = 0;
  for (const auto& c : chunks) slot_bytes += double(c.size() * sizeof(Slot));
  std::printf("codec.%s.events: %zu events\n", name, events.size());
  std::printf("codec.%s.chunks: %zu chunks\n", name, chunks.size());
  std::printf("codec.%s.raw_slots: %.3f B/event\n", name, slot_bytes / n);

  // Varint stage alone, into one reused buffer (best of 3); the streams are kept for the
  // zstd-alone figure below.
  std::vector<std::vector<uint8_t>> streams(chunks.size());
  std::vector<uint8_t> scratch;
  double encoded = 0, t_encode = 1e30;
  auto t0 = Clock::now();
  for (int rep = 0; rep < 3; ++rep) {
    double t_rep = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      ChunkHeader h;
      scratch.clear();
      t0 = Clock::now();
      must(encode_slots(chunks[i].data(), chunks[i].data() + chunks[i].size(), scratch, h));
      t_rep += seconds_since(t0);
      if (rep == 0) streams[i] = scratch;
    }
    t_encode = std::min(t_encode, t_rep);
  }
  for (const auto& s : streams) encoded += double(s.size());
  std::printf("codec.%s.varint_stream: %.3f B/event\n", name, encoded / n);
  std::printf("codec.%s.encode: %.2f ns/event\n", name, t_encode * 1e9 / n);

  for (int level : {1, 3}) {
    // zstd alone on the varint streams.
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    std::vector<uint8_t> dst;
    double t_zstd = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      t0 = Clock::now();
      for (const auto& s : streams) {
        dst.resize(ZSTD_compressBound(s.size()));
        ZSTD_compressCCtx(cctx, dst.data(), dst.size(), s.data(), s.size(), level);
      }
      t_zstd = std::min(t_zstd, seconds_since(t0));
    }
    ZSTD_freeCCtx(cctx);

    // The full chunk path (best of 3 for timing; sizes are deterministic).
    ChunkCompressor comp(level);
    std::vector<std::vector<uint8_t>> out(chunks.size());
    double t_full = 1e30, stored = 0;
    for (int rep = 0; rep < 3; ++rep) {
      stored = 0;
      t0 = Clock::now();
      for (size_t i = 0; i < chunks.size(); ++i) {
        must(comp.compress(chunks[i].data(), chunks[i].data() + chunks[i].size(), 0, uint32_t(i), out[i]));
        stored += double(out[i].size());
      }
      t_full = std::min(t_full, seconds_since(t0));
    }
    std::printf("codec.%s.zstd%d.compressed: %.3f B/event\n", name, level, stored / n);
    std::printf("codec.%s.zstd%d.ratio_vs_slots: %.1f x\n", name, level, slot_bytes / stored);
    std::printf("codec.%s.zstd%d.compress_slot_input: %.0f MB/s\n", name, level, slot_bytes / t_full / 1e6);
    std::printf("codec.%s.zstd%d.compress_varint_stream: %.0f MB/s\n", name, level, encoded / t_zstd / 1e6);
    std::printf("codec.%s.zstd%d.encode_compress: %.2f ns/event\n", name, level, t_full * 1e9 / n);

    // Decode (best of 3).
    ChunkDecoder dec;
    std::vector<Event> ev;
    double t_dec = 1e30;
    bool ok = true;
    for (int rep = 0; rep < 3; ++rep) {
      t0 = Clock::now();
      for (const auto& c : out) {
        ChunkHeader h;
        ok = ok && dec.decode(c.data(), c.size(), h, ev) == Status::kOk;
      }
      t_dec = std::min(t_dec, seconds_since(t0));
    }
    std::printf("codec.%s.zstd%d.decode: %.2f ns/event%s\n", name, level, t_dec * 1e9 / n,
                ok ? "" : " (DECODE ERRORS)");
  }

  // The interleaved reference layout, same chunking (by events per chunk).
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  double inter_raw = 0, inter_l1 = 0;
  std::vector<uint8_t> buf, dst;
  size_t at = 0;
  for (const auto& c : chunks) {
    size_t count = 0;
    for (size_t s = 0; s < c.size(); s += 1 + c[s].nextra) ++count;
    std::vector<Event> part(events.begin() + long(at), events.begin() + long(at + count));
    at += count;
    encode_interleaved(part, buf);
    inter_raw += double(buf.size());
    dst.resize(ZSTD_compressBound(buf.size()));
    inter_l1 += double(ZSTD_compressCCtx(cctx, dst.data(), dst.size(), buf.data(), buf.size(), 1));
  }
  ZSTD_freeCCtx(cctx);
  std::printf("codec.%s.interleaved.varint_stream: %.3f B/event\n", name, inter_raw / n);
  std::printf("codec.%s.interleaved.zstd1.compressed: %.3f B/event\n", name, inter_l1 / n);
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 4000000;
  if (argc > 1) n = size_t(std::strtoull(argv[1], nullptr, 10));
  if (n == 0) n = 1;
  std::printf("codec.config.chunk_slots: %zu slots\n", kChunkSlots);
  std::printf("codec.config.zstd: %s version\n", ZSTD_versionString());
  run("loop", gen_loop(n, 1));
  run("mpi", gen_mpi(n, 2));
  run("random", gen_random(n, 3));
  return 0;
}
