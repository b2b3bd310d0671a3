"""critpath — tests/mpi/critpath_check.py: helpers for the MPI tests' check scripts.

Where it sits: the last step of an MPI test. run_mpi_test.py runs a program under the tracer,
then `python3 check_<x>.py OUTDIR args...` with this directory on PYTHONPATH; the check reads
what the library wrote (docs/report.md) and compares it with known answers.

    from critpath_check import load_report, approx, by_callpath, by_rank, read_events

    rep = load_report(out)                       # OUTDIR/report.json, schema checked
    approx(by_callpath(rep, "time", "main/outer"), 4 * 0.24, "outer exclusive time")
    approx(by_rank(rep, "visits", 0), 12, "visits on rank 0", rel=0, abs_=0)
    events = read_events(out, 0)                 # OUTDIR/events/rank-0.txt (CRITPATH_DUMP_EVENTS=1)
    sends = [e for e in events if e.kind == "SEND"]; sends[0].fields["bytes"] == "40"

Every helper raises CheckError (an AssertionError) with a message that says what was looked for
and what was there instead, so a failing ctest log explains itself.
"""
import json
import os
import re

SCHEMA = "critpath-report/2"


class CheckError(AssertionError):
    pass


def fail(message):
    raise CheckError(message)


def check(condition, message):
    """assert that survives python3 -O, with a message."""
    if not condition:
        fail(message)


# --- Numbers -----------------------------------------------------------------------------------

def approx(value, expected, what="value", rel=0.05, abs_=0.002, **kw):
    """Asserts |value - expected| <= max(abs_, rel * |expected|) and returns value.

    Defaults suit times in seconds: 5 % or 2 ms, whichever is larger. rel=0, abs_=0 demands
    equality (counts, bytes). `abs=` is accepted as a synonym of `abs_`. A sanitizer build
    (CPTEST_TIMING_SLACK_S, set by tests/CMakeLists.txt) widens every non-zero absolute
    tolerance by that much: it checks memory errors, and its instrumented code shifts the
    programs' timings by a few ms on a loaded machine.
    """
    if "abs" in kw:
        abs_ = kw.pop("abs")
    if kw:
        raise TypeError(f"approx: unexpected arguments {sorted(kw)}")
    if abs_ > 0:
        abs_ += float(os.environ.get("CPTEST_TIMING_SLACK_S", "0") or 0)
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(f"{what}: expected a number near {expected!r}, got {value!r}")
    tolerance = max(abs_, rel * abs(expected))
    if not abs(value - expected) <= tolerance:
        fail(f"{what}: got {value!r}, expected {expected!r} "
             f"(tolerance {tolerance:g} = max(abs {abs_:g}, rel {rel:g}); "
             f"off by {value - expected:+g})")
    return value


def at_least(value, minimum, what="value"):
    if value is None or not value >= minimum:
        fail(f"{what}: got {value!r}, expected at least {minimum!r}")
    return value


def at_most(value, maximum, what="value"):
    if value is None or not value <= maximum:
        fail(f"{what}: got {value!r}, expected at most {maximum!r}")
    return value


# --- report.json ---------------------------------------------------------------------------------

def load_report(out_dir, schema=SCHEMA):
    """OUTDIR/report.json as a dict; fails when it is missing, not JSON or of another schema."""
    path = os.path.join(out_dir, "report.json")
    if not os.path.isfile(path):
        listing = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else "(no directory)"
        fail(f"{path} missing; {out_dir} holds {listing}")
    with open(path, encoding="utf-8") as f:
        try:
            rep = json.load(f)
        except json.JSONDecodeError as e:
            fail(f"{path} is not valid JSON: {e}")
    if schema is not None and rep.get("schema") != schema:
        fail(f"{path}: schema {rep.get('schema')!r}, expected {schema!r}")
    attach_rank_matrix(rep, out_dir)
    return rep


# --- rank_matrix.zst -----------------------------------------------------------------------------

