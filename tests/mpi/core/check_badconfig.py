"""critpath — tests/mpi/core/check_badconfig.py: invalid values and unknown names give exactly
one `critpath:` warning line each (rank 0 only), naming variable, value, why and default, and
the run goes on with the defaults (critpath.cfg records them). usage: OUTDIR NP SET

SET names the environment the test ran with (tests/mpi/core/CMakeLists.txt):
  basic   bad values of a size, an int with limits, an int past int64 with only a minimum,
          a clock skew that is no list of numbers, a directory as filter file, an unknown name
  more    a clock skew that is one huge number, a filter file that does not exist"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, critpath_lines, load_report, read_stderr, read_text  # noqa: E402

# (variable, value, reason as a regex, default as written in the warning and in critpath.cfg)
SKEW_SHAPE = r"is not <offset s>,<drift ppm>\[,<jump s>\]"
SETS = {
    "basic": [
        ("CRITPATH_BUFFER_SIZE", "abc", r"is not a size", "64M"),
        ("CRITPATH_COMPRESSION_LEVEL", "99", r"is out of range -7\.\.19", "1"),
        ("CRITPATH_AUTOFILTER_VISITS", "99999999999999999999999", r"is above the maximum 2147483647",
         "100000"),
        ("CRITPATH_DEBUG_CLOCK_SKEW", "x!y z", SKEW_SHAPE, ""),
        ("CRITPATH_FILTER", "/tmp", r"is a directory, not a file", ""),
    ],
    "more": [
        ("CRITPATH_DEBUG_CLOCK_SKEW", "99999999999999999999999", SKEW_SHAPE, ""),
        ("CRITPATH_FILTER", "/nonexistent/critpath.filter", r"does not exist", ""),
    ],
}
UNKNOWN = {"basic": ["CRITPATH_NO_SUCH_THING"], "more": []}

out, np_, which = sys.argv[1], int(sys.argv[2]), sys.argv[3]
expected = SETS[which]
lines = critpath_lines(read_stderr(out))
listing = "\n  ".join(lines) or "(none)"
warn = [l for l in lines if "report in" not in l]
n = len(expected) + len(UNKNOWN[which])
check(len(warn) == n, f"expected {n} warnings, found {len(warn)}; critpath lines on stderr:\n  {listing}")
for var, value, why, default in expected:
    # The default is matched as "default <value>" (libtrace/config/config.h documents the
    # format): a bare "64M" / "1" would also match the example "(e.g. 64M)" and the range.
    shown = re.escape(default) + r"\b" if default else re.escape("(empty)")
    pattern = re.escape(f"critpath: {var}='{value}' ") + why + r".*; using the default " + shown
    hits = [l for l in warn if re.match(pattern, l)]
    check(len(hits) == 1, f"expected one warning naming {var}, its value '{value}', why ({why}) and "
          f"the default {default or '(empty)'}; warnings:\n  " + "\n  ".join(warn))
for var in UNKNOWN[which]:
    check(any(var in l for l in warn), f"no warning naming the unknown variable {var}; warnings: {warn}")
reports = sum("report in" in l for l in lines)
check(reports == 1, f"expected exactly 1 'report in' line, found {reports}:\n  {listing}")
rep = load_report(out)
check(rep["run"]["ranks"] == np_, f"run.ranks is {rep['run']['ranks']!r}, expected {np_}")
cfg = read_text(out, "critpath.cfg").splitlines()
for var, _, _, default in expected:
    check(f"{var}={default}" in cfg, f"critpath.cfg does not record the default {var}={default}:\n"
          + "\n".join(cfg))
print("check_badconfig: ok")
