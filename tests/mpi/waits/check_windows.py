"""critpath — tests/mpi/waits/check_windows.py: known answers for tests/mpi/waits/windows.c,
analysed window by window (analyzer/engine/window.h, CRITPATH_DEBUG_ANALYSIS_WINDOW=1).

usage: check_windows.py OUTDIR NP MPI MPIEXEC ANALYZE SHIM [--memory | --estimate]
  OUTDIR  the run, kept with CRITPATH_KEEP_TRACE=1, its in-situ analysis window by window
  --memory  the run had fast iterations (windows.c F) and CRITPATH_ANALYSIS_MEMORY=1: the
          analysis went window by window on its own (a note names the budget), in more
          windows than the sleeping iterations alone give; 2. and 3. as below, 3. with
          CRITPATH_ANALYSIS_MEMORY=0 (whole) and 1 (windows)
  --estimate  the run had many user-region visits (windows.c 0 U) and a budget between the
          estimates from its events alone and from its MPI calls: the analysis scanned the
          trace, then held the whole run (no window, no note); the known answers hold

1. The cuts: of the 1 + 3 N MPI_COMM_WORLD barriers and N x N collectives (the alignment's
   barrier, then per iteration a barrier that a message crosses, an allreduce across which a
   receive is pending, and a clean allreduce; the alignment's broadcast is no candidate),
   exactly the 1 + N clean ones are cut at, so the run is analysed in 2 + N windows, and no
   message is left unmatched.
2. The known answers in situ (±5 % or ±2 ms, widened by the ranks' late wake-ups):
   late_sender at main/ls/MPI_Recv = 2 L on every rank, wait_nxn at main/nxn/MPI_Allreduce
   = N D (P - 1 - r).
3. The kept trace re-analysed by critpath-analyze whole (scalars.analysis_windowed false) and
   window by window (true): every wait-state, profile, critical-path and delay metric per rank
   and per call path (the delay analysis's short- and long-term costs per family and the
   waiting side's split, analysed and remainder), the path's length and hops (its segments may be split at the cuts), and the parallelism histogram agree
   between the two and with the in-situ report (to 1e-9 relative: the same sums in another
   order; the path of each window runs from its cut's last arrival back to the previous
   one's, and together they are the whole run's path).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import (CheckError, check, compare_modes, load_report,  # noqa: E402
                            per_rank_failures, read_stdout)

N, D, L = 8, 0.020, 0.040
METRICS = ("late_sender", "late_sender_wrong_order", "late_receiver", "wait_barrier", "barrier_completion",
           "wait_nxn", "nxn_completion", "late_broadcast", "early_reduce", "early_scan", "wait_finalize",
           "init_completion", "mpi_time", "mpi_p2p", "mpi_collective", "time", "visits", "computation",
           "bytes_sent", "bytes_received", "critical_path", "critical_path_imbalance", "performance_impact",
           "imbalance_cost_intra", "imbalance_cost_inter", "delay_cost_short_term", "delay_cost_long_term",
           "wait_direct", "wait_indirect", "wait_propagating", "wait_terminal") + tuple(
               f"delay_{f}_{k}" for f in ("late_sender", "late_receiver", "barrier", "nxn", "late_broadcast",
                                          "early_reduce") for k in ("short_term", "long_term"))
SCALARS = ("messages", "unmatched_messages", "critical_path_length_s", "critical_path_hops", "average_parallelism",
           "delay_analysed_s", "delay_remainder_s", "delay_wait_instances")


def figures(rep, label):
    """The wait-state and profile figures as (name, value) pairs."""
    out = []
    for mid in METRICS:
        m = rep.get("metrics", {}).get(mid)
        check(m is not None, f"{label}: metrics.{mid} missing")
        out.append((f"{mid}.total", m.get("total", 0)))
        for r, v in enumerate(m.get("by_rank", [])):
            out.append((f"{mid}.rank{r}", v))
        for p, v in sorted(m.get("by_callpath", {}).items()):
            out.append((f"{mid}@{p}", v))
        for p, vs in sorted(m.get("by_callpath_rank", {}).items()):
            for r, v in enumerate(vs):
                out.append((f"{mid}@{p}.rank{r}", v))
    for k in SCALARS:
        out.append((k, rep["scalars"].get(k, 0)))
    # The parallelism histogram where both are exact (the whole run bins its busy intervals
    # beyond 65536, windows do so per window: the long run's histograms differ in method).
    hist = rep.get("critical_path", {}).get("parallelism_histogram", {})
    if hist.get("method") == "exact" and not MEMORY:
        for k, v in enumerate(hist.get("fraction", [])):
            out.append((f"parallelism[{k}]", v))
    return out


MEMORY = "--memory" in sys.argv
ESTIMATE = "--estimate" in sys.argv


def main(argv):
    memory = MEMORY
    argv = [a for a in argv if a not in ("--memory", "--estimate")]
    out, np_ = argv[1], int(argv[2])
    P = np_
    try:
        rep = load_report(out)
        s = rep["scalars"]
        if ESTIMATE:
            # Many events, few MPI calls: past the estimate from the events alone, within the
            # one from the scan's MPI calls: scanned, then analysed whole.
            check(s.get("analysis_windowed") is False, "analysed window by window although the MPI calls fit")
            check("window_scan_s" in s.get("analysis_phases", {}), "no window scan (analysis_phases)")
            check(not any("window" in n for n in rep.get("notes", [])), "a note about windows")
            late = sum(int(m.group(1)) for m in re.finditer(r"windows-lateness \d+ (\d+)", read_stdout(out))) * 1e-9
            fails, n = per_rank_failures(rep, "wait_nxn", "main/nxn/MPI_Allreduce",
                                         [N * D * (P - 1 - r) for r in range(P)], abs_=0.002 + late)
            check(not fails, "; ".join(fails))
            print(f"check_windows: scanned, analysed whole; {n} known answers hold")
            return 0
        check(s.get("analysis_windowed") is True, f"not analysed window by window: {s.get('analysis_windowed')}")
        if memory:
            notes = " ".join(rep.get("notes", []))
            check("CRITPATH_ANALYSIS_MEMORY" in notes, "no note names the memory budget")
            check(s.get("analysis_windows", 0) > 2 + N, f"only {s.get('analysis_windows')} windows")
            check(s.get("unmatched_messages", 0) == 0, f"{s.get('unmatched_messages')} unmatched messages")
    except CheckError as e:
        print(f"check_windows: FAIL: {e}")
        return 1
    try:
        check(memory or s.get("analysis_window_candidates") == 1 + 3 * N,
              f"{s.get('analysis_window_candidates')} candidate cuts, not {1 + 3 * N}")
        check(memory or s.get("analysis_window_cuts") == 1 + N,
              f"{s.get('analysis_window_cuts')} cuts, not {1 + N} (only the clean collectives)")
        check(memory or s.get("analysis_windows") == 2 + N, f"{s.get('analysis_windows')} windows, not {2 + N}")
        check(s.get("unmatched_messages", 0) == 0, f"{s.get('unmatched_messages')} unmatched messages")
        notes = " ".join(rep.get("notes", []))
        check("window by window" in notes, "no note says the analysis went window by window")
        late = sum(int(m.group(1)) for m in re.finditer(r"windows-lateness \d+ (\d+)", read_stdout(out))) * 1e-9
        tol = 0.002 + late
        fails, n = per_rank_failures(rep, "late_sender", "main/ls/MPI_Recv", [2 * L] * P, abs_=tol)
        fails2, n2 = per_rank_failures(rep, "wait_nxn", "main/nxn/MPI_Allreduce",
                                       [N * D * (P - 1 - r) for r in range(P)], abs_=tol)
        check(not (fails + fails2), "; ".join(fails + fails2))
        print(f"check_windows: {n + n2} known answers hold window by window (late wake-ups {late * 1e3:.1f} ms)")
    except CheckError as e:
        print(f"check_windows: FAIL: {e}")
        return 1
    var = "CRITPATH_ANALYSIS_MEMORY" if memory else "CRITPATH_DEBUG_ANALYSIS_WINDOW"
    return compare_modes("windows", argv, var, "analysis_windowed", [("0", False), ("1", True)], figures,
                         rel=1e-9)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
