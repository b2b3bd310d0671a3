#!/usr/bin/env bash
# critpath — benchmarks/scale/run.sh: the weak-scaling table of the analysis. Prints, never asserts.
#   benchmarks/scale/run.sh [build dir] [max P = 16384]
# 1. Synthesized wavefront (critpath-synth, the same trace per rank at every P) for P = 256,
#    1,024, 4,096, 16,384 up to max P, re-analysed by critpath-analyze hosted on 4 processes.
# 2. In situ: bench_wavefront (20 planes, 200 us; as benchmarks/run_delay.sh launches it)
#    oversubscribed on 16, 64, 144 and 256 ranks (SCALE_INSITU=0 skips it).
# Columns, from report.json's scalars ("n/a" where a figure is absent):
#   events/rank, wall (analysis_s: rank 0's analysis wall time), %run (analysis_pct_of_wall:
#   of the run's wall time), whatif (what-if hypotheses simulated; gaveup: over its budget),
#   cpu/rank in ms (analysis_cpu_s mean, max, rank 0), work_ms (its mean less the mean polling for
#   other ranks, analysis_cpu_polling_s: the rank's own work), rounds (analysis_rounds), r0 recv
#   (analysis_bytes.recv_rank0), r0/med mem (analysis_memory rank0_bytes / median_bytes),
#   LS long-term share (total delay_late_sender_long_term / (long + short term)); then the largest memory growth
#   (analysis_memory_peak_bytes) and the CPU by phase (analysis_cpu_phases_s, else rank 0's
#   wall time by phase, analysis_phases), in milliseconds.
# SCALE_TIMEOUT (s, default 1800) bounds each critpath-analyze run; a run that fails or times
# out prints its exit status and the table goes on. SCALE_SIZES="256 1024" picks the synthesized
# sizes (empty: none), SCALE_INSITU_SIZES="16 256" the in-situ ones, SCALE_OUT=DIR keeps the
# outputs (the traces are deleted after each row).
set -uo pipefail
build=${1:-build}; maxp=${2:-16384}
lib=$build/libcritpath.so; shim=$build/tests/support/libcritpath_yield_shim.so
synth=$build/benchmarks/scale/critpath-synth
# The build's own binary: find would also meet the copies the tests install under test-out/.
analyze=$build/bin/critpath-analyze
[ -x "$analyze" ] || analyze=$(find "$build" -path "$build/test-out" -prune -o -name critpath-analyze -type f -print | head -1)
mpi=$(grep -m1 '^CRITPATH_MPI:' "$build/CMakeCache.txt" | cut -d= -f2)
limit=${SCALE_TIMEOUT:-1800}
out=${SCALE_OUT:-$(mktemp -d)}; mkdir -p "$out"
mpirun() {  # mpirun <np> <env K=V...> -- <command...>
  local np=$1; shift; local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done; shift
  if [ "$mpi" = openmpi ]; then
    local x=(); for e in "${env[@]}"; do x+=(-x "$e"); done
    mpiexec.openmpi --oversubscribe --allow-run-as-root "${x[@]}" -x LD_PRELOAD="${preload:-$shim}" -n "$np" "$@"
  else
    local g=(); for e in "${env[@]}"; do g+=(-genv "${e%%=*}" "${e#*=}"); done
    mpiexec.mpich "${g[@]}" -genv LD_PRELOAD "${preload:-$shim}" -n "$np" "$@"
  fi
}
row() {  # row <label> <report dir> <extra: synth seconds or "">
  python3 - "$@" <<'PY'
import json, os, sys
label, d, extra = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    rep = json.load(open(os.path.join(d, "report.json")))
except (OSError, ValueError) as e:
    print(f"{label:>8}  no report.json ({extra})"); sys.exit(0)
s = rep.get("scalars", {}); m = rep.get("metrics", {})
ranks = len(rep.get("ranks", [])) or rep.get("run", {}).get("ranks", 0) or 1
def num(v, fmt):
    return fmt.format(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else "n/a"
def get(name, key=None):
    v = s.get(name)
    return v.get(key) if isinstance(v, dict) and key else (v if key is None else None)
def ms(v):  # seconds as milliseconds
    return num(v * 1e3 if isinstance(v, (int, float)) and not isinstance(v, bool) else None, "{:.3f}")
cpu = " / ".join(ms(get("analysis_cpu_s", k)) for k in ("mean", "max", "rank0"))
mean, polling = get("analysis_cpu_s", "mean"), get("analysis_cpu_polling_s", "mean")
work = ms(mean - polling if isinstance(mean, (int, float)) and isinstance(polling, (int, float)) else None)
mem0, memm = get("analysis_memory", "rank0_bytes"), get("analysis_memory", "median_bytes")
ratio = f"{mem0 / memm:.2f}" if isinstance(mem0, (int, float)) and isinstance(memm, (int, float)) and memm else "n/a"
def total(name):
    v = m.get(name, {}).get("total") if isinstance(m.get(name), dict) else None
    return v if isinstance(v, (int, float)) else None
lt, st = total("delay_late_sender_long_term"), total("delay_late_sender_short_term")
share = f"{lt / (lt + st):.3f}" if lt is not None and st is not None and lt + st > 0 else "n/a"
ev = s.get("events")
gave_up = any("what-if: not simulated" in n for n in rep.get("notes", []))
whatif = "gaveup" if gave_up else str(len(rep.get("whatif") or []))
print(f"{label:>8}  {num(ev / ranks if isinstance(ev, (int, float)) else None, '{:.0f}'):>8}  "
      f"{num(s.get('analysis_s'), '{:.2f}'):>8}  {num(s.get('analysis_pct_of_wall'), '{:.0f}'):>5}  "
      f"{whatif:>6}  {cpu:>24}  {work:>9}  {num(s.get('analysis_rounds'), '{:.0f}'):>6}  "
      f"{num(get('analysis_bytes', 'recv_rank0'), '{:.3g}'):>9}  {ratio:>6}  {share:>6}  {extra}")
peak = s.get("analysis_memory_peak_bytes")
if isinstance(peak, (int, float)):
    print(f"{'':>8}  memory: peak +{peak / 2**20:.1f} MiB (rank {s.get('analysis_memory_peak_rank')})")
phases = s.get("analysis_cpu_phases_s") or s.get("analysis_phases") or {}
which = "cpu/rank" if s.get("analysis_cpu_phases_s") else "rank-0 wall"
print(f"{'':>8}  phases ({which}, ms): " + ", ".join(f"{k.removesuffix('_s')} {v * 1e3:.3f}" for k, v in sorted(
    phases.items(), key=lambda kv: -kv[1]) if isinstance(v, (int, float)) and v >= 5e-6))
PY
}
header() {
  printf '%8s  %8s  %8s  %5s  %6s  %24s  %9s  %6s  %9s  %6s  %6s  %s\n' P ev/rank wall_s %run whatif \
    "cpu/rank mean/max/r0 ms" work_ms rounds \
    r0_recv_B r0/med LS_lt "$1"
}
echo "scale: $mpi, $(nproc) cores, build $build; outputs in $out"
echo "--- synthesized wavefront, critpath-analyze hosted on 4 processes"
header "synth s, analyze s, trace B/rank"
for p in ${SCALE_SIZES-256 1024 4096 16384}; do
  [ "$p" -le "$maxp" ] || continue
  d=$out/wavefront-$p
  t0=$(date +%s.%N)
  line=$("$synth" --model wavefront --ranks "$p" --out "$d" 2>&1) || { echo "$p: critpath-synth failed: $line"; continue; }
  t1=$(date +%s.%N)
  bytes=$(echo "$line" | sed -n 's/.* \([0-9]*\) B of .cptrace.*/\1/p')
  timeout "$limit" bash -c "$(declare -f mpirun); mpi=$mpi shim=$shim; mpirun 4 -- '$analyze' '$d' --output '$d/analysis' --force" \
    > "$d/analyze.log" 2>&1
  rc=$?
  t2=$(date +%s.%N)
  extra=$(python3 -c "print(f'{$t1-$t0:.1f}, {$t2-$t1:.1f}, $bytes')")
  [ $rc -eq 0 ] || extra="$extra; critpath-analyze exit $rc$([ $rc -eq 124 ] && echo " (timeout ${limit} s)"): $(grep -m1 -i 'error\|critpath\|signal' "$d/analyze.log" | cut -c1-120)"
  row "$p" "$d/analysis" "$extra"
  rm -rf "$d/trace"
done
if [ "${SCALE_INSITU:-1}" != 0 ]; then
  echo "--- in situ: bench_wavefront 20 200, oversubscribed on $(nproc) cores"
  header "run s"
  for np in ${SCALE_INSITU_SIZES-16 64 144 256}; do
    d=$out/insitu-$np
    t0=$(date +%s.%N)
    preload="$lib:$shim" timeout "$limit" bash -c "$(declare -f mpirun); mpi=$mpi shim=$shim preload=$lib:$shim; \
      mpirun $np CRITPATH_OUTPUT_DIR=$d -- '$build/benchmarks/critpath_bench_wavefront' 20 200" > "$out/insitu-$np.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    row "$np" "$d" "$(python3 -c "print(f'{$t1-$t0:.1f}')")$([ $rc -eq 0 ] || echo "; exit $rc")"
  done
fi
[ -n "${SCALE_OUT:-}" ] || rm -rf "$out"
