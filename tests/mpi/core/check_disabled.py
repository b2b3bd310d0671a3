"""critpath — tests/mpi/core/check_disabled.py: CRITPATH_ENABLE=0 is pure pass-through: the
program runs as usual, no output directory, no critpath line on stderr. usage: OUTDIR"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, critpath_lines, read_stderr, read_stdout  # noqa: E402

out = sys.argv[1]
check(not os.path.exists(out), f"{out} exists although the library was disabled: "
      f"{sorted(os.listdir(out)) if os.path.isdir(out) else 'a file'}")
stdout = read_stdout(out)
check("regions: done" in stdout,
      f"the program did not finish: 'regions: done' missing from its stdout:\n{stdout}")
err = read_stderr(out)
check("critpath:" not in err,
      f"the disabled library wrote to stderr: {critpath_lines(err) or err}")
print("check_disabled: ok")
