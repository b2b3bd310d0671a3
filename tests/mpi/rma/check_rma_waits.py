"""critpath — tests/mpi/rma/check_rma_waits.py: known answers for rma_waits.c.

usage: check_rma_waits.py OUTDIR P [SCENARIO]    (all scenarios when none is named)

D = 100 ms; values per rank at the scenario's call paths, ±5 % or ±2 ms (expected zeros: ±5 ms).

  create       rma_wait_at_create at main/s_create/<constructor> = D on ranks 0..P-2, 0 on P-1,
               for MPI_Win_create, _allocate, _allocate_shared, _create_dynamic;
               rma_wait_at_free at main/s_create/MPI_Win_free = 4 D on ranks 0..P-2, 0 on P-1
  fence_late   rma_wait_at_fence at main/s_fence_late/MPI_Win_fence = D on ranks 0..P-2
  early_fence  rma_wait_at_fence at main/s_early_fence/MPI_Win_fence = D on ranks != 1;
               rma_early_fence there = D on rank 0 only
  late_post    rank 0: rma_late_post at MPI_Win_start + MPI_Win_complete = D, booked at the
               call that blocked (its exclusive time >= D/2 holds the wait, the other ~0)
  early_transfer  the same with rma_early_transfer at MPI_Put: where MPI blocked (Win_start,
               the Put or Win_complete) holds D as Late Post or Early Transfer
  early_wait   rma_early_wait at main/s_early_wait/MPI_Win_wait = 1.5 D on rank 1,
               rma_late_complete = 0.5 D
  lock         rma_lock_contention on rank 1 = D (in s_lock), 0 on rank 0
  progress     rma_wait_for_progress on rank 0 = the time its blocking call took when it
               blocked (>= D/2: MPICH's lock needs the target's progress), else ~0
  paused       recording paused on rank 0 around a fence (own window) and its Win_post: a note
               "RMA analysis skipped: inconsistent RMA epochs on window W", a note of the
               unmatched PSCW epoch, no RMA wait booked in s_paused
  bytes        rma_bytes_put / _get / _accumulated per call exactly (rma_waits.c's header)
Plus: mpi_rma_sync + mpi_rma_comm = mpi_rma.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import TIMING_CODE, CheckError, approx, load_report, metric, uniform_excess  # noqa: E402

D = 0.100
ZERO_ABS = 0.005


class Checks:
    """Runs checks, keeping every failure. A scenario's per-rank failures are the run's timing
    (`timing`, when every failure is) if its waiting ranks all waited the same amount too long:
    the rank they wait for entered late (uniform_excess)."""

    def __init__(self):
        self.failures = []
        self.count = 0
        self.timing = True
        self.in_scenarios = 0  # failures of expect_scenario's checks

    def run(self, what, fn, *args, **kw):
        self.count += 1
        try:
            fn(*args, **kw)
            return True
        except CheckError as ex:
            self.failures.append(f"{what}: {ex}")
            return False

    def scenario(self, deviations, failed, tol=0.002):
        """After one scenario's per-rank checks: `deviations` (value − expected where a wait is
        expected), `failed` whether any of its checks failed."""
        if failed and not uniform_excess(deviations, max(tol, 0.05 * D)):
            self.timing = False


def per_rank(rep, mid, path, P):
    return metric(rep, mid).get("by_callpath_rank", {}).get(path, [0.0] * P)


def near(value, expected, what):
    if expected == 0:
        approx(value, 0.0, what, rel=0, abs_=ZERO_ABS)
    else:
        approx(value, expected, what)


def time_at(rep, path):
    return metric(rep, "time").get("by_callpath", {}).get(path, 0.0)


def expect_ranks(c, rep, mid, path, expected):
    """Checks every rank; returns (value − expected where a wait is expected, any failed)."""
    vals = per_rank(rep, mid, path, len(expected))
    ok = [c.run(f"{mid} at {path} rank {r}", near, vals[r], e, f"{mid} at {path} on rank {r}")
          for r, e in enumerate(expected)]
    return [v - e for v, e in zip(vals, expected) if e > 0], not all(ok)


def expect_scenario(c, rep, checks):
    """expect_ranks for each (metric, path, expected) of one scenario, then its classification."""
    deviations, failed, before = [], False, len(c.failures)
    for mid, path, expected in checks:
        d, f = expect_ranks(c, rep, mid, path, expected)
        deviations += d
        failed = failed or f
    c.in_scenarios += len(c.failures) - before
    c.scenario(deviations, failed)


def blocked_where(c, rep, scen, calls):
    """The wait of a PSCW origin is booked at the call that blocked, as much as it blocked."""
    total = 0.0
    for call, mids in calls:
        path = f"main/s_{scen}/{call}"
        booked = sum(per_rank(rep, m, path, 4)[0] for m in mids)
        total += booked
        t = time_at(rep, path)
        if t >= D / 2:
            c.run(f"{scen}: {call} blocked {t:.3f} s", approx, booked, D, f"{'+'.join(mids)} at {path}")
        else:
            c.run(f"{scen}: {call} did not block", approx, booked, 0.0, f"{'+'.join(mids)} at {path}",
                  rel=0, abs_=ZERO_ABS)
    c.run(f"{scen}: total", approx, total, D, f"{scen}: late post / early transfer on rank 0")


def main():
    out, P = sys.argv[1], int(sys.argv[2])
    only = sys.argv[3] if len(sys.argv) > 3 else None
    rep = load_report(out)
    c = Checks()
    want = lambda s: only is None or only == s  # noqa: E731
    late = [D] * (P - 1) + [0.0]
    if want("create"):
        for ctor in ("MPI_Win_create", "MPI_Win_allocate", "MPI_Win_allocate_shared", "MPI_Win_create_dynamic"):
            expect_scenario(c, rep, [("rma_wait_at_create", f"main/s_create/{ctor}", late)])
        expect_scenario(c, rep, [("rma_wait_at_free", "main/s_create/MPI_Win_free", [4 * x for x in late])])
    if want("fence_late"):
        expect_scenario(c, rep, [("rma_wait_at_fence", "main/s_fence_late/MPI_Win_fence", late)])
    if want("early_fence"):
        expect_scenario(c, rep, [("rma_wait_at_fence", "main/s_early_fence/MPI_Win_fence",
                                  [0.0 if r == 1 else D for r in range(P)]),
                                 ("rma_early_fence", "main/s_early_fence/MPI_Win_fence",
                                  [D if r == 0 else 0.0 for r in range(P)])])
    if want("late_post"):
        blocked_where(c, rep, "late_post", [("MPI_Win_start", ["rma_late_post"]),
                                            ("MPI_Win_complete", ["rma_late_post"])])
    if want("early_transfer"):
        blocked_where(c, rep, "early_transfer", [("MPI_Win_start", ["rma_late_post"]),
                                                 ("MPI_Put", ["rma_early_transfer"]),
                                                 ("MPI_Win_complete", ["rma_late_post"])])
    if want("early_wait"):
        expect_scenario(c, rep, [("rma_early_wait", "main/s_early_wait/MPI_Win_wait",
                                  [1.5 * D if r == 1 else 0.0 for r in range(P)]),
                                 ("rma_late_complete", "main/s_early_wait/MPI_Win_wait",
                                  [0.5 * D if r == 1 else 0.0 for r in range(P)])])
    if want("lock"):
        lc = metric(rep, "rma_lock_contention").get("by_callpath_rank", {})
        on = [sum(v[r] for p, v in lc.items() if p.startswith("main/s_lock/")) for r in range(P)]
        for r in range(P):
            c.run(f"lock contention rank {r}", near, on[r], D if r == 1 else 0.0,
                  f"rma_lock_contention in main/s_lock on rank {r}")
    if want("progress"):
        blocked = max((time_at(rep, f"main/s_progress/{call}")
                       for call in ("MPI_Win_lock", "MPI_Put", "MPI_Win_unlock")), default=0.0)
        wp = metric(rep, "rma_wait_for_progress").get("by_callpath_rank", {})
        got = sum(v[0] for p, v in wp.items() if p.startswith("main/s_progress/"))
        c.run("wait for progress", approx, got, blocked if blocked >= D / 2 else 0.0,
              f"rma_wait_for_progress in main/s_progress on rank 0 (its longest call took {blocked:.3f} s)",
              rel=0.05, abs_=ZERO_ABS)
    if want("paused"):
        notes = rep.get("notes", [])
        c.run("skipped-window note", lambda: any("analysis skipped: inconsistent RMA epochs on window" in n
                                                  for n in notes) or (_ for _ in ()).throw(
            CheckError(f"no 'analysis skipped: inconsistent RMA epochs' note in {notes}")))
        c.run("unmatched-epoch note", lambda: any("no matching epoch on their partner" in n for n in notes) or (
            _ for _ in ()).throw(CheckError(f"no unmatched-epoch note in {notes}")))
        for mid in ("rma_wait_at_fence", "rma_late_post", "rma_early_wait"):
            booked = sum(sum(v) for p, v in metric(rep, mid).get("by_callpath_rank", {}).items()
                         if p.startswith("main/s_paused/"))
            c.run(f"{mid} in s_paused", approx, booked, 0.0, f"{mid} in main/s_paused", rel=0, abs_=1e-9)
    if want("bytes"):
        expected = {
            "rma_bytes_put": {"MPI_Put": 40, "MPI_Rput": 56},
            "rma_bytes_get": {"MPI_Get": 80, "MPI_Get_accumulate": 12, "MPI_Fetch_and_op": 4,
                              "MPI_Compare_and_swap": 4, "MPI_Rget": 32},
            "rma_bytes_accumulated": {"MPI_Accumulate": 20, "MPI_Get_accumulate": 12,
                                      "MPI_Fetch_and_op": 4, "MPI_Compare_and_swap": 4},
        }
        for mid, calls in expected.items():
            got = {p: v for p, v in metric(rep, mid).get("by_callpath", {}).items() if p.startswith("main/s_bytes/") and v}
            want_paths = {f"main/s_bytes/{k}": v for k, v in calls.items()}
            c.run(f"{mid} in s_bytes", lambda g=got, w=want_paths, m=mid:
                  (g == w) or (_ for _ in ()).throw(CheckError(f"{m}: got {g}, expected {w}")))
    # The one-sided time splits into synchronization and communication.
    rma = metric(rep, "mpi_rma")["total"]
    parts = metric(rep, "mpi_rma_sync")["total"] + metric(rep, "mpi_rma_comm")["total"]
    c.run("mpi_rma split", approx, parts, rma, "mpi_rma_sync + mpi_rma_comm", rel=1e-6, abs_=1e-9)
    for f in c.failures:
        print("FAIL", f)
    print(f"check_rma_waits: {c.count - len(c.failures)} of {c.count} checks passed")
    if c.failures and c.timing and c.in_scenarios == len(c.failures):
        print("check_rma_waits: TIMING: every failing scenario's waiting ranks waited the same amount "
              "too long (the rank they wait for entered late)")
        return TIMING_CODE
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
