"""critpath — tests/mpi/wrappers/check_threads.py: per-thread events of wrap_threads.c.
usage: OUTDIR

Under MPI_THREAD_MULTIPLE every thread records into its own location ("# location <n>" in
the dump). Locations are numbered by each thread's first record, so worker threads are found
by content, not by number: a worker's location is the one whose first ISEND carries tag
10 + t. Each worker location must hold exactly kRounds rounds of its exchange (nothing lost,
nothing from another thread), on its own communicator (the same id on both ranks, distinct
per thread); location 0 (the main thread) holds the kColls Allreduces on MPI_COMM_WORLD and
the dups. Exits 77 (ctest SKIP_RETURN_CODE) when the program reported that the MPI library
lacks MPI_THREAD_MULTIPLE."""
import sys
from collections import OrderedDict

from critpath_check import CheckError, finished_or_skip, read_events
from wrapcheck import Expect, match

THREADS, ROUNDS, COLLS = 3, 40, 25

out = sys.argv[1]
finished_or_skip(out, "check_threads", "wrap_threads: ok")

run_vars = {}
for rank in (0, 1):
    peer = 1 - rank
    by_loc = OrderedDict()
    for e in read_events(out, rank):
        by_loc.setdefault(e.location, []).append(e)
    if len(by_loc) != THREADS + 1:
        raise CheckError(f"rank {rank}: {len(by_loc)} locations, expected {THREADS + 1}: "
                         f"{list(by_loc)}")
    if 0 not in by_loc:
        raise CheckError(f"rank {rank}: no location 0 (the MPI_Init thread)")
    main = [e.line for e in by_loc.pop(0)]
    allreduce = [l for l in main if l.startswith("COLL_END op=MPI_Allreduce comm=0 ")]
    dups = [l for l in main if l.startswith("COLL_END op=MPI_Comm_dup comm=0 ")]
    if len(allreduce) != COLLS or len(dups) != THREADS:
        raise CheckError(f"rank {rank}, main thread: {len(allreduce)} Allreduce and {len(dups)} "
                         f"Comm_dup collectives, expected {COLLS} and {THREADS}")
    if any(l.startswith(("ISEND", "IRECV", "SEND", "RECV")) for l in main):
        raise CheckError(f"rank {rank}: a worker's p2p event landed in the main thread's location")

    seen = set()
    for loc, events in by_loc.items():
        first = next((e for e in events if e.kind == "ISEND"), None)
        if first is None:
            raise CheckError(f"rank {rank}, location {loc}: no ISEND: {[e.line for e in events[:6]]}")
        t = first.int("tag") - 10
        if not 0 <= t < THREADS or t in seen:
            raise CheckError(f"rank {rank}, location {loc}: unexpected first ISEND {first.line!r}")
        seen.add(t)
        nbytes = 8 * (t + 1)
        c = f"comm=$c{t}"
        e = Expect()
        for k in range(ROUNDS):
            (e.call("MPI_Irecv", f"IRECV_REQUEST req=%r{k}")
              .call("MPI_Isend", f"ISEND peer={peer} tag={10 + t} {c} bytes={nbytes} req=%s{k}")
              .call("MPI_Waitall", f"IRECV peer={peer} tag={10 + t} {c} bytes={nbytes} req=%r{k}",
                    f"ISEND_COMPLETE req=%s{k}")
              .call("MPI_Sendrecv", f"SEND peer={peer} tag={20 + t} {c} bytes={nbytes}",
                    f"RECV peer={peer} tag={20 + t} {c} bytes={nbytes}"))
        match(rank, [ev.line for ev in events], e.lines, run_vars)
    print(f"check_threads: rank {rank}: {THREADS} worker locations x {ROUNDS} rounds exact, "
          f"{COLLS} Allreduce on the main thread")
for t in range(THREADS):
    if f"$c{t}" not in run_vars:
        raise CheckError(f"no communicator id bound for worker {t}: {run_vars}")
    if run_vars[f"$c{t}"] == "0":
        raise CheckError(f"worker {t}'s communicator carries MPI_COMM_WORLD's id 0: {run_vars}")
print("check_threads: ok", {k: v for k, v in sorted(run_vars.items())})
