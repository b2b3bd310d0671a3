"""critpath — tests/mpi/core/check_badconfig.py: invalid values and unknown names give exactly
one `critpath:` warning line each (rank 0 only), naming variable, value and default, and the
run goes on with the defaults. usage: OUTDIR NP"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import load_report  # noqa: E402

out, np_ = sys.argv[1], int(sys.argv[2])
with open(out + ".stderr") as f:
    lines = [l for l in f.read().splitlines() if l.startswith("critpath:")]
warn = [l for l in lines if "report in" not in l]
assert len(warn) == 3, "expected 3 warnings:\n" + "\n".join(lines)
assert any("CRITPATH_BUFFER_SIZE" in l and "abc" in l and "64M" in l for l in warn), warn
assert any("CRITPATH_COMPRESSION_LEVEL" in l and "99" in l and "1" in l for l in warn), warn
assert any("CRITPATH_NO_SUCH_THING" in l for l in warn), warn
assert sum("report in" in l for l in lines) == 1, lines
rep = load_report(out)
assert rep["run"]["ranks"] == np_
with open(os.path.join(out, "critpath.cfg")) as f:
    cfg = f.read()
assert "CRITPATH_BUFFER_SIZE=64M" in cfg, cfg
print("check_badconfig: ok")
