"""critpath — tests/mpi/delay/delay_check.py: what the delay-analysis checks share.

Where it sits: imported by check_fig2.py, check_delay_coll.py and check_wavefront.py (the
last step of the tests in tests/mpi/delay/CMakeLists.txt). The delay pass ([Böhme2010] §IV;
Scalasca 2.6's cost model, [Scalasca2.6]) books, in report.json:

  causing side   delay_cost_short_term, delay_cost_long_term and per pattern family
                 delay_<family>_short_term / _long_term, at the DELAYING rank and the call path
                 of the delaying activity (e.g. main/foo)
  waiting side   wait_direct + wait_indirect = wait_propagating + wait_terminal = the waiting
                 time of the analysed patterns, at the WAITING rank and its MPI call path
  scalar         delay_remainder_s, the waiting time the cost model could not explain

    checks = Checks("check_fig2")
    rep = checks.report(out)                         # CheckError -> message, exit 1
    checks.expect_rank(rep, "late_sender", "main/MPI_Recv", [0, D, D], timing=True)
    checks.require_delay_metrics(rep)                # missing metrics -> one clear failure
    checks.expect_rank(rep, "wait_direct", "main/MPI_Recv", [0, D, 0])
    checks.invariants(rep)
    checks.finish()

Every failure is a CheckError message, collected, printed and turned into exit status 1; a
check never ends in a Python traceback. Failures of `timing=True` expectations (the existing
wait-state metrics) say that the PROGRAM did not produce its intended timeline, so the delay
answers cannot hold either: they are reported as such.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import TIMING_CODE, CheckError, approx, fail, load_report, metric, scalar  # noqa: E402

D = 0.100  # the programs' delay unit, seconds

# The wait-state patterns the delay pass explains (existing metric ids), and its families.
WAIT_PATTERNS = ("late_sender", "late_receiver", "wait_barrier", "wait_nxn", "late_broadcast",
                 "early_reduce", "rma_late_post", "rma_early_transfer", "rma_early_wait",
                 "rma_wait_at_fence", "rma_wait_at_create", "rma_wait_at_free",
                 "rma_lock_contention", "rma_wait_for_progress")
FAMILIES = ("late_sender", "late_receiver", "barrier", "nxn", "late_broadcast", "early_reduce", "rma")
COSTS = ("delay_cost_short_term", "delay_cost_long_term")
WAIT_SIDE = ("wait_direct", "wait_indirect", "wait_propagating", "wait_terminal")
REMAINDER = "delay_remainder_s"

# The invariant's tolerance: costs + remainder = waiting time within 1 %.
INVARIANT_REL = 0.01
# Sums that hold by definition (families, wait-side splits): floating-point slack only.
EXACT_ABS = 1e-6
# Values expected to be 0 get ±5 ms (5 % of D) instead of approx's ±2 ms: on a loaded machine
# a few ms move between neighbouring entries. E.g. in fig2.c, B descheduled for 3 ms between
# its receive and its send delays C by 3 ms more: a real direct wait of C, charged to B's
# MPI_Recv, that the program did not intend (seen with 4 busy loops on 2 cores). The values
# near D keep approx's ±5 %, so a misbooked D still fails by a factor of 20.
ZERO_ABS = 0.05 * D


def delay_metric_ids():
    ids = list(COSTS)
    for fam in FAMILIES:
        ids += [f"delay_{fam}_short_term", f"delay_{fam}_long_term"]
    return ids + list(WAIT_SIDE)


def rank_count(rep):
    """The number of traced ranks, from the time metric's per-rank list."""
    values = metric(rep, "time").get("by_rank")
    if not isinstance(values, list) or not values:
        fail("metric 'time' has no by_rank list: cannot tell the number of ranks")
    return len(values)


