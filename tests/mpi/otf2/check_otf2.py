"""critpath — tests/mpi/otf2/check_otf2.py: the OTF2 archive a known-answer test exported
(CRITPATH_KEEP_TRACE=otf2) is read by the OTF2 tools, holds what critpath recorded, and
analyses to the same report as the in-situ analysis.

usage: check_otf2.py OUTDIR --otf2-print PATH [--roundtrip NP[,NP...] --analyze ANALYZE
                     --mpi mpich|openmpi --mpiexec MPIEXEC --shim SHIM]

  1. `otf2-print OUTDIR/traces.otf2` exits 0 without a warning, and its event counts per
     location and record type equal what critpath's own event dump (CRITPATH_DUMP_EVENTS=1,
     OUTDIR/events/rank-<r>.txt) says the export writes: one OTF2 record per critpath event,
     except where the export follows Score-P (a call site is an Enter/Leave pair around its
     MPI call, window collectives are RmaCollectiveBegin/End brackets, the RMA_SYNCs of one
     Win_start/Win_post are one RmaGroupSync, an accumulate and the RMA_GET of its result one
     RmaAtomic; ProgramBegin/End on each rank's first thread). The RmaOpComplete* records
     derived at synchronization calls are not counted.
  2. When /usr/bin/python3 has the OTF2 Python reader (python3-otf2), it reads the archive
     and sees as many events per location as otf2-print.
  3. --roundtrip: `MPIEXEC -n NP ANALYZE --otf2 OUTDIR/traces.otf2 --output
     OUTDIR/otf2-NP` for each NP, and its report.json has the in-situ one's call paths and
     every metric within 0.5 % (absolute 2 us / 1e-6 of the largest value for near-zero ones),
     and the same wait-state instance counts.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import (check, compare_reports, fail, load_report, mpiexec_command, read_events,  # noqa: E402
                            roundtrip_abs_s, run_config)

# MPI one-sided calls by their role (pmpi_wrappers/spec/mpi.toml `rma`), as far as the export
# writes them differently.
WINDOW_COLLECTIVES = {"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_allocate_shared",
                      "MPI_Win_create_dynamic", "MPI_Win_free", "MPI_Win_fence"}
GROUP_OPEN = {"MPI_Win_start", "MPI_Win_post"}
GROUP_CLOSE = {"MPI_Win_complete", "MPI_Win_wait", "MPI_Win_test"}
LOCK = {"MPI_Win_lock", "MPI_Win_lock_all"}
UNLOCK = {"MPI_Win_unlock", "MPI_Win_unlock_all"}

# critpath event kind -> the OTF2 record it becomes (otf2-print's name), one to one.
ONE_TO_ONE = {
    "SEND": "MPI_SEND", "RECV": "MPI_RECV", "ISEND": "MPI_ISEND",
    "ISEND_COMPLETE": "MPI_ISEND_COMPLETE", "IRECV_REQUEST": "MPI_IRECV_REQUEST",
    "IRECV": "MPI_IRECV", "REQUEST_CANCEL": "MPI_REQUEST_CANCELLED",
    "REQUEST_TEST": "MPI_REQUEST_TEST", "COLL_BEGIN": "MPI_COLLECTIVE_BEGIN",
    "COLL_END": "MPI_COLLECTIVE_END", "ICOLL_POST": "NON_BLOCKING_COLLECTIVE_REQUEST",
    "MEASUREMENT_OFF": "MEASUREMENT_ON_OFF", "MEASUREMENT_ON": "MEASUREMENT_ON_OFF",
    "COUNTERS": "METRIC", "RMA_PUT": "RMA_PUT",
    "RMA_REQUEST_COMPLETE": "RMA_OP_COMPLETE_NON_BLOCKING",
}
NOT_COUNTED = {"RMA_OP_COMPLETE_BLOCKING"}


def expected_records(events, first_thread):
    """The OTF2 records (otf2-print names -> count) the export writes for one location."""
    n = collections.Counter()
    stack = []               # [region name, call site opened before it]
    callsite_pending = False
    accumulate = False       # an RMA_ACCUMULATE waiting for the RMA_GET of a fetching form
    group = False            # RMA_SYNCs of one Win_start/Win_post being gathered
    posted = set()           # ICOLL_POST requests
    for e in events:
        kind = e.kind
        if accumulate and kind != "RMA_GET":
            n["RMA_ATOMIC"] += 1
            accumulate = False
        if group and kind != "RMA_SYNC":
            n["RMA_GROUP_SYNC"] += 1
            group = False
        call = stack[-1][0] if stack else ""
        if kind == "ENTER":
            name = e.line.split(" ", 1)[1]
            n["ENTER"] += 1
            stack.append([name, callsite_pending])
            callsite_pending = False
            if name in WINDOW_COLLECTIVES:
                n["RMA_COLLECTIVE_BEGIN"] += 1
        elif kind == "EXIT":
            name = e.line.split(" ", 1)[1]
            n["LEAVE"] += 1
            names = [f[0] for f in stack]
            if name in names:
                i = len(names) - 1 - names[::-1].index(name)
                if stack[i][1]:
                    n["LEAVE"] += 1  # the call site around the call
                del stack[i:]
        elif kind == "CALLSITE":
            n["ENTER"] += 1
            callsite_pending = True
        elif kind == "ICOLL_POST":
            posted.add(e.fields.get("req"))
            n[ONE_TO_ONE[kind]] += 1
        elif kind == "ICOLL_COMPLETE":
            if e.fields.get("req") in posted:
                n["NON_BLOCKING_COLLECTIVE_COMPLETE"] += 1
        elif kind in ONE_TO_ONE:
            n[ONE_TO_ONE[kind]] += 1
        elif kind == "RMA_WIN_CREATE":
            n["RMA_WIN_CREATE"] += 1
            n["RMA_COLLECTIVE_END"] += 1
        elif kind == "RMA_WIN_FREE":
            n["RMA_WIN_DESTROY"] += 1
            n["RMA_COLLECTIVE_END"] += 1
        elif kind == "RMA_COLL_SYNC":
            n["RMA_COLLECTIVE_END"] += 1
        elif kind == "RMA_ACCUMULATE":
            accumulate = True
        elif kind == "RMA_GET":
            n["RMA_ATOMIC" if accumulate else "RMA_GET"] += 1
            accumulate = False
        elif kind == "RMA_SYNC":
            if call in GROUP_OPEN:
                group = True
            elif call in GROUP_CLOSE:
                n["RMA_GROUP_SYNC"] += 1
            elif call in LOCK:
                n["RMA_REQUEST_LOCK"] += 1
            elif call in UNLOCK:
                n["RMA_RELEASE_LOCK"] += 1
            else:
                n["RMA_SYNC"] += 1
        else:
            fail(f"check_otf2: no rule for critpath event {e.line!r}")
    if accumulate:
        n["RMA_ATOMIC"] += 1
    if group:
        n["RMA_GROUP_SYNC"] += 1
    if callsite_pending:
        n["LEAVE"] += 1
    if first_thread and events:
        n["PROGRAM_BEGIN"] += 1
        n["PROGRAM_END"] += 1
    return n


def otf2_print_counts(otf2_print, anchor):
    """otf2-print's records per location: {location id: Counter(record name)}."""
    r = subprocess.run([otf2_print, anchor], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300)
    check(r.returncode == 0, f"otf2-print {anchor} exited with {r.returncode}: {r.stderr.strip()[:2000]}")
    complaints = [l for l in (r.stdout + r.stderr).splitlines() if l.startswith("otf2-print:")]
    check(not complaints, "otf2-print complains:\n  " + "\n  ".join(complaints[:20]))
    counts = collections.defaultdict(collections.Counter)
    line_re = re.compile(r"^([A-Z_]+)\s+(\d+)\s+(\d+)")
    for line in r.stdout.splitlines():
        m = line_re.match(line)
        if m:
            counts[int(m.group(2))][m.group(1)] += 1
    return counts


