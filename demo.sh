#!/usr/bin/env bash
# critpath — demo.sh: from a fresh Debian 12 machine to a first critpath report.
#
#   ./demo.sh                        MPICH, build in ./build
#   CRITPATH_MPI=openmpi ./demo.sh   Open MPI, build in ./build-openmpi
#
# Installs missing packages (tools/install-deps.sh), builds the library and the bundled example
# (examples/jacobi_imbalance.c), runs the example on 4 ranks under the tracer with
# tools/critpath-run, and shows where the report went and how it begins. With MPICH the test
# yield shim is preloaded too, because MPICH busy-polls and this machine may have fewer cores
# than ranks.
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
cd "$root"

mpi=${CRITPATH_MPI:-mpich}
ranks=4
case "$mpi" in
  mpich) build="build"; mpiexec=(mpiexec.mpich) ;;
  openmpi)
    build="build-openmpi"
    # Open MPI refuses more ranks than cores without --oversubscribe, and root without
    # --allow-run-as-root.
    mpiexec=(mpiexec.openmpi --oversubscribe)
    [ "$(id -u)" -eq 0 ] && mpiexec+=(--allow-run-as-root)
    ;;
  *) echo "demo.sh: CRITPATH_MPI must be mpich or openmpi, not '$mpi'" >&2; exit 2 ;;
esac
jobs=$(nproc 2>/dev/null || echo 2)

step() { printf '\n=== demo: %s\n' "$*"; }

step "checking packages"
bash tools/install-deps.sh

step "configuring and building ($mpi, in $build/)"
if [ -f "$build/CMakeCache.txt" ] &&
   ! grep -qx "CRITPATH_MPI:STRING=$mpi" "$build/CMakeCache.txt"; then
  rm -rf -- "$build"  # configured for the other MPI: cached compiler paths would be wrong
fi
cmake -S . -B "$build" -DCRITPATH_MPI="$mpi" >/dev/null
targets=(--target critpath critpath_example_jacobi)
shim=()
if [ "$mpi" = mpich ]; then
  targets+=(critpath_yield_shim)
  shim=(--preload "$root/$build/tests/support/libcritpath_yield_shim.so")
fi
cmake --build "$build" -j "$jobs" "${targets[@]}"

step "running the example on $ranks ranks under the tracer"
app="$root/$build/examples/critpath_example_jacobi"
cmd=("$build/bin/critpath-run" ${shim[@]+"${shim[@]}"} -- "${mpiexec[@]}" -n "$ranks" "$app")
printf '$'; printf ' %q' "${cmd[@]}"; printf '\n'
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
"${cmd[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "demo.sh: the example failed with exit status $status" >&2
  exit "$status"
fi

# Rank 0 ends the run with `critpath: report in <dir>/summary.txt` on stderr.
summary=$(sed -n 's/^critpath: report in \(.*\)$/\1/p' "$log" | tail -n 1)
if [ -z "$summary" ] || [ ! -f "$summary" ]; then
  echo "demo.sh: the run did not report where its summary is; see the output above" >&2
  exit 1
fi
dir=$(cd -- "$(dirname -- "$summary")" && pwd)
summary="$dir/summary.txt"

step "report in $dir"
ls -l -- "$dir"
printf '\n--- %s (header, findings, where the time goes) ---\n' "$summary"
# The header, then the numbered findings that lead the file and the split of the allocation;
# the file has more (the sections behind each finding).
awk '/^@---/ { started = 1; show = ($0 ~ /^@--- (Findings|Where the time goes|MPI time per rank)/) }
     !started || show { print }' "$summary"
cat <<EOF
---

The last rank holds 30 % more points than the others: the findings above say where the ranks
wait for it and how much. Next:
  less $summary
  a browser on $dir/report.html: the same findings, each linking to the section behind it
  python3 -m json.tool $dir/report.json | less
  $build/bin/critpath-run --help
EOF
