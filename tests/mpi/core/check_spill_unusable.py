"""critpath — tests/mpi/core/check_spill_unusable.py: regions.c with a 1 MB budget and a spill
directory that is a regular file (CRITPATH_SPILL_DIR=/proc/self/status's kind of path: not a
directory). usage: check_spill_unusable.py OUTDIR NP SPILL_DIR

At MPI_Init every rank warns once, naming the spill directory and the errno text; the chunks
past the budget stay in memory (1.25 MB of 8 MB allowed): nothing spilled, nothing lost, the
known answers of check_regions.py hold, and the note is in the report.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, fail, load_report, read_stderr  # noqa: E402

out, np_, spill = sys.argv[1], sys.argv[2], sys.argv[3]
regions = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "check_regions.py"),
                          out, np_])
if regions.returncode != 0:
    fail(f"check_regions.py {out} {np_} failed (exit {regions.returncode})")
rep = load_report(out)
s = rep["scalars"]
check(s["trace_spilled_bytes"] == 0, f"trace_spilled_bytes {s['trace_spilled_bytes']!r}, expected 0")
ticks = rep["metrics"]["visits"]["by_callpath"].get("main/tick")
check(ticks == 1500000 * int(np_), f"visits of main/tick: {ticks!r}, expected {1500000 * int(np_)}")
err = read_stderr(out)
lines = [l for l in err.splitlines() if "spill directory" in l]
check(len(lines) == int(np_), f"expected one spill-directory warning per rank, got {lines}")
check(all(spill in l and "Not a directory" in l for l in lines),
      f"the warnings should name {spill} and 'Not a directory': {lines}")
check(any("spill directory" in n for n in rep.get("notes", [])), f"no spill note in {rep.get('notes')}")
print("check_spill_unusable: warned at start with the path, nothing spilled, nothing lost")
