"""critpath — tests/mpi/waits/check_icoll_waits.py: known answers for icoll_waits.c.

usage: check_icoll_waits.py OUTDIR NP
Nonblocking rooted and prefix collectives are waited for in the MPI_Wait completing them:
each scenario's pattern is checked per rank at main/s_<scenario>/MPI_Wait (±5 % or ±2 ms),
~0 on the ranks that do not wait. The I* calls themselves must count as mpi_collective
time, not mpi_management (the spec's `class`).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import load_report, per_rank_failures  # noqa: E402

D, L = 0.100, 0.200


def root_of(scen, P):
    """The same table as root_of() in icoll_waits.c."""
    if scen in ("iscatter", "igather"):
        return 1 % P
    if scen in ("iscatterv", "igatherv"):
        return P - 1
    return 0


def expectations(P):
    """(scenario, I* function, metric, {rank: expected seconds at MPI_Wait})."""
    e = []
    for scen, fn in (("ibcast", "MPI_Ibcast"), ("iscatter", "MPI_Iscatter"),
                     ("iscatterv", "MPI_Iscatterv")):
        R = root_of(scen, P)
        e.append((scen, fn, "late_broadcast", {r: (0.0 if r == R else L) for r in range(P)}))
    for scen, fn in (("ireduce", "MPI_Ireduce"), ("igather", "MPI_Igather"),
                     ("igatherv", "MPI_Igatherv")):
        R = root_of(scen, P)
        e.append((scen, fn, "early_reduce", {r: (D * (P - 1) if r == R else 0.0) for r in range(P)}))
    for scen, fn in (("iscan", "MPI_Iscan"), ("iexscan", "MPI_Iexscan")):
        e.append((scen, fn, "early_scan", {r: D * r for r in range(P)}))
    return e


def main():
    out, P = sys.argv[1], int(sys.argv[2])
    rep = load_report(out)
    m = rep["metrics"]
    failures, checked = [], 0
    for scen, fn, metric, exp in expectations(P):
        f, n = per_rank_failures(rep, metric, f"main/s_{scen}/MPI_Wait", [exp[r] for r in range(P)])
        failures += f
        checked += n
        # The pattern is booked at the completion call, never at the post.
        post = f"main/s_{scen}/{fn}"
        checked += 1
        if m[metric]["by_callpath"].get(post, 0.0) > 0.002:
            failures.append(f"{metric} booked at the post {post}: {m[metric]['by_callpath'][post]}")
        # The mpi_* hierarchy: the post is collective time.
        checked += 1
        if not m["mpi_collective"]["by_callpath"].get(post, 0.0) > 0:
            failures.append(f"mpi_collective has no time at {post}")
        if m["mpi_management"]["by_callpath"].get(post, 0.0) > 0:
            failures.append(f"{post} counted as mpi_management")
    if failures:
        print("\n".join(failures))
        print(f"check_icoll_waits: {len(failures)} of {checked} checks failed")
        sys.exit(1)
    print(f"check_icoll_waits: ok ({checked} checks)")


if __name__ == "__main__":
    main()
