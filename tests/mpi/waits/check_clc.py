"""critpath — tests/mpi/waits/check_clc.py: the controlled logical clock.

usage: check_clc.py OUTDIR MODE     MODE = clc | linear | clean
The runs inject a clock jump on event times only (CRITPATH_DEBUG_CLOCK_SKEW=0,0,-0.3):
rank 1's receive then seems to complete 0.3 s before its send began. `linear` cannot see
such a jump (violations remain); `clc` must remove every violation; `clean` (no injection,
clc on) must find nothing to correct beyond the logical clock's minimum latency: on one host
a shared-memory message can arrive within l_min = 1 us of its send (Open MPI's vader does),
which the clock then shifts by less than l_min; anything larger would be a false correction.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, load_report  # noqa: E402

out, mode = sys.argv[1], sys.argv[2]
if mode not in ("clc", "linear", "clean"):
    print(f"check_clc: unknown mode {mode!r} (clc | linear | clean)")
    sys.exit(2)
s = load_report(out)["scalars"]
v = s["clock_violations_p2p"] + s["clock_violations_collective"]
found = (f"p2p violations {s['clock_violations_p2p']!r}, collective {s['clock_violations_collective']!r}, "
         f"clc_violations_before {s['clc_violations_before']!r}, clc_passes {s['clc_passes']!r}, "
         f"clc_corrected_times {s['clc_corrected_times']!r}")
if mode == "linear":
    check(v > 0, f"linear: expected clock-condition violations without the logical clock, found none ({found})")
elif mode == "clc":
    check(s["clc_violations_before"] > 0, f"clc: expected clc_violations_before > 0 ({found})")
    check(s["clc_passes"] >= 1 and s["clc_corrected_times"] > 0,
          f"clc: expected clc_passes >= 1 and clc_corrected_times > 0 ({found})")
    check(v == 0, f"clc: {v} violations remain after the logical clock, expected 0 ({found})")
else:
    check(v == 0 and s["clc_max_shift_s"] <= 1e-6,
          f"clean: expected no violations and no correction beyond l_min = 1 us (max shift "
          f"{s['clc_max_shift_s'] * 1e6:.3f} us; {found})")
print(f"check_clc: ok ({mode}: {v:.0f} violations left, {s['clc_violations_before']:.0f} before, "
      f"{s['clc_passes']:.0f} passes, max shift {s['clc_max_shift_s'] * 1e6:.3f} us)")
