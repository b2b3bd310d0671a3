"""critpath — tests/mpi/delay/check_fig2.py: known answers for fig2.c ([Böhme2010], Fig. 2).

usage: check_fig2.py OUTDIR
A = rank 0 runs foo D = 100 ms longer than B = 1 and C = 2; B waits D for A's message (direct
wait state), C waits D for B's (indirect: B was held up by its own wait). The costs are
checked against the waits as measured in this run, wB and wC (both D within tolerance), so
that a rank descheduled for a few ms on a loaded machine moves the answer with it: A's
short-term cost is B's wait, its long-term cost the part of C's wait that B's wait explains,
min(wB, wC). Checked (seconds, per rank, ±5 % or ±2 ms; values expected 0: ±5 ms,
delay_check.ZERO_ABS):

  timing (existing metrics)  late_sender at main/MPI_Recv = [0, D, D]
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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from delay_check import D, Checks, total_of, value  # noqa: E402
from critpath_check import first_finding_names  # noqa: E402

FOO, RECV = "main/foo", "main/MPI_Recv"
OWN_PATHS = (FOO, RECV, "main/MPI_Send", "main/tail")


def main():
    out = sys.argv[1]
    checks = Checks("check_fig2")
    rep = checks.report(out)
    checks.expect_rank(rep, "late_sender", RECV, [0.0, D, D], timing=True)
    checks.require_delay_metrics(rep)

    wB, wC = value(rep, "late_sender", RECV, 1), value(rep, "late_sender", RECV, 2)
    explained = min(wB, wC)  # the part of C's wait that B's own wait explains

    # Causing side: only A's extra time in foo.
    for m in ("delay_cost_short_term", "delay_late_sender_short_term"):
        checks.expect_rank(rep, m, FOO, [wB, 0.0, 0.0])
    for m in ("delay_cost_long_term", "delay_late_sender_long_term"):
        checks.expect_rank(rep, m, FOO, [explained, 0.0, 0.0])
    for m in ("delay_cost_short_term", "delay_cost_long_term"):
        for path in OWN_PATHS[1:]:
            checks.expect_rank(rep, m, path, [0.0, 0.0, 0.0])
    checks.expect(lambda: total_of(rep, "delay_cost_long_term"), explained, "total delay_cost_long_term")

    # Waiting side: B's wait is direct and propagates; C's is indirect and terminal.
    checks.expect_rank(rep, "wait_direct", RECV, [0.0, wB, wC - explained])
    checks.expect_rank(rep, "wait_indirect", RECV, [0.0, 0.0, explained])
    checks.expect_rank(rep, "wait_propagating", RECV, [0.0, explained, 0.0])
    checks.expect_rank(rep, "wait_terminal", RECV, [0.0, wB - explained, wC])

    # The reader's view: the first finding names the receive and rank 0 (A) as the cause.
    checks.call(first_finding_names, out, RECV, 0)
    checks.invariants(rep)
    checks.finish()


if __name__ == "__main__":
    main()
