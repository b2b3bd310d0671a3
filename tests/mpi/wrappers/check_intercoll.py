"""critpath — tests/mpi/wrappers/check_intercoll.py: exact events of wrap_intercoll.c (5 ranks:
group A = world ranks 0-1, group B = 2-4, one intercommunicator between them). Every COLL_END
and ICOLL_POST carries the bytes of docs/mpi-coverage.md's intercommunicator rules, computed
here from the program's counts: blocks over the remote group, the root (MPI_ROOT) only sends or
only receives, the rest of its group (MPI_PROC_NULL) nothing. usage: OUTDIR mpich|openmpi"""
import sys

from critpath_check import check
from wrapcheck import Expect, check_ranks

I, D = 4, 8
# The root argument as recorded: the values of MPI_ROOT and MPI_PROC_NULL in mpi.h.
MPI_ROOT, MPI_PROC_NULL = {"mpich": (-3, -1), "openmpi": (-4, -2)}[sys.argv[2]]


def rank_body(r):
    in_a = r < 2
    lr = r if in_a else r - 2
    nl = 2 if in_a else 3
    nr = 5 - nl
    e = Expect()
    e.coll("MPI_Comm_split", 0, -1, 0, 0)
    e.coll("MPI_Intercomm_create", "$local_a" if in_a else "$local_b", -1, 0, 0)
    for nb in (False, True):
        n_req = [0]

        def coll(name, root, sent, recv):
            if not nb:
                e.coll("MPI_" + name, "$ic", root, sent, recv)
                return
            n_req[0] += 1
            req = f"%q{int(nb)}_{n_req[0]}"
            fn = "MPI_I" + name[0].lower() + name[1:]
            e.call(fn, f"ICOLL_POST op={fn} comm=$ic root={root} sent={sent} recv={recv} req={req}")
            e.call("MPI_Wait", f"ICOLL_COMPLETE req={req}")

        coll("Barrier", -1, 0, 0)
        for root_in_a in (True, False):
            root_group = in_a if root_in_a else not in_a
            root_lr = 0 if root_in_a else 1
            if root_group:
                root = MPI_ROOT if lr == root_lr else MPI_PROC_NULL
            else:
                root = root_lr
            is_root, member = root == MPI_ROOT, not root_group

            def rooted(name, root_sent, root_recv, member_sent, member_recv):
                if is_root:
                    coll(name, root, root_sent, root_recv)
                elif member:
                    coll(name, root, member_sent, member_recv)
                else:
                    coll(name, root, 0, 0)

            rooted("Bcast", 7 * I, 0, 0, 7 * I)
            rooted("Gather", 0, nr * 2 * I, 2 * I, 0)
            rooted("Gatherv", 0, sum([1, 2, 3][:nr]) * I, (lr + 1) * I, 0)
            rooted("Scatter", nr * 3 * I, 0, 0, 3 * I)
            rooted("Scatterv", sum([nr, nr - 1, nr - 2][:nr]) * I, 0, 0, (nl - lr) * I)
            count = 4 if root_in_a else 5
            rooted("Reduce", 0, count * I, count * I, 0)
        if in_a:
            coll("Allgather", -1, 1 * I, nr * 2 * I)
        else:
            coll("Allgather", -1, 2 * I, nr * 1 * I)
        coll("Allgatherv", -1, (lr + 1) * I, sum([1, 2, 3][:nr]) * I)
        if in_a:
            coll("Alltoall", -1, nr * 2 * I, nr * 3 * I)
            coll("Alltoallv", -1, sum(lr + k + 1 for k in range(nr)) * I,
                 sum(2 * lr + k + 1 for k in range(nr)) * I)
            coll("Alltoallw", -1, sum(D if k == 0 else I for k in range(nr)),
                 nr * I if lr == 0 else 0)
        else:
            coll("Alltoall", -1, nr * 3 * I, nr * 2 * I)
            coll("Alltoallv", -1, sum(2 * k + lr + 1 for k in range(nr)) * I,
                 sum(k + lr + 1 for k in range(nr)) * I)
            coll("Alltoallw", -1, I, nr * (D if lr == 0 else I))
        coll("Allreduce", -1, 3 * I, 3 * I)
        counts = [2, 4] if in_a else [1, 2, 3]
        coll("Reduce_scatter", -1, sum(counts) * I, counts[lr] * I)
        block = 3 if in_a else 2
        coll("Reduce_scatter_block", -1, nl * block * I, block * I)
    e.call("MPI_Comm_free").call("MPI_Comm_free")
    return e.lines


ids = check_ranks(sys.argv[1], {r: rank_body(r) for r in range(5)})
check(len({ids["$local_a"], ids["$local_b"], ids["$ic"]}) == 3,
      f"the two groups and the intercommunicator should have distinct ids: {ids}")
print("check_intercoll: ok", ids)
