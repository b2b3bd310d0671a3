"""critpath — tests/mpi/wrappers/check_disabled.py: with CRITPATH_ENABLE=0 a wrapper test
program runs unchanged (it aborts on any wrong MPI result) and nothing is written.
usage: OUTDIR PROGRAM"""
import os
import sys

out, prog = sys.argv[1], sys.argv[2]
assert not os.path.exists(out), f"{out} exists although the library was disabled"
with open(out + ".stdout") as f:
    assert f"{prog}: done" in f.read(), "the program did not finish"
with open(out + ".stderr") as f:
    err = f.read()
assert "critpath:" not in err, err
print("check_disabled: ok")
