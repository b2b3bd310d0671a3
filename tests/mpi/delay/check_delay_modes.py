"""critpath — tests/mpi/delay/check_delay_modes.py: the delay analysis's backward propagation
gives the same costs gathered on rank 0 and distributed over the ranks as a backward replay
(docs/metrics.md "Delay analysis"; CRITPATH_DEBUG_DELAY_REPLAY; analyzer/engine/mailbox.h).

usage: check_delay_modes.py OUTDIR NP MPI MPIEXEC ANALYZE SHIM
  OUTDIR  the run, kept with CRITPATH_KEEP_TRACE=1 (its in-situ analysis ran in `auto` mode,
          the distributed replay)
  NP      processes for critpath-analyze (the run's ranks, or fewer: each hosts several)

`critpath-analyze` runs the kept trace twice, gathered and distributed; each report must say
how it propagated (scalars.delay_distributed 0 / 1), and the two must agree with each other
and with the in-situ report on every delay metric (short- and long-term costs per family,
the waiting side's direct / indirect and propagating / terminal split), per rank and per call
path, and on delay_analysed_s and delay_remainder_s: to 1e-6 relative or 1e-9 s (both
propagate the same single-precision shares; only the order of the sums differs). The
wavefront's long-term costs travel along chains through every rank: a propagation that lost
or misrouted a record would show there.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import check, compare_modes  # noqa: E402
from delay_check import COSTS, FAMILIES, WAIT_SIDE  # noqa: E402

METRICS = list(COSTS) + [f"delay_{f}_{k}" for f in FAMILIES for k in ("short_term", "long_term")] + list(WAIT_SIDE)
SCALARS = ("delay_analysed_s", "delay_remainder_s", "delay_wait_instances")


def figures(rep, label):
    """The report's delay figures as (name, value) pairs."""
    notes = [n for n in rep.get("notes", []) if "delay analysis failed" in n]
    check(not notes, f"{label}: the delay analysis failed: {notes}")
    out = []
    for mid in METRICS:
        m = rep.get("metrics", {}).get(mid)
        if m is None:
            continue
        out.append((f"{mid}.total", m.get("total", 0)))
        for r, v in enumerate(m.get("by_rank", [])):
            out.append((f"{mid}.rank{r}", v))
        for p, v in sorted(m.get("by_callpath", {}).items()):
            out.append((f"{mid}@{p}", v))
    for k in SCALARS:
        check(k in rep.get("scalars", {}), f"{label}: scalars.{k} missing")
        out.append((k, rep["scalars"][k]))
    return out


def main(argv):
    def figures_propagated(rep, label):
        """figures(), and for Fig. 2 and the wavefront, which propagate by construction, a
        long-term cost (without one the comparison would prove little)."""
        out = figures(rep, label)
        if "modes_coll" not in argv[1]:
            check(dict(out).get("delay_cost_long_term.total", 0) > 0,
                  f"{label}: no long-term cost at all: nothing propagated")
        return out
    return compare_modes("delay", argv, "CRITPATH_DEBUG_DELAY_REPLAY", "delay_distributed",
                         [("gathered", 0), ("distributed", 1)], figures_propagated, rel=1e-6,
                         missing_is_zero=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
