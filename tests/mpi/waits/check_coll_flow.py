"""critpath — tests/mpi/waits/check_coll_flow.py: known answers for coll_flow.c.

usage: check_coll_flow.py OUTDIR NP [--skewed | --no-control]
On one host (one shared clock) no collective instance may count as a clock-condition
violation: those in which the late rank's data never reaches a rank that left early
(intercommunicator, zero-count, neighbourhood collectives) do not synchronize the two. So
report.json and summary.txt say "0 p2p, 0 collective", the what-if replay finds no clock error
(whatif_clamped_calls 0, when the what-if ran), and the control Allreduce books wait_nxn = 20 ms
on every rank but the late one (the tolerance widened by late wake-ups, as check_waits.py's).
--skewed: the run injected a clock offset larger than the lateness without correcting it, and
the control's violation must then be counted (> 0).
--no-control: a run of one scenario, without the control.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import (check, check_last_rank_late, check_no_clock_violations, lateness, load_report,  # noqa: E402
                            scalar)

LATE = 0.020


def main():
    out, P = sys.argv[1], int(sys.argv[2])
    skewed = "--skewed" in sys.argv[3:]
    rep = load_report(out)
    p2p, coll = scalar(rep, "clock_violations_p2p"), scalar(rep, "clock_violations_collective")
    if skewed:
        check(coll > 0, f"an injected, uncorrected clock offset left no collective violation ({coll})")
        print(f"check_coll_flow: ok (skewed: {p2p:.0f} p2p, {coll:.0f} collective violations)")
        return
    summary = check_no_clock_violations(rep, out, "one shared clock")
    clamped = rep.get("scalars", {}).get("whatif_clamped_calls", 0)
    check(clamped == 0, f"the what-if finds {clamped} calls that ended before what they waited for")
    check("clock errors" not in summary, "summary.txt names clock errors")
    if "--no-control" in sys.argv[3:]:
        print("check_coll_flow: ok (0 violations)")
        return
    # A late wake-up (waits_util.h) shifts the control's wait by as much.
    n = check_last_rank_late(rep, "wait_nxn", "main/s_control/MPI_Allreduce", LATE, P, "control Allreduce",
                             abs_=0.002 + lateness(out).get("control", 0.0))
    print(f"check_coll_flow: ok (0 violations, {n} control checks)")


if __name__ == "__main__":
    main()