def read_rank_matrix(out_dir):
    """OUTDIR/rank_matrix.zst as {metric: {path: [value per rank]}} (every call path), from its
    index rank_matrix.json (docs/report.md); None when the index is absent."""
    import struct
    import subprocess
    index_path = os.path.join(out_dir, "rank_matrix.json")
    if not os.path.isfile(index_path):
        return None
    with open(index_path, encoding="utf-8") as f:
        index = json.load(f)
    if index.get("format") != "critpath-rank-matrix/1":
        fail(f"{index_path}: format {index.get('format')!r}")
    zpath = os.path.join(out_dir, index["file"])
    try:
        raw = subprocess.run(["zstd", "-d", "-c", "-q", zpath], check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"{zpath}: zstd -d failed: {e}")
    P, metrics, paths = index["ranks"], index["metrics"], index["callpaths"]
    G, M = len(paths), len(metrics)
    if len(raw) != 8 * P * M * G:
        fail(f"{zpath}: {len(raw)} bytes decompressed, expected 8 x {P} ranks x {M} metrics x {G} call paths")
    values = struct.unpack(f"<{P * M * G}d", raw)
    out = {m: {p: [0.0] * P for p in paths} for m in metrics}
    for r in range(P):
        for mi, m in enumerate(metrics):
            base = (r * M + mi) * G
            for g, p in enumerate(paths):
                out[m][p][r] = values[base + g]
    return out


def check_callpath_stats(rep, matrix):
    """Every metric's by_callpath_stats (report.json) against the matrix's rows: the same call
    paths (those with a non-zero value), min/max/top exactly, mean and stddev to rounding."""
    for mid, rows in matrix.items():
        stats = metric(rep, mid).get("by_callpath_stats", {})
        nonzero = {p for p, v in rows.items() if any(x != 0 for x in v)}
        if set(stats) != nonzero:
            fail(f"{mid}: by_callpath_stats has {sorted(set(stats) ^ nonzero)[:5]} unlike the matrix")
        for p in nonzero:
            v, st = rows[p], stats[p]
            P = len(v)
            mean = sum(v) / P
            sd = max(0.0, sum(x * x for x in v) / P - mean * mean) ** 0.5
            top = sorted(((x, r) for r, x in enumerate(v) if x > 0), key=lambda t: (-t[0], t[1]))[:5]
            if st["min"] != min(v) or st["max"] != max(v) or [[r, x] for x, r in top] != st["top"]:
                fail(f"{mid} at {p}: statistics {st} unlike the matrix's row {v[:16]}")
            for what, want in (("mean", mean), ("stddev", sd)):
                if abs(st[what] - want) > 1e-9 * max(1.0, abs(want)) + 1e-12 * max(map(abs, v)):
                    fail(f"{mid} at {p}: {what} {st[what]} unlike the matrix's {want}")


def attach_rank_matrix(rep, out_dir):
    """When the run wrote OUTDIR/rank_matrix.zst: checks report.json's by_callpath_stats against
    it and gives each of its metrics `by_callpath_rank` ({path: [value per rank]} for the call
    paths with a non-zero value, as report.json had it up to schema critpath-report/1)."""
    matrix = read_rank_matrix(out_dir)
    said = rep.get("rank_matrix")
    if matrix is None and isinstance(said, dict) and said.get("written"):
        fail(f"{out_dir}: report.json says rank_matrix.zst was written, its index is missing")
    if matrix is None or not isinstance(rep.get("metrics"), dict):
        return
    check_callpath_stats(rep, matrix)
    for mid, rows in matrix.items():
        kept = {p: v for p, v in rows.items() if any(x != 0 for x in v)}
        if kept:
            rep["metrics"][mid]["by_callpath_rank"] = kept


def metric(rep, metric_id):
    """The metric object {unit, description, total, by_callpath, by_rank}."""
    metrics = rep.get("metrics", {})
    if metric_id not in metrics:
        fail(f"metric {metric_id!r} missing; report has {sorted(metrics)}")
    return metrics[metric_id]


