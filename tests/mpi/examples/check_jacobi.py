"""critpath — tests/mpi/examples/check_jacobi.py: the bundled example (what ./demo.sh runs)
produces a complete report: its regions, MPI calls beneath them, the wait-state and
critical-path sections. (With the small problem used here the example's 30 % imbalance is
below the scheduling noise of 4 ranks on 2 cores, so no ordering of waits is asserted; the
known answers live in tests/mpi/waits and tests/mpi/critpath.) usage: check_jacobi.py OUTDIR NP"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, load_report, metric, read_text, scalar  # noqa: E402

out, P = sys.argv[1], int(sys.argv[2])
rep = load_report(out)
paths = {c["path"] for c in rep["callpaths"]}
for region in ("iteration", "compute", "halo", "residual"):
    check(any(p.split("/")[-1] == region for p in paths), f"region {region} missing: {sorted(paths)}")
check(any(p.endswith("/MPI_Allreduce") for p in paths),
      f"no call path ends in /MPI_Allreduce: {sorted(paths)}")
nxn = metric(rep, "wait_nxn")
check(len(nxn["by_rank"]) == P, f"wait_nxn.by_rank has {len(nxn['by_rank'])} entries, expected {P}")
check(nxn["total"] > 0, f"wait_nxn total is {nxn['total']!r}, expected > 0; by_rank {nxn['by_rank']}")
length, wall = scalar(rep, "critical_path_length_s"), rep["run"]["wall_time_s"]
check(abs(length - wall) <= 0.01 * wall,
      f"critical_path_length_s {length!r} vs wall time {wall!r}: off by {length - wall:+g}, "
      f"tolerance {0.01 * wall:g} (1 %)")
text = read_text(out, "summary.txt")
for marker in ("@--- Call-path profile", "@--- Wait states", "@--- Critical path", "@--- End of Report"):
    check(marker in text, f"summary.txt lacks {marker!r}")
# The Hatchet literal: one root "main" whose children are its call paths, with the metrics.
import json  # noqa: E402
with open(os.path.join(out, "calltree.hatchet.json")) as f:
    tree = json.load(f)
check(isinstance(tree, list) and len(tree) == 1 and tree[0]["frame"]["name"] == "main",
      f"calltree.hatchet.json: expected one root 'main', got {[t.get('frame') for t in tree]}")
root = tree[0]
main_cp = next(c for c in rep["callpaths"] if c["path"] == "main")


def names(node, prefix=""):
    path = prefix + node["frame"]["name"]
    yield path
    for k in node["children"]:
        yield from names(k, path + "/")


check(set(names(root)) == paths, f"hatchet paths differ from report.json's: "
      f"{sorted(set(names(root)) ^ paths)[:10]}")
for key in ("time (inc)", "time", "visits", "wait_nxn", "critical_path"):
    check(key in root["metrics"], f"hatchet root lacks metric {key!r}: {sorted(root['metrics'])[:20]}")
check(abs(root["metrics"]["time (inc)"] - main_cp["inclusive_s"]["sum"]) <= 1e-9 * main_cp["inclusive_s"]["sum"],
      f"hatchet main 'time (inc)' {root['metrics']['time (inc)']!r} != report.json's "
      f"{main_cp['inclusive_s']['sum']!r}")
print("check_jacobi: ok")
