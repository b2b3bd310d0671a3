"""critpath — tests/mpi/critpath/check_critpath.py: known answers of the critical-path tests.

usage: check_critpath.py OUTDIR imbalance SCENARIO...   (imbalance.c; 8 ranks)
       check_critpath.py OUTDIR chain                   (chain.c)
       check_critpath.py OUTDIR parallelism ring|ep     (parallelism.c)
       check_critpath.py OUTDIR partitions RANGE...     (CRITPATH_PARTITIONS=RANGE,RANGE...)
       check_critpath.py OUTDIR mpmd                    (mpmd.c: 6 + 2 ranks)

Every run also checks what holds always (docs/metrics.md "Critical path"): the path's length
equals the wall time (±1 %), its segments tile it, the critical_path metric sums to it, the
performance impact sums to ranks × wall time (±1 %), and summary.txt has both sections.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import (TIMING_CODE, CheckError, approx, at_most, callpath, check, load_report,  # noqa: E402
                            metric, read_stdout, scalar, summary_section)

# imbalance.c
N_ITER, W, E = 8, 0.200, 0.050
# chain.c
L = 0.150
# parallelism.c (ring), cp_util.h (cp_align's sleep to the common start)
T_RING, ALIGN = 0.400, 0.020
# mpmd.c
MP_N, TA, TB, TB2 = 2, 0.200, 0.500, 0.400


def common(out, rep):
    P = rep["run"]["ranks"]
    wall = rep["run"]["wall_time_s"]
    cp = rep["critical_path"]
    length = scalar(rep, "critical_path_length_s")
    approx(length, wall, "critical_path_length_s vs wall time", rel=0.01, abs_=0)
    check(not cp["partial"], "the walk was cut short (critical_path.partial is true)")
    segs = cp["segments"]
    # The tiling checks below only apply to a complete list: make sure "truncated" is not
    # claimed (which would skip them) unless segments really were dropped.
    check(segs["kept"] == len(segs["list"]),
          f"segments.kept {segs['kept']!r} but the list holds {len(segs['list'])} segments")
    check(bool(segs["truncated"]) == (segs["kept"] < segs["total"]),
          f"segments.truncated {segs['truncated']!r} with kept {segs['kept']!r} of total {segs['total']!r}")
    check(len(segs["list"]) > 0, "critical_path.segments.list is empty")
    if not segs["truncated"]:
        approx(sum(s["end_s"] - s["begin_s"] for s in segs["list"]), length, "sum of segments",
               rel=1e-6, abs_=1e-6)
        ordered = sorted(segs["list"], key=lambda s: s["begin_s"])
        for a, b in zip(ordered, ordered[1:]):
            approx(b["begin_s"], a["end_s"], "segments are contiguous", rel=0, abs_=1e-6)
    approx(metric(rep, "critical_path")["total"], length, "critical_path total", rel=0.01, abs_=0)
    approx(metric(rep, "performance_impact")["total"], P * wall, "sum of performance impact",
           rel=0.01, abs_=0)
    par = scalar(rep, "average_parallelism")
    check(0 < par <= P + 1e-9, f"average parallelism {par} outside (0, {P}] (tolerance 1e-9)")
    hist = cp["parallelism_histogram"]["fraction"]
    check(len(hist) == P + 1, f"parallelism histogram has {len(hist)} entries, expected P + 1 = {P + 1}")
    approx(sum(hist), 1.0, "histogram sums to 1", rel=0, abs_=1e-6)
    approx(sum(k * f for k, f in enumerate(hist)), par, "histogram mean = average parallelism",
           rel=0.001, abs_=0.001)
    check(any(l.startswith("main") for l in summary_section(out, "Critical path")),
          "summary.txt critical-path table has no rows (no line starting with 'main')")
    summary_section(out, "Parallelism")
    return P, wall, cp


def row(cp, path):
    for r in cp["callpaths"]:
        if r["path"] == path:
            return r
    raise CheckError(f"critical_path.callpaths has no row {path!r}; "
                     f"rows: {[r['path'] for r in cp['callpaths']][:20]}")


def measured_work(out, scenario, P):
    """imbalance.c's "cp-work RANK SCENARIO ITER DUR_NS ARRIVE_NS" lines of one scenario:
    (dur[r][i], arrive[r][i]) in seconds. Every rank must have printed every iteration."""
    dur = [[None] * N_ITER for _ in range(P)]
    arrive = [[None] * N_ITER for _ in range(P)]
    for m in re.finditer(r"^cp-work (\d+) (\S+) (\d+) (\d+) (\d+)$", read_stdout(out), re.M):
        r, i = int(m.group(1)), int(m.group(3))
        if m.group(2) == scenario and r < P and i < N_ITER:
            dur[r][i], arrive[r][i] = int(m.group(4)) * 1e-9, int(m.group(5)) * 1e-9
    missing = [(r, i) for r in range(P) for i in range(N_ITER) if dur[r][i] is None]
    check(not missing, f"{scenario}: no cp-work line for (rank, iteration) {missing[:8]}")
    return dur, arrive


def check_imbalance(out, rep, cp, scenarios):
    """The ideal answers (N·E of critical-path imbalance, 0 when balanced) hold for sleeps that
    end on time. Oversubscribed, each sleep overshoots by its rank's wake-up latency and the
    path takes the latest arrival at every barrier, so the expected values come from the run's
    measured work: the path's work is Σ_i dur[last_i][i] (last_i the last rank to arrive in
    iteration i), the average Σ dur / P, the maximum max_r Σ_i dur[r][i]. The measured run must
    itself be close to the ideal one (within 5 % of N·E), else the run, not the analysis, is off:
    that exits TIMING_CODE."""
    added = N_ITER * E  # the 25 % the imbalanced scenarios add
    tol = 0.05 * added
    P = rep["run"]["ranks"]
    check(scenarios, "imbalance: no scenario given, nothing would be checked")
    timing = []
    for s in scenarios:
        check(s in ("balanced", "static", "dynamic", "mixed"), f"imbalance: unknown scenario {s!r}")
        path = f"main/s_{s}/work"
        r = row(cp, path)
        dur, arrive = measured_work(out, s, P)
        per_rank = [sum(d) for d in dur]
        avg = sum(per_rank) / P
        on_path = sum(dur[max(range(P), key=lambda k: arrive[k][i])][i] for i in range(N_ITER))
        ideal_cp = added if s != "balanced" else 0.0
        ideal_prof = {"static": added, "dynamic": 0.0, "mixed": added / 2, "balanced": 0.0}[s]
        approx(metric(rep, "time")["by_callpath"][path], sum(per_rank), f"total work of {s}",
               rel=0.01, abs_=0.002)
        approx(sum(per_rank), P * N_ITER * W, f"{s}: the run's measured work (same in every scenario)")
        approx(r["critical_path_s"], on_path, f"CP time of {path} (the last arrivals' work)",
               rel=0, abs_=tol)
        approx(r["critical_path_imbalance_s"], on_path - avg, f"CP imbalance of {path}", rel=0,
               abs_=tol)
        approx(r["profile_imbalance_s"], max(per_rank) - avg, f"profile imbalance of {path}", rel=0,
               abs_=tol)
        if s != "balanced":
            approx(metric(rep, "critical_path_imbalance")["by_callpath"][path], on_path - avg,
                   f"critical_path_imbalance metric of {path}", rel=0, abs_=tol)
            check(r["dynamic_imbalance"] == (s != "static"),
                  f"flag D of {path}: dynamic_imbalance {r['dynamic_imbalance']!r}, expected {s != 'static'}")
        if abs(on_path - avg - ideal_cp) > tol or abs(max(per_rank) - avg - ideal_prof) > tol:
            timing.append(f"{s}: the run's own CP imbalance {on_path - avg:.4f} s / profile imbalance "
                          f"{max(per_rank) - avg:.4f} s, ideal {ideal_cp:.4f} / {ideal_prof:.4f} ± {tol:.4f}")
    if timing:
        print("check_critpath imbalance: TIMING: the analysis matches the run, but the run's sleeps "
              "overshot too far from the ideal scenario: " + "; ".join(timing))
        sys.exit(TIMING_CODE)


def check_chain(rep, cp):
    P = rep["run"]["ranks"]
    path = "main/s_chain/hop"
    # Every rank's whole hop is on the path (its measured length: sleeps overshoot under load).
    per_rank = metric(rep, "critical_path")["by_callpath_rank"][path]
    approx(sum(per_rank), metric(rep, "time")["by_callpath"][path], f"CP time of {path}",
           rel=0.01, abs_=0.001)
    ex = callpath(rep, path)["exclusive_s"]
    for r in range(P):
        approx(per_rank[r], L, f"CP time of {path} on rank {r}", rel=0.25, abs_=0)
        check(ex["min"] - 0.001 <= per_rank[r] <= ex["max"] + 0.001,
              f"CP time of {path} on rank {r}: {per_rank[r]} outside the hop's {ex}")
    segs = cp["segments"]["list"]
    # Ranks 1..P-1: one segment each, dominated by the hop, back to back, each covering L.
    hops = [s for s in segs if s["callpath"] == path and s["rank"] > 0]
    check([s["rank"] for s in hops] == list(range(1, P)),
          f"hop segments in rank order 1..{P - 1}: {[(s['rank'], s['begin_s']) for s in hops]}")
    for a, b in zip(hops, hops[1:]):
        approx(b["begin_s"], a["end_s"], f"rank {b['rank']} takes over where {a['rank']} ended",
               rel=0, abs_=1e-6)
    cp_rank = metric(rep, "critical_path")["by_rank"]
    for s in hops:
        # The segment is the hop plus the tail of the receive and the send (MPI latency, which
        # oversubscribed runs stretch to milliseconds): segments and the CP metric must agree
        # exactly, the hop must lie inside its segment, and the tail must stay small.
        r = s["rank"]
        total = sum(x["end_s"] - x["begin_s"] for x in segs if x["rank"] == r)
        approx(total, cp_rank[r], f"segments vs critical_path of rank {r}", rel=0, abs_=1e-6)
        length = s["end_s"] - s["begin_s"]
        check(length >= per_rank[r] - 1e-6, f"rank {r}: its hop ({per_rank[r]}) lies inside its segment ({length})")
        check(length - per_rank[r] <= 0.1 * L, f"rank {r}: segment {length} is the hop {per_rank[r]} plus a short tail")
    # Rank 0 hands over to rank 1 (its segment may be dominated by MPI_Init: it also covers
    # everything since the path came to rank 0).
    first = [s for s in segs if s["rank"] == 0 and abs(s["end_s"] - hops[0]["begin_s"]) < 1e-6]
    check(len(first) == 1, f"rank 0's segment ends where rank 1's begins: {segs}")
    check(first[0]["end_s"] - first[0]["begin_s"] >= per_rank[0] - 1e-6, "rank 0's segment covers its hop")


def check_parallelism(rep, cp, mode):
    check(mode in ("ring", "ep"), f"parallelism: unknown mode {mode!r} (ring | ep)")
    P = rep["run"]["ranks"]
    par = scalar(rep, "average_parallelism")
    if mode == "ring":
        # One rank works at a time, except in cp_align's sleep to the common start (ALIGN after
        # the start time is agreed), where all P do: (P·ALIGN + P·T) / (ALIGN + P·T), 1.037 on
        # 4 ranks (not 1: the alignment alone is 3.7 % of the work).
        expected = (P * ALIGN + P * T_RING) / (ALIGN + P * T_RING)
        approx(par, expected, "average parallelism of the ring", rel=0.05, abs_=0)
        hist = cp["parallelism_histogram"]["fraction"]
        check(hist[1] >= 0.8, f"the ring runs one rank at a time most of the time: {hist}")
    else:
        approx(par, P, "average parallelism of the embarrassingly parallel run", rel=0.05, abs_=0)
        hist = cp["parallelism_histogram"]["fraction"]
        check(hist[P] >= 0.8, f"all ranks work most of the time: {hist}")


def parse_range(text):
    a, _, z = text.partition("-")
    return list(range(int(a), int(z or a) + 1))


def check_partitions(rep, cp, ranges):
    check(ranges, "partitions: no range given, nothing would be checked")
    parts = rep["run"]["partitions"]
    check([p["rank_list"] for p in parts] == [parse_range(r) for r in ranges],
          f"run.partitions {parts} != {ranges}")
    check(cp["partition_source"] == "CRITPATH_PARTITIONS",
          f"partition_source {cp['partition_source']!r}, expected 'CRITPATH_PARTITIONS'")
    # The ring's turns run in both partitions: all imbalance costs are intra-partition.
    at_most(metric(rep, "imbalance_cost_inter")["total"], 1e-9, "no inter-partition costs")


def check_mpmd(rep, cp):
    P, wall = rep["run"]["ranks"], rep["run"]["wall_time_s"]
    parts = rep["run"]["partitions"]
    check(len(parts) == 2 and [p["ranks"] for p in parts] == [6, 2],
          f"two partitions of 6 and 2 ranks: {parts}")
    check(parts[0]["name"].endswith("mpmd_a") and parts[1]["name"].endswith("mpmd_b"),
          f"partitions named after their executables: {parts}")
    check(cp["partition_source"] == "MPI_APPNUM",
          f"partition_source {cp['partition_source']!r}, expected 'MPI_APPNUM'")
    inter = metric(rep, "imbalance_cost_inter")
    intra = metric(rep, "imbalance_cost_intra")
    # The A ranks wait N·(TB − TA) each for B; their other waiting (the launch skew before
    # the last MPI_Init entry, ...) is headroom too and is spread over B and MPI_Init in
    # proportion to the excess times, so B gets at least the former and at most all of it.
    waited = 6 * MP_N * (TB - TA)
    headroom_a = sum(cp["headroom_by_rank_s"][:6])
    check(0.95 * waited <= inter["by_callpath"]["main/B"] <= headroom_a + 0.002,
          f"inter-partition cost of B {inter['by_callpath']['main/B']} within "
          f"[0.95 x {waited}, A's headroom {headroom_a}]")
    at_most(headroom_a, waited * 1.25, "the A ranks wait mostly for B")
    approx(intra["by_callpath"]["main/B"], MP_N * (TB - TB2), "intra-partition cost of B",
           rel=0.1, abs_=0.005)
    check(inter["total"] > 3 * intra["total"],
          f"inter-partition costs dominate: inter {inter['total']}, intra {intra['total']}")
    approx(metric(rep, "critical_path")["by_callpath"]["main/B"], MP_N * TB, "CP time of B")
    cp_a = metric(rep, "critical_path")["by_callpath"].get("main/A", 0)
    check(cp_a < 0.005, f"A is critical: CP time of main/A {cp_a!r}, expected < 0.005")


def main():
    out, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        rep = load_report(out)
        P, wall, cp = common(out, rep)
        if what == "imbalance":
            check_imbalance(out, rep, cp, args)
        elif what == "chain":
            check_chain(rep, cp)
        elif what == "parallelism":
            check_parallelism(rep, cp, args[0])
        elif what == "partitions":
            check_partitions(rep, cp, args)
        elif what == "mpmd":
            check_mpmd(rep, cp)
        else:
            raise CheckError(f"unknown check {what!r}")
    except CheckError as e:
        print(f"check_critpath {what}: FAIL: {e}")
        sys.exit(1)
    print(f"check_critpath {what}: ok (critical path {cp['length_s']:.6f} s, wall {wall:.6f} s, "
          f"{cp['hops']} hops, average parallelism {cp['average_parallelism']:.3f})")


if __name__ == "__main__":
    main()
