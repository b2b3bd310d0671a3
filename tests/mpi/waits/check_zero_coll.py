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
from critpath_check import check, load_report, per_rank_failures, read_text, scalar  # noqa: E402

L = 0.200
WAITS = ("wait_nxn", "nxn_completion", "late_broadcast", "early_reduce", "early_scan",
         "late_sender", "late_receiver")


def main():
    out, P = sys.argv[1], int(sys.argv[2])
    rep = load_report(out)
    p2p, coll = scalar(rep, "clock_violations_p2p"), scalar(rep, "clock_violations_collective")
    check(p2p == 0 and coll == 0,
          f"zero-count collectives counted as clock-condition violations: {p2p} p2p, {coll} collective")
    summary = read_text(out, "summary.txt")
    check("clock-condition violations: 0 p2p, 0 collective" in summary,
          "summary.txt lacks 'clock-condition violations: 0 p2p, 0 collective': "
          + next((l for l in summary.splitlines() if "clock-condition" in l), "(no clock line)"))
    m = rep["metrics"]
    booked = {f"{metric} at {path}": v for metric in WAITS if metric in m
              for path, v in m[metric]["by_callpath"].items()
              if path.startswith("main/s_zero/") and v > 0.0005}
    check(not booked, f"wait states booked in zero-count collectives: {booked}")
    f, n = per_rank_failures(rep, "wait_nxn", "main/s_control/MPI_Allreduce",
                             [L if r != P - 1 else 0.0 for r in range(P)])
    check(not f, "control Allreduce: " + "; ".join(f))
    print(f"check_zero_coll: ok ({n} control checks)")


if __name__ == "__main__":
    main()