def by_callpath(rep, metric_id, path, default=None):
    """Exclusive value of metric_id at call path `path`, summed over ranks.

    Fails when the path is absent, unless `default` is given (metrics may omit zero entries).
    """
    values = metric(rep, metric_id).get("by_callpath", {})
    if path in values:
        return values[path]
    if default is not None:
        return default
    close = [p for p in values if p.endswith(path.rsplit("/", 1)[-1])]
    fail(f"metric {metric_id!r} has no call path {path!r}; similar: {sorted(close)[:10]}; "
         f"all: {sorted(values)[:30]}")


def by_rank(rep, metric_id, rank=None):
    """Per-rank totals of metric_id: the list, or the value of one rank."""
    values = metric(rep, metric_id).get("by_rank")
    if not isinstance(values, list):
        fail(f"metric {metric_id!r} has no by_rank list")
    if rank is None:
        return values
    if not 0 <= rank < len(values):
        fail(f"metric {metric_id!r}: rank {rank} out of range (by_rank has {len(values)})")
    return values[rank]


def per_rank_failures(rep, metric_id, path, expected, abs_=0.002):
    """Compares metric_id at call path `path` on every rank with expected[rank] (approx, 5 %
    or abs_).

    Returns (failure messages, number of values checked); a path without per-rank values
    counts as 0 on every rank.
    """
    P = len(expected)
    values = metric(rep, metric_id).get("by_callpath_rank", {}).get(path, [0.0] * P)
    failures = []
    for r in range(P):
        try:
            approx(values[r], expected[r], f"{metric_id} at {path} on rank {r}", abs_=abs_)
        except CheckError as ex:
            failures.append(str(ex))
    return failures, P


def uniform_excess(deviations, tol):
    """A late entry, not the analysis: the waits that should be positive (their value minus the
    expected value in `deviations`, two or more) all came out the same amount d > tol too long.
    The rank they wait for entered its call d late, descheduled after its sleep's deadline was
    noted (16 ranks on 2 cores: 12.7 ms once), which the program's timing made. A wrong
    analysis fails again when the test runs once more (TIMING_CODE)."""
    return len(deviations) >= 2 and min(deviations) > tol and max(deviations) - min(deviations) <= tol


def check_no_clock_violations(rep, out_dir, what):
    """No clock-condition violation in report.json's scalars nor on summary.txt's clock line
    ("0 p2p, 0 collective"); `what` says why there must be none."""
    p2p, coll = scalar(rep, "clock_violations_p2p"), scalar(rep, "clock_violations_collective")
    check(p2p == 0 and coll == 0, f"{what}: clock-condition violations {p2p} p2p, {coll} collective")
    summary = read_text(out_dir, "summary.txt")
    check("clock-condition violations: 0 p2p, 0 collective" in summary,
          f"{what}: summary.txt lacks 'clock-condition violations: 0 p2p, 0 collective': "
          + next((l for l in summary.splitlines() if "clock-condition" in l), "(no clock line)"))
    return summary


def check_last_rank_late(rep, metric_id, path, late_s, P, what, abs_=0.002):
    """metric_id at `path` is late_s on every rank of P but the last (the late one), where it
    is 0 (approx, 5 % or abs_); returns the number of values checked."""
    f, n = per_rank_failures(rep, metric_id, path, [late_s if r != P - 1 else 0.0 for r in range(P)], abs_=abs_)
    check(not f, f"{what}: " + "; ".join(f))
    return n


def total(rep, metric_id):
    return metric(rep, metric_id).get("total")


def callpaths(rep):
    """{path: callpath object}."""
    return {c["path"]: c for c in rep.get("callpaths", [])}


def callpath(rep, path):
    paths = callpaths(rep)
    if path not in paths:
        fail(f"call path {path!r} missing; have {sorted(paths)}")
    return paths[path]


def scalar(rep, name):
    scalars = rep.get("scalars", {})
    if name not in scalars:
        fail(f"scalar {name!r} missing; report has {sorted(scalars)}")
    return scalars[name]


# --- Text outputs --------------------------------------------------------------------------------

