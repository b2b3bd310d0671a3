"""critpath — tests/mpi/scale/check_synth.py: known answers on synthesized traces.

usage: check_synth.py OUTDIR SYNTH ANALYZE MPI MPIEXEC SHIM MODEL

For P = 16 and 64, critpath-synth (benchmarks/scale) writes a kept trace of MODEL (wavefront,
halo or master) and its answers.json; critpath-analyze re-analyses it hosted on 1, 2 and 4
processes, and every report must give the model's answers within 0.1 % (the timestamps are
exact integer nanoseconds, so any larger difference is a wrong answer, not noise):

  per rank   late_sender, late_receiver, wait_nxn, wait_finalize (by_rank, seconds) and, for
             the halo model, delay_nxn_short_term (the slow rank's compute causes every other
             rank's wait at the Allreduce)
  run        critical_path.length_s = the run's length (first MPI_Init entry to last
             MPI_Finalize entry)
  median     wait_state_stats.<pattern>.median of late_sender, late_receiver and wait_nxn:
             the median of all ranks' instances (exact here: every rank has fewer than the
             reservoir's 256 instances, which the report must say with median_exact)

The answers are checked for being worth checking (the model's waits must not all be zero),
and the comparison itself must reject a copy of the answers with one rank's waiting time 1 %
off, so that this test can fail.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, by_rank, check, fail, reanalyze  # noqa: E402

REL = 0.001      # 0.1 %
ABS_S = 1e-9     # 1 ns: the times are exact; this only absorbs float rounding of zeros
SIZES = (16, 64)
HOSTS = (1, 2, 4)
METRICS = ("late_sender", "late_receiver", "wait_nxn", "wait_finalize", "delay_nxn_short_term")
# What each model must produce (non-zero totals), or the comparison would prove little.
MUST_WAIT = {"wavefront": ("late_sender", "wait_nxn"), "halo": ("wait_nxn", "delay_nxn_short_term"),
             "master": ("late_sender", "wait_nxn")}


def close(got, want):
    return abs(got - want) <= max(ABS_S, REL * abs(want))


def differences(rep, answers):
    """The report's differences from the answers, as messages (empty: all agree)."""
    out = []
    for name, want in answers["per_rank_s"].items():
        if name not in METRICS:
            continue
        try:
            got = by_rank(rep, name)
        except CheckError as e:
            out.append(str(e))
            continue
        if len(got) != len(want):
            out.append(f"{name}: {len(got)} ranks in the report, {len(want)} in the answers")
            continue
        bad = [(r, g, w) for r, (g, w) in enumerate(zip(got, want)) if not close(g, w)]
        if bad:
            shown = ", ".join(f"rank {r}: {g:.9f} s, expected {w:.9f} s" for r, g, w in bad[:4])
            out.append(f"{name}: {len(bad)} of {len(want)} ranks differ ({shown})")
    for name, want in answers.get("median_s", {}).items():
        st = rep.get("wait_state_stats", {}).get(name, {})
        if not st.get("median_exact") or not isinstance(st.get("median"), (int, float)) or \
                not close(st["median"], want):
            out.append(f"{name} median: {st.get('median')!r} (exact: {st.get('median_exact')!r}), "
                       f"expected {want:.9f} s")
    length = rep.get("critical_path", {}).get("length_s")
    if not isinstance(length, (int, float)) or not close(length, answers["run_length_s"]):
        out.append(f"critical_path.length_s: {length!r}, expected {answers['run_length_s']:.9f} s")
    return out


def self_test(rep, answers, model):
    """The answers are worth checking and a 1 % error in one rank's value is caught."""
    per_rank = answers["per_rank_s"]
    for name in MUST_WAIT[model]:
        check(sum(per_rank.get(name, [])) > 0, f"{model}: the model's {name} is zero on every rank")
    name = MUST_WAIT[model][0]
    r = max(range(len(per_rank[name])), key=lambda i: per_rank[name][i])
    wrong = json.loads(json.dumps(answers))
    wrong["per_rank_s"][name][r] *= 1.01
    check(differences(rep, wrong), f"{model}: a 1 % error in {name} on rank {r} went unnoticed")
    check(name in answers.get("median_s", {}), f"{model}: no median of {name} in the answers")
    wrong = json.loads(json.dumps(answers))
    wrong["median_s"][name] *= 1.01
    check(differences(rep, wrong), f"{model}: a 1 % error in the median of {name} went unnoticed")


def main(argv):
    if len(argv) != 8:
        fail(__doc__)
    out, synth, analyze, mpi, mpiexec, shim, model = argv[1:]
    os.makedirs(out, exist_ok=True)
    failures = []
    for p in SIZES:
        run = os.path.join(out, f"{model}-{p}")
        cmd = [synth, "--model", model, "--ranks", str(p), "--out", run, "--threads", "1"]
        print("$", " ".join(cmd))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        print(r.stdout)
        check(r.returncode == 0, f"critpath-synth exited with {r.returncode}")
        with open(os.path.join(run, "answers.json"), encoding="utf-8") as f:
            answers = json.load(f)
        for np_ in HOSTS:
            rep = reanalyze(run, np_, mpi, mpiexec, analyze, shim, subdir=f"analysis-{np_}")
            diff = differences(rep, answers)
            failures += [f"{model}, P = {p}, hosted on {np_}: {d}" for d in diff]
            print(f"{model} P={p} hosted on {np_}: " + ("as expected" if not diff else f"{len(diff)} differences"))
            if np_ == HOSTS[0]:
                self_test(rep, answers, model)
    if failures:
        fail("\n".join(failures))
    print(f"{model}: the known answers hold at P = {SIZES} hosted on {HOSTS} processes")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except CheckError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
