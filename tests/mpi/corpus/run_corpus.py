#!/usr/bin/env python3
"""critpath — tests/mpi/corpus/run_corpus.py: runs one corpus program without and with the tracer.

Where it sits: the end of the test pipeline, beside tests/mpi/run_mpi_test.py (whose launcher
pieces it imports). ctest runs it once per program of tests/mpi/corpus/ (test mpi.corpus.<name>);
the programs exercise unusual but legal MPI usage and print deterministic output.

usage:
  run_corpus.py --mpiexec PATH --mpi mpich|openmpi --lib LIBCRITPATH --shim SHIM
                --source PROGRAM.c --out DIR [--timeout SECONDS] [--otf2-roundtrip ANALYZE]
                -- app [args...]

The program's first comment line holds `corpus: np=<N> [exit=<status>|exit=launcher]
[report=no]` (default exit=0, report expected). Steps:
  1. plain run: mpiexec -n N app with only the yield shim preloaded (no tracer), output in
     DIR/plain.stdout/.stderr; its exit status must be <status> (exit=launcher: anything but 0,
     for MPI_Abort, whose status each launcher reports its own way);
  2. traced run: the same with libcritpath preloaded (CRITPATH_OUTPUT_DIR=DIR/traced);
  3. fails unless both runs printed byte-identical stdout, exited with the same status, the
     traced run wrote a valid report.json (unless report=no) with no `analysis incomplete:`
     note, and the tracer wrote no
     `critpath:` warning to stderr (a warning in this corpus means the tracer met something
     it did not understand).
  4. --otf2-roundtrip: the traced run also exports its trace (CRITPATH_KEEP_TRACE=otf2), and
     a program that ends normally with a report has the archive analysed again, every metric
     as in situ (run_mpi_test.py step 6); a difference runs steps 1-4 once more (a near-tie
     of one run flipped by the archive's nanosecond timestamps does not repeat, a defect does).
     rank 0's progress lines (`critpath: analysis: <phase> N%`, after 2 s of analysis on a
     loaded machine) are not warnings.
Exit status: 0 pass, 1 fail, 2 usage error.
"""
import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import critpath_check  # noqa: E402
import run_mpi_test  # noqa: E402

META = re.compile(r"corpus:\s*np=(\d+)((?:\s+\w+=\w+)*)")


def log(msg):
    print(f"run_corpus: {msg}", flush=True)


def read_meta(source):
    with open(source, encoding="utf-8") as f:
        head = f.read(600)
    m = META.search(head)
    if not m:
        raise ValueError(f"{source}: no 'corpus: np=N' in the first comment")
    meta = {"np": int(m.group(1)), "exit": "0", "report": "yes"}
    for item in m.group(2).split():
        key, _, value = item.partition("=")
        if key not in ("exit", "report"):
            raise ValueError(f"{source}: unknown corpus key '{key}'")
        meta[key] = value
    return meta


def run_once(base, traced, out_dir, timeout):
    """One launch; returns (status or None on timeout, stdout, stderr, seconds)."""
    args = argparse.Namespace(**vars(base))
    args.mode = "preload" if traced else "linked"  # linked + a plain app = shim only
    args.env_pairs = [("CRITPATH_KEEP_TRACE", "otf2")] if traced and base.otf2_roundtrip else []
    args.mpmd_cmd = []
    args.timeout = timeout
    run_mpi_test.remove_test_output(out_dir)
    status, out, err, elapsed, _ = run_mpi_test.run_app(args, out_dir)
    for suffix, text in ((".stdout", out), (".stderr", err)):
        with open(out_dir + suffix, "w") as f:
            f.write(text)
    return status, out, err, elapsed


def show(title, text):
    print(f"----- {title} -----\n{text}", end="" if text.endswith("\n") or not text else "\n")


