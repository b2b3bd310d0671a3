"""critpath — tests/mpi/otf2/check_otf2_export_cli.py: `critpath-analyze --export-otf2 OUT DIR`
writes, from a kept trace, the archive the run wrote in situ.

usage: check_otf2_export_cli.py OUTDIR OTF2_PRINT ANALYZE MPI MPIEXEC SHIM NP[,NP...]

The run kept both (CRITPATH_KEEP_TRACE=both): OUTDIR/trace/ and OUTDIR/traces.otf2. For each
NP, the export on NP processes (fewer than the run's ranks: hosted) prints, with otf2-print and
otf2-print -G, exactly as the in-situ archive. A second export into the same directory is
refused (exit 2, "already holds an OTF2 archive") and leaves it alone.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, mpiexec_command  # noqa: E402


def printed(otf2_print, anchor, *flags):
    r = subprocess.run([otf2_print, *flags, anchor], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"otf2-print {' '.join(flags)} {anchor}: exit {r.returncode}: {r.stderr[-1000:]}")
    return r.stdout


def main():
    out, otf2_print, analyze, mpi, mpiexec, shim, nps = sys.argv[1:8]
    insitu = os.path.join(out, "traces.otf2")
    want = {f: printed(otf2_print, insitu, *f) for f in ((), ("-G",))}
    for np_ in nps.split(","):
        dest = os.path.join(out, f"export-{np_}")
        cmd = mpiexec_command(mpi, mpiexec, shim, np_) + [analyze, "--export-otf2", dest, out]
        print("$", " ".join(cmd))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
        print(r.stdout)
        check(r.returncode == 0, f"--export-otf2 on {np_} processes exited with {r.returncode}")
        for flags, text in want.items():
            got = printed(otf2_print, os.path.join(dest, "traces.otf2"), *flags)
            check(got == text, f"otf2-print {' '.join(flags)}: the export on {np_} processes differs from "
                  "the in-situ archive")
        print(f"check_otf2_export_cli: the export on {np_} processes equals the in-situ archive")
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
        check(r.returncode == 2 and "already holds an OTF2 archive" in r.stdout,
              f"a second export into {dest} should be refused (exit 2), got {r.returncode}: {r.stdout}")
    print("check_otf2_export_cli: a second export into the same directory is refused")


if __name__ == "__main__":
    main()
