"""critpath — tests/mpi/otf2/check_otf2_import.py: critpath-analyze --otf2 on archives written
the way Score-P writes them (otf2_synth.cpp) gives the known answers; malformed archives give
one clear error, never a crash.

usage: check_otf2_import.py OUT SYNTH ANALYZE MPI(mpich|openmpi) MPIEXEC SHIM

  late_sender  (2 ranks, on 2 and 1 process) Late Sender 2.0 s on rank 1 at main/MPI_Recv;
               1 KiB sent; rank 1's clock offset corrected by the reader; the OpenMP thread,
               the GPU location and the I/O record skipped, in one note
  barrier      (4 ranks, on 4 and 1) Wait at Barrier 3, 2, 1, 0 s
  rma_fence    (4 ranks, on 4 and 2) Wait at Fence 1.0 s on ranks 0..2; 800 B put by rank 0
  grid16       (16 ranks) the same report.json and summary.txt on 16, 4 and 1 process
  malformed    no archive, a garbage anchor, no global definitions, a truncated, an empty and
               an overwritten event file, an event naming an undefined region: exit status 1,
               a `critpath-analyze: <archive>: ...` line, no crash
  paradigms    late_sender, barrier and rma_fence with CUDA beside MPI (X+cuda: accelerator
               streams, CUDA communicators and windows, memory copies as RMA records): the MPI
               figures of X exactly, the CUDA parts counted in the one note; cuda_only (one
               process, no MPI) analysed as a profile with its names demangled (report.json
               keeps the mangled one); nompi2 (two processes, no MPI) refused in one sentence;
               exit status 0 or 1, never a signal or an MPI abort
  header       every analysed archive: no header field of summary.txt empty or "on 0 cores";
               recording costs and clock error unknown
  damaged      late_sender+cuda with files removed, truncated or bit-flipped (8 cases; the unit
               test [otf2_import] damages every file 29 ways, on the import alone, under the
               sanitizers too): exit status 0 or 1, one line when 1
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "waits"))
from critpath_check import approx, by_callpath, by_rank, check, load_report, mpiexec_command  # noqa: E402
from check_reanalysis import diff, same_figures  # noqa: E402

D = 1e-6  # the synthetic time stamps are exact to a tick (0.4 ns)


def header_known(dest):
    """What an archive does not give (CPU affinity, say) is left out of summary.txt's header or
    named unknown: no "on 0 cores", no empty field, no recording cost or clock error as 0."""
    with open(os.path.join(dest, "summary.txt")) as f:
        header = [l.rstrip("\n") for l in f if l.startswith("@ ")]
    for line in header:
        value = line.split(":", 1)[1] if ":" in line else line
        check(value.strip(), f"{dest}/summary.txt: an empty header field: {line!r}")
        check(" 0 core" not in line, f"{dest}/summary.txt: an unknown core count as 0: {line!r}")
    text = "\n".join(header)
    check("@ Overhead        : unknown (OTF2 archive" in text, f"{dest}/summary.txt: recording costs not unknown")
    check("max error unknown" in text, f"{dest}/summary.txt: the clock error of an archive is not known")


class Run:
    def __init__(self, out, synth, analyze, mpi, mpiexec, shim):
        self.out, self.synth, self.analyze = out, synth, analyze
        self.mpi, self.mpiexec, self.shim = mpi, mpiexec, shim

    def make(self, scenario):
        d = os.path.join(self.out, scenario)
        if os.path.exists(os.path.join(d, "traces.otf2")):
            return os.path.join(d, "traces.otf2")
        r = subprocess.run([self.synth, scenario, d], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"otf2_synth {scenario} failed: {r.stderr}")
        return os.path.join(d, "traces.otf2")

    def analyse(self, anchor, np_, dest, expect_ok=True):
        cmd = mpiexec_command(self.mpi, self.mpiexec, self.shim, np_) + [
            self.analyze, "--otf2", anchor, "--output", dest, "--force"]
        print("$", " ".join(cmd))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
        print(r.stdout)
        if expect_ok:
            check(r.returncode == 0, f"critpath-analyze --otf2 {anchor} on {np_} exited with {r.returncode}")
            header_known(dest)
            return load_report(dest)
        return r


def late_sender(run):
    anchor = run.make("late_sender")
    for np_ in (2, 1):
        rep = run.analyse(anchor, np_, os.path.join(run.out, f"late_sender-{np_}"))
        check(rep["run"]["ranks"] == 2, f"ranks: {rep['run']['ranks']}")
        approx(by_callpath(rep, "late_sender", "main/MPI_Recv"), 2.0, "Late Sender at main/MPI_Recv", rel=0, abs_=D)
        approx(by_rank(rep, "late_sender", 1), 2.0, "Late Sender on rank 1", rel=0, abs_=D)
        approx(by_rank(rep, "late_sender", 0), 0.0, "Late Sender on rank 0", rel=0, abs_=D)
        approx(by_callpath(rep, "bytes_sent", "main/MPI_Send"), 1024, "bytes sent", rel=0, abs_=0)
        approx(by_callpath(rep, "time", "main/compute"), 2.0, "compute on rank 0", rel=0, abs_=D)
        skipped = [n for n in rep["notes"] if "otf2: skipped" in n]
        check(len(skipped) == 1, f"one note on what was skipped, got {skipped} in {rep['notes']}")
        for what in ("1 thread locations", "1 GPU/accelerator locations", "1 I/O records"):
            check(what in skipped[0], f"the note {skipped[0]!r} does not say {what!r}")
    print("check_otf2_import: late sender ok")


def barrier(run):
    anchor = run.make("barrier")
    for np_ in (4, 1):
        rep = run.analyse(anchor, np_, os.path.join(run.out, f"barrier-{np_}"))
        for r, want in enumerate((3.0, 2.0, 1.0, 0.0)):
            approx(by_rank(rep, "wait_barrier", r), want, f"Wait at Barrier on rank {r}", rel=0, abs_=D)
        approx(by_callpath(rep, "wait_barrier", "main/MPI_Barrier"), 6.0, "Wait at Barrier in all", rel=0, abs_=D)
        check(not [n for n in rep["notes"] if "otf2: skipped" in n], f"nothing skipped: {rep['notes']}")
    print("check_otf2_import: barrier ok")


def rma_fence(run):
    anchor = run.make("rma_fence")
    for np_ in (4, 2):
        rep = run.analyse(anchor, np_, os.path.join(run.out, f"rma_fence-{np_}"))
        for r, want in enumerate((1.0, 1.0, 1.0, 0.0)):
            approx(by_rank(rep, "rma_wait_at_fence", r), want, f"Wait at Fence on rank {r}", rel=0, abs_=D)
        approx(by_rank(rep, "rma_bytes_put", 0), 800, "bytes put by rank 0", rel=0, abs_=0)
    print("check_otf2_import: RMA fence ok")


def grid16(run):
    anchor = run.make("grid16")
    reports = {}
    for np_ in (16, 4, 1):
        dest = os.path.join(run.out, f"grid16-{np_}")
        reports[np_] = (run.analyse(anchor, np_, dest), dest)
    base, base_dir = reports[16]
    check(base["run"]["ranks"] == 16, "16 ranks")
    check(by_callpath(base, "wait_nxn", "main/MPI_Allreduce", 0) > 0, "the rows wait in MPI_Allreduce")

    def lines(d):
        with open(os.path.join(d, "summary.txt")) as f:
            return [l for l in f if not l.startswith(("@ Analysis", "@ Output", "@ Critical path"))]

    for np_ in (4, 1):
        rep, d = reports[np_]
        dd = diff(base, rep)
        check(not dd, f"grid16 on {np_} processes differs from 16 in {len(dd)} field(s):\n  " + "\n  ".join(dd[:30]))
        la, lb = lines(base_dir), lines(d)
        bad = [(x, y) for x, y in zip(la, lb) if not same_figures(x, y)]
        check(len(la) == len(lb) and not bad, f"grid16: summary.txt on {np_} processes differs from 16: {bad[:3]}")
    print("check_otf2_import: the 16-rank archive gives the same report on 16, 4 and 1 process")


def malformed(run):
    good = run.make("late_sender")
    src = os.path.dirname(good)

    def copy(name):
        d = os.path.join(run.out, "bad-" + name)
        shutil.copytree(src, d)
        return d

    cases = {"missing": os.path.join(run.out, "no-such-dir", "traces.otf2")}
    d = copy("anchor")
    with open(os.path.join(d, "traces.otf2"), "wb") as f:
        f.write(b"this is not an OTF2 anchor file\n" * 10)
    cases["garbage anchor"] = os.path.join(d, "traces.otf2")
    d = copy("nodefs")
    os.remove(os.path.join(d, "traces.def"))
    cases["no global definitions"] = os.path.join(d, "traces.otf2")
    d = copy("truncated")
    evt = os.path.join(d, "traces", "1.evt")
    with open(evt, "r+b") as f:
        f.truncate(os.path.getsize(evt) // 2)
    cases["truncated events"] = os.path.join(d, "traces.otf2")
    d = copy("empty")
    open(os.path.join(d, "traces", "0.evt"), "wb").close()
    cases["empty events"] = os.path.join(d, "traces.otf2")
    d = copy("overwritten")
    evt = os.path.join(d, "traces", "0.evt")
    size = os.path.getsize(evt)
    with open(evt, "r+b") as f:
        f.seek(size // 3)
        f.write(bytes([0xff]) * (size // 3))
    cases["overwritten events"] = os.path.join(d, "traces.otf2")
    cases["undefined region"] = run.make("badref")
    for what, anchor in cases.items():
        r = run.analyse(anchor, 2, os.path.join(run.out, "bad-out"), expect_ok=False)
        crashed = any(s in r.stdout for s in ("Segmentation", "BAD TERMINATION", "core dumped", "Aborted",
                                               "terminate called"))
        check(not crashed and r.returncode in (1, 2),
              f"{what}: critpath-analyze should fail cleanly (exit 1), got {r.returncode}")
        said = [l for l in r.stdout.splitlines() if l.startswith("critpath-analyze: ")]
        check(said and anchor in said[0], f"{what}: no `critpath-analyze: {anchor}: ...` line in {r.stdout!r}")
        print(f"check_otf2_import: {what}: {said[0]}")


CRASHES = ("Segmentation", "BAD TERMINATION", "core dumped", "Aborted", "terminate called", "MPI_Group_incl",
           "Invalid rank", "AddressSanitizer", "runtime error")


def mpi_figures(rep):
    """The report's MPI figures: every metric at the MPI call paths (by call path, and by rank
    there), and the totals and ranks of the metrics that live on MPI call paths only."""
    out = {}
    for name, m in rep["metrics"].items():
        mpi = lambda p: p.split("/")[-1].startswith("MPI_")  # noqa: E731
        for p, v in m.get("by_callpath", {}).items():
            if mpi(p):
                out[f"{name} @ {p}"] = v
        for p, v in m.get("by_callpath_rank", {}).items():
            if mpi(p):
                out[f"{name} @ {p} by rank"] = v
        if not any(v for p, v in m.get("by_callpath", {}).items() if not mpi(p)):
            out[f"{name} total"] = m.get("total")
            out[f"{name} by rank"] = m.get("by_rank")
    return out


def paradigms(run):
    for scenario, nps in (("late_sender", (2, 1)), ("barrier", (4,)), ("rma_fence", (4,))):
        plain, cuda = run.make(scenario), run.make(scenario + "+cuda")
        for np_ in nps:
            a = run.analyse(plain, np_, os.path.join(run.out, f"{scenario}-plain-{np_}"))
            b = run.analyse(cuda, np_, os.path.join(run.out, f"{scenario}-cuda-{np_}"))
            fa, fb = mpi_figures(a), mpi_figures(b)
            check(fa.keys() <= fb.keys(), f"{scenario}+cuda lacks {sorted(fa.keys() - fb.keys())[:5]}")
            bad = [k for k in fa if fb[k] != fa[k] and not (isinstance(fa[k], float) and abs(fb[k] - fa[k]) < 1e-9)]
            check(not bad, f"{scenario}+cuda on {np_}: MPI figures differ: " +
                  "; ".join(f"{k}: {fa[k]} vs {fb[k]}" for k in bad[:5]))
            ranks = a["run"]["ranks"]
            skipped = [n for n in b["notes"] if "otf2: skipped" in n]
            check(len(skipped) == 1, f"one note on what was skipped, got {b['notes']}")
            for what in (f"{ranks} communicators of other paradigms", f"{ranks} RMA windows of other paradigms",
                         f"{4 * ranks} records on other paradigms'"):
                check(what in skipped[0], f"the note {skipped[0]!r} does not say {what!r}")
        print(f"check_otf2_import: {scenario}+cuda: the MPI figures of {scenario}, the CUDA parts in one note")
    rep = run.analyse(run.make("cuda_only"), 1, os.path.join(run.out, "cuda_only-1"))
    check(rep["run"]["ranks"] == 1, "cuda_only: one rank")
    cps = {c["path"]: c for c in rep["callpaths"]}
    check("main/latesender(int, int)" in cps, f"cuda_only: no demangled call path in {sorted(cps)}")
    check(cps["main/latesender(int, int)"].get("mangled") == "_Z10latesenderii", "cuda_only: mangled name kept")
    check("mangled" not in cps["main"], "cuda_only: no mangled name where the archive held none")
    approx(by_callpath(rep, "time", "main/latesender(int, int)"), 0.9, "latesender's time", rel=0, abs_=D)
    approx(by_callpath(rep, "time", "main/sleep(double)"), 0.5, "sleep's time", rel=0, abs_=D)
    check([n for n in rep["notes"] if "holds no MPI" in n], f"cuda_only: no note on the profile: {rep['notes']}")
    r = run.analyse(run.make("nompi2"), 1, os.path.join(run.out, "nompi2-1"), expect_ok=False)
    said = [l for l in r.stdout.splitlines() if l.startswith("critpath-analyze: ")]
    check(r.returncode == 1 and not any(c in r.stdout for c in CRASHES), f"nompi2: exit {r.returncode}")
    check(len(said) == 1 and "holds no MPI (2 processes" in said[0], f"nompi2: no one-line refusal in {r.stdout!r}")
    print("check_otf2_import: no MPI: one process analysed as a profile, two refused in one line")


def damaged(run):
    # A few damages end to end (each costs a launch); the unit test [otf2_import] damages every
    # file of an archive 29 ways, on the import alone.
    good = os.path.dirname(run.make("late_sender+cuda"))
    cases = [("traces.def", "truncated"), ("traces.def", "flipped"), ("traces/0.evt", "removed"),
             ("traces/0.evt", "flipped"), ("traces/1.evt", "truncated"), ("traces/1.def", "flipped"),
             ("traces/3000.evt", "removed"), ("traces.otf2", "flipped")]
    refused = 0
    for f, kind in cases:
        size = os.path.getsize(os.path.join(good, f))
        d = os.path.join(run.out, "damaged")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(good, d)
        path = os.path.join(d, f)
        if kind == "removed":
            os.remove(path)
        elif kind == "truncated":
            os.truncate(path, size // 2)
        else:
            with open(path, "r+b") as fh:
                at = (len(f) * 2654435761) % size
                fh.seek(at)
                b = fh.read(1)[0]
                fh.seek(at)
                fh.write(bytes([b ^ 0x10]))
        r = run.analyse(os.path.join(d, "traces.otf2"), 1, os.path.join(run.out, "damaged-out"), expect_ok=False)
        said = [l for l in r.stdout.splitlines() if l.startswith("critpath-analyze: ")]
        check(r.returncode in (0, 1) and not any(c in r.stdout for c in CRASHES),
              f"{f} {kind}: exit status {r.returncode}: {r.stdout[-400:]!r}")
        check(r.returncode == 0 or len(said) == 1, f"{f} {kind}: not one line: {r.stdout!r}")
        refused += r.returncode == 1
    check(refused > 0, "no damage was refused")
    print(f"check_otf2_import: {len(cases)} damaged archives: {refused} refused in one line, none crashed")


def main():
    out = sys.argv[1]
    check(os.path.basename(out) == "otf2.import", f"refusing to clear {out}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    run = Run(out, *sys.argv[2:7])
    late_sender(run)
    barrier(run)
    rma_fence(run)
    grid16(run)
    malformed(run)
    paradigms(run)
    damaged(run)


if __name__ == "__main__":
    main()
