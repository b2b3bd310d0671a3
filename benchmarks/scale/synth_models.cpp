// critpath — benchmarks/scale/synth_models.cpp
#include "synth_models.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <tuple>
#include <utility>

namespace critpath::synth {

namespace {

constexpr uint64_t kBase = 1000000000;  // MPI_Init entry of every rank (ns of the model clock)
constexpr int kTagData = 1, kTagResult = 2, kTagStop = 3;

// The model machine: every rank's clock, the wait states as they arise, and the calls that
// write the events. Ranks are world ranks; messages go over MPI_COMM_WORLD.
class Machine {
 public:
  Machine(const ModelParams& p, SynthTrace& trace, const char* model)
      : p_(p), trace_(trace), t_(size_t(p.ranks)) {
    const size_t n = size_t(p.ranks);
    a_.model = model;
    a_.late_sender.assign(n, 0);
    a_.late_receiver.assign(n, 0);
    a_.wait_nxn.assign(n, 0);
    a_.wait_finalize.assign(n, 0);
  }
  uint64_t& t(int r) { return t_[size_t(r)]; }
  uint64_t xfer(uint64_t bytes) const { return p_.latency_ns + bytes * p_.ns_per_kib / 1024; }
  SynthTrace& trace() { return trace_; }
  Answers& answers() { return a_; }

  void init() {
    a_.begin = kBase;
    for (int r = 0; r < p_.ranks; ++r) {
      trace_.init(r, kBase, kBase + p_.init_ns);
      t(r) = kBase + p_.init_ns;
    }
  }
  void finalize() {
    const uint64_t last = *std::max_element(t_.begin(), t_.end());
    for (int r = 0; r < p_.ranks; ++r) {
      a_.wait_finalize[size_t(r)] += last - t(r);
      trace_.finalize(r, t(r), last + p_.finalize_ns);
    }
    a_.end = last;  // the run ends, for the analysis, where its analysis starts
  }
  void allreduce() {
    const uint64_t last = *std::max_element(t_.begin(), t_.end());
    for (int r = 0; r < p_.ranks; ++r) {
      a_.wait_nxn[size_t(r)] += last - t(r);
      if (last > t(r)) a_.wait_nxn_instances.push_back(last - t(r));
      trace_.allreduce(r, 8, t(r), last + p_.coll_ns);
      t(r) = last + p_.coll_ns;
    }
  }
  struct Sent {
    uint64_t enter, exit;
  };
  Sent send(int r, int to, int tag, uint64_t bytes) {
    const Sent s{t(r), t(r) + p_.send_ns};
    trace_.send(r, to, tag, bytes, s.enter, s.exit);
    t(r) = s.exit;
    return s;
  }
  // Rank r receives what `from` sent at `s`: the late sender on r, a late receiver on `from`
  // when r posted the receive while the send was still in its call.
  void recv(int r, int from, int tag, uint64_t bytes, Sent s) {
    const uint64_t enter = t(r);
    const uint64_t exit = std::max(enter + p_.recv_ns, s.enter + xfer(bytes));
    if (s.enter > enter) {
      a_.late_sender[size_t(r)] += s.enter - enter;
      a_.late_sender_instances.push_back(s.enter - enter);
    }
    if (s.enter < enter && s.exit > enter) {
      a_.late_receiver[size_t(from)] += enter - s.enter;
      a_.late_receiver_instances.push_back(enter - s.enter);
    }
    trace_.recv(r, from, tag, bytes, enter, exit);
    t(r) = exit;
  }
  void compute(int r, uint64_t ns) {
    const uint32_t region = trace_.user_region(UserRegion::kCompute);
    trace_.enter(r, region, t(r));
    t(r) += ns;
    trace_.exit(r, region, t(r));
  }

