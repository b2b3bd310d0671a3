"""critpath — tests/mpi/core/check_config_only.py: CRITPATH_ANALYSIS=0 still writes critpath.cfg
(the settings in force, CRITPATH_ANALYSIS included) and says on stderr where it went, but no
report. usage: OUTDIR"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, critpath_lines, read_stderr, read_text  # noqa: E402

out = sys.argv[1]
cfg = read_text(out, "critpath.cfg")
check(any(l.strip() in ("CRITPATH_ANALYSIS=0", "CRITPATH_ANALYSIS=false") for l in cfg.splitlines()),
      f"critpath.cfg does not record CRITPATH_ANALYSIS=0:\n{cfg}")
check(not os.path.exists(os.path.join(out, "summary.txt")), "a summary.txt was written with the analysis off")
lines = critpath_lines(read_stderr(out))
check(any("critpath.cfg" in l and out in l for l in lines),
      f"no stderr line names {out}/critpath.cfg: {lines}")
print("check_config_only: ok")