def value(rep, metric_id, path, rank):
    """metric_id at call path `path` on `rank`; 0 when the path has no entry (the report
    leaves out all-zero paths, and by_callpath_rank altogether when nothing is left)."""
    m = metric(rep, metric_id)
    per_path = m.get("by_callpath_rank", {})
    if not isinstance(per_path, dict):
        fail(f"metric {metric_id!r}: by_callpath_rank is not an object ({type(per_path).__name__})")
    values = per_path.get(path)
    if values is None:
        return 0.0
    if not 0 <= rank < len(values):
        fail(f"metric {metric_id!r} at {path}: rank {rank} out of range (has {len(values)})")
    return values[rank]


def exact(value_, expected, what):
    """value_ == expected up to floating-point slack (sums that hold by definition)."""
    approx(value_, expected, what, rel=1e-6, abs_=EXACT_ABS)


class Checks:
    """Collects failures so that one run reports all of them, then exits 0 or 1."""

    def __init__(self, name):
        self.name = name
        self.failures = []
        self.timing_failures = []
        self.count = 0

    def _run(self, fn, *args, timing=False, **kw):
        self.count += 1
        try:
            return fn(*args, **kw)
        except CheckError as e:
            (self.timing_failures if timing else self.failures).append(str(e))
            return None

    def report(self, out):
        """report.json of OUTDIR; a missing or broken report ends the check at once."""
        self.count += 1
        try:
            return load_report(out)
        except CheckError as e:
            self.failures.append(str(e))
            self.finish()

    def expect(self, value_fn, expected, what, timing=False, **tol):
        """approx(value_fn(), expected, what) with approx's tolerance (±5 % or ±2 ms)."""
        self._run(lambda: approx(value_fn(), expected, what, **tol), timing=timing)

    def expect_rank(self, rep, metric_id, path, expected, timing=False, widen=0.0, **tol):
        """metric_id at `path` on every rank r against expected[r] (seconds); an expected 0
        gets ±ZERO_ABS unless `tol` says otherwise. `widen` adds to the absolute tolerance
        (the default ±2 ms, or ±ZERO_ABS): how far the run's own timing strayed."""
        for r, exp in enumerate(expected):
            t = tol if tol or (exp != 0 and not widen) else {"abs_": (ZERO_ABS if exp == 0 else 0.002) + widen}
            self.expect(lambda r=r: value(rep, metric_id, path, r), exp,
                        f"{metric_id} at {path} on rank {r}", timing=timing, **t)

    def call(self, fn, *args, **kw):
        """Runs a check function (raising CheckError) and records its failure."""
        return self._run(fn, *args, **kw)

    def require_delay_metrics(self, rep):
        """Ends the check with one clear message when the delay pass left no results."""
        self.count += 1
        metrics = rep.get("metrics", {})
        missing = [m for m in delay_metric_ids() if m not in metrics]
        if REMAINDER not in rep.get("scalars", {}):
            missing.append(f"scalars.{REMAINDER}")
        if missing:
            have = [m for m in delay_metric_ids() if m in metrics]
            what = "is incomplete" if have else "left no results"
            self.failures.append(
                f"the delay analysis {what}: {len(missing)} of its {len(delay_metric_ids()) + 1} "
                f"results are missing from report.json: {missing}"
                + (f" (present: {have})" if have else " — has the delay pass run?"))
            self.finish()

    def invariants(self, rep):
        """What every delay report must satisfy, whatever the program."""
        self.call(check_cost_invariant, rep)
        self.call(check_family_sums, rep)
        self.call(check_wait_side_sums, rep)
        self.call(check_non_negative, rep)

    def finish(self):
        """Prints the verdict and exits: 0 when every check passed, else 1."""
        if self.timing_failures:
            print(f"{self.name}: the program did not produce its intended timing "
                  f"(existing wait-state metrics), so the delay answers cannot hold:")
            for f in self.timing_failures:
                print(f"{self.name}: TIMING: {f}")
        for f in self.failures:
            print(f"{self.name}: FAIL: {f}")
        bad = len(self.failures) + len(self.timing_failures)
        if bad:
            print(f"{self.name}: {bad} of {self.count} checks failed")
            sys.exit(1 if self.failures else TIMING_CODE)
        print(f"{self.name}: ok ({self.count} checks)")
        sys.exit(0)


