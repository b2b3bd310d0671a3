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
assert s["trace_chunks_spilled"] > 0.5 * s["trace_chunks"], s
assert s["trace_spilled_bytes"] > 0, s
with open(os.path.join(out, "summary.txt")) as f:
    head = f.read()
assert "spilled to disk" in head
print("check_spill: ok", s["trace_chunks_spilled"], "of", s["trace_chunks"], "chunks spilled")
