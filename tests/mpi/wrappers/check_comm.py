"""critpath — tests/mpi/wrappers/check_comm.py: exact events of wrap_comm.c (4 ranks); every
communicator id is shared by its members ($ variables), distinct from the others, and the
intercommunicator's id is the same in both groups. usage: OUTDIR"""
import sys

from critpath_check import check
from wrapcheck import Expect, check_ranks

expected = {}
for r in range(4):
    e = Expect()
    e.coll("MPI_Comm_dup_with_info", 0, -1, 0, 0)
    e.coll("MPI_Barrier", "$dupi", -1, 0, 0)
    e.call("MPI_Comm_idup", "ICOLL_POST op=MPI_Comm_idup comm=0 root=-1 sent=0 recv=0 req=%i")
    e.call("MPI_Wait", "ICOLL_COMPLETE req=%i")
    e.coll("MPI_Barrier", "$idup", -1, 0, 0)
    e.coll("MPI_Comm_split_type", 0, -1, 0, 0)
    e.coll("MPI_Barrier", "$shared", -1, 0, 0)
    e.call("MPI_Comm_group").call("MPI_Group_incl")
    if r < 2:
        e.coll("MPI_Comm_create_group", "$cg", -1, 0, 0)
        e.coll("MPI_Barrier", "$cg", -1, 0, 0)
    e.call("MPI_Group_free").call("MPI_Group_free")
    half = "$even" if r % 2 == 0 else "$odd"
    e.coll("MPI_Comm_split", 0, -1, 0, 0)
    e.coll("MPI_Intercomm_create", half, -1, 0, 0)
    if r == 0:
        e.call("MPI_Send", "SEND peer=0 tag=3 comm=$inter bytes=4")
    if r == 1:
        e.call("MPI_Recv", "RECV peer=0 tag=3 comm=$inter bytes=4")
    e.coll("MPI_Intercomm_merge", "$inter", -1, 0, 0)
    e.coll("MPI_Allreduce", "$merged", -1, 4, 4)
    e.coll("MPI_Cart_create", 0, -1, 0, 0)
    e.coll("MPI_Cart_sub", "$cart", -1, 0, 0)
    e.coll("MPI_Barrier", "$row0" if r < 2 else "$row1", -1, 0, 0)
    e.coll("MPI_Graph_create", 0, -1, 0, 0)
    e.coll("MPI_Dist_graph_create", 0, -1, 0, 0)
    e.coll("MPI_Barrier", "$dist", -1, 0, 0)
    for _ in range(7):
        e.call("MPI_Comm_free")
    if r < 2:
        e.call("MPI_Comm_free")
    e.call("MPI_Comm_free").call("MPI_Comm_free").call("MPI_Comm_free")
    expected[r] = e.lines

ids = check_ranks(sys.argv[1], expected)
for name, value in ids.items():
    check(value not in ("0", "1", str(0xffffffff)), f"communicator {name} got reserved id {value}")
check(len(set(ids.values())) == len(ids), f"communicator ids repeat: {ids}")
print("check_comm: ok", ids)
