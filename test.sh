#!/usr/bin/env bash
# critpath — test.sh: install what is missing, build, and run the whole test suite.
#
#   ./test.sh                        MPICH build in ./build
#   CRITPATH_MPI=openmpi ./test.sh   Open MPI build in ./build-openmpi
#   ./test.sh --sanitize             ASan+UBSan build in ./build-asan (./build-openmpi-asan): the
#                                    unit tests, the MPI tests of CRITPATH_SANITIZE_TEST_DIRS
#                                    (tests/CMakeLists.txt) and the long fuzz runs; then, for
#                                    MPICH, the threaded unit tests under TSan in ./build-tsan
#
# Steps: tools/install-deps.sh (apt only when a package is missing), cmake configure + build,
# then ctest in three groups so MPI runs never compete with each other for the 2 cores:
#   unit tests (label "unit")        in parallel (-j2)
#   MPI tests (label "mpi")          one at a time: each already runs more ranks than cores
#   everything else                  in parallel (-j2): the fuzz targets (MPICH only), 10 s each,
#                                    20 s each with --sanitize (CRITPATH_FUZZ_SECONDS in the
#                                    environment sets another time; 0 leaves them out)
# All groups run even when one fails; the exit status is non-zero when any test failed.
set -euo pipefail

sanitize=0
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=1 ;;
    *) echo "usage: test.sh [--sanitize]" >&2; exit 2 ;;
  esac
done

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
cd "$root"

mpi=${CRITPATH_MPI:-mpich}
case "$mpi" in
  mpich) build="build" ;;
  openmpi) build="build-openmpi" ;;
  *) echo "test.sh: CRITPATH_MPI must be mpich or openmpi, not '$mpi'" >&2; exit 2 ;;
esac
cmake_extra=(-DCRITPATH_FUZZ_SECONDS="${CRITPATH_FUZZ_SECONDS:-10}")
if [ "$sanitize" -eq 1 ]; then
  build="$build-asan"
  cmake_extra=(-DCRITPATH_SANITIZE=address -DCRITPATH_FUZZ_SECONDS="${CRITPATH_FUZZ_SECONDS:-20}")
  # The MPI libraries are not instrumented and leak at exit by design: no leak checking. A
  # preloaded instrumented libcritpath.so comes before libasan in the load order: allowed. An
  # allocation too large to serve (or over 2 GiB: none of the tests needs one) returns NULL as
  # glibc's would (a damaged OTF2 anchor file makes libotf2 ask for tens of GB, and it handles
  # the NULL) instead of ending the process or zeroing gigabytes.
  export ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1:max_allocation_size_mb=2048"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi
jobs=$(nproc 2>/dev/null || echo 2)
# Open MPI's point-to-point layer: ob1, the one it selects here anyway (Debian's
# openmpi-mca-params.conf excludes ucx), named so that it skips probing the others (the cm
# component's), ~0.2 of each launch's ~0.4 s: a minute over the Open MPI tests' ~300 launches.
if [ "$mpi" = openmpi ]; then
  export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
fi
start=$SECONDS

bash tools/install-deps.sh

# ccache (installed by install-deps): the Open MPI build reuses the MPICH build's objects of the
# sources that do not include mpi.h, and a rebuild after a checkout is quick. The build
# directory's name is left out of the hash (build/ and build-openmpi/ compile alike).
launchers=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_NOHASHDIR=1
  launchers=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake_extra+=("${launchers[@]}")
# Debug information of the plain builds: full (-g) unless CRITPATH_DEBUG_INFO=lines (-g1, what
# .ci/run asks for: line tables compile faster and name files and lines alike); the sanitizer
# builds keep line tables only either way (CMakeLists.txt).
cmake_extra+=(-DCRITPATH_DEBUG_INFO="${CRITPATH_DEBUG_INFO:-full}")

# A build directory configured for the other MPI keeps that MPI's cached compiler paths;
# start it afresh rather than mix the two.
if [ -f "$build/CMakeCache.txt" ] &&
   ! grep -qx "CRITPATH_MPI:STRING=$mpi" "$build/CMakeCache.txt"; then
  echo "test.sh: $build was configured for another MPI; reconfiguring from scratch"
  rm -rf -- "$build"
fi

echo "test.sh: configuring $build (CRITPATH_MPI=$mpi)"
cmake -S . -B "$build" -DCRITPATH_MPI="$mpi" "${cmake_extra[@]}"
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
if [ "$sanitize" -eq 0 ]; then
  run_ctest "unit tests" -L '^unit$' -j "$jobs"
  run_ctest "MPI tests ($mpi)" -L '^mpi$' -j 1
  run_ctest "other tests" -LE '^(unit|mpi)$' -j "$jobs"
else
  run_ctest "unit tests (ASan+UBSan)" -L '^unit$' -j "$jobs"
  # A sanitizer build registers only a subset of the MPI tests (CRITPATH_SANITIZE_TEST_DIRS).
  run_ctest "MPI tests ($mpi, ASan+UBSan)" -L '^mpi$' -j 1
  run_ctest "other tests" -LE '^(unit|mpi)$' -j "$jobs"
  if [ "$mpi" = mpich ]; then
    # TSan: the unit test cases whose code runs threads (tagged [tsan]: recorder, hooks, buffers,
    # wrappers' tables, the critical-path walk), built from their files and the analyzer's engine
    # alone (tests/CMakeLists.txt).
    echo "test.sh: configuring build-tsan (TSan)"
    cmake -S . -B build-tsan -DCRITPATH_MPI=mpich -DCRITPATH_SANITIZE=thread "${launchers[@]}"
    cmake --build build-tsan -j "$jobs" --target critpath_unit_tests
    build_saved=$build
    build=build-tsan
    # UCX (linked through MPICH) hooks madvise at thread exit, which crashes under TSan.
    UCX_MEM_MMAP_HOOK_MODE=none TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
      run_ctest "threaded unit tests (TSan)" -R '^unit\.tsan$' -j "$jobs"
    build=$build_saved
  fi
fi

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
