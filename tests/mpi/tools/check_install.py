"""critpath — tests/mpi/tools/check_install.py: an install works at the prefix it was installed to
(and after being moved), and README lists every installed program.

usage: check_install.py WORKDIR CMAKE BUILD_DIR MPIEXEC MPI(mpich|openmpi) README
  1. `cmake --install BUILD_DIR --prefix WORKDIR/first`, then the prefix moved to
     WORKDIR/moved: the installed critpath-cc/-cxx must find libcritpath and critpath.h there
     (relative to their own location), never in the build tree;
  2. `moved/bin/critpath-cc` builds a small MPI program with a region; it runs on 2 ranks with
     libcritpath from moved/lib and writes a report naming the region;
  3. every program in bin/ of the install is named in README's "The following are installed"
     list.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check  # noqa: E402

PROGRAM = r"""#include <mpi.h>
#include <critpath.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CRITPATH_REGION_BEGIN("installed_region");
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CRITPATH_REGION_END("installed_region");
  MPI_Finalize();
  return 0;
}
"""


def run(cmd, env=None, cwd=None):
    print("$", " ".join(cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                       stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    print(r.stdout)
    return r


def main():
    work, cmake, build, mpiexec, mpi, readme = sys.argv[1:7]
    first, moved = os.path.join(work, "first"), os.path.join(work, "moved")
    for d in (first, moved):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(work, exist_ok=True)

    # 1. Install, then move the prefix: nothing may point back at the first prefix or the build.
    r = run([cmake, "--install", build, "--prefix", first])
    check(r.returncode == 0, f"cmake --install {build} --prefix {first} exited with {r.returncode}")
    os.rename(first, moved)
    build_real = os.path.realpath(build)
    for w in ("critpath-cc", "critpath-cxx", "critpath-f90"):
        path = os.path.join(moved, "bin", w)
        check(os.access(path, os.X_OK), f"{path} is not installed or not executable")
        with open(path) as f:
            text = f.read()
        check(build_real not in text and first not in text,
              f"{path} names the build tree ({build_real}) or the install-time prefix ({first})")

    # 2. Build and run a small MPI program with the moved install's critpath-cc.
    src, exe = os.path.join(work, "installed.c"), os.path.join(work, "installed")
    with open(src, "w") as f:
        f.write(PROGRAM)
    env = dict(os.environ, CRITPATH_WRAPPER_SHOW="1")
    r = run([os.path.join(moved, "bin", "critpath-cc"), "-O2", "-o", exe, src], env=env)
    check(r.returncode == 0, f"{moved}/bin/critpath-cc could not build {src} (exit {r.returncode}; "
          "its output is above)")
    r = run(["ldd", exe])
    lib = [l for l in r.stdout.splitlines() if "libcritpath.so" in l]
    check(lib and os.path.realpath(moved) in lib[0],
          f"{exe} should load libcritpath from {moved}/lib, ldd says {lib}")
    out = os.path.join(work, "report")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [mpiexec] + (["--oversubscribe", "--allow-run-as-root"] if mpi == "openmpi" else [])
    r = run(cmd + ["-n", "2", exe], env=dict(os.environ, CRITPATH_OUTPUT_DIR=out))
    check(r.returncode == 0, f"{exe} on 2 ranks exited with {r.returncode} (its output is above)")
    summary = os.path.join(out, "summary.txt")
    check(os.path.isfile(summary), f"{exe} wrote no {summary}")
    with open(os.path.join(out, "report.json")) as f:
        check("installed_region" in f.read(), f"{out}/report.json does not name the region installed_region")

    # 3. `pkg-config --libs critpath` gives a binary that starts without LD_LIBRARY_PATH.
    pc_dirs = [os.path.join(root, d) for root, dirs, _ in os.walk(moved) for d in dirs if d == "pkgconfig"]
    check(pc_dirs, f"no pkgconfig directory under {moved}")
    penv = dict(os.environ, PKG_CONFIG_PATH=os.pathsep.join(pc_dirs))
    penv.pop("LD_LIBRARY_PATH", None)
    flags = run(["pkg-config", "--cflags", "--libs", "critpath"], env=penv)
    check(flags.returncode == 0, f"pkg-config --cflags --libs critpath failed (exit {flags.returncode})")
    mpicc = "mpicc.openmpi" if mpi == "openmpi" else "mpicc.mpich"
    pexe = os.path.join(work, "via-pkg-config")
    r = run([mpicc, "-o", pexe, src] + flags.stdout.split(), env=penv)
    check(r.returncode == 0, f"building {src} with pkg-config's flags failed (exit {r.returncode})")
    r = run([pexe], env=dict(penv, CRITPATH_ENABLE="0"))
    check(r.returncode == 0, f"{pexe} did not start without LD_LIBRARY_PATH (exit {r.returncode}): "
          "pkg-config's Libs lack the run path")

    # 4. README names every installed program.
    with open(readme) as f:
        text = f.read()
    m = re.search(r"The following are installed:\n\n((?:- .*\n(?:  .*\n)*)+)", text)
    check(m, f"{readme} has no `The following are installed:` list")
    listed = m.group(1)
    missing = [p for p in sorted(os.listdir(os.path.join(moved, "bin"))) if f"`bin/{p}`" not in listed
               and p not in re.findall(r"critpath-[a-z0-9]+", listed)]
    check(not missing, f"{readme}'s install list does not name {missing}")
    print(f"check_install: moved install builds and runs a traced program; README lists "
          f"{len(os.listdir(os.path.join(moved, 'bin')))} programs")


if __name__ == "__main__":
    main()
