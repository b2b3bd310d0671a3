"""critpath — tests/mpi/waits/check_analyze_cli.py: critpath-analyze's output directory rule and
its MPI-mismatch message, on a kept 2-rank trace.

usage: check_analyze_cli.py OUTDIR MPI(mpich|openmpi) MPIEXEC ANALYZE SHIM
Checks, in order:
  1. the default output is OUTDIR/reanalysis, then OUTDIR/reanalysis-2, -3: never overwritten,
     and the directory written to is printed;
  2. an explicit --output that holds a summary.txt is refused with one line (exit 2, report
     untouched) and overwritten with --force;
  3. more processes than traced ranks keeps its message ("run with mpiexec -n 2 or fewer");
  4. a foreign launcher's world size in the environment (OMPI_COMM_WORLD_SIZE for MPICH,
     PMI_SIZE for Open MPI) with MPI_COMM_WORLD of size 1 names the mismatch in one line;
     and, when the other library's launcher is installed, the same under the real launcher;
  5. a damaged copy of the trace: rank 1's .cptrace emptied or cut in half, the two .cptrace
     files swapped, the two .json files swapped: each is refused with one `analysis incomplete:`
     line naming the file and what is wrong (exit 1), never analysed as a rank that did nothing.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import OPEN_MPI_FAST_ABORT, check, fail, mpiexec_command  # noqa: E402

FOREIGN = {"mpich": ("OMPI_COMM_WORLD_SIZE", "mpiexec.openmpi", "Open MPI's launcher"),
           "openmpi": ("PMI_SIZE", "mpiexec.mpich", "MPICH's (hydra) launcher")}


def launch(mpi, mpiexec, shim, np_, env=()):
    return mpiexec_command(mpi, mpiexec, shim, np_, env)


def run(cmd):
    print("$", " ".join(cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    print(r.stdout)
    return r


def tool_lines(text):
    return [l for l in text.splitlines() if l.startswith(("critpath-analyze:", "critpath:"))]


def main():
    out, mpi, mpiexec, analyze, shim = sys.argv[1:6]
    base = os.path.join(out, "reanalysis")
    for d in [base] + [f"{base}-{k}" for k in range(2, 5)]:
        shutil.rmtree(d, ignore_errors=True)

    # 1. Default output: reanalysis, reanalysis-2, reanalysis-3, each announced.
    for k, name in enumerate([base, f"{base}-2", f"{base}-3"]):
        r = run(launch(mpi, mpiexec, shim, 2) + [analyze, out])
        check(r.returncode == 0, f"default re-analysis #{k + 1} exited with {r.returncode}, expected 0")
        check(f"critpath: report in {name}/summary.txt" in r.stdout,
              f"default re-analysis #{k + 1} should report `critpath: report in {name}/summary.txt`; "
              f"its lines: {tool_lines(r.stdout)}")
        check(os.path.isfile(os.path.join(name, "summary.txt")), f"{name}/summary.txt was not written")
        if k > 0:
            check(f"{base} holds an earlier report; writing to {name}" in r.stdout,
                  f"re-analysis #{k + 1} should say it writes to {name} instead of {base}; "
                  f"its lines: {tool_lines(r.stdout)}")
    check(not os.path.exists(f"{base}-4"), f"{base}-4 exists after three re-analyses")

    # 2. An explicit --output that holds a report: refused, then overwritten with --force.
    summary = os.path.join(base, "summary.txt")
    with open(summary, "a") as f:
        f.write("MARKER of the earlier report\n")
    r = run(launch(mpi, mpiexec, shim, 2) + [analyze, out, "--output", base])
    check(r.returncode != 0, "--output onto an existing report should fail, exited with 0")
    refusals = [l for l in tool_lines(r.stdout) if "already holds a report" in l]
    check(len(refusals) == 1, f"--output onto an existing report should print one refusal line, "
          f"printed {len(refusals)}: {tool_lines(r.stdout)}")
    check("--force" in refusals[0], f"the refusal should name --force: {refusals[0]!r}")
    with open(summary) as f:
        check("MARKER of the earlier report" in f.read(), f"the refused run changed {summary}")
    r = run(launch(mpi, mpiexec, shim, 2) + [analyze, out, "--output", base, "--force"])
    check(r.returncode == 0, f"--output with --force exited with {r.returncode}, expected 0")
    with open(summary) as f:
        check("MARKER of the earlier report" not in f.read(), f"--force did not rewrite {summary}")

    # 3. More processes than traced ranks: the message stays as it was.
    r = run(launch(mpi, mpiexec, shim, 3) + [analyze, out, "--output", os.path.join(out, "re-np3")])
    check(r.returncode != 0, "3 processes on a 2-rank trace should fail, exited with 0")
    check("critpath-analyze: the trace has 2 ranks; run with mpiexec -n 2 or fewer" in r.stdout,
          f"3 processes on a 2-rank trace: unexpected message {tool_lines(r.stdout)}")
    check("MPI mismatch" not in r.stdout, "3 processes on a 2-rank trace is no MPI mismatch")

    # 4. A foreign launcher: its world size in the environment, MPI_COMM_WORLD of 1.
    var, foreign_exec, who = FOREIGN[mpi]
    r = run(launch(mpi, mpiexec, shim, 1, [(var, "2")]) + [analyze, out, "--output",
                                                           os.path.join(out, "re-foreign")])
    check(r.returncode != 0, f"{var}=2 with a world of 1 should fail, exited with 0")
    lines = [l for l in tool_lines(r.stdout) if "MPI mismatch" in l]
    check(len(lines) == 1, f"{var}=2 with a world of 1: expected one `MPI mismatch` line, got "
          f"{tool_lines(r.stdout)}")
    check(f"the trace has 2 ranks but MPI_COMM_WORLD has 1 process" in lines[0] and who in lines[0]
          and f"{var}=2" in lines[0], f"the mismatch line should name the ranks, {who} and {var}=2: "
          f"{lines[0]!r}")
    check(not os.path.exists(os.path.join(out, "re-foreign", "summary.txt")),
          "a mismatched run wrote a report")
    # The same, started by the other library's real launcher when it is installed.
    real = shutil.which(foreign_exec)
    if real:
        cmd = [real]
        if mpi == "mpich":  # the foreign launcher is Open MPI's
            cmd += ["--oversubscribe", "--allow-run-as-root"] + OPEN_MPI_FAST_ABORT
        r = run(cmd + ["-n", "2", analyze, out, "--output", os.path.join(out, "re-foreign")])
        check(r.returncode != 0, f"{foreign_exec} -n 2 should fail, exited with 0")
        lines = [l for l in tool_lines(r.stdout) if "MPI mismatch" in l]
        check(len(lines) == 1, f"{foreign_exec} -n 2: expected one `MPI mismatch` line (from its rank "
              f"0), got {tool_lines(r.stdout)}")
    else:
        print(f"check_analyze_cli: {foreign_exec} not installed; the real foreign launcher is not tried")
    # 5. Damaged copies of the kept trace.
    def damaged(name, mutate, expect):
        copy = os.path.join(out, f"damaged-{name}")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(os.path.join(out, "trace"), os.path.join(copy, "trace"))
        mutate(os.path.join(copy, "trace"))
        r = run(launch(mpi, mpiexec, shim, 2) + [analyze, copy, "--output", os.path.join(copy, "re")])
        check(r.returncode != 0, f"{name}: a damaged trace was analysed (exit 0)")
        hit = [l for l in tool_lines(r.stdout) if expect in l and "analysis incomplete: " in l]
        check(hit, f"{name}: expected an 'analysis incomplete:' line with {expect!r}, got "
              f"{tool_lines(r.stdout)}")
        check(not os.path.exists(os.path.join(copy, "re", "summary.txt")), f"{name}: a report was written")

    def empty(d):
        open(os.path.join(d, "rank-1.cptrace"), "w").close()

    def truncate(d):
        path = os.path.join(d, "rank-1.cptrace")
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)

    def swap(ext):
        def go(d):
            a, b = os.path.join(d, f"rank-0.{ext}"), os.path.join(d, f"rank-1.{ext}")
            os.rename(a, a + ".x")
            os.rename(b, a)
            os.rename(a + ".x", b)
        return go
    damaged("empty", empty, "the file is empty")
    damaged("truncated", truncate, "rank-1.cptrace")
    damaged("swapped-cptrace", swap("cptrace"), "rank-0.cptrace holds")
    damaged("swapped-json", swap("json"), "the rank files were renamed or swapped")
    print("check_analyze_cli: output directories, --force, the MPI mismatch message and damaged "
          "traces ok")


if __name__ == "__main__":
    main()