def check_counts(out, otf2_print):
    anchor = os.path.join(out, "traces.otf2")
    check(os.path.isfile(anchor), f"{anchor} missing: no OTF2 archive was exported")
    got = otf2_print_counts(otf2_print, anchor)
    ranks = sorted(int(m.group(1)) for m in
                   (re.match(r"rank-(\d+)\.txt$", f) for f in os.listdir(os.path.join(out, "events"))) if m)
    expected = {}
    for r in ranks:
        by_loc = collections.defaultdict(list)
        for e in read_events(out, r):
            by_loc[e.location].append(e)
        for loc, events in by_loc.items():
            expected[(loc << 32) | r] = expected_records(events, loc == 0)
    check(set(got) == set(expected),
          f"otf2-print shows locations {sorted(got)}, the event dumps {sorted(expected)}")
    bad = []
    for loc in sorted(expected):
        g = {k: v for k, v in got[loc].items() if k not in NOT_COUNTED}
        e = {k: v for k, v in expected[loc].items() if v}
        if g != e:
            diff = {k: (g.get(k, 0), e.get(k, 0)) for k in sorted(set(g) | set(e)) if g.get(k, 0) != e.get(k, 0)}
            bad.append(f"location {loc}: (otf2-print, expected) {diff}")
    check(not bad, "OTF2 record counts differ from critpath's events:\n  " + "\n  ".join(bad[:20]))
    total = sum(sum(c.values()) for c in got.values())
    print(f"check_otf2: otf2-print reads {total} events on {len(got)} locations, counts as expected")
    return got


