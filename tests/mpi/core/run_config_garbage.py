#!/usr/bin/env python3
"""critpath — tests/mpi/core/run_config_garbage.py: every CRITPATH_* variable set to garbage at
once must never stop the application (docs/configuration.md: an invalid value warns and the
default is used).

usage: run_config_garbage.py FLAGS_INC RUN_MPI_TEST_ARGS... -- app [args]

Reads the variables from libtrace/config/flags.inc, then runs the application three times
through run_mpi_test.py (which fails on a non-zero exit status), each time with every variable
but CRITPATH_OUTPUT_DIR (the test's own) set to a garbage value drawn with a fixed seed: empty,
blanks, words, overflowing or negative numbers, numbers with wrong units, paths that are
directories or do not exist, shell metacharacters, format strings, non-UTF-8 bytes, 5000-byte
strings. Values that would be valid and make a run stall or never end are not drawn (a value
that is only digits for the testing aids). Each run must also write its report.
"""
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXED = ["", " ", "\t", "abc", "-1", "0x10", "1e3", "99999999999999999999999",
         "-99999999999999999999", "1Q", "64MiBB", "yes please", "../../../etc/passwd", "/dev/null",
         "/tmp", "/nonexistent/x", "\U0001f4a5", "'\"$(touch /tmp/critpath-pwned)`id`", "%s%n%x",
         "a" * 5000, "1,2,3,4,5", "nan", "inf", "-0x", "0..1", "TRUE-ish", "\\", "=", "1 2"]


def garbage(rng):
    if rng.random() < 0.7:
        return rng.choice(FIXED)
    n = rng.randint(1, 40)
    # Random bytes but NUL and ';' (run_mpi_test.py's list separator), always with a letter.
    raw = bytes(rng.choice([b for b in range(1, 256) if b != ord(";")]) for _ in range(n)) + b"z"
    return raw.decode("latin-1")


def main(argv):
    flags_inc = argv[0]
    cut = argv.index("--")
    driver_args, app = argv[1:cut], argv[cut + 1:]
    names = re.findall(r"^CRITPATH_FLAG\(\s*\w+,\s*(\w+),", open(flags_inc).read(), re.M)
    names = ["CRITPATH_" + n for n in names if n != "OUTPUT_DIR"]
    out = driver_args[driver_args.index("--out") + 1]
    failures = 0
    for run in range(3):
        rng = random.Random(1600 + run)
        env = [(n, garbage(rng)) for n in names]
        # The testing aids: a value that parses (digits only) could stall a rank until the
        # timeout; draw again until it cannot.
        env = [(n, v + "x" if re.fullmatch(r"\s*-?\d+\s*", v) else v) for n, v in env]
        run_out = f"{out}.{run}"
        args = list(driver_args)
        args[args.index("--out") + 1] = run_out
        args += ["--env", ";".join(f"{n}={v}" for n, v in env)]
        print(f"run_config_garbage: run {run}: " + ", ".join(f"{n}={v[:20]!r}" for n, v in env), flush=True)
        r = subprocess.run([sys.executable, os.path.join(HERE, "..", "run_mpi_test.py")] + args + ["--"] + app)
        if r.returncode != 0:
            print(f"run_config_garbage: FAIL: run {run} failed (exit {r.returncode})")
            failures += 1
        elif not os.path.exists(os.path.join(run_out, "summary.txt")):
            print(f"run_config_garbage: FAIL: run {run} wrote no summary.txt")
            failures += 1
    print("run_config_garbage: " + ("PASS" if failures == 0 else f"{failures} of 3 runs failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
