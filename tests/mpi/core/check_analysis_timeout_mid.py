"""critpath — tests/mpi/core/check_analysis_timeout_mid.py: CRITPATH_ANALYSIS_TIMEOUT expiring in
the middle of the analysis (engine/analysis_engine.h). Rank 1 stalls at the start of the last
window's exchanges (CRITPATH_DEBUG_ANALYSIS_STALL_STAGE=last_window; window by window or the
whole run) until the 2 s deadline has passed; the others' exchanges fail. Rank 0 must still
write the report, with `analysis incomplete` notes naming the timeout, nothing may crash
(no "internal error"), and the job ends with status 0 (run_mpi_test.py checks it).
usage: OUTDIR windowed|whole"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, critpath_lines, read_stderr  # noqa: E402

out, mode = sys.argv[1], sys.argv[2]
lines = critpath_lines(read_stderr(out))
listing = "\n  ".join(lines) or "(none)"
check(not any("internal error" in l for l in lines), f"the analysis threw:\n  {listing}")
check(any("analysis incomplete:" in l and "CRITPATH_ANALYSIS_TIMEOUT=2 s" in l for l in lines),
      f"no stderr line names the timeout:\n  {listing}")
check(any("report in" in l for l in lines), f"rank 0 did not say where the report is:\n  {listing}")
with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
    rep = json.load(f)
sc = rep["scalars"]
check(sc.get("analysis_complete") is False, f"analysis_complete is {sc.get('analysis_complete')}, not false")
notes = rep.get("notes", [])
check(any("CRITPATH_ANALYSIS_TIMEOUT=2 s passed" in n for n in notes), f"no note names the timeout: {notes}")
check(sc.get("analysis_windowed") is (mode == "windowed"),
      f"analysis_windowed is {sc.get('analysis_windowed')} for a {mode} analysis")
with open(os.path.join(out, "summary.txt"), encoding="utf-8") as f:
    summary = f.read()
check("@ Completeness    : analysis incomplete" in summary, "summary.txt has no Completeness line")
if mode == "windowed":
    # The call paths were unified before the windows: the profile is there.
    check("MPI_Barrier" in summary, "window by window, the call-path profile is missing")
print(f"check_analysis_timeout_mid ({mode}): ok")