def total_of(rep, metric_id):
    t = metric(rep, metric_id).get("total")
    if t is None or isinstance(t, bool) or not isinstance(t, (int, float)):
        fail(f"metric {metric_id!r} has no numeric total (got {t!r})")
    return t


def check_cost_invariant(rep):
    """short-term + long-term + remainder = the analysed waiting time, within 1 %."""
    st = total_of(rep, "delay_cost_short_term")
    lt = total_of(rep, "delay_cost_long_term")
    rem = scalar(rep, REMAINDER)
    waits = {m: total_of(rep, m) for m in WAIT_PATTERNS}
    w = sum(waits.values())
    explained = st + lt + rem
    tol = max(INVARIANT_REL * abs(w), EXACT_ABS)
    if not abs(explained - w) <= tol:
        fail(f"cost invariant: delay_cost_short_term {st:.6f} + delay_cost_long_term {lt:.6f} + "
             f"{REMAINDER} {rem:.6f} = {explained:.6f} s, but the waiting time of the analysed "
             f"patterns is {w:.6f} s ({', '.join(f'{k} {v:.6f}' for k, v in waits.items())}); "
             f"off by {explained - w:+.6f} s, tolerance {tol:.6f} s (1 %)")


def check_family_sums(rep):
    """The family metrics add up to the aggregate, in total and on every rank."""
    P = rank_count(rep)
    for term in ("short_term", "long_term"):
        agg = f"delay_cost_{term}"
        fams = [f"delay_{fam}_{term}" for fam in FAMILIES]
        exact(sum(total_of(rep, f) for f in fams), total_of(rep, agg),
              f"sum of the delay_<family>_{term} totals vs {agg} total")
        agg_rank = metric(rep, agg).get("by_rank") or []
        if len(agg_rank) != P:
            fail(f"{agg}: by_rank has {len(agg_rank)} entries, expected {P}")
        for r in range(P):
            s = 0.0
            for f in fams:
                br = metric(rep, f).get("by_rank") or []
                if len(br) != P:
                    fail(f"{f}: by_rank has {len(br)} entries, expected {P}")
                s += br[r]
            exact(s, agg_rank[r], f"sum of the delay_<family>_{term} on rank {r} vs {agg}")


def check_wait_side_sums(rep):
    """direct + indirect = propagating + terminal = the analysed waiting time, per call path
    and rank."""
    P = rank_count(rep)
    paths = set()
    for m in WAIT_PATTERNS + WAIT_SIDE:
        paths |= set(metric(rep, m).get("by_callpath_rank", {}))
    for path in sorted(paths):
        for r in range(P):
            w = sum(value(rep, m, path, r) for m in WAIT_PATTERNS)
            d, i = value(rep, "wait_direct", path, r), value(rep, "wait_indirect", path, r)
            p, t = value(rep, "wait_propagating", path, r), value(rep, "wait_terminal", path, r)
            approx(d + i, w, f"wait_direct {d:.6f} + wait_indirect {i:.6f} at {path} on rank {r} "
                   f"vs its waiting time", rel=INVARIANT_REL, abs_=EXACT_ABS)
            approx(p + t, w, f"wait_propagating {p:.6f} + wait_terminal {t:.6f} at {path} on rank "
                   f"{r} vs its waiting time", rel=INVARIANT_REL, abs_=EXACT_ABS)


def check_non_negative(rep):
    """Costs and wait classes are never negative; the model never explains more than there is."""
    for m in delay_metric_ids():
        for path, values in metric(rep, m).get("by_callpath_rank", {}).items():
            for r, v in enumerate(values):
                if v < -EXACT_ABS:
                    fail(f"{m} at {path} on rank {r} is negative: {v}")
    rem = scalar(rep, REMAINDER)
    if rem < -EXACT_ABS:
        fail(f"{REMAINDER} is negative ({rem} s): the costs exceed the waiting time")
