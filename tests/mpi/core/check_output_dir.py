"""critpath — tests/mpi/core/check_output_dir.py: where the report goes and how it is made
(docs/reliability.md, "Resources").

  check_output_dir.py OUTDIR perms
      the report directory is 0755 and every directory in it 0755, every file 0644 (the test
      runs with umask 022), and none is a symlink
  check_output_dir.py OUTDIR fallback WANTED TMPDIR
      CRITPATH_OUTPUT_DIR=WANTED cannot be created (a file is in the way): one warning names it
      and the errno text and says where the report went instead, $TMPDIR/<its name>, which
      holds the report, made as above"""
import os
import re
import stat
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, critpath_lines, read_stderr  # noqa: E402


def check_modes(top):
    check(os.path.isfile(os.path.join(top, "summary.txt")), f"no summary.txt in {top}")
    for root, dirs, files in os.walk(top):
        for d in [root] + [os.path.join(root, x) for x in dirs]:
            st = os.lstat(d)
            check(stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o755,
                  f"{d}: mode {oct(stat.S_IMODE(st.st_mode))}, expected a 0755 directory")
        for f in files:
            path = os.path.join(root, f)
            st = os.lstat(path)
            check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644,
                  f"{path}: mode {oct(stat.S_IMODE(st.st_mode))}, expected a 0644 regular file")


out, mode = sys.argv[1], sys.argv[2]
if mode == "perms":
    check_modes(out)
else:
    wanted, tmpdir = sys.argv[3], sys.argv[4]
    # $TMPDIR/<name>, or <name>.1, .2, ... when an earlier run of the test left one.
    base = os.path.join(tmpdir, os.path.basename(wanted))
    lines = [l for l in critpath_lines(read_stderr(out)) if "cannot create output directory" in l]
    m = re.search(r"writing to (\S+) instead", lines[0]) if len(lines) == 1 else None
    target = m.group(1) if m else ""
    check(m is not None and wanted in lines[0] and "Not a directory" in lines[0] and
          re.fullmatch(re.escape(base) + r"(\.\d+)?", target) is not None,
          f"expected one warning naming {wanted}, 'Not a directory' and {base}; got {lines}")
    check_modes(target)
print("check_output_dir: ok")
