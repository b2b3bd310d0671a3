"""critpath — tests/mpi/core/check_spill.py: regions.c with a budget so small that most
chunks spill to disk. Same known answers as check_regions.py, and the report says how much
spilled. usage: check_spill.py OUTDIR NP"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, fail, load_report, read_text  # noqa: E402

out, np_ = sys.argv[1], sys.argv[2]
regions = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "check_regions.py"),
                          out, np_])
if regions.returncode != 0:
    fail(f"check_regions.py {out} {np_} failed (exit {regions.returncode}): the spilled run's "
         f"profile differs from the known answers (see its message above)")
rep = load_report(out)
s = rep["scalars"]
# 1.5M pairs per rank compress to ~1.25 MB against a 1 MB budget: a part spills (the
# [buffer] unit tests cover "most chunks spill"); every event must still be counted.
check(s["trace_chunks_spilled"] > 0.05 * s["trace_chunks"],
      f"trace_chunks_spilled {s['trace_chunks_spilled']!r}, expected more than 5 % of "
      f"trace_chunks {s['trace_chunks']!r} (> {0.05 * s['trace_chunks']:g}); scalars: {s}")
# argv[1] of regions.c = 1.5M tick pairs per rank: every one of them is in the profile.
ticks = rep["metrics"]["visits"]["by_callpath"].get("main/tick")
check(ticks == 1500000 * int(np_),
      f"visits of main/tick: {ticks!r}, expected {1500000 * int(np_)} (1.5M per rank x {np_} ranks)")
check(s["trace_spilled_bytes"] > 0, f"trace_spilled_bytes is {s['trace_spilled_bytes']!r}, expected > 0")
head = read_text(out, "summary.txt")
check("spilled to disk" in head, "summary.txt does not mention 'spilled to disk'")
print("check_spill: ok", s["trace_chunks_spilled"], "of", s["trace_chunks"], "chunks spilled")
