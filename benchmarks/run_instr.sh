#!/bin/sh
# critpath — benchmarks/run_instr.sh: what compiler instrumentation costs a C++ code with many
# tiny accessors (benchmarks/instr/: a hexahedral-mesh kernel in the style of the DOE proxy
# apps), per way of building it with critpath-cxx.
#
# usage: benchmarks/run_instr.sh <build dir> [edge [steps [repeats]]]      (default 30 60 3)
#
# Variants (each built with -O3, run on 1 rank with the automatic filter on, the default):
#   plain_gcc     the MPI C++ compiler alone (GCC)                  baseline of the gcc_* rows
#   plain_clang   the MPI C++ compiler running clang                baseline of the xray row
#   gcc_all       critpath-cxx --instrument-headers: every function (what critpath-cxx did
#                 before header functions were left out by default)
#   gcc_default   critpath-cxx: functions defined in headers not instrumented
#   gcc_filter    critpath-cxx --filter <gcc_default's suggested-filter.txt>: the second step
#                 of the two-step workflow (docs/instrumentation.md)
#   xray          critpath-cxx --xray: sleds patched at MPI_Init, unpatched when the
#                 automatic filter drops a function
# Prints per variant the best of <repeats> rounds (each runs every variant once) of the time-step loop (measured inside the
# program, between MPI_Init and MPI_Finalize, so the analysis inside MPI_Finalize is not in it)
#   instr.<variant>.kernel_s: <seconds>
#   instr.<variant>.dilation: <percent over its baseline>
# and the instrumentation line of each variant's report. Figures only; never asserts. Run on
# an otherwise idle machine (check `uptime`).
set -eu
build=$(cd "${1:?usage: run_instr.sh <build dir> [edge [steps [repeats]]]}" && pwd)
edge=${2:-30}
steps=${3:-60}
repeats=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
src="$here/instr/instr_kernel.cc $here/instr/instr_main.cc"
mpi=$(sed -n 's/^CRITPATH_MPI:STRING=//p' "$build/CMakeCache.txt")
mpicxx=$(sed -n 's/^MPI_CXX_COMPILER:FILEPATH=//p' "$build/CMakeCache.txt")
clangxx=$(sed -n 's/^CRITPATH_XRAY_CXX:FILEPATH=//p' "$build/CMakeCache.txt")
have_xray=$(sed -n 's/^CRITPATH_HAVE_XRAY:[A-Z]*=//p' "$build/CMakeCache.txt")
wrap="$build/bin/critpath-cxx"
out=$(mktemp -d /tmp/critpath-bench-instr.XXXXXX)
trap 'rm -rf "$out"' EXIT

build_variant() {  # <variant> <command...>
  v=$1
  shift
  "$@" -O3 -o "$out/$v" $src
}

# run_once <variant>: one run; appends its kernel time to $out/<variant>.times and leaves its
# report in $out/<variant>.report.
run_once() {
  v=$1
  rm -rf "$out/$v.report"
  if [ "$mpi" = openmpi ]; then
    cmd="mpiexec.openmpi --allow-run-as-root --bind-to none -x CRITPATH_OUTPUT_DIR=$out/$v.report"
  else
    cmd="mpiexec.mpich -genv CRITPATH_OUTPUT_DIR $out/$v.report"
  fi
  env -u LD_PRELOAD $cmd -n 1 "$out/$v" "$edge" "$steps" "$v" 2>/dev/null |
    sed -n "s/^instr\.$v\.kernel_s: \([0-9.]*\) s$/\1/p" >> "$out/$v.times"
}

best() {  # <variant>: the shortest of its times
  sort -g "$out/$1.times" | head -1
}

dilation() {  # <variant> <baseline>
  awk -v v="$1" -v t="$(best "$1")" -v b="$(best "$2")" -v base="$2" \
    'BEGIN { printf "instr.%s.dilation: %+.1f %% (vs %s)\n", v, 100 * (t - b) / b, base }'
}

instrumentation() {  # <variant>
  sed -n "s/^@ Instrumentation : /instr.$1.instrumentation: /p" "$out/$1.report/summary.txt" 2>/dev/null || true
}

echo "instr: mesh ${edge}^3 elements, $steps steps, best of $repeats rounds; $mpi; $(uptime | sed 's/.*load/load/')"
variants="plain_gcc gcc_all gcc_default gcc_filter"
build_variant plain_gcc "$mpicxx"
build_variant gcc_all "$wrap" --instrument-headers
build_variant gcc_default "$wrap"
# The two-step workflow: a first run writes suggested-filter.txt, the rebuild applies it.
run_once gcc_default
cp "$out/gcc_default.report/suggested-filter.txt" "$out/suggested-filter.txt"
: > "$out/gcc_default.times"
echo "instr: the gcc_default run suggested $(grep -c EXCLUDE "$out/suggested-filter.txt") functions to filter"
build_variant gcc_filter "$wrap" --filter "$out/suggested-filter.txt"
if [ "$have_xray" = ON ]; then
  build_variant plain_clang env MPICH_CXX="$clangxx" OMPI_CXX="$clangxx" "$mpicxx"
  build_variant xray "$wrap" --xray
  variants="$variants plain_clang xray"
else
  echo "instr: no XRay (clang with its XRay runtime was not found when $build was configured)"
fi
# Rounds of every variant in turn, so that a change of the machine's load hits all alike.
r=0
while [ $r -lt "$repeats" ]; do
  r=$((r + 1))
  for v in $variants; do run_once "$v"; done
done
for v in $variants; do printf 'instr.%s.kernel_s: %s s\n' "$v" "$(best "$v")"; done
for v in gcc_all gcc_default gcc_filter; do dilation "$v" plain_gcc; done
if [ "$have_xray" = ON ]; then
  dilation xray plain_clang
  dilation plain_clang plain_gcc
fi
for v in gcc_all gcc_default gcc_filter xray; do instrumentation "$v"; done
