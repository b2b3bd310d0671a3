"""critpath — tests/mpi/waits/check_clc.py: the controlled logical clock.

usage: check_clc.py OUTDIR MODE     MODE = clc | linear | clean
The runs inject a clock jump on event times only (CRITPATH_DEBUG_CLOCK_SKEW=0,0,-0.3):
rank 1's receive then seems to complete 0.3 s before its send began. `linear` cannot see
such a jump (violations remain); `clc` must remove every violation; `clean` (no injection,
clc on) must find nothing to correct.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import load_report  # noqa: E402

out, mode = sys.argv[1], sys.argv[2]
s = load_report(out)["scalars"]
v = s["clock_violations_p2p"] + s["clock_violations_collective"]
if mode == "linear":
    assert v > 0, f"expected clock-condition violations without the logical clock: {s}"
elif mode == "clc":
    assert s["clc_violations_before"] > 0, s
    assert s["clc_passes"] >= 1 and s["clc_corrected_times"] > 0, s
    assert v == 0, f"violations remain after the logical clock: {v}"
else:
    assert s["clc_passes"] == 0 and s["clc_corrected_times"] == 0 and v == 0, s
print(f"check_clc: ok ({mode}: {v:.0f} violations left, {s['clc_violations_before']:.0f} before, "
      f"{s['clc_passes']:.0f} passes, max shift {s['clc_max_shift_s'] * 1e3:.1f} ms)")
