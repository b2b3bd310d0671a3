#!/usr/bin/env bash
# critpath — benchmarks/run_delay.sh: what the delay analysis costs. Prints, never asserts.
#   benchmarks/run_delay.sh [build dir] [planes per sweep]
# Runs bench_wavefront (a pipelined wavefront: every message waits) on 16 and 64 ranks
# (oversubscribed), with the delay analysis on and off, and reads their reports:
#   delay.<np>.analysis_s_on / _off, delay.<np>.delay_phase_s, delay.<np>.pct_of_run,
#   delay.<np>.bytes_per_message (every pass: replay + collective sync + delay payload)
set -euo pipefail
build=${1:-build}; planes=${2:-50}
lib=$build/libcritpath.so; shim=$build/tests/support/libcritpath_yield_shim.so
mpi=$(grep -m1 '^CRITPATH_MPI:' "$build/CMakeCache.txt" | cut -d= -f2)
out=$(mktemp -d)
run() {  # run <outdir> <np> <delay 0|1>
  if [ "$mpi" = openmpi ]; then
    mpiexec.openmpi --oversubscribe --allow-run-as-root -x CRITPATH_OUTPUT_DIR="$1" \
      -x CRITPATH_DELAY_ANALYSIS="$3" -x LD_PRELOAD="$lib" -n "$2" \
      "$build/benchmarks/critpath_bench_wavefront" "$planes"
  else
    mpiexec.mpich -genv CRITPATH_OUTPUT_DIR "$1" -genv CRITPATH_DELAY_ANALYSIS "$3" \
      -genv LD_PRELOAD "$lib:$shim" -n "$2" "$build/benchmarks/critpath_bench_wavefront" "$planes"
  fi
}
for np in 16 64; do
  run "$out/on$np" "$np" 1 > /dev/null 2>&1
  run "$out/off$np" "$np" 0 > /dev/null 2>&1
  python3 - "$np" "$out/on$np" "$out/off$np" <<'PY'
import json, sys
np_, on, off = sys.argv[1], sys.argv[2], sys.argv[3]
a = json.load(open(on + "/report.json"))["scalars"]
b = json.load(open(off + "/report.json"))["scalars"]
msgs = max(a.get("messages", 0), 1)
phase = a.get("analysis_phases", {}).get("delay_s", 0.0)
print(f"delay.{np_}.messages: {a.get('messages', 0):.0f} ({a.get('delay_wait_instances', 0):.0f} wait instances)")
print(f"delay.{np_}.analysis_s_on: {a['analysis_s']:.3f} s ({a['analysis_pct_of_wall']:.2f} % of run)")
print(f"delay.{np_}.analysis_s_off: {b['analysis_s']:.3f} s ({b['analysis_pct_of_wall']:.2f} % of run)")
print(f"delay.{np_}.delay_phase_s: {phase:.3f} s (rank 0)")
total = a.get("replay_bytes", 0) + a.get("replay_collective_bytes", 0) + a.get("delay_bytes", 0)
print(f"delay.{np_}.bytes_per_message: {total / msgs:.1f} B in all "
      f"(p2p replay {a.get('replay_bytes', 0) / msgs:.1f}, collectives {a.get('replay_collective_bytes', 0) / msgs:.1f}, "
      f"delay {a.get('delay_bytes', 0) / msgs:.1f})")
print(f"delay.{np_}.waiting: {a.get('delay_analysed_s', 0):.3f} s analysed, "
      f"{a.get('delay_remainder_s', 0):.4f} s unexplained")
PY
done
rm -rf "$out"
