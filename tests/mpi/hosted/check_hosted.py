"""critpath — tests/mpi/hosted/check_hosted.py: the in-situ analysis ran hosted (or not).

usage: check_hosted.py OUTDIR P [--kept | --native]

Hosted (CRITPATH_ANALYSIS_HOSTED, analyzer/session/hosted.h): report.json's run.analysis_hosted
names all P ranks and at least one worker thread, summary.txt's "Analysis cost" line says rank 0
analysed all P ranks, the analysis CPU per rank (which counts the hand-off) is positive on every
figure, no lock file is left, and the ranks' trace files are gone (--kept: all P are there,
CRITPATH_KEEP_TRACE=1). --native: none of that, the ranks analysed their own (the `auto`
setting with at most 8 ranks per CPU).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, check, load_report, read_text  # noqa: E402


def main():
    out, P = sys.argv[1], int(sys.argv[2])
    kept, native = "--kept" in sys.argv, "--native" in sys.argv
    try:
        rep = load_report(out)
        hosted = rep["run"].get("analysis_hosted")
        line = next((l for l in read_text(out, "summary.txt").splitlines() if l.startswith("@ Analysis cost")), "")
        check(not os.path.exists(os.path.join(out, ".critpath-hosted.lock")), "the hand-off's lock file is left")
        traces = sorted(f for f in os.listdir(os.path.join(out, "trace"))) if os.path.isdir(
            os.path.join(out, "trace")) else []
        if native:
            check(hosted is None, f"run.analysis_hosted is {hosted!r}: hosted, expected native")
            check("hosted" not in line, f"summary.txt says hosted: {line!r}")
            print(f"check_hosted: ok (native, {P} ranks)")
            return
        check(hosted is not None, "run.analysis_hosted missing: the analysis did not run hosted")
        check(hosted.get("ranks") == P and hosted.get("workers", 0) >= 1,
              f"run.analysis_hosted {hosted!r}, expected ranks {P} and at least one worker")
        check(f"hosted: rank 0 analysed all {P} ranks on" in line, f"summary.txt's Analysis cost line: {line!r}")
        cpu = rep["scalars"]["analysis_cpu_s"]
        check(all(cpu[k] > 0 for k in ("mean", "max", "rank0")), f"analysis_cpu_s {cpu!r}")
        want = sorted(f"rank-{r}.{ext}" for r in range(P) for ext in ("cptrace", "json")) if kept else []
        check(traces == want, f"trace/ holds {traces[:6]}{'...' if len(traces) > 6 else ''}, expected "
              f"{'all ranks' if kept else 'nothing'}")
    except CheckError as e:
        print(f"check_hosted: FAIL: {e}")
        sys.exit(1)
    print(f"check_hosted: ok (hosted: {P} ranks on {hosted['workers']} worker(s), "
          f"{rep['scalars']['analysis_cpu_s']['mean'] * 1e3:.2f} ms CPU per rank)")


if __name__ == "__main__":
    main()
