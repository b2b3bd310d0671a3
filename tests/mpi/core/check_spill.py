"""critpath — tests/mpi/core/check_spill.py: regions.c with a budget so small that most
chunks spill to disk. Same known answers as check_regions.py, and the report says how much
spilled. usage: check_spill.py OUTDIR NP"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import load_report  # noqa: E402

out, np_ = sys.argv[1], sys.argv[2]
subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "check_regions.py"), out, np_],
               check=True)
rep = load_report(out)
s = rep["scalars"]
# 1.5M pairs per rank compress to ~1.25 MB against a 1 MB budget: a part spills (the
# [buffer] unit tests cover "most chunks spill"); every event must still be counted.
assert s["trace_chunks_spilled"] > 0.05 * s["trace_chunks"], s
# argv[1] of regions.c = 1.5M tick pairs per rank: every one of them is in the profile.
assert rep["metrics"]["visits"]["by_callpath"]["main/tick"] == 1500000 * int(np_), rep["metrics"]["visits"]
assert s["trace_spilled_bytes"] > 0, s
with open(os.path.join(out, "summary.txt")) as f:
    head = f.read()
assert "spilled to disk" in head
print("check_spill: ok", s["trace_chunks_spilled"], "of", s["trace_chunks"], "chunks spilled")
