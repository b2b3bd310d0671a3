"""critpath — tests/lint/check_passes_no_mpi.py: only the engine talks MPI; analysis passes
never read the configuration themselves.

usage: check_passes_no_mpi.py SOURCE_DIR
The engine (analyzer/engine/) is the only analyzer code that talks MPI, besides the
critpath-analyze program's own main (analyzer/tool/): the session reaches other ranks through
engine::Comm and the watchdog, a pass through engine::Group. A pass parses its own settings from
the configuration it is handed (Pass::configure, engine/pass.h), never from the process-wide
one. Fails naming every file:line under analyzer/ outside engine/ and tool/ that calls an
MPI_/PMPI_ function, and every one under analyzer/passes/ that includes <mpi.h> or reads
config::current(). (MPI types and constants
may appear elsewhere: engine::Comm's interface takes them.)

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


def code_of(line):
    """The line without string literals and without its // comment."""
    return re.sub(r'"(\\.|[^"\\])*"', '""', line).split("//", 1)[0]


def sources(root):
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith((".h", ".cpp")):
                yield os.path.join(d, n)


def main():
    analyzer = os.path.join(sys.argv[1], "analyzer")
    passes = os.path.join(analyzer, "passes")
    allowed = tuple(os.path.join(analyzer, d) + os.sep for d in ("engine", "tool"))
    found, files, checked = [], 0, 0
    for p in sources(analyzer):
        in_passes = p.startswith(passes + os.sep)
        if p.startswith(allowed):
            continue
        checked += 1
        files += 1 if in_passes else 0
        with open(p, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                where = f"{os.path.relpath(p, sys.argv[1])}:{i}: {line.strip()}"
                code = code_of(line)
                if in_passes and CONFIG.search(line.split("//", 1)[0]):
                    found.append(where)
                elif CALL.search(code) or (in_passes and INCLUDE.search(code)):
                    found.append(where)
    if files == 0:
        sys.exit(f"check_passes_no_mpi: no sources under {passes}: wrong directory?")
    state = re.compile(r"\bg_phase\s*\.\s*(store|exchange|compare_exchange)|\bg_use_tsc\s*=[^=]")
    for p in sources(analyzer):
        with open(p, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if state.search(line.split("//", 1)[0]):
                    found.append(f"{os.path.relpath(p, sys.argv[1])}:{i}: {line.strip()} "
                                 "(use the phase API of libtrace/runtime/session.h)")
    if found:
        print("analyzer rules (docs/analyzer.md): only engine/ (and tool/'s main) calls MPI (the "
              "session uses engine::Comm and the watchdog, passes engine::Group); passes read no "
              "process-wide configuration (Pass::configure gets it); nothing writes runtime state:")
        print("\n".join(found))
        sys.exit(1)
    print(f"check_passes_no_mpi: {checked} files under analyzer/ outside engine/ and tool/ "
          f"({files} under passes/), no MPI call, no configuration read in a pass")


main()
