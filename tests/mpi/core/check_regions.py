"""critpath — tests/mpi/core/check_regions.py: known answers for tests/mpi/core/regions.c.

usage: check_regions.py OUTDIR NP [OTHER_OUTDIR]
With OTHER_OUTDIR (the same program run the other way: preload vs linked), the set of call
paths must be identical.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import CheckError, approx, check, load_report, read_text  # noqa: E402


def own_spans(out, np_):
    """Each rank's (inner, outer) seconds as regions.c timed them itself ($CRITPATH_OUTPUT_DIR.spans.<rank>),
    each within 50 ms of the construction (0.12, 0.36: the sleeps' deadlines; a loaded machine
    runs a rank past them); the construction itself where a run wrote none."""
    spans = []
    for r in range(np_):
        try:
            words = read_text(os.path.dirname(out) or ".", f"{os.path.basename(out)}.spans.{r}").split()
        except (OSError, CheckError):
            return [(0.12, 0.36)] * np_
        inner, outer = float(words[1]), float(words[3])
        approx(inner, 0.12, f"rank {r}: the program's own inner time", rel=0, abs_=0.05)
        approx(outer, 0.36, f"rank {r}: the program's own outer time", rel=0, abs_=0.05)
        spans.append((inner, outer))
    return spans


def main():
    out, np_ = sys.argv[1], int(sys.argv[2])
    rep = load_report(out)
    check(rep["schema"] == "critpath-report/2", f"schema {rep['schema']!r}, expected 'critpath-report/2'")
    check(rep["run"]["ranks"] == np_, f"run.ranks is {rep['run']['ranks']!r}, expected {np_}")
    cps = {c["path"]: c for c in rep["callpaths"]}
    ring = ["main/MPI_Send", "main/MPI_Recv"] if np_ > 1 else []
    for p in ring + ["main", "main/MPI_Init", "main/outer", "main/outer/inner", "main/MPI_Isend", "main/MPI_Irecv", "main/MPI_Waitall",
              "main/MPI_Barrier", "main/MPI_Bcast", "main/MPI_Allreduce", "main/MPI_Finalize"]:
        check(p in cps, f"call path {p} missing; have {sorted(cps)}")
    outer, inner = cps["main/outer"], cps["main/outer/inner"]
    spans = own_spans(out, np_)
    for what, c, incl, excl in [("outer", outer, [o for _, o in spans], [o - i for i, o in spans]),
                                ("inner", inner, [i for i, _ in spans], [i for i, _ in spans])]:
        check(c["ranks"] == np_, f"{what} on {c['ranks']} ranks, expected {np_}")
        for stat, f in (("min", min), ("avg", lambda v: sum(v) / len(v)), ("max", max)):
            approx(c["inclusive_s"][stat], f(incl), f"{what} inclusive {stat} (the program's own timing)")
            approx(c["exclusive_s"][stat], f(excl), f"{what} exclusive {stat} (the program's own timing)")
    m = rep["metrics"]
    approx(m["visits"]["by_callpath"]["main/outer"], 3 * np_, "outer visits", rel=0, abs_=0)
    approx(m["visits"]["by_callpath"]["main/outer/inner"], 3 * np_, "inner visits", rel=0, abs_=0)
    if np_ > 1:
        approx(m["visits"]["by_callpath"]["main/MPI_Send"], 3 * np_, "send visits", rel=0, abs_=0)
        # Bytes: 3 iterations x (16 doubles blocking + 8 doubles nonblocking) per rank.
        approx(m["bytes_sent"]["by_callpath"]["main/MPI_Send"], 3 * np_ * 128, "blocking bytes", rel=0, abs_=0)
        approx(m["bytes_received"]["by_callpath"]["main/MPI_Recv"], 3 * np_ * 128, "recv bytes", rel=0, abs_=0)
    approx(m["bytes_sent"]["by_callpath"]["main/MPI_Isend"], 3 * np_ * 64, "isend bytes", rel=0, abs_=0)
    approx(m["bytes_received"]["by_callpath"]["main/MPI_Waitall"], 3 * np_ * 64, "irecv bytes at wait", rel=0, abs_=0)
    # The hierarchy: a rank's exclusive times add up to its span; MPI time is part of it.
    root = cps["main"]["inclusive_s"]
    approx(sum(m["time"]["by_rank"]), root["sum"], "sum of exclusive times vs root inclusive", rel=1e-6)
    for r in range(np_):
        span = m["time"]["by_rank"][r]
        check(root["min"] - 1e-9 <= span <= root["max"] + 1e-9,
              f"rank {r}: sum of exclusive times {span!r} outside main's inclusive range "
              f"[min {root['min']!r}, max {root['max']!r}] (tolerance 1e-9)")
        mpi = m["mpi_time"]["by_rank"][r]
        check(0 <= mpi <= span, f"rank {r}: mpi_time {mpi!r} outside [0, time {span!r}]")
    for key in ("unmatched_exits", "unclosed_frames"):
        check(rep["scalars"][key] == 0, f"scalars.{key} is {rep['scalars'][key]!r}, expected 0")
    approx(rep["run"]["wall_time_s"], cps["main"]["inclusive_s"]["max"], "wall time", rel=0.05)
    text = read_text(out, "summary.txt")
    for marker in ["@--- Call-path profile", "@--- MPI time per rank", "@--- End of Report"]:
        check(marker in text, f"summary.txt lacks {marker!r}")
    if len(sys.argv) > 3:
        other = load_report(sys.argv[3])
        mine = sorted(cps)
        theirs = sorted(c["path"] for c in other["callpaths"])
        check(mine == theirs, f"call paths differ from {sys.argv[3]}: only here "
              f"{sorted(set(mine) - set(theirs))}, only there {sorted(set(theirs) - set(mine))}"
              f"\n  here:  {mine}\n  there: {theirs}")
    print("check_regions: ok")


if __name__ == "__main__":
    main()
