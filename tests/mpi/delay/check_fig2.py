"""critpath — tests/mpi/delay/check_fig2.py: known answers for fig2.c ([Böhme2010], Fig. 2).

usage: check_fig2.py OUTDIR
A = rank 0 runs foo D = 100 ms longer than B = 1 and C = 2; B waits D for A's message (direct
wait state), C waits D for B's (indirect: B was held up by its own wait). The costs are
checked against the waits as measured in this run, wB and wC (both D within tolerance), so
that a rank descheduled for a few ms on a loaded machine moves the answer with it: A's
short-term cost is B's wait, its long-term cost the part of C's wait that B's wait explains,
min(wB, wC). Checked (seconds, per rank, ±5 % or ±2 ms; values expected 0: ±5 ms,
delay_check.ZERO_ABS):

  timing (existing metrics)  late_sender at main/MPI_Recv = [0, D, D]; a run that misses it exits
                             78 (TIMING) without the delay checks: run_mpi_test.py runs it once
                             more.
  disturbance                every tolerance below (and the timing's) widened by how far the
                             run's own timing strayed: late wake-ups, how far apart the ranks
                             left the alignment, time forwarding (fig2.c's output lines, the
                             call tree's MPI_Recv beyond the waits and MPI_Send)
  causing side               delay_cost_short_term and delay_late_sender_short_term = D, and
                             delay_cost_long_term and delay_late_sender_long_term = D, all on
                             rank 0 at main/foo; 0 on ranks 1 and 2 at main/foo, and 0 on every
                             rank at the program's other own call paths (main/MPI_Recv,
                             main/MPI_Send, main/tail): nothing else caused the waits
                             total delay_cost_long_term = D (C's wait is the only indirect one)
  waiting side               at main/MPI_Recv: wait_direct = [0, D, 0], wait_indirect = [0, 0, D],
                             wait_propagating = [0, D, 0], wait_terminal = [0, 0, D]
  invariants                 delay_check.Checks.invariants (costs + remainder = waiting time
                             within 1 %, family sums, wait-side sums, no negative values)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from delay_check import D, Checks, total_of, value  # noqa: E402
from critpath_check import first_finding_names, lateness, read_stdout  # noqa: E402

FOO, RECV, SEND = "main/foo", "main/MPI_Recv", "main/MPI_Send"
OWN_PATHS = (FOO, RECV, SEND, "main/tail")


def align_spread(out):
    """How far apart the ranks left align() (fig2.c's "fig2-align-slack RANK NS" lines: the
    time from there to the common start), seconds. A rank that leaves it late has that much
    less time in main before foo: the delay analysis rightly books the others' extra time
    there as a delay."""
    try:
        text = read_stdout(out)
    except OSError:
        return 0.0
    slack = [int(m.group(1)) for m in re.finditer(r"^fig2-align-slack \d+ (-?\d+)$", text, re.M)]
    return (max(slack) - min(slack)) * 1e-9 if slack else 0.0


def forwarding(rep):
    """The ranks' time in MPI_Recv beyond their Late Sender waits, and in MPI_Send, seconds
    (the call tree's exclusive times summed over ranks: report.json keeps no per-rank profile
    values). B's share is C's direct part; all of it is microseconds in an undisturbed run."""
    paths = {c["path"]: c for c in rep.get("callpaths", [])}

    def spent(path):
        return paths.get(path, {}).get("exclusive_s", {}).get("sum", 0.0)
    waits = sum(value(rep, "late_sender", RECV, r) for r in range(3))
    return spent(RECV) - waits + spent(SEND)


def disturbance(rep, out):
    """How far this run's own timing strayed from fig2.c's plan, seconds: late wake-ups (the
    largest rank's sum), the spread of the ranks' exits from align(), and the time spent
    forwarding. Each moves a wait or a delay by at most as much, whatever the tracer does
    (a loaded machine: 2-4 ms seen), so it widens every delay answer's tolerance."""
    late = lateness(out, "check_fig2").get("fig2", 0.0)
    spread, fwd = align_spread(out), forwarding(rep)
    d = late + spread + max(fwd, 0.0)
    if d > 0.001:
        print(f"check_fig2: the run's own timing widens the tolerance by {d * 1e3:.1f} ms (late wake-ups "
              f"{late * 1e3:.1f}, alignment spread {spread * 1e3:.1f}, forwarding {fwd * 1e3:.1f})")
    return d


def main():
    out = sys.argv[1]
    checks = Checks("check_fig2")
    rep = checks.report(out)
    d = disturbance(rep, out)
    checks.expect_rank(rep, "late_sender", RECV, [0.0, D, D], timing=True, abs_=0.002 + d)
    if checks.timing_failures:
        checks.finish()  # the delay answers would only repeat it
    checks.require_delay_metrics(rep)

    wB, wC = value(rep, "late_sender", RECV, 1), value(rep, "late_sender", RECV, 2)
    explained = min(wB, wC)  # the part of C's wait that B's own wait explains

    # Causing side: only A's extra time in foo.
    for m in ("delay_cost_short_term", "delay_late_sender_short_term"):
        checks.expect_rank(rep, m, FOO, [wB, 0.0, 0.0], widen=d)
    for m in ("delay_cost_long_term", "delay_late_sender_long_term"):
        checks.expect_rank(rep, m, FOO, [explained, 0.0, 0.0], widen=d)
    for m in ("delay_cost_short_term", "delay_cost_long_term"):
        for path in OWN_PATHS[1:]:
            checks.expect_rank(rep, m, path, [0.0, 0.0, 0.0], widen=d)
    checks.expect(lambda: total_of(rep, "delay_cost_long_term"), explained, "total delay_cost_long_term",
                  abs_=0.002 + d)

    # Waiting side: B's wait is direct and propagates; C's is indirect and terminal.
    checks.expect_rank(rep, "wait_direct", RECV, [0.0, wB, wC - explained], widen=d)
    checks.expect_rank(rep, "wait_indirect", RECV, [0.0, 0.0, explained], widen=d)
    checks.expect_rank(rep, "wait_propagating", RECV, [0.0, explained, 0.0], widen=d)
    checks.expect_rank(rep, "wait_terminal", RECV, [0.0, wB - explained, wC], widen=d)

    # The reader's view: the first finding names the receive and rank 0 (A) as the cause.
    checks.call(first_finding_names, out, RECV, 0)
    checks.invariants(rep)
    checks.finish()


if __name__ == "__main__":
    main()
