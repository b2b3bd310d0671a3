// critpath — benchmarks/scale/critpath_synth.cpp
//
// critpath-synth: writes a kept trace of a modelled MPI run for any number of ranks without
// running one, and the analysis's known answers for it (benchmarks/scale/README.md).
//
//   critpath-synth --model wavefront|halo|master --ranks P [--iterations N] [--planes K]
//                  [--tasks T] [--threads J] --out DIR
//   -> DIR/trace/rank-<r>.{cptrace,json} (as CRITPATH_KEEP_TRACE=1 leaves them) and
//      DIR/answers.json; one line of figures on stdout.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "synth_models.h"
#include "synth_trace.h"

namespace {

using critpath::synth::ModelParams;

int usage() {
  std::fprintf(stderr, "usage: critpath-synth --model wavefront|halo|master --ranks P --out DIR\n"
                       "         [--iterations N] [--planes K] [--tasks T] [--threads J]\n"
                       "  Writes DIR/trace (a kept trace of P <= 65536 ranks, for critpath-analyze DIR)\n"
                       "  and DIR/answers.json (the known answers: per-rank waiting times, run length).\n"
                       "  --iterations N  sweeps x 4 / halo exchanges (default 2)\n"
                       "  --planes K      wavefront: blocks per sweep (default 3)\n"
                       "  --tasks T       master: tasks per worker (default 4)\n"
                       "  --slow-rank R   halo: the slow rank (default P/2)\n"
                       "  --threads J     threads writing the files (default: the cores, at most 4)\n");
  return 2;
}

bool parse_int(const char* s, long lo, long hi, int& out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (!end || *end || v < lo || v > hi) return false;
  out = int(v);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ModelParams p;
  std::string model, out;
  int threads = int(std::min(4u, std::max(1u, std::thread::hardware_concurrency())));
  std::vector<std::string> args(argv + 1, argv + argc);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = v != nullptr;
    if (a == "--model" && ok) model = v;
    else if (a == "--out" && ok) out = v;
    else if (a == "--ranks" && ok) ok = parse_int(v, 2, 65536, p.ranks);
    else if (a == "--iterations" && ok) ok = parse_int(v, 1, 1000000, p.iterations);
    else if (a == "--planes" && ok) ok = parse_int(v, 1, 1000000, p.planes);
    else if (a == "--tasks" && ok) ok = parse_int(v, 1, 1000000, p.tasks_per_worker);
    else if (a == "--slow-rank" && ok) ok = parse_int(v, 0, 65535, p.slow_rank);
    else if (a == "--threads" && ok) ok = parse_int(v, 1, 256, threads);
    else return usage();
    if (!ok) {
      std::fprintf(stderr, "critpath-synth: bad value for %s\n", a.c_str());
      return usage();
    }
    ++i;
  }
  if (out.empty() || (model != "wavefront" && model != "halo" && model != "master")) return usage();
  const auto t0 = std::chrono::steady_clock::now();
  critpath::synth::SynthTrace trace(p.ranks, model, args);
  const critpath::synth::Answers answers = model == "wavefront" ? critpath::synth::run_wavefront(p, trace)
                                           : model == "halo"    ? critpath::synth::run_halo(p, trace)
                                                                : critpath::synth::run_master(p, trace);
  const auto t1 = std::chrono::steady_clock::now();
  if (!trace.write(out, threads)) return 1;
  std::ofstream f(out + "/answers.json");
  f << critpath::synth::answers_json(answers);
  if (!f.good()) {
    std::fprintf(stderr, "critpath-synth: cannot write %s/answers.json\n", out.c_str());
    return 1;
  }
  const auto t2 = std::chrono::steady_clock::now();
  const double sim = std::chrono::duration<double>(t1 - t0).count();
  const double wr = std::chrono::duration<double>(t2 - t1).count();
  std::printf("critpath-synth: %s, %d ranks: %llu events (%.0f per rank), %.0f B of .cptrace and %.0f B of "
              ".json per rank, run %.6f s; model %.2f s, writing %.2f s (%d threads)\n",
              model.c_str(), p.ranks, static_cast<unsigned long long>(trace.events()),
              double(trace.events()) / p.ranks, double(trace.trace_bytes()) / p.ranks,
              double(trace.json_bytes()) / p.ranks, double(answers.end - answers.begin) * 1e-9, sim, wr,
              threads);
  return 0;
}
