"""critpath — tests/lint/check_passes_no_mpi.py: analysis passes never call MPI and never
read the configuration themselves.

usage: check_passes_no_mpi.py SOURCE_DIR
The engine (analyzer/engine/) is the only analyzer code that talks MPI; a pass reaches other
ranks through engine::Group. A pass parses its own settings from the configuration it is
handed (Pass::configure, engine/pass.h), never from the process-wide one. Fails naming every
file:line under analyzer/passes/ that calls an MPI_/PMPI_ function, includes <mpi.h>, or reads
config::current().

Also: no analyzer code writes the measurement's runtime state; the session changes the phase
and the timer through libtrace/runtime/session.h's phase API only (a store to
runtime::g_phase or runtime::g_use_tsc anywhere under analyzer/ fails).
"""
import os
import re
import sys

CALL = re.compile(r"\bP?MPI_[A-Z][A-Za-z0-9_]*\s*\(")
INCLUDE = re.compile(r"#\s*include\s*<mpi\.h>")
CONFIG = re.compile(r"\bconfig::current\s*\(")


def main():
    root = os.path.join(sys.argv[1], "analyzer", "passes")
    found, files = [], 0
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if not n.endswith((".h", ".cpp")):
                continue
            files += 1
            p = os.path.join(d, n)
            with open(p, encoding="utf-8") as f:
                for i, line in enumerate(f, 1):
                    if CONFIG.search(line.split("//", 1)[0]):
                        found.append(f"{os.path.relpath(p, sys.argv[1])}:{i}: {line.strip()}")
                        continue
                    code = re.sub(r'"(\\.|[^"\\])*"', '""', line).split("//", 1)[0]
                    if CALL.search(code) or INCLUDE.search(code):
                        found.append(f"{os.path.relpath(p, sys.argv[1])}:{i}: {line.strip()}")
    if files == 0:
        sys.exit(f"check_passes_no_mpi: no sources under {root}: wrong directory?")
    state = re.compile(r"\bg_phase\s*\.\s*(store|exchange|compare_exchange)|\bg_use_tsc\s*=[^=]")
    for d, _, names in os.walk(os.path.join(sys.argv[1], "analyzer")):
        for n in sorted(names):
            if not n.endswith((".h", ".cpp")):
                continue
            p = os.path.join(d, n)
            with open(p, encoding="utf-8") as f:
                for i, line in enumerate(f, 1):
                    if state.search(line.split("//", 1)[0]):
                        found.append(f"{os.path.relpath(p, sys.argv[1])}:{i}: {line.strip()} "
                                     "(use the phase API of libtrace/runtime/session.h)")
    if found:
        print("analyzer rules (docs/analyzer.md): passes call no MPI (use engine::Group) and read no "
              "process-wide configuration (Pass::configure gets it); nothing writes runtime state:")
        print("\n".join(found))
        sys.exit(1)
    print(f"check_passes_no_mpi: {files} files under analyzer/passes, no MPI call, no configuration read")


main()
