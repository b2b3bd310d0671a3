"""critpath — tests/mpi/core/check_analysis_timeout.py: CRITPATH_ANALYSIS_TIMEOUT bounds the
analysis (analyzer/engine/watchdog.h). Rank 1 stalls at the start of the analysis
(CRITPATH_DEBUG_ANALYSIS_STALL=1) until the 2 s deadline has passed; the others must give up
instead of waiting for it forever: rank 0 prints one `analysis incomplete:` line naming the
variable, no report is written, and the job ends with status 0 (run_mpi_test.py checks it) well
within the test's time budget (the driver's timeout).
usage: OUTDIR"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, critpath_lines, read_stderr  # noqa: E402

out = sys.argv[1]
lines = critpath_lines(read_stderr(out))
incomplete = [l for l in lines if "analysis incomplete:" in l]
listing = "\n  ".join(lines) or "(none)"
check(len(incomplete) == 1 and "CRITPATH_ANALYSIS_TIMEOUT=2 s" in incomplete[0],
      f"expected one 'analysis incomplete: ... CRITPATH_ANALYSIS_TIMEOUT=2 s' line; found:\n  {listing}")
check(not os.path.exists(os.path.join(out, "summary.txt")),
      "a summary.txt was written although the analysis could not start")
print("check_analysis_timeout: ok")
