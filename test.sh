#!/usr/bin/env bash
# critpath — test.sh: install what is missing, build, and run the whole test suite.
#
#   ./test.sh                        MPICH build in ./build
#   CRITPATH_MPI=openmpi ./test.sh   Open MPI build in ./build-openmpi
#
# Steps: tools/install-deps.sh (apt only when a package is missing), cmake configure + build,
# then ctest in three groups so MPI runs never compete with each other for the 2 cores:
#   unit tests (label "unit")        in parallel (-j2)
#   MPI tests (label "mpi")          one at a time: each already runs more ranks than cores
#   everything else                  in parallel (-j2)
# All groups run even when one fails; the exit status is non-zero when any test failed.
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
cd "$root"

mpi=${CRITPATH_MPI:-mpich}
case "$mpi" in
  mpich) build="build" ;;
  openmpi) build="build-openmpi" ;;
  *) echo "test.sh: CRITPATH_MPI must be mpich or openmpi, not '$mpi'" >&2; exit 2 ;;
esac
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS

bash tools/install-deps.sh

# A build directory configured for the other MPI keeps that MPI's cached compiler paths;
# start it afresh rather than mix the two.
if [ -f "$build/CMakeCache.txt" ] &&
   ! grep -qx "CRITPATH_MPI:STRING=$mpi" "$build/CMakeCache.txt"; then
  echo "test.sh: $build was configured for another MPI; reconfiguring from scratch"
  rm -rf -- "$build"
fi

echo "test.sh: configuring $build (CRITPATH_MPI=$mpi)"
cmake -S . -B "$build" -DCRITPATH_MPI="$mpi"
echo "test.sh: building with $jobs jobs"
cmake --build "$build" -j "$jobs"
echo "test.sh: build done after $((SECONDS - start)) s"

# Each group's ctest output is kept so that its counts can be added up: the run ends with one
# line "N passed, N failed" over every group (CI reads it). A group with no test is skipped,
# never run (ctest's "No tests were found" would read as a run without tests).
failed=0
n_passed=0
n_failed=0
logdir=$(mktemp -d)
trap 'rm -rf -- "$logdir"' EXIT
run_ctest() {
  local what=$1
  shift
  local n
  n=$(ctest --test-dir "$build" -N "$@" | sed -n 's/^Total Tests: \([0-9]*\)$/\1/p')
  if [ "${n:-0}" -eq 0 ]; then
    echo "test.sh: ctest: $what: none"
    return
  fi
  echo "test.sh: ctest: $what ($n)"
  local log="$logdir/ctest.log"
  if ! ctest --test-dir "$build" --output-on-failure --timeout 600 "$@" 2>&1 | tee "$log"; then
    failed=1
  fi
  # "100% tests passed, 0 tests failed out of 78"
  local line total bad
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)
  if [ -z "$line" ]; then
    echo "test.sh: ctest: $what printed no result line; counting its $n tests as failed"
    n_failed=$((n_failed + n))
    failed=1
    return
  fi
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  bad=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")
  n_passed=$((n_passed + total - bad))
  n_failed=$((n_failed + bad))
}
run_ctest "unit tests" -L '^unit$' -j "$jobs"
run_ctest "MPI tests ($mpi)" -L '^mpi$' -j 1
run_ctest "other tests" -LE '^(unit|mpi)$' -j "$jobs"

# For .ci/run, which adds up the runs of both MPI libraries.
if [ -n "${CRITPATH_COUNTS_FILE:-}" ]; then
  echo "$n_passed $n_failed" > "$CRITPATH_COUNTS_FILE"
fi
if [ "$failed" -ne 0 ]; then
  echo "test.sh: FAILED ($mpi, $((SECONDS - start)) s)"
  echo "$n_passed passed, $n_failed failed"
  exit 1
fi
echo "test.sh: all tests passed ($mpi, $((SECONDS - start)) s)"
echo "$n_passed passed, $n_failed failed"