def run_and_check(args, meta, out):
    """The plain and the traced run, compared, then the OTF2 round trip: (the failures, whether
    the only failure is the round trip's difference)."""
    results = {}
    for name, traced in (("plain", False), ("traced", True)):
        status, so, se, secs = run_once(args, traced, os.path.join(out, name), args.timeout)
        results[name] = (status, so, se)
        log(f"{name}: exit {status} after {secs:.2f} s")
        show(f"{name} stdout", so)
        show(f"{name} stderr", se)
        if status is None:
            return [f"{name} run timed out after {args.timeout:.0f} s; killed"], False

    (ps, pout, _), (ts, tout, terr) = results["plain"], results["traced"]
    failures = []
    if meta["exit"] == "launcher":
        if ps == 0:
            failures.append("plain run exited with 0, expected the launcher's abort status")
    elif ps != int(meta["exit"]):
        failures.append(f"plain run exited with {ps}, expected {meta['exit']}")
    if ts != ps:
        failures.append(f"exit status differs: plain {ps}, traced {ts}")
    if tout != pout:
        plain_lines, traced_lines = pout.splitlines(), tout.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(plain_lines, traced_lines)) if a != b),
                     min(len(plain_lines), len(traced_lines)))
        failures.append(f"stdout differs from line {first + 1}: plain "
                        f"{plain_lines[first:first + 1]} traced {traced_lines[first:first + 1]}")
    # A program that ends in MPI_Abort or exit() without MPI_Finalize makes its ranks say where
    # their partial trace went (docs/reliability.md): that line is expected, not a warning.
    warnings = [w for w in critpath_check.critpath_lines(terr)
                if not w.startswith("critpath: report in ") and
                not re.match(r"critpath: rank \d+: .*: partial trace \(", w) and
                not re.match(r"critpath: analysis: .* \d+%$", w)]
    if warnings:
        failures.append(f"tracer warnings on stderr: {warnings}")
    if meta["report"] != "no":
        try:
            rep = critpath_check.load_report(os.path.join(out, "traced"))
            # Legal MPI usage is analysed whole: an `analysis incomplete:` note here means the
            # tracer recorded something that did not happen (a failed call's message) or missed
            # something that did.
            incomplete = [n for n in rep.get("notes", []) if "analysis incomplete: " in n]
            if incomplete:
                failures.append(f"traced run: the analysis says it is incomplete: {incomplete}")
        except critpath_check.CheckError as e:
            failures.append(f"traced run: {e}")
    if not failures and args.otf2_roundtrip:
        if meta["report"] == "no" or ps != 0:
            log("OTF2 round trip: not applicable (the program ends without a report)")
        else:
            rt = argparse.Namespace(**vars(args))
            rt.env_pairs = [("CRITPATH_KEEP_TRACE", "otf2")]
            problem = run_mpi_test.otf2_roundtrip(rt, os.path.join(out, "traced"), args.timeout)
            if problem:
                return [problem], True
    return failures, False


def main(argv):
    cut = argv.index("--") if "--" in argv else len(argv)
    p = argparse.ArgumentParser(description="Run one corpus program (see module docstring).")
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--mpi", required=True, choices=["mpich", "openmpi"])
    p.add_argument("--lib", required=True)
    p.add_argument("--shim", default="")
    p.add_argument("--source", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--timeout", type=float, default=50.0, help="budget per run, seconds")
    p.add_argument("--otf2-roundtrip", default="", metavar="ANALYZE")
    args = p.parse_args(argv[:cut])
    args.app = argv[cut + 1:]
    if not args.app:
        p.error("no application given after --")
    try:
        meta = read_meta(args.source)
    except (OSError, ValueError) as e:
        log(f"FAIL: {e}")
        return 2
    args.np = meta["np"]
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)

    for attempt in (1, 2):
        failures, roundtrip = run_and_check(args, meta, out)
        if not (roundtrip and attempt == 1):
            break
        log("FAIL: " + failures[0])
        log("the OTF2 round trip differed: the archive's nanosecond timestamps can flip a near-tie "
            "of the run, which a new run does not repeat, while an export or import defect differs "
            "every run: running both again (once)")
    for f in failures:
        log("FAIL: " + f)
    if failures:
        return 1
    log("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
