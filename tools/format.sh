#!/bin/sh
# critpath — tools/format.sh: clang-format (14 or newer) over the C and C++ sources of the tree,
# with the repository's .clang-format.
#
#   tools/format.sh            reformat the files in place
#   tools/format.sh --check    change nothing; print where the files differ from the format
#                              and exit 1 when one does (clang-format --dry-run --Werror; for CI)
#   tools/format.sh --list     print the files it formats, one a line
#
# The files: the tracked *.c, *.h, *.cpp, *.hpp, *.cc and benchmarks/bench_hooks_kernel.inc,
# minus what must keep its bytes (clang-format 14 has no .clang-format-ignore):
#   tests/fuzz/corpus/            fuzzer seed inputs
#   tests/unit/wrappers/golden/   the generator's pinned output
#   tests/mpi/corpus/, tests/mpi/wrappers/   MPI programs written as third-party codes and
#                                 one-line check tables are: their layout is theirs
#   build*/ and _build*/          build trees
# The other *.inc files are left alone: libtrace/config/flags.inc is a hand-aligned X-macro
# table, tests/mpi/fortran/fortran_body.inc is Fortran.
# CLANG_FORMAT names the binary (default: clang-format).
set -eu
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format}

list_files() {
  git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cc' 'benchmarks/bench_hooks_kernel.inc' |
    grep -v -E '^(tests/fuzz/corpus/|tests/unit/wrappers/golden/|tests/mpi/corpus/|tests/mpi/wrappers/|_?build[^/]*/)' || true
}

case "${1:-}" in
  "")      list_files | xargs -r "$clang_format" -i --style=file ;;
  --check) list_files | xargs -r "$clang_format" --dry-run --Werror --style=file || exit 1 ;;
  --list)  list_files ;;
  *)       echo "usage: tools/format.sh [--check | --list]" >&2; exit 2 ;;
esac
