"""critpath — tests/mpi/fortran/check_fortran.py: a Fortran program (fortran_body.inc, 2 ranks)
is traced with exactly the events of the equivalent C program, under MPICH (its Fortran
bindings call the C wrappers) and Open MPI (generated Fortran entry points). usage: OUTDIR"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "wrappers"))
from critpath_check import check  # noqa: E402
from wrapcheck import Expect, check_ranks  # noqa: E402

I, D = 4, 8
expected = {}
for r in range(2):
    o = 1 - r
    e = Expect()
    if r == 0:
        e.call("MPI_Send", f"SEND peer=1 tag=7 comm=0 bytes={5 * I}")
        e.call("MPI_Recv", f"RECV peer=1 tag=8 comm=0 bytes={3 * I}")
    else:
        e.call("MPI_Recv", f"RECV peer=0 tag=7 comm=0 bytes={5 * I}")
        e.call("MPI_Send", f"SEND peer=0 tag=8 comm=0 bytes={3 * I}")
    e.call("MPI_Irecv", "IRECV_REQUEST req=%a")
    e.call("MPI_Isend", f"ISEND peer={o} tag=9 comm=0 bytes={4 * I} req=%b")
    e.call("MPI_Waitall", f"IRECV peer={o} tag=9 comm=0 bytes={4 * I} req=%a", "ISEND_COMPLETE req=%b")
    e.call("MPI_Isend", f"ISEND peer={o} tag=10 comm=0 bytes={2 * I} req=%c")
    e.call("MPI_Irecv", "IRECV_REQUEST req=%d")
    e.call("MPI_Wait", "ISEND_COMPLETE req=%c")
    e.call("MPI_Wait", f"IRECV peer={o} tag=10 comm=0 bytes={2 * I} req=%d")
    e.coll("MPI_Barrier", 0, -1, 0, 0)
    e.coll("MPI_Bcast", 0, 0, 3 * D if r == 0 else 0, 0 if r == 0 else 3 * D)
    e.coll("MPI_Allreduce", 0, -1, 3 * D, 3 * D)
    e.coll("MPI_Reduce", 0, 1, I, I if r == 1 else 0)
    e.coll("MPI_Gather", 0, 0, I, 2 * I if r == 0 else 0)
    e.coll("MPI_Comm_split", 0, -1, 0, 0)
    e.coll("MPI_Allreduce", "$half", -1, I, I)
    e.call("MPI_Comm_free")
    expected[r] = e.lines

ids = check_ranks(sys.argv[1], expected)
check(ids["$half"] not in ("0", "1", str(0xffffffff)), f"reserved id {ids}")
print("check_fortran: ok", ids)
