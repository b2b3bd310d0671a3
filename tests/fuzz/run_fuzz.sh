#!/usr/bin/env bash
# critpath — tests/fuzz/run_fuzz.sh: builds one libFuzzer target with Debian's clang
# (-fsanitize=fuzzer,address,undefined) and runs it for a bounded time on its seed corpus.
#
#   run_fuzz.sh SRC_ROOT WORK_DIR TARGET SECONDS
#
# TARGET: codec | filter | config (tests/fuzz/fuzz_<TARGET>.cpp). The seeds are
# tests/fuzz/corpus/<TARGET>/ (read only); what the fuzzer finds new goes to WORK_DIR/corpus-<TARGET>
# (kept between runs of the same build tree). A crash, a leak, a sanitizer report or a timeout
# of one input (10 s) fails the test, and the input is left in WORK_DIR as crash-*/leak-*/timeout-*.
# Exits 77 (ctest skip) when clang or its fuzzer runtime is missing.
set -euo pipefail
src=$1
work=$2
target=$3
seconds=$4
clang=${CRITPATH_FUZZ_CXX:-clang++}
if ! command -v "$clang" >/dev/null; then
  echo "run_fuzz.sh: no $clang: skipped"
  exit 77
fi
case "$target" in
  codec) sources=("$src/libtrace/buffer/codec.cpp" "$src/libtrace/event/event.cpp") ; libs=(-lzstd) ;;
  filter) sources=("$src/compiler_hooks/filter.cpp") ; libs=() ;;
  config) sources=("$src/libtrace/config/config.cpp") ; libs=() ;;
  *) echo "run_fuzz.sh: unknown target $target" >&2; exit 2 ;;
esac
mkdir -p "$work"
exe="$work/fuzz_$target"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -I"$src" -I"$src/include")
if [ ! -x "$exe" ] || [ -n "$(find "$src/tests/fuzz/fuzz_$target.cpp" "${sources[@]}" \
      "$src/libtrace" "$src/compiler_hooks" -newer "$exe" -name '*.[ch]*' -print -quit)" ]; then
  echo "run_fuzz.sh: building $exe"
  if ! "$clang" "${flags[@]}" -o "$exe" "$src/tests/fuzz/fuzz_$target.cpp" "${sources[@]}" "${libs[@]}"; then
    if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
         "$clang" -x c++ -fsanitize=fuzzer - -o "$work/probe" 2>/dev/null; then
      echo "run_fuzz.sh: $clang has no libFuzzer runtime (libclang-rt-*-dev): skipped"
      exit 77
    fi
    exit 1
  fi
fi
corpus="$work/corpus-$target"
mkdir -p "$corpus"
cd "$work"
echo "run_fuzz.sh: fuzzing $target for $seconds s (seeds: tests/fuzz/corpus/$target)"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 "$corpus" "$src/tests/fuzz/corpus/$target"
