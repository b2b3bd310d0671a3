"""critpath — tests/mpi/waits/check_thread_waits.py: known answers for thread_waits.c.

usage: check_thread_waits.py OUTDIR
Worker threads' messages are matched and their wait states found: Late Sender 100 ms + 200 ms
on rank 0 at main/MPI_Recv, none on rank 1, no unmatched message. The expected Late Sender is
what this run's calls make (thread_waits.c's "thread-call RANK T NS" lines): Σ_t max(0, rank 1
worker t's send − rank 0 worker t's receive), ±5 % or ±2 ms; calls that far from the ideal
(a worker started late) exit TIMING_CODE. each rank
reports 3 threads that called MPI, and no rank's MPI time exceeds its time (a rank's time is
the sum of its threads'). Exits 77 (ctest SKIP_RETURN_CODE) when the program reported that the
MPI library lacks MPI_THREAD_MULTIPLE.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import (TIMING_CODE, CheckError, approx, at_most, by_rank, check,  # noqa: E402
                            finished_or_skip, load_report, per_rank_failures, read_stdout, read_text,
                            scalar)

D, WORKERS = 0.100, 2


def expected_late_sender(out):
    """Σ_t max(0, send − receive) over the workers, from the "thread-call" lines."""
    calls = {(int(m.group(1)), int(m.group(2))): int(m.group(3)) * 1e-9
             for m in re.finditer(r"^thread-call (\d+) (\d+) (\d+)$", read_stdout(out), re.M)}
    missing = [(r, t) for r in (0, 1) for t in range(WORKERS) if (r, t) not in calls]
    check(not missing, f"no thread-call line for (rank, worker) {missing}")
    return sum(max(0.0, calls[1, t] - calls[0, t]) for t in range(WORKERS))


def main():
    out = sys.argv[1]
    finished_or_skip(out, "check_thread_waits", "thread_waits: ok")
    rep = load_report(out)
    want = expected_late_sender(out)
    failures, n = per_rank_failures(rep, "late_sender", "main/MPI_Recv", [want, 0.0])
    if failures:
        raise CheckError("; ".join(failures))
    check(scalar(rep, "unmatched_messages") == 0, "worker threads' messages left unmatched")
    for r, row in enumerate(rep["ranks"]):
        check(row.get("mpi_threads") == 3, f"rank {r}: mpi_threads {row.get('mpi_threads')}, expected 3")
        at_most(by_rank(rep, "mpi_time", r), by_rank(rep, "time", r) * 1.0001, f"rank {r}: MPI time vs its time")
    check("@ MPI threads     : 6 threads called MPI" in read_text(out, "summary.txt"),
          "summary.txt lacks the '@ MPI threads' header line")
    try:
        approx(want, D * (1 + 2), "the Late Sender this run's calls make, against the ideal")
    except CheckError as ex:
        print(f"check_thread_waits: TIMING: the analysis matches the run, whose calls were off: {ex}")
        sys.exit(TIMING_CODE)
    print(f"check_thread_waits: ok ({n} ranks checked)")


if __name__ == "__main__":
    main()
