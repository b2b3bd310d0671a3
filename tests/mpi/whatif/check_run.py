"""critpath — tests/mpi/whatif/check_run.py: the balanced runs the what-if tests compare with
(CMakeLists.txt) produced a report with the measured runtime (pop.runtime_s).

usage: check_run.py OUTDIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, check, load_report  # noqa: E402

try:
    rep = load_report(sys.argv[1])
    check(rep.get("pop", {}).get("runtime_s", 0) > 0, "report.json has no pop.runtime_s")
except CheckError as e:
    print(f"check_run: FAIL: {e}")
    sys.exit(1)
print(f"check_run: ok (runtime {rep['pop']['runtime_s']:.4f} s)")
