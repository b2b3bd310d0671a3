#!/bin/sh
# critpath — benchmarks/run_wrappers.sh: runs bench_wrappers under the three conditions and
# prints the added cost of the wrappers beyond their event records.
#
# usage: [BENCH_LIB=other/libcritpath.so] benchmarks/run_wrappers.sh <build dir> [mpich|openmpi]
#   plain     no tracer
#   disabled  libcritpath preloaded, CRITPATH_ENABLE=0
#   enabled   libcritpath preloaded, recording (CRITPATH_ANALYSIS=0: no report is analysed)
# Prints the figures of each run, then per call
#   wrappers.<call>.added_beyond_records: enabled - plain - events x record_event ns
#   wrappers.<call>.added_per_mpi_call:   the same divided by the MPI calls per iteration
# Figures only; never asserts. Run on an otherwise idle machine (check `uptime`).
set -eu
build=${1:?usage: run_wrappers.sh <build dir> [mpich|openmpi]}
mpi=${2:-$(sed -n 's/^CRITPATH_MPI:STRING=//p' "$build/CMakeCache.txt")}
bench="$build/benchmarks/critpath_bench_wrappers"
lib=${BENCH_LIB:-$(find "$build" -name libcritpath.so -print -quit)}  # BENCH_LIB: compare another build
out=$(mktemp -d /tmp/critpath-bench-wrappers.XXXXXX)
trap 'rm -rf "$out"' EXIT
# run <condition> <preload or ""> [K=V ...]: one launch, settings passed by the launcher so
# that mpiexec itself is never traced.
run() {
  cond=$1; pre=$2; shift 2
  set -- "CRITPATH_OUTPUT_DIR=$out/$cond" ${pre:+"LD_PRELOAD=$pre"} "$@"
  if [ "$mpi" = openmpi ]; then
    cmd="mpiexec.openmpi --allow-run-as-root --bind-to none"
    for kv in "$@"; do cmd="$cmd -x $kv"; done
  else
    cmd="mpiexec.mpich"
    for kv in "$@"; do cmd="$cmd -genv ${kv%%=*} ${kv#*=}"; done
  fi
  env -u LD_PRELOAD $cmd -n 1 "$bench" "$cond" | tee "$out/$cond.txt"
}
run plain ""
run disabled "$lib" CRITPATH_ENABLE=0
run enabled "$lib" CRITPATH_ANALYSIS=0
awk '
  /^wrappers\.record_event\.enabled:/ { rec = $2; next }
  /^wrappers\.[a-z_0-9]+\.events:/ { split($1, p, "."); ev[p[2]] = $2 }
  /^wrappers\.[a-z_0-9]+\.mpi_calls:/ { split($1, p, "."); nc[p[2]] = $2 }
  /^wrappers\.[a-z_0-9]+\.(plain|enabled):/ { split($1, p, "."); sub(":", "", p[3]); v[p[2], p[3]] = $2; calls[p[2]] = 1 }
  END {
    printf "wrappers.record_event_used: %.1f ns\n", rec
    for (c in calls) {
      added = v[c, "enabled"] - v[c, "plain"] - ev[c] * rec
      printf "wrappers.%s.added_beyond_records: %.1f ns\n", c, added
      printf "wrappers.%s.added_per_mpi_call: %.1f ns\n", c, added / nc[c]
    }
  }' "$out/plain.txt" "$out/enabled.txt" | sort
