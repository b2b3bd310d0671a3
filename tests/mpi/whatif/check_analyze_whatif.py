"""critpath — tests/mpi/whatif/check_analyze_whatif.py: `critpath-analyze --whatif` on a kept
trace (docs/metrics.md "What-if simulation"): the hypotheses given on the command line are
simulated offline, hosted on fewer processes than the run had (engine/comm.h: the replay's
messages then travel through mailboxes in memory and between processes), with the same
answers on every process count and the same known answer as in situ.

usage: check_analyze_whatif.py OUTDIR BALANCED_OUTDIR NPS MPI MPIEXEC ANALYZE SHIM
  OUTDIR           balance.c's unbalanced run, kept with CRITPATH_KEEP_TRACE=1, no CRITPATH_WHATIF
  BALANCED_OUTDIR  the balanced run (the fixture of whatif.balance)
  NPS              process counts, comma-separated (e.g. 1,2)
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, approx, check, load_report, reanalyze  # noqa: E402
from check_whatif import entry  # noqa: E402

HYP = "balance:solve"


def run(out, np_, mpi, mpiexec, analyze, shim):
    return reanalyze(out, np_, mpi, mpiexec, analyze, shim, args=["--whatif", HYP], subdir=f"whatif-{np_}")


def main(argv):
    out, balanced_out, nps, mpi, mpiexec, analyze, shim = argv[1:8]
    try:
        insitu = load_report(out)
        check(all(e["hypothesis"] != HYP for e in insitu.get("whatif", [])),
              f"the in-situ run was not asked for {HYP}, yet its report has it")
        measured = load_report(balanced_out)["pop"]["runtime_s"]
        first = None
        for np_ in nps.split(","):
            rep = run(out, np_, mpi, mpiexec, analyze, shim)
            p = entry(rep, HYP)["predicted_runtime_s"]
            approx(p, measured, f"critpath-analyze -n {np_} --whatif {HYP}: predicted runtime vs the "
                   "balanced run's", rel=0.05, abs_=0)
            if first is None:
                first = p
            check(abs(p - first) <= 1e-9 * abs(first), f"-n {np_} predicts {p} s, -n {nps.split(',')[0]} {first} s")
            print(f"check_analyze_whatif: -n {np_}: {HYP} predicts {p:.4f} s; the balanced run took {measured:.4f} s")
    except CheckError as e:
        print(f"check_analyze_whatif: FAIL: {e}")
        return 1
    print("check_analyze_whatif: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
