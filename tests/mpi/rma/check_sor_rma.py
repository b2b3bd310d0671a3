"""critpath — tests/mpi/rma/check_sor_rma.py: consistent times for sor_rma.c (16 ranks).

usage: check_sor_rma.py OUTDIR fence|pscw

E = 20 ms of extra work on rank 5 in each of K = 12 iterations; the grid is 4 x 4, so rank 5
has 4 neighbours (1, 4, 6, 9).
  fence  rma_wait_at_fence: E K on each rank but 5 (total (P-1) E K, ±5 %); rank 5 ~0
         rma_early_fence: E K on each neighbour of rank 5, ~0 elsewhere
  pscw   rma_late_post + rma_early_transfer: E K on each neighbour (total 4 E K, ±5 %), ~0 on
         the other ranks
16 ranks share 2 cores (8x oversubscribed): a rank that waits for a core arrives late
at a fence too, so these are consistency checks: per rank ±25 % (expected zeros: below
E K / 4), totals ±10 %. Every rank: the RMA wait states fit in
its one-sided synchronization and communication time; mpi_rma_sync + mpi_rma_comm = mpi_rma;
the solver printed its residual.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, approx, at_most, load_report, metric, read_stdout  # noqa: E402

E, K, SLOW, NEIGHBOURS = 0.020, 12, 5, (1, 4, 6, 9)
RMA_WAITS = ("rma_late_post", "rma_early_transfer", "rma_early_wait", "rma_wait_at_fence",
             "rma_wait_at_create", "rma_wait_at_free", "rma_lock_contention", "rma_wait_for_progress")


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
    for name, want in expected.items():
        for r in range(P):
            run(approx, got[name][r], want[r], f"{name} on rank {r}", rel=0.25, abs_=E * K / 4)
        run(approx, sum(got[name]), sum(want), f"{name} in total", rel=0.10)
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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
