"""critpath — tests/lint/check_modules.py: the analyzer's modules depend one way only.

usage: check_modules.py SOURCE_DIR [STAMP]
The analyzer is built as one CMake object library per module (analyzer/CMakeLists.txt), and a
module may include the headers of the modules below it only:

    engine   <- passes  <- report
    engine   <- otf2
    engine, passes, report, otf2  <- session (with analyzer/analysis.{h,cpp})  <- tool

A `#include "analyzer/<module>/..."` that goes upward or sideways fails, naming the file and the
line, and so does a dependency table with a cycle. The build runs this check (a custom command
of the analyzer, so that a violation fails the build, not only a test) and ctest runs it as
unit.lint_modules. With STAMP, the file is written when the check passes.
"""
import os
import re
import sys

# The modules each module may include (besides itself).
ALLOWED = {
    "engine": set(),
    "passes": {"engine"},
    "report": {"engine", "passes"},
    "otf2": {"engine"},
    "session": {"engine", "passes", "report", "otf2"},
    "tool": {"engine", "passes", "report", "otf2", "session"},
}
INCLUDE = re.compile(r'#\s*include\s*"analyzer/([^"]+)"')


def module_of(rel):
    """rel: a path below analyzer/ ("engine/comm.h", "analysis.cpp") -> its module."""
    first = rel.split("/", 1)[0]
    if "/" not in rel:  # analyzer/analysis.{h,cpp}: the in-situ pipeline, with the session
        return "session"
    return first


def acyclic(table):
    state = {}

    def visit(m):
        if state.get(m) == 1:
            return False
        if state.get(m) == 2:
            return True
        state[m] = 1
        ok = all(visit(d) for d in table[m])
        state[m] = 2
        return ok

    return all(visit(m) for m in table)


def main():
    root = os.path.join(sys.argv[1], "analyzer")
    if not acyclic(ALLOWED):
        sys.exit("check_modules: the module table has a cycle")
    bad, files = [], 0
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if not n.endswith((".h", ".cpp")):
                continue
            files += 1
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            mine = module_of(rel)
            if mine not in ALLOWED:
                bad.append(f"analyzer/{rel}: in no module (analyzer/CMakeLists.txt, tests/lint/check_modules.py)")
                continue
            with open(p, encoding="utf-8") as f:
                for i, line in enumerate(f, 1):
                    m = INCLUDE.search(line.split("//", 1)[0])
                    if not m:
                        continue
                    theirs = module_of(m.group(1))
                    if theirs != mine and theirs not in ALLOWED[mine]:
                        bad.append(f"analyzer/{rel}:{i}: {mine} includes {theirs}: {line.strip()}")
    if files == 0:
        sys.exit(f"check_modules: no sources under {root}: wrong directory?")
    if bad:
        print("analyzer modules (docs/analyzer.md): a module includes only the modules below it:")
        print("\n".join(bad))
        sys.exit(1)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            f.write("ok\n")
    print(f"check_modules: {files} files, every include goes down the module order")


main()
