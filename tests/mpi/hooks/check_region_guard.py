"""critpath — tests/mpi/hooks/check_region_guard.py: include/critpath.h's critpath::Region guard is
never instrumented by critpath-cxx.

usage: check_region_guard.py OUTDIR OBJDUMP|LLVM_XRAY UNOPTIMIZED_EXE
  - the event dump of rank 0 (CRITPATH_DUMP_EVENTS=1; program built with critpath-cxx -O2, or
    with --xray) enters and leaves the region `guarded` once and names no critpath::Region
    function;
  - in UNOPTIMIZED_EXE (the same source, critpath-cxx -O0, where the guard's functions are
    emitted out of line) the bodies of critpath::Region::* call no __cyg_profile_func_*; or,
    given llvm-xray (an executable built with --xray -O0), no critpath::Region function has
    XRay sleds (`llvm-xray extract --symbolize`), while other functions have.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, event_lines  # noqa: E402


def main():
    out, objdump, exe = sys.argv[1:4]
    lines = event_lines(out, 0)
    guard = [l for l in lines if "critpath::Region" in l]
    check(not guard, f"the guard was recorded as a function in {out}/events/rank-0.txt: {guard[:4]}")
    enters = [l for l in lines if re.match(r"ENTER guarded\b", l)]
    exits = [l for l in lines if re.match(r"EXIT guarded\b", l)]
    check(len(enters) == 1 and len(exits) == 1,
          f"region `guarded`: expected 1 ENTER and 1 EXIT in the event dump, found {len(enters)} and "
          f"{len(exits)}")

    if os.path.basename(objdump).startswith("llvm-xray"):
        check_xray(objdump, exe)
        return
    r = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", exe], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, f"{objdump} -d {exe} failed: {r.stderr.strip()}")
    bodies, current = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            current = m.group(1) if m.group(1).startswith("critpath::Region::") else None
            if current:
                bodies[current] = []
        elif current:
            bodies[current].append(line)
    check(bodies, f"no critpath::Region functions in {exe} (built with -O0, they should be out of line)")
    for name, body in bodies.items():
        hooks = [l.strip() for l in body if "__cyg_profile_func" in l]
        check(not hooks, f"{name} in {exe} is instrumented: {hooks}")
    print(f"check_region_guard: region recorded, guard not ({len(bodies)} guard functions without hooks)")


def check_xray(llvm_xray, exe):
    r = subprocess.run([llvm_xray, "extract", "--symbolize", exe], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, f"{llvm_xray} extract {exe} failed: {r.stderr.strip()}")
    names = set(re.findall(r"function-name:\s*'?([^'}]*?)'?,\s*version", r.stdout))
    check("main" in names, f"{exe}: main has no XRay sleds; instrumented: {sorted(names)}")
    guard = [n for n in names if "critpath::Region" in n]
    check(not guard, f"{exe}: the guard has XRay sleds: {guard}")
    print(f"check_region_guard: region recorded, guard without sleds ({len(names)} functions with sleds)")


if __name__ == "__main__":
    main()
