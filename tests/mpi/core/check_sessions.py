"""critpath — tests/mpi/core/check_sessions.py: a Sessions-only program (sessions.c) runs as it
does untraced, and each process says once that Sessions are not traced and it gets no report.
usage: check_sessions.py OUTDIR NP"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, read_stderr, read_stdout  # noqa: E402

out, np_ = sys.argv[1], int(sys.argv[2])
stdout = read_stdout(out)
check(f"sessions: token went round {np_} ranks: {np_}" in stdout, f"the ring's result is missing: {stdout!r}")
lines = [l for l in read_stderr(out).splitlines() if "Sessions are not traced" in l]
check(len(lines) == np_, f"expected one 'Sessions are not traced' line per process, got {lines}")
check(all(l.startswith("critpath:") and "no report" in l for l in lines), f"unexpected wording: {lines}")
print("check_sessions: ran unchanged, told once per process")
