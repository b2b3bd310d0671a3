"""critpath — tests/mpi/wrappers/check_coll.py: exact events of wrap_coll.c (3 ranks), with
the bytes of every COLL_END computed from the program's counts under the convention of
docs/mpi-coverage.md. usage: OUTDIR"""
import sys

from critpath_check import check
from wrapcheck import Expect, check_ranks

N, ROOT, I, D = 3, 1, 4, 8
counts = [1, 2, 3]
expected = {}
for r in range(N):
    root = r == ROOT
    e = Expect()
    e.coll("MPI_Barrier", 0, -1, 0, 0)
    e.coll("MPI_Bcast", 0, ROOT, 10 * I if root else 0, 0 if root else 10 * I)
    e.coll("MPI_Gather", 0, ROOT, 2 * I, N * 2 * I if root else 0)
    e.coll("MPI_Gatherv", 0, ROOT, (r + 1) * I, sum(counts) * I if root else 0)
    e.coll("MPI_Scatter", 0, ROOT, N * 2 * D if root else 0, 2 * D)
    e.coll("MPI_Scatterv", 0, ROOT, sum(counts) * I if root else 0, (r + 1) * I)
    e.coll("MPI_Allgather", 0, -1, I, N * I)
    e.coll("MPI_Allgatherv", 0, -1, (r + 1) * I, sum(counts) * I)
    e.coll("MPI_Alltoall", 0, -1, N * 2 * I, N * 2 * I)
    e.coll("MPI_Alltoallv", 0, -1, (3 * r + 6) * I, (3 * r + 6) * I)
    e.coll("MPI_Alltoallw", 0, -1, D + I + I, N * (D if r == 0 else I))
    e.coll("MPI_Reduce", 0, ROOT, 4 * I, 4 * I if root else 0)
    e.coll("MPI_Allreduce", 0, -1, 3 * D, 3 * D)
    e.coll("MPI_Allreduce", 0, -1, 3 * D, 3 * D)  # in place: same numbers
    e.coll("MPI_Reduce_scatter", 0, -1, sum(counts) * I, counts[r] * I)
    e.coll("MPI_Reduce_scatter_block", 0, -1, N * 2 * I, 2 * I)
    e.coll("MPI_Scan", 0, -1, 2 * I, 2 * I)
    e.coll("MPI_Exscan", 0, -1, 2 * I, 0 if r == 0 else 2 * I)
    e.call("MPI_Reduce_local")
    e.coll("MPI_Gather", 0, ROOT, 2 * I, N * 2 * I if root else 0)
    e.coll("MPI_Scatter", 0, ROOT, N * 2 * I if root else 0, 2 * I)
    e.coll("MPI_Allgather", 0, -1, I, N * I)
    e.coll("MPI_Reduce", 0, ROOT, 4 * I, 4 * I if root else 0)
    # communicators
    half = "$even" if r % 2 == 0 else "$odd"
    e.coll("MPI_Comm_split", 0, -1, 0, 0)
    e.coll("MPI_Bcast", half, 0, 5 * I if r in (0, 1) else 0, 0 if r in (0, 1) else 5 * I)
    e.coll("MPI_Allreduce", half, -1, I, I)
    e.coll("MPI_Comm_dup", 0, -1, 0, 0)
    e.coll("MPI_Barrier", "$dup", -1, 0, 0)
    e.coll("MPI_Allgather", "$dup", -1, I, N * I)
    e.call("MPI_Comm_group").call("MPI_Group_incl")
    e.coll("MPI_Comm_create", 0, -1, 0, 0)
    if r in (0, 1):
        e.coll("MPI_Barrier", "$created", -1, 0, 0)
    e.coll("MPI_Comm_split", 0, -1, 0, 0)
    if r != 1:
        e.coll("MPI_Barrier", "$some", -1, 0, 0)
        e.call("MPI_Comm_free")
    if r in (0, 1):
        e.call("MPI_Comm_free")
    e.call("MPI_Comm_free").call("MPI_Comm_free")
    e.call("MPI_Group_free").call("MPI_Group_free")
    expected[r] = e.lines

ids = check_ranks(sys.argv[1], expected)
for name, value in ids.items():
    check(value not in ("0", "1", str(0xffffffff)), f"communicator {name} got reserved id {value}")
print("check_coll: ok", ids)