PY_READER = """
import collections, sys, otf2
n = collections.Counter()
with otf2.reader.open(sys.argv[1]) as t:
    for loc, ev in t.events:
        n[loc._ref] += 1
for k, v in sorted(n.items()):
    print(k, v)
"""


def check_python_reader(out, got):
    py = "/usr/bin/python3"
    if not os.path.exists(py) or subprocess.run([py, "-c", "import otf2"], capture_output=True).returncode:
        print("check_otf2: no OTF2 Python reader (python3-otf2) here; that check is left out")
        return
    r = subprocess.run([py, "-c", PY_READER, os.path.join(out, "traces.otf2")], capture_output=True, text=True,
                       timeout=300)
    check(r.returncode == 0, f"the OTF2 Python reader fails on the archive: {r.stderr.strip()[-2000:]}")
    seen = {int(a): int(b) for a, b in (l.split() for l in r.stdout.splitlines() if l.strip())}
    want = {loc: sum(c.values()) for loc, c in got.items()}
    check(seen == want, f"the OTF2 Python reader sees {seen} events per location, otf2-print {want}")
    print("check_otf2: the OTF2 Python reader reads the same events")


# --- round trip ----------------------------------------------------------------------------------

def roundtrip(out, nps, analyze, mpi, mpiexec, shim):
    insitu = load_report(out)
    abs_s = roundtrip_abs_s(insitu, run_config(out).get("CRITPATH_DEBUG_CLOCK_SKEW", ""))
    for np_ in nps:
        dest = os.path.join(out, f"otf2-{np_}")
        cmd = mpiexec_command(mpi, mpiexec, shim, np_) + [analyze, "--otf2", os.path.join(out, "traces.otf2"),
                                                          "--output", dest, "--force"]
        print("$", " ".join(cmd))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                           stdin=subprocess.DEVNULL)
        print(r.stdout)
        check(r.returncode == 0, f"critpath-analyze --otf2 on {np_} processes exited with {r.returncode}")
        d = compare_reports(insitu, load_report(dest), f"OTF2 on {np_}", abs_s=abs_s)
        check(not d, f"in-situ ({out}) and OTF2 re-analysis on {np_} processes ({dest}) differ in "
              f"{len(d)} place(s):\n  " + "\n  ".join(d[:30]))
        print(f"check_otf2: the OTF2 archive analysed on {np_} processes gives the in-situ metrics "
              f"({len(insitu['metrics'])} metrics, {len(insitu['callpaths'])} call paths)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--otf2-print", required=True)
    ap.add_argument("--roundtrip", default="")
    ap.add_argument("--analyze")
    ap.add_argument("--mpi")
    ap.add_argument("--mpiexec")
    ap.add_argument("--shim")
    a = ap.parse_args()
    got = check_counts(a.out, a.otf2_print)
    check_python_reader(a.out, got)
    if a.roundtrip:
        roundtrip(a.out, [int(x) for x in a.roundtrip.split(",")], a.analyze, a.mpi, a.mpiexec, a.shim)


if __name__ == "__main__":
    main()
