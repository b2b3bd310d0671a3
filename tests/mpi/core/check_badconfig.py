"""critpath — tests/mpi/core/check_badconfig.py: invalid values and unknown names give exactly
one `critpath:` warning line each (rank 0 only), naming variable, value and default, and the
run goes on with the defaults. usage: OUTDIR NP"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, critpath_lines, load_report, read_stderr, read_text  # noqa: E402

out, np_ = sys.argv[1], int(sys.argv[2])
lines = critpath_lines(read_stderr(out))
listing = "\n  ".join(lines) or "(none)"
warn = [l for l in lines if "report in" not in l]
check(len(warn) == 3, f"expected 3 warnings, found {len(warn)}; critpath lines on stderr:\n  {listing}")
# The default is matched as "default <value>" (libtrace/config/config.h documents the format):
# a bare "64M" / "1" would also match the example "(e.g. 64M)" and the range "-7..19".
check(any("CRITPATH_BUFFER_SIZE" in l and "'abc'" in l and re.search(r"default 64M\b", l) for l in warn),
      f"no warning naming CRITPATH_BUFFER_SIZE, its value 'abc' and its default '64M'; warnings: {warn}")
check(any("CRITPATH_COMPRESSION_LEVEL" in l and "'99'" in l and re.search(r"default 1\b", l) for l in warn),
      f"no warning naming CRITPATH_COMPRESSION_LEVEL, its value '99' and its default '1'; warnings: {warn}")
check(any("CRITPATH_NO_SUCH_THING" in l for l in warn),
      f"no warning naming the unknown variable CRITPATH_NO_SUCH_THING; warnings: {warn}")
reports = sum("report in" in l for l in lines)
check(reports == 1, f"expected exactly 1 'report in' line, found {reports}:\n  {listing}")
rep = load_report(out)
check(rep["run"]["ranks"] == np_, f"run.ranks is {rep['run']['ranks']!r}, expected {np_}")
cfg = read_text(out, "critpath.cfg")
check("CRITPATH_BUFFER_SIZE=64M" in cfg,
      f"critpath.cfg does not record the default CRITPATH_BUFFER_SIZE=64M:\n{cfg}")
print("check_badconfig: ok")