 private:
  const ModelParams& p_;
  SynthTrace& trace_;
  std::vector<uint64_t> t_;
  Answers a_;
};

// The factors of n, largest first.
std::vector<int> prime_factors(int n) {
  std::vector<int> f;
  for (int d = 2; d * d <= n; ++d)
    while (n % d == 0) {
      f.push_back(d);
      n /= d;
    }
  if (n > 1) f.push_back(n);
  std::sort(f.rbegin(), f.rend());
  return f;
}

// A balanced grid of `dims` dimensions holding n ranks (as MPI_Dims_create), largest first.
std::vector<int> balanced_grid(int n, int dims) {
  std::vector<int> g(size_t(dims), 1);
  for (int f : prime_factors(n)) *std::min_element(g.begin(), g.end()) *= f;
  std::sort(g.rbegin(), g.rend());
  return g;
}

}  // namespace

// (a) Sweep3D-like: a Px x Py grid (x fastest in the rank number), `iterations` times four
// sweeps from the corners (0,0), (Px-1,Py-1), (Px-1,0), (0,Py-1); each sweep pipelines
// `planes` blocks: receive from the upstream x then y neighbour, compute (border_ns in the
// columns x = 0 and x = Px-1, compute_ns elsewhere), send downstream in x then y. An
// MPI_Allreduce ends each iteration.
Answers run_wavefront(const ModelParams& p, SynthTrace& trace) {
  Machine m(p, trace, "wavefront");
  const std::vector<int> g = balanced_grid(p.ranks, 2);
  const int px = g[1], py = g[0];  // the shorter side along x
  m.answers().grid = {px, py};
  const uint32_t sweep = trace.user_region(UserRegion::kSweep);
  std::vector<Machine::Sent> sent_x(size_t(p.ranks)), sent_y(size_t(p.ranks));
  m.init();
  const int corners[4][2] = {{0, 0}, {px - 1, py - 1}, {px - 1, 0}, {0, py - 1}};
  for (int it = 0; it < p.iterations; ++it) {
    for (const auto& c : corners) {
      const int dx = c[0] == 0 ? 1 : -1, dy = c[1] == 0 ? 1 : -1;
      // The ranks in order of their distance from the corner: upstream ranks come first.
      std::vector<int> order(size_t(p.ranks));
      for (int r = 0; r < p.ranks; ++r) order[size_t(r)] = r;
      auto dist = [&](int r) { return std::abs(r % px - c[0]) + std::abs(r / px - c[1]); };
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return dist(a) < dist(b); });
      for (int k = 0; k < p.planes; ++k)
        for (int r : order) {
          const int x = r % px, y = r / px;
          if (k == 0) trace.enter(r, sweep, m.t(r));
          if (x - dx >= 0 && x - dx < px) m.recv(r, r - dx, kTagData, p.bytes, sent_x[size_t(r - dx)]);
          if (y - dy >= 0 && y - dy < py)
            m.recv(r, r - dy * px, kTagData, p.bytes, sent_y[size_t(r - dy * px)]);
          m.compute(r, x == 0 || x == px - 1 ? p.border_ns : p.compute_ns);
          if (x + dx >= 0 && x + dx < px) sent_x[size_t(r)] = m.send(r, r + dx, kTagData, p.bytes);
          if (y + dy >= 0 && y + dy < py) sent_y[size_t(r)] = m.send(r, r + dy * px, kTagData, p.bytes);
          if (k == p.planes - 1) trace.exit(r, sweep, m.t(r));
        }
    }
    m.allreduce();
  }
  m.finalize();
  return m.answers();
}

// (b) 3-D halo exchange: a balanced X x Y x Z grid (x fastest), per iteration an `exchange`
// region (Irecv from each existing neighbour -x, +x, -y, +y, -z, +z, Isend to each, Waitall),
// `compute` (compute_ns, slow_ns more on the slow rank) and an MPI_Allreduce. Every rank
// posts in the same time slots (a missing neighbour leaves its slot empty) and its Waitall
// ends when the last possible message has arrived, so the exchange costs every rank the same
// and holds no wait state: all waiting is at the Allreduce, for the slow rank.
Answers run_halo(const ModelParams& p, SynthTrace& trace) {
  Machine m(p, trace, "halo");
  const std::vector<int> g = balanced_grid(p.ranks, 3);
  const int nx = g[2], ny = g[1], nz = g[0];
  m.answers().grid = {nx, ny, nz};
  const int slow = p.slow_rank >= 0 ? p.slow_rank % p.ranks : p.ranks / 2;
  const uint64_t slot = p.send_ns;  // one Irecv or Isend slot; the call takes half of it
  const uint32_t exchange = trace.user_region(UserRegion::kExchange);
  m.init();
  for (int it = 0; it < p.iterations; ++it) {
    for (int r = 0; r < p.ranks; ++r) {
      const int c[3] = {r % nx, (r / nx) % ny, r / (nx * ny)};
      const int n[3] = {nx, ny, nz}, stride[3] = {1, nx, nx * ny};
      const uint64_t t0 = m.t(r);
      trace.enter(r, exchange, t0);
      std::vector<SynthTrace::Completed> recvs;
      std::vector<uint64_t> sends;
      std::vector<std::pair<int, int>> peers;  // (direction, neighbour)
      for (int d = 0; d < 6; ++d) {
        const int axis = d / 2, step = d % 2 ? 1 : -1;
        if (c[axis] + step < 0 || c[axis] + step >= n[axis]) continue;
        const int peer = r + step * stride[axis];
        const uint64_t at = t0 + slot * uint64_t(d);
        recvs.push_back({trace.irecv(r, at, at + slot / 2), peer, kTagData, p.bytes});
        peers.emplace_back(d, peer);
      }
      for (const auto& [d, peer] : peers) {
        const uint64_t at = t0 + slot * uint64_t(6 + d);
        sends.push_back(trace.isend(r, peer, kTagData, p.bytes, at, at + slot / 2));
      }
      const uint64_t wait = t0 + 12 * slot;
      const uint64_t done = std::max(wait + p.recv_ns, t0 + 11 * slot + m.xfer(p.bytes));
      trace.waitall(r, recvs, sends, wait, done);
      trace.exit(r, exchange, done);
      m.t(r) = done;
      m.compute(r, p.compute_ns + (r == slow ? p.slow_ns : 0));
    }
    m.allreduce();
  }
  m.finalize();
  Answers a = m.answers();
  a.delay_nxn_short_term.assign(size_t(p.ranks), 0);
  a.delay_nxn_short_term[size_t(slow)] = uint64_t(p.iterations) * uint64_t(p.ranks - 1) * p.slow_ns;
  return a;
}

