"""critpath — tests/mpi/waits/check_waits.py: known answers for tests/mpi/waits/waits.c.

usage: check_waits.py OUTDIR NP [--expect-distorted]
Every scenario's pattern is checked per rank at its call path (±5 % or ±2 ms), and the
same pattern must be ~0 on the ranks that do not wait. --expect-distorted inverts the
verdict: used with an injected clock skew and CRITPATH_CLOCK_CORRECTION=none, it proves the
checks can fail (and so that the correction is what makes them pass).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import (TIMING_CODE, check, lateness, load_report, metric, per_rank_failures,  # noqa: E402
                            uniform_excess)

D, L = 0.100, 0.200


def expectations(P):
    """(scenario, metric, call in scenario, {rank: expected seconds})."""
    e = []
    one = lambda r, v: {q: (v if q == r else 0.0) for q in range(P)}  # noqa: E731
    e.append(("ls_blocking", "late_sender", "MPI_Recv", one(1, L)))
    e.append(("ls_nonblocking", "late_sender", "MPI_Waitall", one(1, L)))
    e.append(("ls_anysource", "late_sender", "MPI_Recv", one(1, L)))
    e.append(("wrong_order", "late_sender", "MPI_Recv", one(1, L)))
    e.append(("wrong_order", "late_sender_wrong_order", "MPI_Recv", one(1, L)))
    e.append(("wrong_order", "late_sender_wrong_order_same_source", "MPI_Recv", one(1, L)))
    e.append(("late_receiver", "late_receiver", "MPI_Ssend", one(0, L)))
    e.append(("barrier", "wait_barrier", "MPI_Barrier", {r: D * (P - 1 - r) for r in range(P)}))
    e.append(("allreduce", "wait_nxn", "MPI_Allreduce", {r: D * (P - 1 - r) for r in range(P)}))
    e.append(("alltoallv", "wait_nxn", "MPI_Alltoallv", {r: D * (P - 1 - r) for r in range(P)}))
    e.append(("bcast", "late_broadcast", "MPI_Bcast", {r: (L if r else 0.0) for r in range(P)}))
    e.append(("reduce", "early_reduce", "MPI_Reduce", one(0, D * (P - 1))))
    e.append(("scan", "early_scan", "MPI_Scan", {r: D * r for r in range(P)}))
    e.append(("iallreduce", "wait_nxn", "MPI_Wait", {r: D * (P - 1 - r) for r in range(P)}))
    halves = {}
    for r in range(P):
        Q = (P - r % 2 + 1) // 2  # ranks of r's parity
        halves[r] = D * (Q - 1 - r // 2)
    e.append(("split", "wait_barrier", "MPI_Barrier", halves))
    return e


def late_entry(rep, metric_id, path, exp, tol):
    """The ranks that wait at `path` all waited the same amount too long (uniform_excess)."""
    vals = metric(rep, metric_id).get("by_callpath_rank", {}).get(path)
    return bool(vals) and uniform_excess([v - e for v, e in zip(vals, exp) if e > 0], tol)


def main():
    out, P = sys.argv[1], int(sys.argv[2])
    distorted = "--expect-distorted" in sys.argv
    rep = load_report(out)
    m = rep["metrics"]
    failures, checked, timing = [], 0, True
    # (Not with --expect-distorted: the distortion must show, not hide in a wider tolerance.)
    late = {} if distorted else lateness(out)
    # The nonblocking collective's wait starts at MPI_Wait, after the post returned: a post
    # that took a while (Open MPI, 16 ranks on 2 cores: 2.5-5.4 ms) shortens it by as much.
    cps = {c["path"]: c for c in rep.get("callpaths", [])}
    post = cps.get("main/s_iallreduce/MPI_Iallreduce", {}).get("inclusive_s", {}).get("max", 0.0)
    extra = {"iallreduce": post}
    for scen, metric, call, exp in expectations(P):
        tol = 0.002 + late.get(scen, 0.0) + extra.get(scen, 0.0)
        path, want = f"main/s_{scen}/{call}", [exp[r] for r in range(P)]
        f, n = per_rank_failures(rep, metric, path, want, abs_=tol)
        timing = timing and (not f or late_entry(rep, metric, path, want, tol))
        failures += f
        checked += n
    # The hierarchy holds: a pattern's total never exceeds the MPI time of its call paths.
    for metric in ("late_sender", "wait_barrier", "wait_nxn"):
        for path, v in m[metric]["by_callpath"].items():
            mpi = m["mpi_time"]["by_callpath"].get(path, 0)
            check(v <= mpi + 1e-9, f"{metric} at {path} is {v} s, more than its MPI time {mpi} s")
    comp = m["computation"]["total"] + m["mpi_time"]["total"]
    check(abs(comp - m["time"]["total"]) <= 1e-6 * max(1.0, m["time"]["total"]),
          f"time {m['time']['total']} != computation + mpi_time {comp}")
    if distorted:
        if not failures:
            print("check_waits: expected distorted results, but every check passed")
            sys.exit(1)
        print(f"check_waits: ok ({len(failures)} of {checked} checks distorted, as expected)")
        return
    if failures:
        print("\n".join(failures))
        print(f"check_waits: {len(failures)} of {checked} checks failed")
        if timing:
            print("check_waits: TIMING: every failing scenario's waiting ranks waited the same "
                  "amount too long (the rank they wait for entered late)")
        sys.exit(TIMING_CODE if timing else 1)
    print(f"check_waits: ok ({checked} checks)")


if __name__ == "__main__":
    main()