def read_text(out_dir, name):
    """A file of the output directory as text (e.g. "summary.txt", "critpath.cfg")."""
    path = os.path.join(out_dir, name)
    if not os.path.isfile(path):
        fail(f"{path} missing")
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def read_stdout(out_dir):
    """The program's stdout as saved by run_mpi_test.py (OUTDIR.stdout)."""
    with open(out_dir.rstrip("/") + ".stdout", encoding="utf-8", errors="replace") as f:
        return f.read()


def read_stderr(out_dir):
    """The program's stderr as saved by run_mpi_test.py (OUTDIR.stderr)."""
    with open(out_dir.rstrip("/") + ".stderr", encoding="utf-8", errors="replace") as f:
        return f.read()


def lateness(out, who="check_waits", combine=max):
    """{scenario: the late wake-ups of its ranks, seconds: the largest rank's sum (or another
    `combine` of the ranks' sums)}, from the program's "waits-lateness RANK SCENARIO NS" lines
    (tests/mpi/waits/waits_util.h): a rank that woke late entered its call late, shifting the
    waits it takes part in by as much, whatever the tracer does. `who` prefixes the line that
    names the scenarios whose tolerance this widens (by more than 1 ms)."""
    try:
        text = read_stdout(out)
    except OSError:
        return {}
    per = {}
    for m in re.finditer(r"^waits-lateness (\d+) (\S+) (\d+)$", text, re.M):
        per.setdefault(m.group(2), []).append(int(m.group(3)) * 1e-9)
    late = {k: combine(v) for k, v in per.items()}
    widened = {k: v for k, v in late.items() if v > 0.001}
    if widened:
        print(f"{who}: late wake-ups widen the tolerance: " +
              ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in sorted(widened.items())))
    return late


SKIP_CODE = 77  # ctest SKIP_RETURN_CODE of the MPI tests (run_mpi_test.py)
# A check whose only failures are the program's own timing (the run did not produce the waits it
# was written to make: a descheduled rank), not the analysis: run_mpi_test.py runs it once more.
TIMING_CODE = 78


def finished_or_skip(out_dir, check_name, done):
    """For programs that need MPI_THREAD_MULTIPLE: exits with SKIP_CODE when the program said
    the library lacks it ("SKIP: the MPI library provides thread level ...") and did not print
    its success line `done`; fails when neither line is there. Only the program's own verdict
    skips, not any "SKIP:" a launcher or library might print."""
    lines = read_stdout(out_dir).splitlines()
    skip = [l for l in lines if l.startswith("SKIP: the MPI library provides thread level")]
    finished = any(l.startswith(done) for l in lines)
    if skip and not finished:
        print(f"{check_name}: " + skip[0])
        raise SystemExit(SKIP_CODE)
    check(finished, f"the program did not finish: no '{done}' line in its stdout:\n" + "\n".join(lines))


def critpath_lines(text):
    """The lines of a stream that the library wrote (prefix `critpath:`)."""
    return [line for line in text.splitlines() if line.startswith("critpath:")]


def summary_section(out_dir, title):
    """The lines of summary.txt between `@--- <title>` and the next `@---` marker."""
    lines = read_text(out_dir, "summary.txt").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("@--- " + title):
            body = []
            for rest in lines[i + 1:]:
                if rest.startswith("@---"):
                    break
                body.append(rest)
            return body
    markers = [l for l in lines if l.startswith("@---")]
    fail(f"summary.txt has no section {title!r}; sections: {markers}")


def findings(out_dir):
    """summary.txt's Findings, one sentence per item, in order (the "NN. " prefix removed)."""
    items = []
    for line in summary_section(out_dir, "Findings"):
        head = line.lstrip()
        num, dot, rest = head.partition(". ")
        if dot and num.isdigit():
            items.append(rest)
    return items