// (c) Master/worker: rank 0 (region `schedule`) sends one task to every worker, then
// receives results from MPI_ANY_SOURCE (the first to arrive; ties: the lower rank) and
// answers each with the next task or, when none is left, a stop message. Task k takes
// compute_ns / 2 + (k * 7919 mod 13) * compute_ns / 8; there are tasks_per_worker tasks per
// worker. An MPI_Allreduce ends the run.
Answers run_master(const ModelParams& p, SynthTrace& trace) {
  Machine m(p, trace, "master");
  m.answers().grid = {p.ranks};
  const uint32_t schedule = trace.user_region(UserRegion::kSchedule);
  const int workers = p.ranks - 1;
  const int64_t tasks = int64_t(workers) * p.tasks_per_worker;
  int64_t next = 0;
  // Outstanding results: (arrival, worker, send enter, send exit).
  using Result = std::tuple<uint64_t, int, uint64_t, uint64_t>;
  std::priority_queue<Result, std::vector<Result>, std::greater<Result>> results;
  // The master hands worker w the next task (or the stop message); the worker's part up to
  // its result's send follows at once: nothing else happens on it meanwhile.
  auto hand_out = [&](int w) {
    const bool stop = next >= tasks;
    const uint64_t bytes = stop ? 0 : p.bytes;
    const Machine::Sent s = m.send(0, w, stop ? kTagStop : kTagData, bytes);
    m.recv(w, 0, stop ? kTagStop : kTagData, bytes, s);
    if (stop) return;
    const int64_t k = next++;
    m.compute(w, p.compute_ns / 2 + uint64_t(k * 7919 % 13) * (p.compute_ns / 8));
    const Machine::Sent r = m.send(w, 0, kTagResult, p.bytes);
    results.emplace(r.enter + m.xfer(p.bytes), w, r.enter, r.exit);
  };
  m.init();
  trace.enter(0, schedule, m.t(0));
  for (int w = 1; w <= workers; ++w) hand_out(w);
  while (!results.empty()) {
    const auto [arrival, w, enter, exit] = results.top();
    results.pop();
    m.recv(0, w, kTagResult, p.bytes, {enter, exit});
    hand_out(w);
  }
  trace.exit(0, schedule, m.t(0));
  m.allreduce();
  m.finalize();
  return m.answers();
}

std::string answers_json(const Answers& a) {
  std::string s = "{\n\"model\": \"" + a.model + "\",\n\"ranks\": " + std::to_string(a.late_sender.size()) +
                  ",\n\"grid\": [";
  for (size_t i = 0; i < a.grid.size(); ++i) s += (i ? ", " : "") + std::to_string(a.grid[i]);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9f", double(a.end - a.begin) * 1e-9);
  s += "],\n\"run_length_s\": " + std::string(buf) + ",\n\"per_rank_s\": {";
  auto list = [&](const char* name, const std::vector<uint64_t>& v, bool first) {
    if (v.empty()) return;
    s += std::string(first ? "\n" : ",\n") + "\"" + name + "\": [";
    for (size_t i = 0; i < v.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.9f", i ? ", " : "", double(v[i]) * 1e-9);
      s += buf;
    }
    s += "]";
  };
  list("late_sender", a.late_sender, true);
  list("late_receiver", a.late_receiver, false);
  list("wait_nxn", a.wait_nxn, false);
  list("wait_finalize", a.wait_finalize, false);
  list("delay_nxn_short_term", a.delay_nxn_short_term, false);
  // The median of n instances: the middle one, or the mean of the two middle ones.
  s += "\n},\n\"median_s\": {";
  bool first = true;
  for (const auto& [name, all] : {std::pair{"late_sender", &a.late_sender_instances},
                                  std::pair{"late_receiver", &a.late_receiver_instances},
                                  std::pair{"wait_nxn", &a.wait_nxn_instances}}) {
    if (all->empty()) continue;
    std::vector<uint64_t> v = *all;
    const size_t n = v.size();
    std::nth_element(v.begin(), v.begin() + long(n / 2), v.end());
    const double hi = double(v[n / 2]);
    const double lo = n % 2 ? hi : double(*std::max_element(v.begin(), v.begin() + long(n / 2)));
    std::snprintf(buf, sizeof buf, "%s\n\"%s\": %.10f", first ? "" : ",", name, 0.5 * (lo + hi) * 1e-9);
    s += buf;
    first = false;
  }
  s += "\n}\n}\n";
  return s;
}

}  // namespace critpath::synth
