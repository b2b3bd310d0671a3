"""critpath — tests/mpi/examples/check_jacobi.py: the bundled example (what ./demo.sh runs)
produces a complete report: its regions, MPI calls beneath them, the imbalance visible as
Wait at N x N on the fast ranks. usage: check_jacobi.py OUTDIR NP"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import load_report  # noqa: E402

out, P = sys.argv[1], int(sys.argv[2])
rep = load_report(out)
paths = {c["path"] for c in rep["callpaths"]}
for region in ("iteration", "compute", "halo", "residual"):
    assert any(p.split("/")[-1] == region for p in paths), f"region {region} missing: {sorted(paths)}"
assert any(p.endswith("/MPI_Allreduce") for p in paths), sorted(paths)
m = rep["metrics"]
# The last rank works ~30 % more: the others wait for it in the residual allreduce.
nxn = m["wait_nxn"]["by_rank"]
assert nxn[P - 1] < min(nxn[:P - 1]), f"wait_nxn per rank {nxn}: the slow last rank should wait least"
with open(os.path.join(out, "summary.txt")) as f:
    text = f.read()
for marker in ("@--- Call-path profile", "@--- Wait states", "@--- End of Report"):
    assert marker in text, marker
print("check_jacobi: ok")