def first_finding_names(out_dir, path, causer):
    """The first finding about waiting ("Ranks wait ...") names the call path where ranks wait
    and `rank <causer> causes it` (warnings such as an oversubscribed node may come first)."""
    items = [i for i in findings(out_dir) if i.startswith("Ranks wait ")]
    check(items, f"summary.txt has no finding about waiting: {findings(out_dir)}")
    first = items[0]
    check(f" in {path} " in first and f"rank {causer} causes it" in first,
          f"the first finding should name {path} and 'rank {causer} causes it': {first!r}")


# --- Event dumps (CRITPATH_DUMP_EVENTS=1) --------------------------------------------------------

class Event:
    """One line of events/rank-<r>.txt: `KIND [name] [key=value ...]`.

    kind: first word (ENTER, EXIT, SEND, COLL_END, ...); name: the first word after the kind
    that is not key=value (e.g. the region of ENTER/EXIT), or None; fields: {key: value string};
    location: the thread location the event belongs to (0 = MPI_Init thread); line: the text.
    """
    __slots__ = ("kind", "name", "fields", "location", "line")

    def __init__(self, line, location):
        self.line = line
        self.location = location
        words = line.split()
        self.kind = words[0] if words else ""
        self.name = None
        self.fields = {}
        for word in words[1:]:
            key, sep, value = word.partition("=")
            if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                self.fields[key] = value
            elif self.name is None and not self.fields:
                self.name = word

    def int(self, key):
        if key not in self.fields:
            fail(f"event {self.line!r} has no field {key!r}")
        return int(self.fields[key])

    def __repr__(self):
        return f"Event({self.line!r}, location={self.location})"


def read_events(out_dir, rank, location=None):
    """Events of one rank from OUTDIR/events/rank-<rank>.txt, in recorded order.

    location=None returns all threads' events (each tagged with its location); an int keeps
    only that location's events.
    """
    path = os.path.join(out_dir, "events", f"rank-{rank}.txt")
    if not os.path.isfile(path):
        fail(f"{path} missing (was the test run with CRITPATH_DUMP_EVENTS=1?)")
    events, current = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                m = re.match(r"#\s*location\s+(\d+)", line)
                if m:
                    current = int(m.group(1))
                continue
            if location is None or location == current:
                events.append(Event(line, current))
    return events


def event_lines(out_dir, rank, location=0):
    """The raw text lines of one rank's (and location's) dump, for exact sequence comparison."""
    return [e.line for e in read_events(out_dir, rank, location)]

# --- Launching critpath-analyze --------------------------------------------------------------

# Re-analyses (critpath-analyze of a kept trace, an OTF2 round trip) against the in-situ report:
# every metric within 0.5 % (2 us, or 1e-6 of the metric's largest value, for near-zero ones).
REL, ABS_S = 0.005, 2e-6


def close(a, b, scale, abs_s=ABS_S):
    return abs(a - b) <= max(REL * max(abs(a), abs(b)), abs_s, 1e-6 * scale)


def roundtrip_abs_s(insitu, skew=""):
    """The absolute tolerance of a re-analysis of the in-situ run's OTF2 archive (report
    `insitu`; `skew` = its CRITPATH_DEBUG_CLOCK_SKEW, "<offset>,<ppm>" or empty). The archive
    holds clock-corrected timestamps, the in-situ profile local durations, which differ by:
    - an injected drift: up to ppm x 1e-6 x the wall time (a real clock drifts by a few ppm;
      tests inject 100);
    - the linear correction's own drift estimate, from offsets measured within its error
      bound at MPI_Init and MPI_Finalize: up to 2 x the bound over a rank's durations, summed
      over the ranks in a total (seen: 64 us on one rank, bound 38 us; 33 us, bound 81 us)."""
    abs_s = ABS_S
    parts = skew.split(",")
    try:
        ppm = abs(float(parts[1])) if len(parts) > 1 else 0.0
    except ValueError:
        ppm = 0.0
    if ppm > 0:
        abs_s += ppm * 1e-6 * insitu.get("run", {}).get("wall_time_s", 0.0)
    err = insitu.get("scalars", {}).get("clock_max_error_s", 0.0) or 0.0
    if err > 0:
        abs_s += 2 * err * max(1, len(insitu.get("ranks", [])))
    return abs_s


