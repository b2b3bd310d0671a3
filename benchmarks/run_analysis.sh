#!/usr/bin/env bash
# critpath — benchmarks/run_analysis.sh: analysis figures. Prints, never asserts.
#   benchmarks/run_analysis.sh [build dir] [ranks] [million events per rank] [million chain laps]
# Runs bench_analysis under the tracer, then the bundled example, then bench_chain (a token
# around the ring: one critical-path hop per message, the walk's worst case; 0 laps skips it),
# and reads their reports:
#   analysis.events_per_s_per_rank, analysis.pct_of_run, analysis.replay_bytes_per_message,
#   analysis.memory_peak (the analysis's resident growth on its largest rank, per event there),
#   analysis.chain.walk_s / walk_pct_of_run / hops
#   analysis.*.whatif_s / whatif_bytes_per_message / whatif_model_check (the what-if replay)
set -euo pipefail
build=${1:-build}; np=${2:-4}; mev=${3:-10}; chain=${4:-1}
lib=$build/libcritpath.so; shim=$build/tests/support/libcritpath_yield_shim.so
mpi=$(grep -m1 '^CRITPATH_MPI:' "$build/CMakeCache.txt" | cut -d= -f2)
out=$(mktemp -d)
run() {  # run <outdir> <exe> args...   (WINDOW=<events>: the analysis window by window)
  local dir=$1; shift
  local win=${WINDOW:-0}
  if [ "$mpi" = openmpi ]; then
    mpiexec.openmpi --oversubscribe --allow-run-as-root -x CRITPATH_OUTPUT_DIR="$dir" \
      -x CRITPATH_DEBUG_ANALYSIS_WINDOW="$win" -x LD_PRELOAD="$lib" -n "$np" "$@"
  else
    mpiexec.mpich -genv CRITPATH_OUTPUT_DIR "$dir" -genv CRITPATH_DEBUG_ANALYSIS_WINDOW "$win" \
      -genv LD_PRELOAD "$lib:$shim" -n "$np" "$@"
  fi
}
report() {  # report <label> <outdir>
  python3 - "$1" "$2" <<'PY'
import json, sys
label, d = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/report.json"))
s = r["scalars"]; P = r["run"]["ranks"]
ev = s["events"] / P
print(f"analysis.{label}.events_per_rank: {ev:.0f}")
print(f"analysis.{label}.analysis_s: {s['analysis_s']:.3f} s")
print(f"analysis.{label}.events_per_s_per_rank: {ev / max(s['analysis_s'], 1e-9) / 1e6:.1f} M/s")
print(f"analysis.{label}.pct_of_run: {s['analysis_pct_of_wall']:.2f} %")
print(f"analysis.{label}.wall_time_s: {s['wall_time_s']:.3f} s")
print(f"analysis.{label}.trace_bytes_per_event: {s['trace_bytes_per_event']:.3f} B")
if "analysis_memory_peak_bytes" in s:
    print(f"analysis.{label}.memory_peak: +{s['analysis_memory_peak_bytes'] / 2**20:.1f} MiB on rank "
          f"{s['analysis_memory_peak_rank']} ({s['analysis_memory_bytes_per_event']:.1f} B per event there)")
if s.get("messages"):
    print(f"analysis.{label}.replay_bytes_per_message: {s['replay_bytes_per_message']:.1f} B "
          f"({s['messages']:.0f} messages)")
if "whatif_analysis_s" in s:  # the what-if replay (docs/metrics.md, What-if simulation)
    msgs = s.get("messages", 0)
    print(f"analysis.{label}.whatif_s: {s['whatif_analysis_s']:.3f} s "
          f"({100.0 * s['whatif_analysis_s'] / max(s['wall_time_s'], 1e-9):.2f} % of the run, "
          f"{s['whatif_lanes']:.0f} lanes)")
    gathered = s.get("whatif_gathered", 0) == 1
    print(f"analysis.{label}.whatif_replay: {'gathered on rank 0' if gathered else 'distributed'}")
    if msgs:  # gathered: the replay programs' bytes; distributed: the replay messages' payload
        print(f"analysis.{label}.whatif_bytes_per_message: {s['whatif_bytes'] / msgs:.1f} B "
              f"({'programs' if gathered else str(int(s['whatif_messages'])) + ' replay messages'} "
              f"for {msgs:.0f} application messages)")
    print(f"analysis.{label}.whatif_model_check: span {s['whatif_identity_span_error_pct']:.2f} %, "
          f"waiting {s['whatif_identity_wait_error_pct']:.2f} %")
cp = r.get("critical_path")
if cp:
    walk = cp.get("walk_s")
    if walk is None:  # older reports: only the summary's header line has it
        import re
        m = re.search(r"\(walk ([0-9.]+) s\)", open(d + "/summary.txt").read())
        walk = float(m.group(1)) if m else None
    print(f"analysis.{label}.cp_hops: {cp['hops']} ({cp['walk_mode']}{', partial' if cp['partial'] else ''})")
    if walk is not None:
        print(f"analysis.{label}.walk_s: {walk:.3f} s")
        print(f"analysis.{label}.walk_pct_of_run: {100.0 * walk / max(s['wall_time_s'], 1e-9):.2f} %")
PY
}
run "$out/bench" "$build/benchmarks/critpath_bench_analysis" "$mev" > /dev/null 2>&1
report bench "$out/bench"
# The same, window by window (docs/metrics.md, Phase-by-phase analysis): windows of about a
# tenth of the trace; wait states and profile only, so compare its memory, not its time.
WINDOW=$((mev * 100000)) run "$out/bench_windowed" "$build/benchmarks/critpath_bench_analysis" "$mev" > /dev/null 2>&1
report bench_windowed "$out/bench_windowed"
python3 - "$out/bench_windowed" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/report.json"))["scalars"]
print(f"analysis.bench_windowed.windows: {s.get('analysis_windows')} "
      f"(cut at {s.get('analysis_window_cuts')} of {s.get('analysis_window_candidates')} world collectives)")
PY
run "$out/jacobi" "$build/examples/critpath_example_jacobi" > /dev/null 2>&1
report jacobi "$out/jacobi"
if [ "$chain" != 0 ]; then
  run "$out/chain" "$build/benchmarks/critpath_bench_chain" "$chain" > /dev/null 2>&1
  report chain "$out/chain"
fi
rm -rf "$out"
