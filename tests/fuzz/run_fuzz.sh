#!/usr/bin/env bash
# critpath — tests/fuzz/run_fuzz.sh: builds one libFuzzer target with Debian's clang
# (-fsanitize=fuzzer,address,undefined) and runs it for a bounded time on its seed corpus.
#
#   run_fuzz.sh SRC_ROOT WORK_DIR TARGET SECONDS [BUILD_ROOT]
#
# TARGET: codec | filter | config | otf2_import (tests/fuzz/fuzz_<TARGET>.cpp). otf2_import
# compiles the importer and what it links (engine::Comm, libtrace's definitions, codec, clock)
# and needs BUILD_ROOT, the project's build tree, for the headers it generates. The seeds are
# tests/fuzz/corpus/<TARGET>/ (read only); what the fuzzer finds new goes to WORK_DIR/corpus-<TARGET>
# (kept between runs of the same build tree). A crash, a leak, a sanitizer report or a timeout
# of one input (10 s) fails the test, and the input is left in WORK_DIR as crash-*/leak-*/timeout-*.
# Exits 77 (ctest skip) when clang or its fuzzer runtime is missing.
set -euo pipefail
src=$1
work=$2
target=$3
seconds=$4
extra=()  # compiler flags
watch=("$src/libtrace" "$src/compiler_hooks")  # a change below rebuilds the target
lsan=""  # LSAN_OPTIONS
clang=${CRITPATH_FUZZ_CXX:-clang++}
if ! command -v "$clang" >/dev/null; then
  echo "run_fuzz.sh: no $clang: skipped"
  exit 77
fi
case "$target" in
  codec) sources=("$src/libtrace/buffer/codec.cpp" "$src/libtrace/event/event.cpp") ; libs=(-lzstd) ;;
  filter) sources=("$src/compiler_hooks/filter.cpp") ; libs=() ;;
  config) sources=("$src/libtrace/config/config.cpp") ; libs=() ;;
  otf2_import)
    sources=("$src"/analyzer/otf2/otf2_{import,support}.cpp "$src"/analyzer/engine/{comm,fiber,host_shm,watchdog}.cpp
             "$src"/libtrace/{clock/clock,defs/definitions,defs/demangle,runtime/status,runtime/alloc_fault}.cpp
             "$src"/libtrace/{buffer/codec,buffer/chunk_store,event/event}.cpp)
    libs=($(pkg-config --libs otf2 mpich) -lzstd)
    extra=(-I"$5/pmpi_wrappers/generated" -I"$5/generated" $(pkg-config --cflags otf2 mpich))
    watch+=("$src/analyzer/otf2" "$src/analyzer/engine" "$src/tests/fuzz/otf2_archive_bytes.h")
    lsan="suppressions=$src/tests/fuzz/lsan_otf2.supp:print_suppressions=0" ;;
  *) echo "run_fuzz.sh: unknown target $target" >&2; exit 2 ;;
esac
mkdir -p "$work"
exe="$work/fuzz_$target"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -I"$src" -I"$src/include" "${extra[@]}")
if [ ! -x "$exe" ] || [ -n "$(find "$src/tests/fuzz/fuzz_$target.cpp" "${sources[@]}" \
      "${watch[@]}" -newer "$exe" -name '*.[ch]*' -print -quit)" ]; then
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
# An allocation too large to serve (or over 2 GiB) returns NULL, as glibc's would: libotf2 (not
# instrumented) asks for what a damaged size says, tens of GB, and handles the NULL (test.sh's
# ASAN_OPTIONS). Our code's operator new still fails loudly on such a size. The OTF2 importer's
# inputs (at most 64 KiB) are served at most 256 MiB at once: a damaged anchor file's chunk size
# has libotf2 ask for ~1 GiB again and again, which ASan serves in 30 s (a libFuzzer timeout in
# one CI run; 0.07 s with the cap, 2.6 s in otf2-print without ASan).
alloc_mb=2048
[ "$target" = otf2_import ] && alloc_mb=256
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 LSAN_OPTIONS=$lsan \
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=$alloc_mb \
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 "$corpus" "$src/tests/fuzz/corpus/$target"