def run_config(out):
    """The in-situ run's configuration (critpath.cfg in its output directory) as a dict."""
    try:
        text = read_text(out, "critpath.cfg")
    except (CheckError, OSError):
        return {}
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def compare_reports(a, b, where, ignore=(), abs_s=ABS_S):
    """report.json metrics, call paths and wait-state instance counts of the in-situ (a) and a
    re-analysis (b, named `where`): the differences, as lines. Metrics named in `ignore` are
    left out (the caller says why); `abs_s` is the absolute tolerance of a value."""
    out = []

    def near(x, y, scale):
        return close(x, y, scale, abs_s)
    for mid in sorted(set(a["metrics"]) | set(b["metrics"])):
        if mid in ignore:
            continue
        if mid not in a["metrics"] or mid not in b["metrics"]:
            out.append(f"metric {mid}: only in {'in-situ' if mid in a['metrics'] else where}")
            continue
        ma, mb = a["metrics"][mid], b["metrics"][mid]
        scale = max([abs(ma.get("total", 0))] + [abs(v) for v in ma.get("by_rank", [])])
        if not near(ma.get("total", 0), mb.get("total", 0), scale):
            out.append(f"metric {mid} total: {ma.get('total')} vs {mb.get('total')}")
        ra, rb = ma.get("by_rank", []), mb.get("by_rank", [])
        if len(ra) != len(rb) or any(not near(x, y, scale) for x, y in zip(ra, rb)):
            out.append(f"metric {mid} by_rank: {ra} vs {rb}")
        ca, cb = ma.get("by_callpath", {}), mb.get("by_callpath", {})
        for p in sorted(set(ca) | set(cb)):
            if not near(ca.get(p, 0), cb.get(p, 0), scale):
                out.append(f"metric {mid} at {p}: {ca.get(p, 0)} vs {cb.get(p, 0)}")
    pa = [c["path"] for c in a["callpaths"]]
    pb = [c["path"] for c in b["callpaths"]]
    if sorted(pa) != sorted(pb):
        out.append(f"call paths differ: only in-situ {sorted(set(pa) - set(pb))[:10]}, only {where} "
                   f"{sorted(set(pb) - set(pa))[:10]}")
    wa, wb = a.get("wait_state_stats", {}), b.get("wait_state_stats", {})
    for k in sorted(set(wa) | set(wb)):
        if not same_instances(wa.get(k, {}), wb.get(k, {})):
            out.append(f"wait state {k}: {wa.get(k, {}).get('count')} vs {wb.get(k, {}).get('count')} instances")
    return out


# A wait shorter than this is below the clocks' resolution (an OTF2 archive's timestamps are
# nanoseconds): rounding there can make or unmake an instance of a few picoseconds.
SUB_TICK_S = 2e-9


def same_instances(sa, sb):
    """Two wait_state_stats entries count the same instances: the same count, or counts that
    differ by at most 1 % (at least 1) where the side with more has its shortest instance below
    SUB_TICK_S (seen: a late receiver of 22 ps in situ became 0 in an OTF2 round trip)."""
    ca, cb = sa.get("count", 0), sb.get("count", 0)
    if ca == cb:
        return True
    more = sa if ca > cb else sb
    return abs(ca - cb) <= max(1, 0.01 * max(ca, cb)) and more.get("min", 1.0) < SUB_TICK_S


# Open MPI's launcher, once a process exits non-zero, gives the others odls_base_sigkill_timeout
# (1 s) between SIGTERM and SIGKILL and waits that long again: 2 s on every failing run, even of
# one process (measured: `mpiexec -n 1 false` 2.3 s, 0.4 s with 0). critpath-analyze exits 1 on
# purpose in many checks (damaged traces and archives, wrong process counts) and handles no
# SIGTERM, so its launches skip the wait; the traced programs keep the default (the fault tests
# rely on the SIGTERM and the time after it).
OPEN_MPI_FAST_ABORT = ["--mca", "odls_base_sigkill_timeout", "0"]


