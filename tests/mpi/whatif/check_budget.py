"""critpath — tests/mpi/whatif/check_budget.py: a what-if replay over its budget
(CRITPATH_SIMULATION_BUDGET) gives up with a note and a header line, and the rest of the report
is there (docs/metrics.md "What-if simulation").

usage: check_budget.py OUTDIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, check, load_report, read_text  # noqa: E402

try:
    rep = load_report(sys.argv[1])
    notes = [n for n in rep["notes"] if "what-if: not simulated" in n]
    check(notes and "budget" in notes[0], f"no note that the replay ran over its budget: {rep['notes']}")
    check("whatif" not in rep and "pop" not in rep, "a replay that gave up still reports predictions")
    check("critical_path" in rep and "delay_cost_short_term" in rep["metrics"],
          "the other analyses are missing")
    summary = read_text(sys.argv[1], "summary.txt")
    check("@ What-if         : not simulated (the replay did not finish within its budget" in summary,
          "summary.txt has no '@ What-if : not simulated (...budget...)' line")
except CheckError as e:
    print(f"check_budget: FAIL: {e}")
    sys.exit(1)
print(f"check_budget: ok ({notes[0]})")
