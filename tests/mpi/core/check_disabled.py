"""critpath — tests/mpi/core/check_disabled.py: CRITPATH_ENABLE=0 is pure pass-through: the
program runs as usual, no output directory, no critpath line on stderr. usage: OUTDIR"""
import os
import sys

out = sys.argv[1]
assert not os.path.exists(out), f"{out} exists although the library was disabled"
with open(out + ".stdout") as f:
    assert "regions: done" in f.read()
with open(out + ".stderr") as f:
    err = f.read()
assert "critpath:" not in err, err
print("check_disabled: ok")
