"""critpath — tests/mpi/waits/check_thread_waits.py: known answers for thread_waits.c.

usage: check_thread_waits.py OUTDIR
Worker threads' messages are matched and their wait states found: Late Sender 100 ms + 200 ms
on rank 0 at main/MPI_Recv (±5 % or ±2 ms), none on rank 1, no unmatched message; each rank
reports 3 threads that called MPI, and no rank's MPI time exceeds its time (a rank's time is
the sum of its threads'). Exits 77 (ctest SKIP_RETURN_CODE) when the program reported that the
MPI library lacks MPI_THREAD_MULTIPLE.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import (CheckError, at_most, by_rank, check, finished_or_skip,  # noqa: E402
                            load_report, per_rank_failures, read_text, scalar)


def main():
    out = sys.argv[1]
    finished_or_skip(out, "check_thread_waits", "thread_waits: ok")
    rep = load_report(out)
    failures, n = per_rank_failures(rep, "late_sender", "main/MPI_Recv", [0.300, 0.0])
    if failures:
        raise CheckError("; ".join(failures))
    check(scalar(rep, "unmatched_messages") == 0, "worker threads' messages left unmatched")
    for r, row in enumerate(rep["ranks"]):
        check(row.get("mpi_threads") == 3, f"rank {r}: mpi_threads {row.get('mpi_threads')}, expected 3")
        at_most(by_rank(rep, "mpi_time", r), by_rank(rep, "time", r) * 1.0001, f"rank {r}: MPI time vs its time")
    check("@ MPI threads     : 6 threads called MPI" in read_text(out, "summary.txt"),
          "summary.txt lacks the '@ MPI threads' header line")
    print(f"check_thread_waits: ok ({n} ranks checked)")


if __name__ == "__main__":
    main()
