"""critpath — tests/mpi/wrappers/wrapcheck.py: exact event-sequence checks for the wrapper tests.

Where it sits: imported by the check_*.py scripts of tests/mpi/wrappers after run_mpi_test.py
ran a program with CRITPATH_DUMP_EVENTS=1. Each rank's dump (OUTDIR/events/rank-<r>.txt) must
be exactly: the session prologue (ENTER main, ENTER+EXIT MPI_Init[_thread]), the expected body,
and the epilogue (ENTER+EXIT MPI_Finalize, EXIT main).

Expected lines are written like the dump, with two kinds of variables:
  $NAME  run-wide: the same name must have the same value on every rank (communicator ids:
         compared for equality across ranks instead of hard-coding non-world ids)
  %NAME  per rank: request ids (a post and its completion carry the same id)
Distinct names must have distinct values within their scope.

    from wrapcheck import Expect, check_ranks
    e = Expect()
    e.call("MPI_Send", "SEND peer=1 tag=5 comm=0 bytes=40")
    check_ranks(out, {0: e0.lines, 1: e1.lines})
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import CheckError, check, event_lines  # noqa: E402

PROLOGUES = (["ENTER main", "ENTER MPI_Init", "EXIT MPI_Init"],
             ["ENTER main", "ENTER MPI_Init_thread", "EXIT MPI_Init_thread"])
EPILOGUE = ["ENTER MPI_Finalize", "EXIT MPI_Finalize", "EXIT main"]
VAR = re.compile(r"^([a-z_]+)=([$%])([A-Za-z0-9_]+)$")


class Expect:
    """Builds one rank's expected body."""

    def __init__(self):
        self.lines = []

    def call(self, fn, *events):
        self.lines.append(f"ENTER {fn}")
        self.lines.extend(events)
        self.lines.append(f"EXIT {fn}")
        return self

    def coll(self, fn, comm, root, sent, recv):
        return self.call(fn, "COLL_BEGIN",
                         f"COLL_END op={fn} comm={comm} root={root} sent={sent} recv={recv}")

    def raw(self, *lines):
        self.lines.extend(lines)
        return self


def body(out, rank):
    lines = event_lines(out, rank)
    for pro in PROLOGUES:
        if lines[:len(pro)] == pro:
            break
    else:
        raise CheckError(f"rank {rank}: dump does not start with the session prologue: {lines[:3]}")
    if lines[-len(EPILOGUE):] != EPILOGUE:
        raise CheckError(f"rank {rank}: dump does not end with the epilogue: {lines[-3:]}")
    return lines[len(pro):-len(EPILOGUE)]


def _bind(scope, name, value, where):
    if name in scope:
        if scope[name] != value:
            raise CheckError(f"{where}: variable {name} was {scope[name]}, now {value}")
        return
    for other, v in scope.items():
        if v == value:
            raise CheckError(f"{where}: {name} = {value} equals {other}; expected distinct values")
    scope[name] = value


def match(rank, actual, expected, run_vars):
    rank_vars = {}
    for i in range(max(len(actual), len(expected))):
        a = actual[i] if i < len(actual) else "<end of dump>"
        e = expected[i] if i < len(expected) else "<end of expectation>"
        where = f"rank {rank}, body line {i + 1}"
        at, et = a.split(), e.split()
        ok = len(at) == len(et)
        if ok:
            for x, y in zip(at, et):
                m = VAR.match(y)
                if m and x.startswith(m.group(1) + "="):
                    value = x.split("=", 1)[1]
                    _bind(run_vars if m.group(2) == "$" else rank_vars, m.group(2) + m.group(3),
                          value, where)
                elif x != y:
                    ok = False
                    break
        if not ok:
            ctx_a = "\n    ".join(actual[max(0, i - 3):i + 4])
            ctx_e = "\n    ".join(expected[max(0, i - 3):i + 4])
            raise CheckError(f"{where}: got '{a}', expected '{e}'\n  dump around it:\n    {ctx_a}"
                             f"\n  expected around it:\n    {ctx_e}")
    return rank_vars


def check_ranks(out, expected_by_rank):
    """Compares every rank's body with its expectation; returns the run-wide bindings."""
    check(expected_by_rank, "no rank's events expected: nothing would be compared")
    # Every dump must be compared: a rank without an expectation would pass unseen.
    events_dir = os.path.join(out, "events")
    names = os.listdir(events_dir) if os.path.isdir(events_dir) else []
    dumps = sorted(int(m.group(1)) for m in (re.fullmatch(r"rank-(\d+)\.txt", n) for n in names) if m)
    extra = [r for r in dumps if r not in expected_by_rank]
    check(not extra, f"dumps of ranks {extra} in {out}/events have no expectation "
          f"(expected ranks {sorted(expected_by_rank)})")
    run_vars = {}
    for rank in sorted(expected_by_rank):
        match(rank, body(out, rank), expected_by_rank[rank], run_vars)
    return run_vars
