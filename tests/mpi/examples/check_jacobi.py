"""critpath — tests/mpi/examples/check_jacobi.py: the bundled example (what ./demo.sh runs)
produces a complete report: its regions, MPI calls beneath them, the wait-state and
critical-path sections. (With the small problem used here the example's 30 % imbalance is
below the scheduling noise of 4 ranks on 2 cores, so no ordering of waits is asserted; the
known answers live in tests/mpi/waits and tests/mpi/critpath.) usage: check_jacobi.py OUTDIR NP"""
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
assert len(m["wait_nxn"]["by_rank"]) == P and m["wait_nxn"]["total"] > 0, m["wait_nxn"]["by_rank"]
assert abs(rep["scalars"]["critical_path_length_s"] - rep["run"]["wall_time_s"]) <= 0.01 * rep["run"]["wall_time_s"]
with open(os.path.join(out, "summary.txt")) as f:
    text = f.read()
for marker in ("@--- Call-path profile", "@--- Wait states", "@--- Critical path", "@--- End of Report"):
    assert marker in text, marker
print("check_jacobi: ok")
