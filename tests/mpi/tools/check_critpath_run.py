"""critpath — tests/mpi/tools/check_critpath_run.py: critpath-run refuses, with one line, a launcher
or a program of the other MPI library than the one libcritpath.so is linked against (instead of
the SIGSEGV in MPI_Init that followed), and still runs the matching ones.

usage: check_critpath_run.py WORKDIR CRITPATH_RUN MPI(mpich|openmpi) MPIEXEC NATIVE_PROGRAM
A stand-in launcher named like the other library's (critpath-run decides by the name first)
must never be executed; a program built with the other library's mpicc (when installed) is
refused both alone and under the right launcher.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check  # noqa: E402

OTHER = {"mpich": ("openmpi", "mpiexec.openmpi", "mpicc.openmpi", "Open MPI"),
         "openmpi": ("mpich", "mpiexec.mpich", "mpicc.mpich", "MPICH")}
HELLO = """#include <mpi.h>
int main(int argc, char** argv) { MPI_Init(&argc, &argv); MPI_Finalize(); return 0; }
"""


def run(cmd, **kw):
    print("$", " ".join(cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                       stdin=subprocess.DEVNULL, **kw)
    print(r.stdout + r.stderr)
    return r


def refused(r, what, name):
    check(r.returncode == 2, f"{what}: critpath-run should exit with 2, exited with {r.returncode}")
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and lines[0].startswith("critpath-run: MPI mismatch:"),
          f"{what}: expected one `critpath-run: MPI mismatch:` line on stderr, got {lines}")
    check(name in lines[0], f"{what}: the line should name {name}: {lines[0]!r}")


def main():
    work, run_tool, mpi, mpiexec, native = sys.argv[1:6]
    other, other_exec, other_cc, other_name = OTHER[mpi]
    os.makedirs(work, exist_ok=True)

    # A launcher of the other library (a stand-in: it must not even start).
    fake_dir = os.path.join(work, "fake-launcher")
    os.makedirs(fake_dir, exist_ok=True)
    fake = os.path.join(fake_dir, other_exec)
    marker = os.path.join(work, "fake-launcher-ran")
    if os.path.exists(marker):
        os.remove(marker)
    with open(fake, "w") as f:
        f.write(f"#!/bin/sh\ntouch '{marker}'\n")
    os.chmod(fake, 0o755)
    r = run([run_tool, fake, "-n", "1", native])
    refused(r, f"{other_exec} with a {mpi} build", other_name)
    check(not os.path.exists(marker), f"critpath-run started the mismatched launcher {fake}")

    # The matching launcher and program are accepted.
    r = run([run_tool, "--dry-run", mpiexec, "-n", "1", native])
    check(r.returncode == 0, f"--dry-run {mpiexec} with a {mpi} program exited with {r.returncode}")
    check("MPI mismatch" not in r.stderr, "a matching launcher and program were called a mismatch")

    # A program linked against the other library, alone and under the right launcher.
    cc = shutil.which(other_cc)
    if not cc:
        print(f"check_critpath_run: {other_cc} not installed; the foreign-program case is not tried")
    else:
        src = os.path.join(work, "hello.c")
        exe = os.path.join(work, f"hello_{other}")
        with open(src, "w") as f:
            f.write(HELLO)
        r = run([cc, src, "-o", exe])
        check(r.returncode == 0, f"{other_cc} could not build {src}")
        refused(run([run_tool, exe]), f"a singleton {other} program", exe)
        refused(run([run_tool, mpiexec, "-n", "1", exe]), f"a {other} program under {mpiexec}", exe)
    print("check_critpath_run: mismatched launcher and program refused, matching ones accepted")


if __name__ == "__main__":
    main()
