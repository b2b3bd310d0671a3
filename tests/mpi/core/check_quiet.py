"""critpath — tests/mpi/core/check_quiet.py: CRITPATH_VERBOSE=0 is silent except warnings
(docs/configuration.md): the run's one warning (a bad CRITPATH_COMPRESSION_LEVEL) is the only
`critpath:` line on stderr, no "report in" line, and the report is still written.
usage: OUTDIR NP"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, critpath_lines, load_report, read_stderr, read_stdout  # noqa: E402

out, np_ = sys.argv[1], int(sys.argv[2])
lines = critpath_lines(read_stderr(out)) + critpath_lines(read_stdout(out))
listing = "\n  ".join(lines) or "(none)"
check(len(lines) == 1 and "CRITPATH_COMPRESSION_LEVEL" in lines[0] and "'99'" in lines[0],
      f"with CRITPATH_VERBOSE=0 the only critpath: line should be the warning about "
      f"CRITPATH_COMPRESSION_LEVEL='99'; found:\n  {listing}")
rep = load_report(out)
check(rep["run"]["ranks"] == np_, f"run.ranks is {rep['run']['ranks']!r}, expected {np_}")
check(os.path.isfile(os.path.join(out, "summary.txt")), f"{out}/summary.txt was not written")
print("check_quiet: ok")
