"""critpath — tests/mpi/wrappers/check_rma.py: exact events of wrap_rma.c (2 ranks): window ids
equal on both ranks, targets, origin/result bytes, lock types, request completion and PSCW
group members. usage: OUTDIR"""
import sys

from critpath_check import check
from wrapcheck import Expect, check_ranks

I, D = 4, 8
# op = the MPI call's region id (pmpi_wrappers/spec/mpi.toml)
OP = {"MPI_Win_create": 500, "MPI_Win_allocate": 501, "MPI_Win_create_dynamic": 503,
      "MPI_Win_free": 504, "MPI_Win_fence": 510, "MPI_Win_start": 511, "MPI_Win_complete": 512,
      "MPI_Win_post": 513, "MPI_Win_wait": 514, "MPI_Win_lock": 516, "MPI_Win_unlock": 517,
      "MPI_Win_lock_all": 518, "MPI_Win_unlock_all": 519, "MPI_Win_flush": 520,
      "MPI_Win_flush_all": 522, "MPI_Put": 530, "MPI_Get": 531, "MPI_Accumulate": 532,
      "MPI_Get_accumulate": 533, "MPI_Fetch_and_op": 534, "MPI_Compare_and_swap": 535,
      "MPI_Rput": 536, "MPI_Rget": 537}


def rma(kind, win, fn, peer=-1, nbytes=0, req=0, root=-1):
    op = OP[fn] if fn else 0
    return f"RMA_{kind} win={win} peer={peer} op={op} bytes={nbytes} req={req} root={root}"


def sync(fn, win, peer=-1, lock=0):
    return rma("SYNC", win, fn, peer, 0, 0, lock)


expected = {}
for r in range(2):
    e = Expect()
    e.call("MPI_Win_create", rma("WIN_CREATE", "$w1", "MPI_Win_create", -1, 10 * I, 0, 0))
    e.call("MPI_Win_fence", rma("COLL_SYNC", "$w1", "MPI_Win_fence", -1, 0, 0, 0))
    if r == 0:
        e.call("MPI_Put", rma("PUT", "$w1", "MPI_Put", 1, 3 * I))
        e.call("MPI_Get", rma("GET", "$w1", "MPI_Get", 1, 2 * I))
        e.call("MPI_Accumulate", rma("ACCUMULATE", "$w1", "MPI_Accumulate", 1, I))
        e.call("MPI_Put")  # MPI_PROC_NULL target: the call only
    e.call("MPI_Win_fence", rma("COLL_SYNC", "$w1", "MPI_Win_fence", -1, 0, 0, 0))
    if r == 0:
        e.call("MPI_Win_lock", sync("MPI_Win_lock", "$w1", 1, 1))
        for fn in ("MPI_Get_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap"):
            e.call(fn, rma("ACCUMULATE", "$w1", fn, 1, I), rma("GET", "$w1", fn, 1, I))
        e.call("MPI_Win_flush", sync("MPI_Win_flush", "$w1", 1))
        e.call("MPI_Win_unlock", sync("MPI_Win_unlock", "$w1", 1))
    e.coll("MPI_Barrier", 0, -1, 0, 0)
    e.call("MPI_Win_allocate", rma("WIN_CREATE", "$w2", "MPI_Win_allocate", -1, 8 * D, 0, 0))
    e.call("MPI_Win_lock_all", sync("MPI_Win_lock_all", "$w2"))
    e.call("MPI_Rput", rma("PUT", "$w2", "MPI_Rput", 1 - r, 2 * D, "%p"))
    e.call("MPI_Rget", rma("GET", "$w2", "MPI_Rget", 1 - r, D, "%g"))
    e.call("MPI_Waitall", rma("REQUEST_COMPLETE", "$w2", None, -1, 0, "%p"),
           rma("REQUEST_COMPLETE", "$w2", None, -1, 0, "%g"))
    e.call("MPI_Win_flush_all", sync("MPI_Win_flush_all", "$w2"))
    e.call("MPI_Win_unlock_all", sync("MPI_Win_unlock_all", "$w2"))
    e.call("MPI_Win_free", rma("WIN_FREE", "$w2", "MPI_Win_free"))
    e.call("MPI_Comm_group").call("MPI_Group_incl")
    if r == 0:
        e.call("MPI_Win_start", sync("MPI_Win_start", "$w1", 1))
        e.call("MPI_Put", rma("PUT", "$w1", "MPI_Put", 1, 4 * I))
        e.call("MPI_Win_complete", sync("MPI_Win_complete", "$w1"))
    else:
        e.call("MPI_Win_post", sync("MPI_Win_post", "$w1", 0))
        e.call("MPI_Win_wait", sync("MPI_Win_wait", "$w1"))
    e.call("MPI_Group_free").call("MPI_Group_free")
    e.call("MPI_Win_create_dynamic", rma("WIN_CREATE", "$w3", "MPI_Win_create_dynamic", -1, 0, 0, 0))
    e.call("MPI_Win_free", rma("WIN_FREE", "$w3", "MPI_Win_free"))
    e.call("MPI_Win_free", rma("WIN_FREE", "$w1", "MPI_Win_free"))
    expected[r] = e.lines

ids = check_ranks(sys.argv[1], expected)
check(len(set(ids.values())) == len(ids), f"window ids repeat: {ids}")
print("check_rma: ok", ids)