def mpiexec_command(mpi, mpiexec, shim, np_, env=()):
    """The launcher's words for NP processes of a critpath tool (critpath-analyze): Open MPI
    oversubscribed (and allowed to run as root), the test yield shim preloaded (tests/support)
    for MPICH's busy polling, and the (name, value) pairs of `env` for every process.
    Open MPI's launcher also kills at once (OPEN_MPI_FAST_ABORT) when a tool exits non-zero."""
    cmd = [mpiexec]
    if mpi == "openmpi":
        cmd += ["--oversubscribe", "--allow-run-as-root", "-x", f"LD_PRELOAD={shim}"] + OPEN_MPI_FAST_ABORT
        for k, v in env:
            cmd += ["-x", f"{k}={v}"]
    else:
        cmd += ["-genv", "LD_PRELOAD", shim]
        for k, v in env:
            cmd += ["-genv", k, v]
    return cmd + ["-n", str(np_)]


def reanalyze(out, np_, mpi, mpiexec, analyze_exe, shim, env=(), args=(), subdir="reanalysis"):
    """critpath-analyze on the kept trace in `out` on NP processes, with the (name, value)
    settings `env` and the extra arguments `args`, into out/<subdir>: its report.json (a
    failed run is a CheckError)."""
    import subprocess
    re_dir = os.path.join(out, subdir)
    cmd = mpiexec_command(mpi, mpiexec, shim, np_, env)
    cmd += [analyze_exe, out, "--output", re_dir, "--force"] + list(args)
    print("$", " ".join(cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    print(r.stdout)
    check(r.returncode == 0, f"critpath-analyze {' '.join(f'{k}={v}' for k, v in env)} "
          f"{' '.join(args)} -n {np_} exited with {r.returncode}")
    return load_report(re_dir)


def compare_modes(tag, argv, var, flag_scalar, flags, figures, rel, missing_is_zero=False):
    """The modes checks (check_whatif_modes.py, check_delay_modes.py): argv = [script, OUTDIR,
    NP, MPI, MPIEXEC, ANALYZE, SHIM]; the kept trace in OUTDIR re-analysed once per (mode,
    flag) of `flags` with var=mode, each report's scalars[flag_scalar] == flag; `figures(rep,
    label)` -> (name, value) pairs of the first mode's report must match every other mode's
    and the in-situ report's within `rel` relative (1e-9 s absolute floor). A name missing
    elsewhere fails, or counts as 0 with missing_is_zero (then extra non-zero names fail too).
    Returns the exit status."""
    out, np_, mpi, mpiexec, analyze_exe, shim = argv[1:7]
    try:
        reports = {"in situ": load_report(out)}
        for mode, flag in flags:
            rep = reanalyze(out, np_, mpi, mpiexec, analyze_exe, shim, [(var, mode)], subdir=f"{tag}-{mode}")
            check(rep["scalars"].get(flag_scalar) == flag,
                  f"{mode}: scalars.{flag_scalar} is {rep['scalars'].get(flag_scalar)}, not {flag}")
            reports[mode] = rep
        first = flags[0][0]
        base = figures(reports[first], first)
        for label in [m for m, _ in flags[1:]] + ["in situ"]:
            other = dict(figures(reports[label], label))
            for name, v in base:
                check(missing_is_zero or name in other, f"{label}: {name} missing")
                w = other.get(name, 0.0)
                check(abs(v - w) <= max(rel * max(abs(v), abs(w)), 1e-9), f"{name}: {first} {v!r}, {label} {w!r}")
            extra = sorted(n for n in set(other) - set(dict(base)) if abs(other[n]) > 1e-9)
            check(not extra, f"{label}: figures only there: {extra[:10]}")
        print(f"check_{tag}_modes: {len(base)} figures agree ({', '.join(m for m, _ in flags)}, in situ)")
    except CheckError as e:
        print(f"check_{tag}_modes: FAIL: {e}")
        return 1
    print(f"check_{tag}_modes: ok")
    return 0
