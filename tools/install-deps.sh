#!/usr/bin/env bash
# critpath — tools/install-deps.sh: install the Debian 12 packages critpath needs to build,
# test and run its demo. Used by ./demo.sh and ./test.sh (and CI through test.sh).
#
# Checks every package with dpkg-query first and touches apt only when something is missing:
# then `apt-get update` once and one non-interactive `apt-get install` of the missing ones.
# Needs root (or sudo) only in that case. Exit status: 0 when everything is installed.
#
# usage: tools/install-deps.sh [--check]     --check: only list what is missing (exit 1 if any)
set -euo pipefail

packages=(
  build-essential cmake pkg-config python3
  mpich libmpich-dev
  openmpi-bin libopenmpi-dev
  libzstd-dev libunwind-dev libpapi-dev papi-tools libdw-dev libelf-dev
  catch2 nlohmann-json3-dev
  gfortran
  clang libclang-rt-14-dev llvm-14  # XRay mode (critpath-cc/-cxx --xray); llvm-xray for its tests
  python3-jsonschema
  libopen-trace-format2-dev otf2-tools python3-otf2  # OTF2 export/import; otf2-print in its tests
  chromium
  libmimalloc-dev  # critpath-analyze's allocator (hosting thousands of ranks per process)
  ccache  # test.sh: the builds of a run share what they compile alike (README)
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: missing: ${missing[*]}"
if [ "${1:-}" = "--check" ]; then
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps: not root and no sudo; install them with: apt-get install ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" </dev/null
echo "install-deps: installed ${missing[*]}"
