"""critpath — tests/mpi/rma/check_sor_rma.py: consistent times for sor_rma.c (16 ranks).

usage: check_sor_rma.py OUTDIR fence|pscw

E = 20 ms of extra work on rank 5 in each of K = 12 iterations; the grid is 4 x 4, so rank 5
has 4 neighbours (1, 4, 6, 9).
  fence  rma_wait_at_fence: E K on each rank but 5 (total (P-1) E K, ±5 %); rank 5 ~0
         rma_early_fence: E K on each neighbour of rank 5, ~0 elsewhere
  pscw   rma_late_post + rma_early_transfer: E K on each neighbour (total 4 E K, ±5 %), ~0 on
         the other ranks
16 ranks share 2 cores (8x oversubscribed): a rank that waits for a core arrives late at a
fence too. So the expected values are the waits this run's own arrivals make (sor_rma.c prints
each rank's per iteration: ready after its sleep, entering the closing fence):
  fence  rma_wait_at_fence on r: Σ_k (last fence entry of iteration k − r's);
         rma_early_fence on r: Σ_k max(0, latest fence entry of r's grid neighbours − r's)
         (their Puts towards r end before they enter the fence)
  pscw   late post + early transfer on r: Σ_k max(0, latest ready of r's grid neighbours − r's)
per rank ±5 % or ±10 ms (12 iterations), totals ±5 % (they match within ~1 ms per rank). When
those hold but the run's arrivals are far from the ideal (the values above: per rank ±25 %,
expected zeros below E K / 4, totals ±10 %), the run, not the analysis, was off: exit
TIMING_CODE (one more attempt). Every rank: the RMA wait states fit in
its one-sided synchronization and communication time; mpi_rma_sync + mpi_rma_comm = mpi_rma;
the solver printed its residual.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import TIMING_CODE, CheckError, approx, at_most, load_report, metric, read_stdout  # noqa: E402

E, K, SLOW, NEIGHBOURS, SIDE = 0.020, 12, 5, (1, 4, 6, 9), 4
RMA_WAITS = ("rma_late_post", "rma_early_transfer", "rma_early_wait", "rma_wait_at_fence",
             "rma_wait_at_create", "rma_wait_at_free", "rma_lock_contention", "rma_wait_for_progress")


def grid_neighbours(r):
    """r's neighbours on the SIDE x SIDE non-periodic grid (sor_rma.c's MPI_Cart_create)."""
    i, j = divmod(r, SIDE)
    return [a * SIDE + b for a, b in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1))
            if 0 <= a < SIDE and 0 <= b < SIDE]


def arrivals(out, P):
    """{(rank, iteration): (ready, fence entry)} in seconds from the "sor-arrive" lines."""
    got = {}
    for m in re.finditer(r"^sor-arrive (\d+) (\d+) (\d+) (\d+)$", read_stdout(out), re.M):
        got[int(m.group(1)), int(m.group(2))] = (int(m.group(3)) * 1e-9, int(m.group(4)) * 1e-9)
    missing = [(r, k) for r in range(P) for k in range(K) if (r, k) not in got]
    if missing:
        raise CheckError(f"no sor-arrive line for (rank, iteration) {missing[:8]}")
    return got


def measured(variant, a, P):
    """The waits this run's arrivals `a` make (the module's docstring), by the ideal's names."""
    if variant == "fence":
        last = [max(a[q, k][1] for q in range(P)) for k in range(K)]
        return {"rma_wait_at_fence": [sum(last[k] - a[r, k][1] for k in range(K)) for r in range(P)],
                "rma_early_fence": [sum(max(0.0, max(a[q, k][1] for q in grid_neighbours(r)) - a[r, k][1])
                                        for k in range(K)) for r in range(P)]}
    return {"late post + early transfer": [
        sum(max(0.0, max(a[q, k][0] for q in grid_neighbours(r)) - a[r, k][0]) for k in range(K))
        for r in range(P)]}


def compare(got, want, name, P, rel, abs_, rel_total):
    """The failures of got against want: per rank ±rel or abs_, in total ±rel_total."""
    failures = []
    for r in range(P):
        try:
            approx(got[r], want[r], f"{name} on rank {r}", rel=rel, abs_=abs_)
        except CheckError as ex:
            failures.append(str(ex))
    try:
        approx(sum(got), sum(want), f"{name} in total", rel=rel_total)
    except CheckError as ex:
        failures.append(str(ex))
    return failures


def main():
    out, variant = sys.argv[1], sys.argv[2]
    rep = load_report(out)
    failures = []

    def run(fn, *a, **kw):
        try:
            fn(*a, **kw)
        except CheckError as ex:
            failures.append(str(ex))

    P = len(metric(rep, "time")["by_rank"])
    by_rank = lambda mid: metric(rep, mid)["by_rank"]  # noqa: E731
    if variant == "fence":
        expected = {"rma_wait_at_fence": [0.0 if r == SLOW else E * K for r in range(P)],
                    "rma_early_fence": [E * K if r in NEIGHBOURS else 0.0 for r in range(P)]}
        got = {m: by_rank(m) for m in expected}
    else:
        expected = {"late post + early transfer": [E * K if r in NEIGHBOURS else 0.0 for r in range(P)]}
        got = {"late post + early transfer": [a + b for a, b in zip(by_rank("rma_late_post"),
                                                                     by_rank("rma_early_transfer"))]}
    try:
        actual = measured(variant, arrivals(out, P), P)
    except CheckError as ex:
        actual = expected
        failures.append(str(ex))
    off_ideal = []
    for name, want in expected.items():
        failures += compare(got[name], actual[name], f"{name} (this run's arrivals)", P, 0.05, 0.010, 0.05)
        off_ideal += compare(actual[name], want, f"{name}: this run's arrivals against the ideal", P,
                             0.25, E * K / 4, 0.10)
    sync, comm = by_rank("mpi_rma_sync"), by_rank("mpi_rma_comm")
    for r in range(P):
        waits = sum(by_rank(m)[r] for m in RMA_WAITS)
        run(at_most, waits, sync[r] + comm[r] + 1e-6, f"RMA waiting on rank {r} within its RMA time")
    run(approx, metric(rep, "mpi_rma_sync")["total"] + metric(rep, "mpi_rma_comm")["total"],
        metric(rep, "mpi_rma")["total"], "mpi_rma_sync + mpi_rma_comm", rel=1e-6, abs_=1e-9)
    if "residual" not in read_stdout(out):
        failures.append("sor_rma printed no residual")
    for f in failures:
        print("FAIL", f)
    print(f"check_sor_rma ({variant}): {len(failures)} failures")
    if failures:
        return 1
    if off_ideal:
        print(f"check_sor_rma ({variant}): TIMING: the analysis matches this run's arrivals, but they "
              "were too far from the ideal run: " + "; ".join(off_ideal))
        return TIMING_CODE
    return 0


if __name__ == "__main__":
    sys.exit(main())
