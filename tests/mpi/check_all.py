#!/usr/bin/env python3
"""critpath — tests/mpi/check_all.py: several check scripts on one run, so that tests which
would run the same program with the same settings share one run (tests/CMakeLists.txt,
critpath_add_mpi_test: a CHECK list with `--` between its scripts, or OTF2_CHECK).

usage: check_all.py OUTDIR SCRIPT [ARGS...] [-- SCRIPT [ARGS...]]...

Runs `python3 SCRIPT OUTDIR ARGS...` for each script in turn, every one even after a failure,
with the caller's environment (run_mpi_test.py puts tests/mpi on PYTHONPATH). Exit status: 1
when any script failed; 77 (skip, run_mpi_test.SKIP_CODE) when every one skipped; else 0.
"""
import subprocess
import sys

# The checks' exit codes: skipped, and failed on the program's own timing alone.
from critpath_check import SKIP_CODE, TIMING_CODE


def split_checks(items):
    """The SCRIPT [ARGS...] groups between `--` separators, empty groups left out."""
    groups, cur = [], []
    for item in items:
        if item == "--":
            if cur:
                groups.append(cur)
            cur = []
        else:
            cur.append(item)
    if cur:
        groups.append(cur)
    return groups


def main(argv):
    if len(argv) < 3:
        print("usage: check_all.py OUTDIR SCRIPT [ARGS...] [-- SCRIPT [ARGS...]]...", file=sys.stderr)
        return 2
    out, checks = argv[1], split_checks(argv[2:])
    failed, skipped, timing = [], 0, 0
    for script, *args in checks:
        print(f"check_all: {script} {' '.join(args)}", flush=True)
        rc = subprocess.call([sys.executable, script, out] + args)
        if rc == SKIP_CODE:
            skipped += 1
            print(f"check_all: {script}: not applicable (skipped)", flush=True)
        elif rc != 0:
            failed.append(script)
            timing += rc == TIMING_CODE
            print(f"check_all: {script}: FAILED (exit status {rc})", flush=True)
    if failed:
        print(f"check_all: {len(failed)} of {len(checks)} checks failed: {' '.join(failed)}")
        return TIMING_CODE if timing == len(failed) else 1
    if checks and skipped == len(checks):
        return SKIP_CODE
    print(f"check_all: {len(checks) - skipped} checks passed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
