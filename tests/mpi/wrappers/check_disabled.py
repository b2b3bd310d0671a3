"""critpath — tests/mpi/wrappers/check_disabled.py: with CRITPATH_ENABLE=0 a wrapper test
program runs unchanged (it aborts on any wrong MPI result) and nothing is written.
usage: OUTDIR PROGRAM"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import check, critpath_lines, read_stderr, read_stdout  # noqa: E402

out, prog = sys.argv[1], sys.argv[2]
check(not os.path.exists(out), f"{out} exists although the library was disabled: "
      f"{sorted(os.listdir(out)) if os.path.isdir(out) else 'a file'}")
stdout = read_stdout(out)
check(f"{prog}: done" in stdout, f"the program did not finish: '{prog}: done' missing from its stdout:\n{stdout}")
err = read_stderr(out)
check("critpath:" not in err, f"the disabled library wrote to stderr: {critpath_lines(err) or err}")
print("check_disabled: ok")
