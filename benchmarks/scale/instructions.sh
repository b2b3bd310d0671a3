#!/usr/bin/env bash
# critpath — benchmarks/scale/instructions.sh: the hosted analysis's instructions and simulated
# cache misses per traced rank, by P. Prints, never asserts.
#   benchmarks/scale/instructions.sh [build dir] [P ...]   (default P: 256 4096)
# run.sh's CPU per traced rank mixes two growths: the per-rank algorithms' (work that grows with
# P) and the host's memory (a process hosting P / 4 ranks runs each of them once a round, so
# their data is colder the more they are). This separates them, on any machine: the synthesized
# wavefront at each P, re-analysed by critpath-analyze hosted on 4 processes under callgrind,
# counting only the fiber workers (the analysis of the hosted ranks, not the trace loading), with
# a simulated 2 MiB last-level cache (SCALE_LL="size,assoc,line" to change it). Flat
# instructions per rank with growing misses per rank is the host's memory, not the analysis.
# Needs valgrind (Debian: apt-get install valgrind). About 15 s at P = 256, 2 min at 4,096 on 2
# cores; 16,384 takes about 10 min.
set -uo pipefail
build=${1:-build}; shift || true
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(256 4096)
if ! command -v valgrind > /dev/null || ! command -v callgrind_annotate > /dev/null; then
  echo "instructions.sh: needs valgrind (apt-get install valgrind)"
  exit 0
fi
synth=$build/benchmarks/scale/critpath-synth
analyze=$build/bin/critpath-analyze
shim=$build/tests/support/libcritpath_yield_shim.so
mpi=$(grep -m1 '^CRITPATH_MPI:' "$build/CMakeCache.txt" | cut -d= -f2)
ll=${SCALE_LL:-2097152,16,64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
vg=(valgrind --tool=callgrind --cache-sim=yes "--LL=$ll")
echo "instructions: $mpi, build $build, simulated LL $ll (size, ways, line)"
printf '%8s %10s %14s %14s %14s\n' P ranks/proc "Ir/rank" "D1 miss/rank" "LL miss/rank"
for p in "${sizes[@]}"; do
  d=$out/w$p
  "$synth" --model wavefront --ranks "$p" --out "$d" > /dev/null 2>&1 || { echo "$p: critpath-synth failed"; continue; }
  mkdir -p "$d/cg"
  if [ "$mpi" = openmpi ]; then
    mpiexec.openmpi --oversubscribe --allow-run-as-root -x LD_PRELOAD="$shim" -n 4 \
      "${vg[@]}" "--callgrind-out-file=$d/cg/cg.%p" "$analyze" "$d" --output "$d/analysis" --force \
      > "$d/log" 2>&1
  else
    mpiexec.mpich -genv LD_PRELOAD "$shim" -n 4 \
      "${vg[@]}" "--callgrind-out-file=$d/cg/cg.%p" "$analyze" "$d" --output "$d/analysis" --force \
      > "$d/log" 2>&1
  fi || { echo "$p: critpath-analyze under callgrind failed (see its log: $(tail -1 "$d/log"))"; continue; }
  # The fiber workers' inclusive cost in each process: Ir, D1mr + D1mw, DLmr + DLmw.
  for f in "$d"/cg/cg.*; do
    callgrind_annotate --inclusive=yes --show=Ir,D1mr,D1mw,DLmr,DLmw "$f" 2>/dev/null \
      | grep -m1 'fiber::(anonymous namespace)::work('
  done | python3 -c "
import re, sys
p = int(sys.argv[1]); tot = [0] * 5
for line in sys.stdin:
    nums = re.findall(r'([0-9][0-9,]*) \(', line)[:5]
    for i, v in enumerate(nums):
        tot[i] += int(v.replace(',', ''))
print(f'{p:8d} {p // 4:10d} {tot[0] / p:14,.0f} {(tot[1] + tot[2]) / p:14,.0f} {(tot[3] + tot[4]) / p:14,.0f}')
" "$p"
  rm -rf "$d"
done
