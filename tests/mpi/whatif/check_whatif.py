"""critpath — tests/mpi/whatif/check_whatif.py: known answers of the what-if simulation
(docs/metrics.md "What-if simulation"; issue 12, [Böhme2010] §VI, [Hollingsworth1994]).

usage: check_whatif.py OUTDIR BALANCED_OUTDIR HYPOTHESIS REL [OFF_HYPOTHESIS] [LB=x]

  model check   scalars whatif_identity_span_error_pct <= 2 and ..._wait_error_pct <= 5: the
                unmodified trace replays to the measured span and waiting time
  prediction    the whatif[] entry HYPOTHESIS (as written in CRITPATH_WHATIF) predicts the
                runtime (earliest MPI_Init exit to last MPI_Finalize entry: without the launch
                skew, which differs from run to run) of the balanced run in BALANCED_OUTDIR,
                measured there as pop.runtime_s, within REL (relative)
  off the path  OFF_HYPOTHESIS (a zero: of a call path with slack) saves at most 2 ms
  POP           LB=x: pop.load_balance = x within 0.03, and PE = LB x CE, CE = SE x TE
  summary       summary.txt has the sections "What if" and "POP metrics"
The bounds slack <= logical zeroing <= critical path hold for every test (run_mpi_test.py).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, approx, at_most, check, fail, load_report, scalar, summary_section  # noqa: E402


def entry(rep, hyp):
    for e in rep.get("whatif", []):
        if e.get("hypothesis") == hyp:
            return e
    fail(f"report.json whatif[] has no hypothesis {hyp!r}: "
         f"{[e.get('hypothesis') for e in rep.get('whatif', [])]}")


def main(argv):
    out, balanced_out, hyp, rel = argv[1], argv[2], argv[3], float(argv[4])
    off, lb = None, None
    for a in argv[5:]:
        if a.startswith("LB="):
            lb = float(a[3:])
        else:
            off = a
    errors = []

    def run(f):
        try:
            f()
        except CheckError as e:
            errors.append(str(e))

    rep = load_report(out)
    bal = load_report(balanced_out)
    run(lambda: at_most(scalar(rep, "whatif_identity_span_error_pct"), 2.0, "model check: span error %"))
    run(lambda: at_most(scalar(rep, "whatif_identity_wait_error_pct"), 5.0, "model check: waiting error %"))

    def prediction():
        e = entry(rep, hyp)
        measured = bal["pop"]["runtime_s"]
        approx(e["predicted_runtime_s"], measured, f"{hyp}: predicted runtime vs the balanced run's",
               rel=rel, abs_=0)
        print(f"check_whatif: {hyp} predicts {e['predicted_runtime_s']:.4f} s; the balanced run took "
              f"{measured:.4f} s; the unbalanced run {rep['pop']['runtime_s']:.4f} s")
    run(prediction)
    if off:
        run(lambda: approx(entry(rep, off)["saving_s"], 0.0, f"{off}: saving of a call path off the critical path",
                           rel=0, abs_=0.002))
    if lb is not None:
        def pop():
            p = rep["pop"]
            approx(p["load_balance"], lb, "pop.load_balance", rel=0, abs_=0.03)
            approx(p["parallel_efficiency"], p["load_balance"] * p["communication_efficiency"],
                   "PE = LB x CE", rel=1e-6, abs_=1e-9)
            approx(p["communication_efficiency"], p["serialisation_efficiency"] * p["transfer_efficiency"],
                   "CE = SE x TE", rel=1e-6, abs_=1e-9)
            check(0.9 <= p["transfer_efficiency"] <= 1.0 + 1e-9,
                  f"pop.transfer_efficiency {p['transfer_efficiency']}: a sleep-bound run loses little to transfers")
        run(pop)
    for title in ("What if", "POP metrics"):
        run(lambda: check(summary_section(out, title), f"summary.txt: no section {title!r}"))
    if errors:
        for e in errors:
            print(f"check_whatif: FAIL: {e}")
        return 1
    print("check_whatif: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
