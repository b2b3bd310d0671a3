"""critpath — tests/mpi/examples/check_timeline.py: timeline.json (CRITPATH_TIMELINE=1) of the
bundled example in the Chrome/Perfetto trace-event format.

usage: check_timeline.py OUTDIR NP [MAX_EVENTS]
The file parses as {"traceEvents": [...]}; every event has the format's fields for its phase
(X: name, ts, dur >= 0, pid, tid; s/f: id; M: args.name); one named track (pid) per rank with
slices; the critical-path track (pid NP) covers the wall time within 1 %; every message flow
has its start and its finish. With MAX_EVENTS, at most that many rank events (plus the
metadata and the critical path) and a note saying how many were left out.
"""
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, load_report  # noqa: E402

out, P = sys.argv[1], int(sys.argv[2])
cap = int(sys.argv[3]) if len(sys.argv) > 3 else None
with open(os.path.join(out, "timeline.json")) as f:
    doc = json.load(f)
events = doc.get("traceEvents")
check(isinstance(events, list) and events, "timeline.json has no traceEvents list")
for e in events:
    ph = e.get("ph")
    check(ph in ("X", "s", "f", "M"), f"unexpected phase {ph!r}: {e}")
    check(isinstance(e.get("pid"), int), f"event without an integer pid: {e}")
    if ph == "X":
        check(all(k in e for k in ("name", "ts", "dur", "tid")) and e["dur"] >= 0 and e["ts"] >= -1,
              f"slice lacks name/ts/dur/tid or has negative times: {e}")
    elif ph in ("s", "f"):
        check("id" in e and "ts" in e and "tid" in e, f"flow event lacks id/ts/tid: {e}")
    else:
        check(isinstance(e.get("args", {}).get("name", e.get("args", {}).get("sort_index")), (str, int)),
              f"metadata without args: {e}")
names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
check(all(names.get(r) == f"rank {r}" for r in range(P)) and names.get(P) == "critical path",
      f"process names: {names}")
slices = Counter(e["pid"] for e in events if e["ph"] == "X")
check(all(slices[r] > 0 for r in range(P)), f"a rank without slices: {dict(slices)}")
rep = load_report(out)
wall = rep["run"]["wall_time_s"]
cp = sum(e["dur"] for e in events if e["ph"] == "X" and e["pid"] == P) * 1e-6
check(abs(cp - wall) <= 0.01 * wall, f"critical-path track covers {cp:.6f} s, wall time {wall:.6f} s")
starts = Counter(e["id"] for e in events if e["ph"] == "s")
ends = Counter(e["id"] for e in events if e["ph"] == "f")
check(starts == ends, f"flows without both ends: {len(starts)} starts, {len(ends)} finishes")
if cap is not None:
    rank_events = sum(1 for e in events if e["ph"] != "M" and e["pid"] != P)
    check(rank_events <= cap + P, f"{rank_events} rank events, cap {cap}")
    check(any(n.startswith("timeline:") for n in rep["notes"]),
          f"no note about events left out of the timeline: {rep['notes']}")
print(f"check_timeline: ok ({len(events)} events, critical path {cp:.6f} s)")
