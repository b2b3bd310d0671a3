"""critpath — tests/mpi/waits/check_reanalysis.py: a kept trace re-analyzed offline with
critpath-analyze gives the same report as the in-situ analysis.

usage: check_reanalysis.py OUTDIR NP[,NP...] MPI(mpich|openmpi) MPIEXEC ANALYZE SHIM
For each NP, runs `MPIEXEC -n NP ANALYZE OUTDIR --output OUTDIR/reanalysis-NP` (fewer
processes than the run had: each hosts several traced ranks), then compares its report.json
with the in-situ one field by field, except what must differ: the analysis time (and its
percentage) and the output directory. summary.txt must match line by line except the
"@ Analysis" and "@ Output" lines.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, fail, load_report, mpiexec_command  # noqa: E402

VOLATILE = {("scalars", "analysis_s"), ("scalars", "analysis_pct_of_wall"), ("scalars", "finalize_wait_s"),
            ("critical_path", "walk_s"), ("run", "output_dir"), ("scalars", "analysis_phases"),
            # The analysis's own cost: CPU, and the bytes and rounds of the engine's exchanges,
            # which differ between one rank per process and ranks hosted together.
            ("scalars", "analysis_cpu_s"), ("scalars", "analysis_cpu_polling_s"),
            ("scalars", "analysis_cpu_phases_s"), ("scalars", "analysis_cpu_polling_phases_s"),
            ("scalars", "analysis_faults_phases"),
            ("scalars", "analysis_bytes"), ("scalars", "analysis_rounds"),
            # In situ, whether rank 0 analysed every rank itself (CRITPATH_ANALYSIS_HOSTED).
            ("run", "analysis_hosted")}


NUMBER = re.compile(r"-?\d+\.\d+")


def same_figures(a, b):
    """Two printed lines alike but for figures one unit apart in their last digit: sums over
    ranks associate differently with several ranks per process, and a printed figure may round
    the other way."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
        if abs(float(x) - float(y)) > 1.5 * 10.0 ** -len(x.split(".")[1]):
            return False
    return True


def diff(a, b, path=()):
    # Analysis times and the analysis's own memory differ by nature: every "*analysis_s" and
    # "analysis_memory_*" figure is volatile too.
    if path in VOLATILE or (path and (path[-1].endswith("analysis_s") or path[-1].startswith("analysis_memory"))):
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if (k not in a or k not in b) and path + (k,) in VOLATILE:
                continue
            if k not in a or k not in b:
                out.append(f"{'/'.join(path + (k,))}: only in {'in-situ' if k in a else 'offline'}")
            else:
                out += diff(a[k], b[k], path + (k,))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{'/'.join(path)}: {len(a)} vs {len(b)} entries"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, path + (str(i),))
        return out
    # A finding's sentence prints such sums (report.json `findings`, as summary.txt's).
    if path[:1] == ("findings",) and isinstance(a, str) and isinstance(b, str) and same_figures(a, b):
        return []
    # Sums reduced in another order (several traced ranks per process) agree to rounding.
    if isinstance(a, float) and isinstance(b, float) and abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-12:
        return []
    return [] if a == b else [f"{'/'.join(path)}: {a!r} vs {b!r}"]


def reanalyze(out, np_, mpi, mpiexec, analyze, shim):
    re_dir = os.path.join(out, f"reanalysis-{np_}")
    cmd = mpiexec_command(mpi, mpiexec, shim, np_) + [analyze, out, "--output", re_dir]
    print("$", " ".join(cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    print(r.stdout)
    check(r.returncode == 0, f"critpath-analyze -n {np_} exited with {r.returncode}, expected 0 "
          "(its output is above)")
    a, b = load_report(out), load_report(re_dir)
    d = diff(a, b)
    check(not d, f"in-situ ({out}) and offline on {np_} processes ({re_dir}) report.json differ in "
          f"{len(d)} field(s):\n  " + "\n  ".join(d[:30]))
    timing = re.compile(r"[0-9.]+ s analysis( \(walk [^)]*\))?")

    def lines(d):
        with open(os.path.join(d, "summary.txt")) as f:
            return [timing.sub("<t> s analysis", l) for l in f
                    if not l.startswith(("@ Analysis", "@ Output"))]

    sa, sb = lines(out), lines(re_dir)
    if sa != sb:
        i = next((k for k, (x, y) in enumerate(zip(sa, sb)) if x != y), min(len(sa), len(sb)))
        fail(f"summary.txt on {np_} processes differs ({len(sa)} vs {len(sb)} compared lines); first "
             f"difference at compared line {i + 1}: in-situ {sa[i:i + 1]} vs offline {sb[i:i + 1]}")
    print(f"check_reanalysis: {np_} processes ok ({len(a['callpaths'])} call paths, "
          f"{len(a['metrics'])} metrics identical)")


def main():
    out, nps, mpi, mpiexec, analyze, shim = sys.argv[1:7]
    for np_ in nps.split(","):
        reanalyze(out, np_, mpi, mpiexec, analyze, shim)


if __name__ == "__main__":
    main()
