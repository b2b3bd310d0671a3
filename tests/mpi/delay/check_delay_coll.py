"""critpath — tests/mpi/delay/check_delay_coll.py: known answers for delay_coll.c.

usage: check_delay_coll.py OUTDIR SCENARIO...   (allreduce, bcast, ssend)
The number of ranks P comes from the report. D = 100 ms; every value per rank, ±5 % or ±2 ms
(values expected 0: ±5 ms, delay_check.ZERO_ABS).

  allreduce  timing: wait_nxn at main/s_allreduce/MPI_Allreduce = D on ranks 0..P-2, 0 on P-1
             rank P-1 at main/s_allreduce/work: delay_cost_short_term = delay_nxn_short_term
               = (P-1)·D; 0 on the other ranks; long-term 0 everywhere at that path
             total delay_nxn_short_term = (P-1)·D, total delay_nxn_long_term = 0
             at MPI_Allreduce: wait_direct = wait_terminal = the wait_nxn above,
               wait_indirect = wait_propagating = 0
  bcast      timing: late_broadcast at main/s_bcast/MPI_Bcast = D on ranks 1..P-1, 0 on 0
             rank 0 at main/s_bcast/work: delay_cost_short_term =
               delay_late_broadcast_short_term = (P-1)·D; 0 elsewhere; long-term 0
             total delay_late_broadcast_short_term = (P-1)·D (align()'s broadcasts wait only
               microseconds), total delay_late_broadcast_long_term = 0
             at MPI_Bcast: wait_direct = wait_terminal = the late_broadcast above, the rest 0
  ssend      timing: late_receiver at main/s_ssend/MPI_Ssend = D on rank 0, 0 elsewhere
             rank 1 at main/s_ssend/work: delay_cost_short_term =
               delay_late_receiver_short_term = D; 0 elsewhere; long-term 0
             total delay_late_receiver_short_term = D, delay_late_receiver_long_term = 0
             at MPI_Ssend: wait_direct = wait_terminal = D on rank 0, the rest 0
No wait propagates (wait_propagating = 0, long-term costs 0): every scenario ends with all
ranks sleeping to a common deadline, so the barriers after it wait ~0 (see delay_coll.c).
Plus delay_check.Checks.invariants (costs + remainder = waiting time within 1 %, ...).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from delay_check import D, ZERO_ABS, Checks, rank_count, total_of  # noqa: E402
from critpath_check import first_finding_names  # noqa: E402

# scenario: (the MPI call where ranks wait, its wait-state metric, delay family,
#            delaying rank as a function of P, waiting ranks as a function of P)
SCENARIOS = {
    "allreduce": ("MPI_Allreduce", "wait_nxn", "nxn",
                  lambda P: P - 1, lambda P: range(P - 1)),
    "bcast": ("MPI_Bcast", "late_broadcast", "late_broadcast",
              lambda P: 0, lambda P: range(1, P)),
    "ssend": ("MPI_Ssend", "late_receiver", "late_receiver",
              lambda P: 1, lambda P: [0]),
    "barrier": ("MPI_Barrier", "wait_barrier", "barrier",
                lambda P: 1, lambda P: [r for r in range(P) if r != 1]),
}


def scenario_checks(checks, rep, P, scen):
    call, pattern, family, delayer_of, waiters_of = SCENARIOS[scen]
    delayer, waiters = delayer_of(P), set(waiters_of(P))
    work, wait_path = f"main/s_{scen}/work", f"main/s_{scen}/{call}"
    waited = [D if r in waiters else 0.0 for r in range(P)]
    cost = [len(waiters) * D if r == delayer else 0.0 for r in range(P)]
    zero = [0.0] * P

    for m in ("delay_cost_short_term", f"delay_{family}_short_term"):
        checks.expect_rank(rep, m, work, cost)
    for m in ("delay_cost_long_term", f"delay_{family}_long_term"):
        checks.expect_rank(rep, m, work, zero)
    # Totals over all call paths: not for barriers, whose family also holds the alignment
    # barriers' own small waits (run_scenarios' setup barrier after MPI_Init).
    if family != "barrier":
        checks.expect(lambda: total_of(rep, f"delay_{family}_short_term"), len(waiters) * D,
                      f"total delay_{family}_short_term")
        checks.expect(lambda: total_of(rep, f"delay_{family}_long_term"), 0.0,
                      f"total delay_{family}_long_term", abs_=ZERO_ABS)

    checks.expect_rank(rep, "wait_direct", wait_path, waited)
    checks.expect_rank(rep, "wait_terminal", wait_path, waited)
    checks.expect_rank(rep, "wait_indirect", wait_path, zero)
    checks.expect_rank(rep, "wait_propagating", wait_path, zero)


def main():
    out, scenarios = sys.argv[1], sys.argv[2:]
    checks = Checks("check_delay_coll")
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if not scenarios or unknown:
        checks.count += 1
        checks.failures.append(f"usage: check_delay_coll.py OUTDIR SCENARIO... with scenarios "
                               f"from {sorted(SCENARIOS)}; got {scenarios}")
        checks.finish()
    rep = checks.report(out)
    P = checks.call(rank_count, rep)
    if P is None:
        checks.finish()
    if P < 2:
        checks.failures.append(f"delay_coll needs at least 2 ranks, the report has {P}")
        checks.finish()
    # Timing first for every scenario, so that a missing pass does not hide a bad timeline;
    # a scenario whose timeline is off gets no delay checks (they would only repeat that).
    timed = []
    for scen in scenarios:
        call, pattern = SCENARIOS[scen][0], SCENARIOS[scen][1]
        waiters = set(SCENARIOS[scen][4](P))
        before = len(checks.timing_failures)
        checks.expect_rank(rep, pattern, f"main/s_{scen}/{call}",
                           [D if r in waiters else 0.0 for r in range(P)], timing=True)
        if len(checks.timing_failures) == before:
            timed.append(scen)
    checks.require_delay_metrics(rep)
    for scen in timed:
        scenario_checks(checks, rep, P, scen)
    # The reader's view: with one scenario, the first finding names where ranks wait and
    # the rank that causes it.
    if len(scenarios) == 1 and timed:
        scen = scenarios[0]
        checks.call(first_finding_names, out, f"main/s_{scen}/{SCENARIOS[scen][0]}",
                    SCENARIOS[scen][3](P))
    checks.invariants(rep)
    checks.finish()


if __name__ == "__main__":
    main()
