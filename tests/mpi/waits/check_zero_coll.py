"""critpath — tests/mpi/waits/check_zero_coll.py: known answers for zero_coll.c.

usage: check_zero_coll.py OUTDIR NP
Collectives with every count zero do not synchronize (the early ranks leave before the late
one arrives): no clock-condition violation ("0 p2p, 0 collective" in report.json's scalars
and on summary.txt's clock line) and no wait state under s_zero. The control scenario's
Allreduce of one double books wait_nxn = L on every rank but the late one (±5 % or ±2 ms).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, check_last_rank_late, check_no_clock_violations, load_report  # noqa: E402

L = 0.200
WAITS = ("wait_nxn", "nxn_completion", "late_broadcast", "early_reduce", "early_scan",
         "late_sender", "late_receiver")


def main():
    out, P = sys.argv[1], int(sys.argv[2])
    rep = load_report(out)
    check_no_clock_violations(rep, out, "zero-count collectives")
    m = rep["metrics"]
    booked = {f"{metric} at {path}": v for metric in WAITS if metric in m
              for path, v in m[metric]["by_callpath"].items()
              if path.startswith("main/s_zero/") and v > 0.0005}
    check(not booked, f"wait states booked in zero-count collectives: {booked}")
    n = check_last_rank_late(rep, "wait_nxn", "main/s_control/MPI_Allreduce", L, P, "control Allreduce")
    print(f"check_zero_coll: ok ({n} control checks)")


if __name__ == "__main__":
    main()
