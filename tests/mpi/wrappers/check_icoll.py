"""critpath — tests/mpi/wrappers/check_icoll.py: exact events of wrap_icoll.c (3 ranks):
ICOLL_POST bytes by the blocking rules, ICOLL_COMPLETE at the completing call, neighbourhood
bytes by degree. usage: OUTDIR"""
import sys

from critpath_check import check
from wrapcheck import Expect, check_ranks

N, ROOT, I, D = 3, 1, 4, 8
counts = [1, 2, 3]
expected = {}
for r in range(N):
    root = r == ROOT
    e = Expect()

    def post(fn, comm, rt, sent, recv, req):
        return f"ICOLL_POST op={fn} comm={comm} root={rt} sent={sent} recv={recv} req={req}"

    e.call("MPI_Ibarrier", post("MPI_Ibarrier", 0, -1, 0, 0, "%b"))
    e.call("MPI_Wait", "ICOLL_COMPLETE req=%b")
    e.call("MPI_Ibcast", post("MPI_Ibcast", 0, ROOT, 10 * I if root else 0, 0 if root else 10 * I, "%c"))
    e.call("MPI_Wait", "ICOLL_COMPLETE req=%c")
    e.call("MPI_Iallreduce", post("MPI_Iallreduce", 0, -1, 3 * D, 3 * D, "%ar"))
    e.call("MPI_Test", "ICOLL_COMPLETE req=%ar")
    e.call("MPI_Igather", post("MPI_Igather", 0, ROOT, 2 * I, N * 2 * I if root else 0, "%q0"))
    e.call("MPI_Iallgatherv", post("MPI_Iallgatherv", 0, -1, (r + 1) * I, sum(counts) * I, "%q1"))
    e.call("MPI_Ialltoall", post("MPI_Ialltoall", 0, -1, N * 2 * I, N * 2 * I, "%q2"))
    e.call("MPI_Ireduce", post("MPI_Ireduce", 0, ROOT, 4 * I, 4 * I if root else 0, "%q3"))
    e.call("MPI_Iscan", post("MPI_Iscan", 0, -1, I, I, "%q4"))
    e.call("MPI_Iexscan", post("MPI_Iexscan", 0, -1, I, 0 if r == 0 else I, "%q5"))
    e.call("MPI_Waitall", *[f"ICOLL_COMPLETE req=%q{i}" for i in range(6)])
    e.call("MPI_Ireduce_scatter_block", post("MPI_Ireduce_scatter_block", 0, -1, N * 2 * I, 2 * I, "%rs"))
    e.call("MPI_Wait", "ICOLL_COMPLETE req=%rs")
    # root in place: receives its own block, sized by sendcounts[root]
    e.call("MPI_Iscatterv", post("MPI_Iscatterv", 0, ROOT, sum(counts) * I if root else 0,
                                 counts[ROOT] * I if root else (r + 1) * I, "%sv"))
    e.call("MPI_Wait", "ICOLL_COMPLETE req=%sv")
    e.coll("MPI_Cart_create", 0, -1, 0, 0)
    e.coll("MPI_Neighbor_allgather", "$ring", -1, I, 2 * I)
    e.coll("MPI_Neighbor_alltoall", "$ring", -1, 2 * 2 * I, 2 * 2 * I)
    e.call("MPI_Ineighbor_allgatherv", post("MPI_Ineighbor_allgatherv", "$ring", -1, I, 3 * I, "%nv"))
    e.call("MPI_Wait", "ICOLL_COMPLETE req=%nv")
    e.coll("MPI_Dist_graph_create_adjacent", 0, -1, 0, 0)
    e.coll("MPI_Neighbor_alltoallv", "$dist", -1, 3 * D, 3 * D)
    e.call("MPI_Ineighbor_alltoall", post("MPI_Ineighbor_alltoall", "$dist", -1, D, D, "%na"))
    e.call("MPI_Wait", "ICOLL_COMPLETE req=%na")
    e.call("MPI_Comm_free").call("MPI_Comm_free")
    expected[r] = e.lines

ids = check_ranks(sys.argv[1], expected)
for name, value in ids.items():
    check(value not in ("0", "1", str(0xffffffff)), f"communicator {name} got reserved id {value}")
print("check_icoll: ok", ids)
