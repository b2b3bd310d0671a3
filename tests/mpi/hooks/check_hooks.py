"""critpath — tests/mpi/hooks/check_hooks.py: known answers for the compiler-hooks tests.

usage: check_hooks.py OUTDIR CASE NP [SOURCE_DIR]
CASE: c | cxx | fortran | filter | autofilter | autofilter_counted | threads | callsite | dlopen
      | counters
      | modes_gcc | modes_gcc_counted | modes_gcc_filter | modes_gcc_headers | modes_xray | modes_xray_filter
        (hooks_modes.cpp built by critpath-cxx in each of its modes)
Times are per rank (asserted on min/avg/max over ranks) within 5 % or 2 ms.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import CheckError, approx, check, fail, load_report, read_stderr, read_stdout, read_text  # noqa: E402


def cps_of(rep):
    return {c["path"]: c for c in rep["callpaths"]}


def need(cps, path):
    check(path in cps, f"call path {path!r} missing; have {sorted(cps)}")
    return cps[path]


# The largest per-rank sum of the program's late wake-ups from its sleeps (seconds), from the
# "hooks-lateness NS" lines of OUTDIR.stdout (hooks_timing.h): a region that ends with a sleep
# ends that much later than its known answer on a loaded machine, whatever the tracer does.
LATENESS = 0.0


def read_lateness(out_dir):
    try:
        with open(out_dir.rstrip("/") + ".stdout", encoding="utf-8", errors="replace") as f:
            ns = [int(m.group(1)) for m in re.finditer(r"^hooks-lateness (\d+)$", f.read(), re.M)]
    except OSError:
        return 0.0
    return max(ns, default=0) * 1e-9


def timed(rep, cps, path, np_, calls, incl, excl, abs_=0.002):
    """path ran on np_ ranks, `calls` times per rank, with these inclusive/exclusive seconds
    (within 5 % or abs_, widened by the program's own late wake-ups)."""
    abs_ += LATENESS
    c = need(cps, path)
    check(c["ranks"] == np_, f"{path} on {c['ranks']} ranks, expected {np_}")
    n = visits(rep, path)
    check(n == calls * np_, f"visits of {path}: {n!r}, expected {calls * np_} ({calls} per rank x {np_} ranks)")
    for stat in ("min", "avg", "max"):
        approx(c["inclusive_s"][stat], incl, f"{path} inclusive {stat}", abs_=abs_)
        approx(c["exclusive_s"][stat], excl, f"{path} exclusive {stat}", abs_=abs_)
    return c


def visits(rep, path):
    values = rep["metrics"]["visits"]["by_callpath"]
    check(path in values, f"metric visits has no call path {path!r}; have {sorted(values)}")
    return values[path]


def balanced(rep):
    s = rep["scalars"]
    for key in ("unmatched_exits", "unclosed_frames"):
        check(key in s, f"scalars.{key} missing from report.json; scalars: {sorted(s)}")
        check(s[key] == 0, f"scalars.{key} is {s[key]!r}, expected 0")


def events(rep):
    return sum(r["events"] for r in rep["ranks"])


def no_nested_main(cps):
    bad = [p for p in cps if p.startswith("main/main")]
    check(not bad, f"main recorded twice: {bad}")


def case_c(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    no_nested_main(cps)
    timed(rep, cps, "main/outer", np_, 3, 0.300, 0.180)
    timed(rep, cps, "main/outer/inner", np_, 3, 0.120, 0.120)
    for p in ("main/outer/helper_a", "main/outer/helper_b", "main/MPI_Barrier", "main/setup"):
        need(cps, p)
    check(visits(rep, "main/outer") == 3 * np_,
          f"visits of main/outer: {visits(rep, 'main/outer')!r}, expected {3 * np_}")
    # Calls before MPI_Init and after MPI_Finalize are not recorded and break nothing.
    outside = [p for p in cps if "pre_init" in p or "post_finalize" in p]
    check(not outside, f"calls outside MPI_Init..MPI_Finalize recorded: {outside}")
    # File and line of the functions are known (DWARF): the region table carries them via the
    # name only, so check that the names are symbols, not addresses.
    unresolved = [p for p in cps if "0x" in p]
    check(not unresolved, f"unresolved addresses: {unresolved}")


def case_cxx(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    no_nested_main(cps)
    timed(rep, cps, "main/ns::Solver<double>::step(int)", np_, 2, 0.100, 0.100)
    timed(rep, cps, "main/ns::Solver<float>::step(int)", np_, 2, 0.060, 0.060)
    need(cps, "main/double ns::reduce_all<double>(double)/MPI_Allreduce")
    need(cps, "main/ns::thrower(int)")


def case_fortran(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    base = [p for p in cps if p.endswith("/work::compute")]
    check(len(base) == 1, f"expected one call path ending in /work::compute, found {base}; "
          f"have {sorted(cps)}")
    compute = base[0]
    # sleep_ms is instrumented too: compute's own time is in compute/work::sleep_ms.
    timed(rep, cps, compute, np_, 2, 0.200, 0.0)
    timed(rep, cps, compute + "/work::kernel", np_, 2, 0.120, 0.0)
    timed(rep, cps, compute + "/work::kernel/work::sleep_ms", np_, 2, 0.120, 0.120)
    timed(rep, cps, compute + "/work::sleep_ms", np_, 4, 0.080, 0.080)
    halo = [p for p in cps if p.endswith("/halo/MPI_Allreduce")]
    check(halo, f"user region halo around MPI_Allreduce missing: {sorted(cps)}")


def case_filter(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    # inner is filtered: its time is outer's own time now.
    timed(rep, cps, "main/outer", np_, 3, 0.300, 0.300)
    for gone in ("inner", "helper_a", "helper_b", "setup"):
        left = [p for p in cps if p.split("/")[-1] == gone]
        check(not left, f"{gone} not filtered: {left}")


def case_autofilter(rep, np_, _src, counted=False):
    cps = cps_of(rep)
    balanced(rep)
    tiny = need(cps, "main/kernel/tiny")
    kernel = need(cps, "main/kernel")
    n = visits(rep, "main/kernel/tiny")
    if counted:  # CRITPATH_PATCH_HOOKS=0: the hooks go on counting every visit
        check(n == 10_000_000 * np_, f"visits of main/kernel/tiny: {n!r}, expected {10_000_000 * np_}")
    else:
        # Judged at its 100,000th visit; at the next one both hook calls of tiny (its entry and
        # its exit) were patched out: later visits are not counted.
        check(n == 100_000 * np_, f"visits of main/kernel/tiny: {n!r}, expected {100_000 * np_} "
              "(patched out after the automatic filter's 100,000)")
        x = instrumentation(rep, "gcc")
        check(x.get("sites_patched_out") == 2, f"instrumentation figures (tiny's two hook calls patched out): {x}")
        check("was patched out at its next call" in read_text(OUT, "summary.txt"),
              "summary.txt's auto-filter section does not say the hook calls were patched out")
    check(events(rep) < 1_000_000 * np_,
          f"trace not reduced: {events(rep)} events, expected fewer than {1_000_000 * np_}")
    t, k = tiny["inclusive_s"]["sum"], kernel["inclusive_s"]["sum"]
    check(0 < t <= k * 1.001, f"tiny's inclusive time {t!r} outside (0, kernel's inclusive {k!r} x 1.001]")
    approx(kernel["exclusive_s"]["sum"] + tiny["inclusive_s"]["sum"], kernel["inclusive_s"]["sum"],
           "kernel = own + tiny", rel=0.01)
    names = [a["region"] for a in rep["auto_filtered"]]
    check("tiny" in names, f"tiny not auto-filtered; auto_filtered: {rep['auto_filtered']}")
    check("kernel" not in names, f"kernel auto-filtered; auto_filtered: {rep['auto_filtered']}")
    text = read_text(OUT, "suggested-filter.txt")
    check("EXCLUDE tiny" in text, f"suggested-filter.txt lacks 'EXCLUDE tiny':\n{text}")
    check("@--- Auto-filtered regions" in read_text(OUT, "summary.txt"),
          "summary.txt lacks the section '@--- Auto-filtered regions'")


def case_autofilter_counted(rep, np_, src):
    case_autofilter(rep, np_, src, counted=True)


def case_threads(rep, np_, _src):
    # hooks_threads.c: 4 threads per rank, each 1,000,000 calls of tiny(i) = (3i + 1) & 1023.
    threads, calls = 4, 1_000_000
    expected = sum((3 * i + 1) & 1023 for i in range(calls)) * threads * np_
    m = re.search(r"^hooks_threads: checksum (-?\d+)$", read_stdout(OUT), re.M)
    check(m is not None, "hooks_threads printed no checksum")
    check(int(m.group(1)) == expected,
          f"checksum {m.group(1)}, expected {expected}: patching the hook calls changed the program's results")
    balanced(rep)
    cps = cps_of(rep)
    tiny = [p for p in cps if p.endswith("/tiny")]
    nap = [p for p in cps if p.endswith("worker/nap")]
    check(tiny and nap, f"call paths of tiny / worker/nap missing; have {sorted(cps)}")
    # nap is recorded at every visit (3 per thread); tiny until the automatic filter's verdict
    # (100,000 visits on the thread that judged it), then patched out: each thread's visits
    # stop being counted at its next call of tiny.
    n_nap = sum(visits(rep, p) for p in nap)
    check(n_nap == 3 * threads * np_, f"visits of nap: {n_nap}, expected {3 * threads * np_}")
    n_tiny = sum(visits(rep, p) for p in tiny)
    check(100_000 * np_ <= n_tiny <= threads * 100_000 * np_,
          f"visits of tiny: {n_tiny}, expected between {100_000 * np_} and {threads * 100_000 * np_} "
          "(judged at 100,000 visits on a thread, not counted once patched out)")
    names = [a["region"] for a in rep["auto_filtered"]]
    check("tiny" in names, f"tiny not auto-filtered; auto_filtered: {rep['auto_filtered']}")
    x = instrumentation(rep, "gcc")
    check(x.get("sites_patched_out", 0) >= 2, f"instrumentation figures (tiny's hook calls patched out): {x}")


def marker_line(src, marker):
    with open(os.path.join(src, "hooks_callsite.c")) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    fail(f"marker {marker} not in {os.path.join(src, 'hooks_callsite.c')}")


def case_callsite(rep, np_, src):
    cps = cps_of(rep)
    balanced(rep)
    a, b = marker_line(src, "CALLSITE_A"), marker_line(src, "CALLSITE_B")
    senders = (np_ + 1) // 2
    for line in (a, b):
        p = f"main/hooks_callsite.c:{line}/MPI_Send"
        need(cps, p)
        check(visits(rep, p) == 3 * senders,
              f"{p}: {visits(rep, p)!r} visits, expected {3 * senders} (3 x {senders} senders)")
        site = need(cps, f"main/hooks_callsite.c:{line}")
        check(site["kind"] == "callsite",
              f"main/hooks_callsite.c:{line} is of kind {site['kind']!r}, expected 'callsite'")
    check("main/MPI_Send" not in cps, "MPI_Send recorded outside a call site (main/MPI_Send)")
    sends = [p for p in cps if p.endswith("/MPI_Send")]
    check(len(sends) == 2, f"expected 2 call paths ending in /MPI_Send, found {sends}")


def case_dlopen(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    timed(rep, cps, "main/plugin_work", np_, 2, 0.200, 0.080)
    timed(rep, cps, "main/plugin_work/plugin_inner", np_, 2, 0.120, 0.120)


def case_counters(rep, np_, _src):
    cps = cps_of(rep)
    balanced(rep)
    m = rep["metrics"]
    check("papi_CRITPATH_TEST_NS" in m, f"metric papi_CRITPATH_TEST_NS missing; metrics: {sorted(m)}")
    ns = m["papi_CRITPATH_TEST_NS"]
    # The synthetic counter is a nanosecond clock: per function call path, its inclusive and
    # exclusive values equal the measured inclusive and exclusive times (both read at the
    # same enter/exit events), whatever the machine's load did to the sleeps.
    for p in ("main/outer", "main/outer/inner", "main/setup"):
        c = need(cps, p)
        approx(ns["by_callpath_inclusive"][p], c["inclusive_s"]["sum"] * 1e9, f"{p} inclusive ns",
               rel=0.01, abs_=0.5e6)
        approx(ns["by_callpath"][p], c["exclusive_s"]["sum"] * 1e9, f"{p} exclusive ns",
               rel=0.01, abs_=0.5e6)
        approx(c["papi"]["CRITPATH_TEST_NS"]["inclusive"], ns["by_callpath_inclusive"][p], f"{p} papi field")
    approx(ns["by_callpath_inclusive"]["main/outer"], 0.300 * 1e9 * np_, "outer inclusive ns",
           abs_=2e6 * np_)
    # MPI calls have no reads of their own: they pass 0 up, their time is their caller's.
    barrier = ns["by_callpath"].get("main/MPI_Barrier")
    check(barrier == 0, f"papi_CRITPATH_TEST_NS of main/MPI_Barrier: {barrier!r}, expected 0")
    check(len(ns["by_rank"]) == np_,
          f"papi_CRITPATH_TEST_NS.by_rank has {len(ns['by_rank'])} entries, expected {np_}")
    check("@--- Hardware counters per call path" in read_text(OUT, "summary.txt"),
          "summary.txt lacks the section '@--- Hardware counters per call path'")
    # PAPI_TOT_INS: measured where the machine has counters, else exactly one warning.
    err = read_stderr(OUT)
    warned = [l for l in err.splitlines() if l.startswith("critpath:") and "PAPI_TOT_INS" in l]
    if "papi_PAPI_TOT_INS" not in m:
        check(len(warned) == 1, f"PAPI_TOT_INS not measured: expected one warning about it, got {warned}")
    else:
        check(not warned, f"PAPI_TOT_INS measured, yet warned about: {warned}")


# hooks_modes.cpp's call paths.
MODES_SOLVERS = (("main/grid::Solver<double>::sweep(int)", "grid::Solver<double>::exchange()", 0.100),
                 ("main/grid::Solver<float>::sweep(int)", "grid::Solver<float>::exchange()", 0.060))
MODES_OUTER = "main/grid::outer()"
MODES_HELPER = MODES_OUTER + "/grid::filtered_helper(int)"
MODES_TINY = "main/grid::kernel(int)/grid::tiny(int)"
MODES_TINY_CALLS = 300000
# The known times differ by 40 ms or more (what moves where when grid::filtered_helper is
# filtered); 10 ms absorbs a sleeper's late wake-up on a loaded machine.
MODES_ABS = 0.010


def modes_common(rep, np_, helper_filtered):
    """Demangled, correctly nested call paths with their known times; MPI under its function."""
    cps = cps_of(rep)
    balanced(rep)
    no_nested_main(cps)
    for path, exchange, excl in MODES_SOLVERS:
        c = need(cps, path)
        n = visits(rep, path)
        check(n == 2 * np_, f"visits of {path}: {n!r}, expected {2 * np_}")
        for stat in ("min", "avg", "max"):
            approx(c["exclusive_s"][stat], excl, f"{path} exclusive {stat}", abs_=MODES_ABS + LATENESS)
        need(cps, f"{path}/{exchange}/MPI_Allreduce")
    if helper_filtered:
        timed(rep, cps, MODES_OUTER, np_, 2, 0.120, 0.120, abs_=MODES_ABS)
        left = [p for p in cps if "filtered_helper" in p]
        check(not left, f"grid::filtered_helper is in the call tree: {left}")
    else:
        timed(rep, cps, MODES_OUTER, np_, 2, 0.120, 0.040, abs_=MODES_ABS)
        timed(rep, cps, MODES_HELPER, np_, 2, 0.080, 0.080, abs_=MODES_ABS)
    need(cps, MODES_TINY)
    unresolved = [p for p in cps if "0x" in p]
    check(not unresolved, f"unresolved addresses: {unresolved}")
    return cps


def instrumentation(rep, mode):
    x = rep.get("instrumentation")
    check(x is not None, "report.json has no 'instrumentation'")
    check(x["mode"] == mode, f"instrumentation mode {x['mode']!r}, expected {mode!r}; {x}")
    return x


def case_modes_gcc(rep, np_, _src, counted=False):
    cps = modes_common(rep, np_, helper_filtered=False)
    headers = [p for p in cps if "Field<" in p]
    check(not headers, f"functions defined in hooks_modes.h instrumented by default: {headers}")
    n = visits(rep, MODES_TINY)
    if counted:  # CRITPATH_PATCH_HOOKS=0
        check(n == MODES_TINY_CALLS * np_, f"visits of {MODES_TINY}: {n!r}, expected {MODES_TINY_CALLS * np_}")
    else:
        # CRITPATH_AUTOFILTER_VISITS=1000: judged after 1000 visits, then its hook calls patched
        # out at their next call; the other calls jump over them and are not counted.
        check(n == 1000 * np_, f"visits of {MODES_TINY}: {n!r}, expected {1000 * np_} (patched out after "
              f"1000 of {MODES_TINY_CALLS} calls per rank)")
    names = [a["region"] for a in rep["auto_filtered"]]
    check("grid::tiny(int)" in names, f"grid::tiny(int) not auto-filtered; auto_filtered: {rep['auto_filtered']}")
    x = instrumentation(rep, "gcc")
    # main, the two sweeps and exchanges, outer, filtered_helper, kernel, tiny
    check(x["functions"] >= 9 and x["auto_filtered"] >= 1 and x["patched"] == 0,
          f"instrumentation figures: {x}")
    check((x.get("sites_patched_out", 0) == 0) == counted,
          f"instrumentation figures (hook call sites patched out: {'none' if counted else 'some'}): {x}")
    summary = read_text(OUT, "summary.txt")
    cmd = f"critpath-cxx --filter {OUT}/suggested-filter.txt"
    check(cmd in summary, f"summary.txt does not tell the rebuild command '{cmd}'")
    check("@ Instrumentation : gcc (-finstrument-functions)" in summary,
          "summary.txt lacks '@ Instrumentation : gcc (-finstrument-functions)'")


def case_modes_gcc_counted(rep, np_, src):
    case_modes_gcc(rep, np_, src, counted=True)


def case_modes_gcc_filter(rep, np_, _src):
    modes_common(rep, np_, helper_filtered=True)
    # Left out by the compiler, not by a run-time filter (none is set).
    x = instrumentation(rep, "gcc")
    check(x["filtered"] == 0, f"run-time filtered functions: {x['filtered']}, expected 0; {x}")


def case_modes_gcc_headers(rep, np_, _src):
    cps = modes_common(rep, np_, helper_filtered=False)
    for path, _exchange, _excl in MODES_SOLVERS:
        t = path.split("/")[-1].split("::sweep")[0].replace("Solver", "Field")
        at = f"{path}/{t}::at(int)"
        need(cps, at)
        n = visits(rep, at)
        check(n == 2 * 40 * np_, f"visits of {at}: {n!r}, expected {2 * 40 * np_} (2 sweeps x 40)")


def case_modes_xray(rep, np_, _src):
    modes_common(rep, np_, helper_filtered=False)
    # CRITPATH_AUTOFILTER_VISITS=1000: judged after 1000 visits, then unpatched; the other
    # calls run the nop sleds and are not counted at all.
    n = visits(rep, MODES_TINY)
    check(n == 1000 * np_, f"visits of {MODES_TINY}: {n!r}, expected {1000 * np_} (unpatched after 1000 "
          f"of {MODES_TINY_CALLS} calls per rank)")
    names = [a["region"] for a in rep["auto_filtered"]]
    check("grid::tiny(int)" in names, f"grid::tiny(int) not auto-filtered; auto_filtered: {rep['auto_filtered']}")
    x = instrumentation(rep, "xray")
    check(x["functions"] >= 9 and x["patched"] == x["functions"] and x["filtered"] == 0,
          f"instrumentation figures (every function patched): {x}")
    check(x["unpatched"] >= 1 and x["unpatched"] == x["auto_filtered"],
          f"instrumentation figures (tiny unpatched by the automatic filter): {x}")
    summary = read_text(OUT, "summary.txt")
    check("@ Instrumentation : xray (-fxray-instrument)" in summary,
          "summary.txt lacks '@ Instrumentation : xray (-fxray-instrument)'")
    check("Unpatched after their first CRITPATH_AUTOFILTER_VISITS visits" in summary,
          "summary.txt's auto-filter section does not say the functions were unpatched")


def case_modes_xray_filter(rep, np_, _src):
    modes_common(rep, np_, helper_filtered=True)
    x = instrumentation(rep, "xray")
    check(x["filtered"] == 1 and x["patched"] == x["functions"] - 1,
          f"instrumentation figures (grid::filtered_helper never patched): {x}")


OUT = None


def main():
    global OUT, LATENESS
    OUT = sys.argv[1]
    LATENESS = read_lateness(OUT)
    if LATENESS > 0.001:
        print(f"check_hooks: the program woke up late by {LATENESS * 1e3:.1f} ms in all (tolerances widened)")
    case, np_ = sys.argv[2], int(sys.argv[3])
    src = sys.argv[4] if len(sys.argv) > 4 else os.path.dirname(os.path.abspath(__file__))
    rep = load_report(OUT)
    run_case = globals().get("case_" + case)
    if run_case is None:
        print(f"check_hooks: unknown case {case!r}")
        sys.exit(2)
    try:
        run_case(rep, np_, src)
    except CheckError as e:
        print(f"check_hooks {case}: FAIL: {e}")
        sys.exit(1)
    print(f"check_hooks {case}: ok")


if __name__ == "__main__":
    main()
