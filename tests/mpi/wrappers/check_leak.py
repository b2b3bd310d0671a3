"""critpath — tests/mpi/wrappers/check_leak.py: wrap_leak.c's sends that completed inside
MPI_Isend and were never waited for (one shared request handle for all of them) neither
fill the request table nor leave stale entries behind. usage: OUTDIR THREADS

  * no note, warning or summary line about "outstanding MPI requests" (the table never
    overflowed: at most kBatch requests were outstanding per thread);
  * every ISEND_COMPLETE on rank 0 completes an ISEND of the same thread, once;
  * the final MPI_Isend + MPI_Wait and MPI_Issend + MPI_Wait of each thread complete exactly
    the request just posted (a stale entry of a leaked send would carry another id).
Exits 77 (ctest SKIP_RETURN_CODE) when the program reported that the MPI library lacks
MPI_THREAD_MULTIPLE."""
import sys

from critpath_check import (CheckError, check, finished_or_skip, load_report, read_events, read_stderr,
                            read_text)

LEAK, ROUNDS, BATCH = 5000, 4, 64
NOTE = "outstanding MPI requests"

out, threads = sys.argv[1], int(sys.argv[2])
finished_or_skip(out, "check_leak", "wrap_leak: ok")

rep = load_report(out)
bad = [n for n in rep.get("notes", []) if NOTE in n]
check(not bad, f"report.json notes claim a request-table overflow: {bad}")
check(NOTE not in read_text(out, "summary.txt"), f"summary.txt mentions '{NOTE}'")
check(NOTE not in read_stderr(out), f"stderr mentions '{NOTE}':\n{read_stderr(out)}")

by_loc = {}
for e in read_events(out, 0):
    by_loc.setdefault(e.location, []).append(e)
senders = {loc: ev for loc, ev in by_loc.items() if any(e.kind == "ISEND" for e in ev)}
check(len(senders) == threads, f"rank 0: {len(senders)} locations post sends, expected {threads}")
for loc, events in senders.items():
    where = f"rank 0, location {loc}"
    posted, completed = {}, set()
    for i, e in enumerate(events):
        if e.kind == "ISEND":
            req = e.int("req")
            check(req not in posted, f"{where}: request id {req} posted twice")
            posted[req] = e.int("tag")
        elif e.kind == "ISEND_COMPLETE":
            req = e.int("req")
            check(req in posted, f"{where}: {e.line!r} completes no ISEND of this thread")
            check(req not in completed, f"{where}: {e.line!r} completes request {req} again")
            completed.add(req)
    tags = sorted(set(posted.values()))
    check(len(tags) == 4 and len({t % 100 for t in tags}) == 1,
          f"{where}: tags {tags}, expected 100+t, 200+t, 300+t, 400+t of one thread t")
    per_tag = {t: sum(1 for v in posted.values() if v == t) for t in tags}
    expect = [ROUNDS * BATCH, LEAK // threads, 1, 1]
    check([per_tag[t] for t in tags] == expect, f"{where}: ISENDs per tag {per_tag}, expected {expect}")
    lines = [e.line for e in events]
    for tag, fn in zip(tags[2:], ("MPI_Isend", "MPI_Issend")):
        k = next(i for i, e in enumerate(events) if e.kind == "ISEND" and e.int("tag") == tag)
        req = events[k].int("req")
        got = lines[k + 1:k + 5]
        want = [f"EXIT {fn}", "ENTER MPI_Wait", f"ISEND_COMPLETE req={req}", "EXIT MPI_Wait"]
        if got != want:
            raise CheckError(f"{where}: the MPI_Wait after the ISEND with tag {tag} (req={req}) "
                             f"should complete that request; events after it: {got}")
print(f"check_leak: ok ({threads} thread(s))")
