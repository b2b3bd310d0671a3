"""critpath — tests/mpi/hooks/check_hooks.py: known answers for the compiler-hooks tests.

usage: check_hooks.py OUTDIR CASE NP [SOURCE_DIR]
CASE: c | cxx | fortran | filter | autofilter | callsite | dlopen | counters
Times are per rank (asserted on min/avg/max over ranks) within 5 % or 2 ms.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import approx, load_report  # noqa: E402


def cps_of(rep):
    return {c["path"]: c for c in rep["callpaths"]}


def need(cps, path):
    assert path in cps, f"call path {path!r} missing; have {sorted(cps)}"
    return cps[path]


def timed(cps, path, np_, visits, incl, excl):
    c = need(cps, path)
    assert c["ranks"] == np_, f"{path} on {c['ranks']} ranks, expected {np_}"
    for stat in ("min", "avg", "max"):
        approx(c["inclusive_s"][stat], incl, f"{path} inclusive {stat}")
        approx(c["exclusive_s"][stat], excl, f"{path} exclusive {stat}")
    return c


def visits(rep, path):
    return rep["metrics"]["visits"]["by_callpath"][path]


def balanced(rep):
    s = rep["scalars"]
    for key in ("unmatched_exits", "unclosed_frames"):
        if key not in s:
            print(f"check_hooks: note: scalars.{key} missing from report.json; not checked")
            continue
        assert s[key] == 0, f"{key}: {s[key]}"


def events(rep):
    return sum(r["events"] for r in rep["ranks"])


def no_nested_main(cps):
    bad = [p for p in cps if p.startswith("main/main")]
    assert not bad, f"main recorded twice: {bad}"


def case_c(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    no_nested_main(cps)
    timed(cps, "main/outer", np_, 3, 0.300, 0.180)
    timed(cps, "main/outer/inner", np_, 3, 0.120, 0.120)
    for p in ("main/outer/helper_a", "main/outer/helper_b", "main/MPI_Barrier", "main/setup"):
        need(cps, p)
    assert visits(rep, "main/outer") == 3 * np_
    # Calls before MPI_Init and after MPI_Finalize are not recorded and break nothing.
    assert not [p for p in cps if "pre_init" in p or "post_finalize" in p], sorted(cps)
    # File and line of the functions are known (DWARF): the region table carries them via the
    # name only, so check that the names are symbols, not addresses.
    assert not [p for p in cps if "0x" in p], f"unresolved addresses: {sorted(cps)}"


def case_cxx(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    no_nested_main(cps)
    timed(cps, "main/ns::Solver<double>::step(int)", np_, 2, 0.100, 0.100)
    timed(cps, "main/ns::Solver<float>::step(int)", np_, 2, 0.060, 0.060)
    need(cps, "main/double ns::reduce_all<double>(double)/MPI_Allreduce")
    need(cps, "main/ns::thrower(int)")


def case_fortran(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    base = [p for p in cps if p.endswith("/work::compute")]
    assert len(base) == 1, f"work::compute: {sorted(cps)}"
    compute = base[0]
    # sleep_ms is instrumented too: compute's own time is in compute/work::sleep_ms.
    timed(cps, compute, np_, 2, 0.200, 0.0)
    timed(cps, compute + "/work::kernel", np_, 2, 0.120, 0.0)
    timed(cps, compute + "/work::kernel/work::sleep_ms", np_, 2, 0.120, 0.120)
    timed(cps, compute + "/work::sleep_ms", np_, 4, 0.080, 0.080)
    halo = [p for p in cps if p.endswith("/halo/MPI_Allreduce")]
    assert halo, f"user region halo around MPI_Allreduce missing: {sorted(cps)}"


def case_filter(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    # inner is filtered: its time is outer's own time now.
    timed(cps, "main/outer", np_, 3, 0.300, 0.300)
    for gone in ("inner", "helper_a", "helper_b", "setup"):
        assert not [p for p in cps if p.split("/")[-1] == gone], f"{gone} not filtered: {sorted(cps)}"


def case_autofilter(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    tiny = need(cps, "main/kernel/tiny")
    kernel = need(cps, "main/kernel")
    assert visits(rep, "main/kernel/tiny") == 10_000_000 * np_, visits(rep, "main/kernel/tiny")
    assert events(rep) < 1_000_000 * np_, f"trace not reduced: {events(rep)} events"
    assert 0 < tiny["inclusive_s"]["sum"] <= kernel["inclusive_s"]["sum"] * 1.001
    approx(kernel["exclusive_s"]["sum"] + tiny["inclusive_s"]["sum"], kernel["inclusive_s"]["sum"],
           "kernel = own + tiny", rel=0.01)
    names = [a["region"] for a in rep["auto_filtered"]]
    assert "tiny" in names, f"auto_filtered: {rep['auto_filtered']}"
    assert "kernel" not in names
    with open(os.path.join(OUT, "suggested-filter.txt")) as f:
        text = f.read()
    assert "EXCLUDE tiny" in text, text
    with open(os.path.join(OUT, "summary.txt")) as f:
        assert "@--- Auto-filtered regions" in f.read()


def marker_line(src, marker):
    with open(os.path.join(src, "hooks_callsite.c")) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    raise AssertionError(f"marker {marker} not in the source")


def case_callsite(rep, np_, src):
    cps = cps_of(rep)
    balanced(rep)
    a, b = marker_line(src, "CALLSITE_A"), marker_line(src, "CALLSITE_B")
    senders = (np_ + 1) // 2
    for line in (a, b):
        p = f"main/hooks_callsite.c:{line}/MPI_Send"
        need(cps, p)
        assert visits(rep, p) == 3 * senders, f"{p}: {visits(rep, p)} visits"
        assert cps[f"main/hooks_callsite.c:{line}"]["kind"] == "callsite"
    assert "main/MPI_Send" not in cps, "MPI_Send outside a call site"
    sends = [p for p in cps if p.endswith("/MPI_Send")]
    assert len(sends) == 2, sends


def case_dlopen(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    timed(cps, "main/plugin_work", np_, 2, 0.200, 0.080)
    timed(cps, "main/plugin_work/plugin_inner", np_, 2, 0.120, 0.120)


def case_counters(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    m = rep["metrics"]
    assert "papi_CRITPATH_TEST_NS" in m, sorted(m)
    ns = m["papi_CRITPATH_TEST_NS"]
    # The synthetic counter is a nanosecond clock: per function call path, its inclusive and
    # exclusive values equal the measured inclusive and exclusive times (both read at the
    # same enter/exit events), whatever the machine's load did to the sleeps.
    for p in ("main/outer", "main/outer/inner", "main/setup"):
        c = cps[p]
        approx(ns["by_callpath_inclusive"][p], c["inclusive_s"]["sum"] * 1e9, f"{p} inclusive ns",
               rel=0.01, abs_=0.5e6)
        approx(ns["by_callpath"][p], c["exclusive_s"]["sum"] * 1e9, f"{p} exclusive ns",
               rel=0.01, abs_=0.5e6)
        approx(c["papi"]["CRITPATH_TEST_NS"]["inclusive"], ns["by_callpath_inclusive"][p], f"{p} papi field")
    approx(ns["by_callpath_inclusive"]["main/outer"], 0.300 * 1e9 * np_, "outer inclusive ns",
           abs_=2e6 * np_)
    # MPI calls have no reads of their own: they pass 0 up, their time is their caller's.
    assert ns["by_callpath"]["main/MPI_Barrier"] == 0
    assert len(ns["by_rank"]) == np_
    with open(os.path.join(OUT, "summary.txt")) as f:
        assert "@--- Hardware counters per call path" in f.read()
    # PAPI_TOT_INS: measured where the machine has counters, else exactly one warning.
    with open(OUT + ".stderr") as f:
        err = f.read()
    warned = [l for l in err.splitlines() if l.startswith("critpath:") and "PAPI_TOT_INS" in l]
    if "papi_PAPI_TOT_INS" not in m:
        assert len(warned) == 1, f"expected one warning about PAPI_TOT_INS, got {warned}"
    else:
        assert not warned


OUT = None


def main():
    global OUT
    OUT = sys.argv[1]
    case, np_ = sys.argv[2], int(sys.argv[3])
    src = sys.argv[4] if len(sys.argv) > 4 else os.path.dirname(os.path.abspath(__file__))
    rep = load_report(OUT)
    globals()["case_" + case](rep, np_, src)
    print(f"check_hooks {case}: ok")


if __name__ == "__main__":
    main()
