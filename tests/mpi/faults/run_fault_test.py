#!/usr/bin/env python3
"""critpath — tests/mpi/faults/run_fault_test.py: one fault-injection test (tests/mpi/faults).

usage:
  run_fault_test.py --mpiexec PATH --mpi mpich|openmpi --lib LIBCRITPATH --analyze CRITPATH_ANALYZE
                    --np N --out DIR --kind KIND --who all|RANK [--launcher-signal]
                    -- faults-program

Runs faults.c (KIND: segv bus fpe abrt term int exit abort hang) twice, untraced and traced
(libcritpath.so preloaded, CRITPATH_OUTPUT_DIR=DIR), and checks:
  1. the exit status and the program's own stdout lines are the same in both runs (the
     launcher's banners carry process ids and are left out of the comparison);
  2. each rank that wrote a partial trace said so in one `critpath: rank <r>: <reason>: partial
     trace ... in DIR/trace` line, and its trace/rank-<r>.{json,cptrace,tail} are there;
  3. every rank wrote one: the first to fault asks the other ranks on its host to dump theirs
     before the fault proceeds (analyzer/session/fault.h, "Peers"), so that MPICH's launcher,
     which SIGKILLs the other ranks when one fails, finds nothing left to lose;
  4. `mpiexec -n N critpath-analyze DIR` reports the consistent prefix: the Late Sender of
     0.3 s on every odd rank, the partial ranks named in the notes. (Were a rank's trace
     missing, critpath-analyze must refuse with one `analysis incomplete:` line naming it.)
--launcher-signal: the program hangs after its exchange (KIND hang) and the test sends
SIGTERM to mpiexec once every rank has printed its line, as a batch system's time limit would.
With --who all under MPICH, mpiexec gets -disable-auto-cleanup so that every rank reaches its
own fault (otherwise the launcher kills the slower ones before they fault). Even so, once the
first rank has died of a signal MPICH's launcher may SIGKILL a rank still writing its partial
trace: a traced run that lost a rank that way is repeated, up to 3 times in all (as is one that
MPICH's launcher ended with its placeholder status 1, see OWN_STATUS); so is one under
Open MPI, whose launcher follows its SIGTERM with a SIGKILL that a rank waiting for a core may
not outrun on an oversubscribed machine (1 rank in about 40 in measured runs). (MPICH's exit
status is not deterministic either, traced or not: see OWN_STATUS below.)
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import run_mpi_test  # noqa: E402  (kill_tree)

REASONS = {"segv": "SIGSEGV", "bus": "SIGBUS", "fpe": "SIGFPE", "abrt": "SIGABRT", "term": "SIGTERM",
           "int": "SIGINT", "exit": "exit(3) without MPI_Finalize", "abort": "MPI_Abort(errorcode 5)",
           "hang": "SIGTERM"}
LATE_SENDER_S = 0.3
# MPICH's mpiexec status when the failing rank's own status wins (the signal number, or exit's).
OWN_STATUS = {"segv": 11, "bus": 7, "fpe": 8, "abrt": 6, "term": 15, "int": 2, "exit": 3, "abort": 5,
              "hang": 15}


def log(msg):
    print(f"run_fault_test: {msg}", flush=True)


def hydra_placeholder(out):
    """Whether MPICH's launcher recorded the placeholder 1 for a process (its "Exit codes:" line):
    1 is no wait status a process of these tests ends with (SIGHUP, which nobody sends)."""
    for line in re.findall(r"Exit codes: .*", out):
        if "1" in re.sub(r"\[[^]]*\]", "", line.split(":", 1)[1]).replace(" ", "").split(","):
            return True
    return False


def command(args, traced):
    cmd = [args.mpiexec]
    settings = []
    if traced:
        settings = [("CRITPATH_OUTPUT_DIR", args.out), ("LD_PRELOAD", os.path.abspath(args.lib))]
    if args.mpi == "openmpi":
        cmd += ["--oversubscribe", "--allow-run-as-root", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
        for k, v in settings:
            cmd += ["-x", f"{k}={v}"]
    else:
        # Each process's own wait status on mpiexec's stdout ("Exit codes:"), logged below: the
        # job's status alone cannot tell which process a surprising one came from (see OWN_STATUS).
        cmd += ["-print-all-exitcodes"]
        if args.who == "all":
            cmd += ["-disable-auto-cleanup"]
        for k, v in settings:
            cmd += ["-genv", k, v]
    return cmd + ["-n", str(args.np)] + args.app + [args.kind, args.who]


def run(args, traced):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRITPATH_")}
    env.pop("LD_PRELOAD", None)
    cmd = command(args, traced)
    log("$ " + " ".join(cmd))
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    if args.launcher_signal:
        # Wait until every rank has printed (the line goes out before the hang), then SIGTERM.
        out_lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline().decode("utf-8", "replace")
            if not line:
                break
            out_lines.append(line)
            if sum(1 for l in out_lines if re.match(r"rank \d+: exchange done", l)) == args.np:
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        try:
            rest, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            run_mpi_test.kill_tree(proc)
            return None, "", ""
        return proc.returncode, "".join(out_lines) + rest.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        run_mpi_test.kill_tree(proc)
        return None, "", ""
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def app_lines(text):
    return sorted(l for l in text.splitlines() if re.match(r"rank \d+: ", l))


def main(argv):
    cut = argv.index("--")
    p = argparse.ArgumentParser()
    for opt in ("--mpiexec", "--mpi", "--lib", "--analyze", "--out", "--kind", "--who"):
        p.add_argument(opt, required=True)
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--launcher-signal", action="store_true")
    args = p.parse_args(argv[:cut])
    args.app = argv[cut + 1:]
    args.out = os.path.abspath(args.out)
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    failures = []

    rc_u, out_u, _ = run(args, traced=False)
    for attempt in range(3):
        if os.path.isdir(args.out):
            shutil.rmtree(args.out)
        rc_t, out_t, err_t = run(args, traced=True)
        wrote = glob.glob(os.path.join(args.out, "trace", "rank-*.json"))
        if len(wrote) < args.np:
            log(f"attempt {attempt + 1}: only {len(wrote)} of {args.np} ranks wrote before the "
                "launcher killed the rest; again")
        elif args.mpi == "mpich" and rc_t == 1 and hydra_placeholder(out_t):
            log(f"attempt {attempt + 1}: status 1, hydra's placeholder for a process it collected "
                "before it saw the process's PMI socket close (see OWN_STATUS); again")
        else:
            break
    sys.stdout.write(err_t)
    log(f"exit status untraced {rc_u}, traced {rc_t}")
    for what, out in (("untraced", out_u), ("traced", out_t)):
        for line in re.findall(r"Exit codes: .*", out):
            log(f"{what}: each process's wait status: {line}")
    if rc_u is None or rc_t is None:
        log("FAIL: a run did not end")
        return 1
    # MPICH's launcher returns the status of whichever process it reaps first: the failing rank's
    # own (OWN_STATUS), that of a rank it killed (9, 15), 11 (a surviving rank crashing in UCX once
    # its peer is gone) or 255, at random, traced or not (untraced: bus_one gave 15, exit_one 9,
    # int_one 11, segv_all 255). Under MPICH each run's status must be one of those; under Open
    # MPI the two must be equal.
    # Hydra's job status is the bitwise OR of the processes' wait statuses as its proxy recorded
    # them. The proxy (MPICH 4.0.2, pm/pmiserv) handles every ready descriptor of a poll round,
    # then collects one exited process (waitpid WNOHANG) and records its status; when it then
    # handles the close of a PMI socket and has signalled no one yet, it records 1 for that
    # process (a placeholder, not a wait status), overwriting the status it collected. So a
    # process that exits while the proxy is inside a round that began before the exit (forwarding
    # a line of output, say) can end as 1, the job's status too ("Hangup (signal 1)", 0x300 | 1).
    # exit_all's traced run ended with 1 in about 1 run in 30-50 in an earlier session; the
    # peers' request (fault.h, "Peers") had opened the window: 7 in 200 runs, 0 in 200 with no
    # peer told. Since fault.cpp (tell_peers) gives the peers 100 ms to begin their own dumps and
    # signals none that has begun, it stayed rare but not gone: 2 of 4 full CI runs under load
    # failed on it (one under ASan); in loops of the traced command beside two busy processes, 0
    # in 150, and 1 in 100 with the ranks waiting 50 ms more before they exit (the ranks still
    # leave within a few ms of each other, and one process's exit can race the proxy's round by
    # itself). Untraced: 0 in 760 runs. So a traced run that ends with the placeholder is
    # repeated (above, up to 3 runs in all), and 1 stays disallowed: the user would see a changed
    # exit status, and one seen on every run fails the test.
    if args.mpi == "mpich":
        allowed = {OWN_STATUS[args.kind], 9, 11, 15, 255}
        if args.kind == "hang":
            allowed.add(0)  # mpiexec itself was stopped: 0 in 1 of about 10 untraced runs
        for what, rc in (("untraced", rc_u), ("traced", rc_t)):
            if rc not in allowed:
                failures.append(f"exit status {rc} {what}, expected one of {sorted(allowed)}")
    elif rc_u != rc_t:
        failures.append(f"exit status {rc_t} traced, {rc_u} untraced")
    if app_lines(out_u) != app_lines(out_t):
        failures.append(f"stdout differs: untraced {app_lines(out_u)}, traced {app_lines(out_t)}")
    if len(app_lines(out_t)) != args.np:
        failures.append(f"expected {args.np} 'exchange done' lines on stdout, got {app_lines(out_t)}")

    # 2. The ranks that wrote: one line each, and their files.
    trace_dir = os.path.join(args.out, "trace")
    said = {}
    for m in re.finditer(r"^critpath: rank (\d+): (.*?): partial trace \(.*\) in (\S+);", err_t, re.M):
        said.setdefault(int(m.group(1)), []).append((m.group(2), m.group(3)))
    wrote = sorted(int(re.search(r"rank-(\d+)\.json$", f).group(1))
                   for f in glob.glob(os.path.join(trace_dir, "rank-*.json")))
    log(f"partial traces written by ranks {wrote}; stderr lines from ranks {sorted(said)}")
    if not wrote:
        failures.append("no rank wrote a partial trace")
    faulting_first = [int(args.who)] if args.who not in ("all", "-1") else []
    for r in wrote:
        # A launcher may drop a killed rank's last stderr output: Open MPI's I/O forwarding ends
        # with the job, MPICH's stops when the launcher itself was signalled (seen in CI: 3
        # ranks wrote, 2 lines arrived) or SIGKILLs a rank that dumped at its peer's request.
        # A missing line is accepted from any rank but the one that faulted, never two.
        if not said.get(r) and r not in faulting_first:
            continue
        if len(said.get(r, [])) != 1:
            failures.append(f"rank {r}: expected one 'critpath: rank {r}: ...: partial trace' line, got {said.get(r)}")
            continue
        reason, where = said[r][0]
        if where != trace_dir:
            failures.append(f"rank {r}: the line names {where}, not {trace_dir}")
        for ext in (".cptrace", ".tail"):
            if not os.path.exists(os.path.join(trace_dir, f"rank-{r}{ext}")):
                failures.append(f"rank {r}: no rank-{r}{ext}")
        with open(os.path.join(trace_dir, f"rank-{r}.json")) as f:
            j = json.load(f)
        if "partial" not in j:
            failures.append(f"rank {r}: rank-{r}.json has no 'partial' object")
    # Every rank must have written: the faulting ones for their fault, the others at their
    # peer's request.
    # The reasons: a faulting rank's own (with every rank faulting, the launcher's SIGTERM or a
    # peer's request may come first); the others "stopped at rank <r>'s fault" or SIGTERM.
    if args.kind == "hang":
        faulting = []
    else:
        faulting = list(range(args.np)) if args.who == "all" else [int(args.who)]
    for r in range(args.np):
        if r not in wrote:
            failures.append(f"rank {r} wrote no partial trace")
            continue
        if not said.get(r):
            continue
        reason = said[r][0][0]
        peer = re.fullmatch(r"stopped at rank \d+'s fault", reason) is not None
        if r in faulting:
            if reason != REASONS[args.kind] and not (args.who == "all" and (reason == "SIGTERM" or peer)):
                failures.append(f"rank {r}: reason '{reason}', expected '{REASONS[args.kind]}'")
        elif not (peer or reason == "SIGTERM"):
            failures.append(f"rank {r}: reason '{reason}', expected \"stopped at rank <r>'s fault\" or SIGTERM")

    # 3. The re-analysis.
    acmd = [args.mpiexec] + (["--oversubscribe", "--allow-run-as-root"] if args.mpi == "openmpi" else []) + \
           ["-n", str(args.np), args.analyze, args.out]
    log("$ " + " ".join(acmd))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRITPATH_")}
    env.pop("LD_PRELOAD", None)
    a = subprocess.run(acmd, env=env, capture_output=True, text=True, timeout=120)
    sys.stdout.write(a.stdout + a.stderr)
    missing = [r for r in range(args.np) if r not in wrote]
    if missing:
        # (a failure already) The tool must say so and stop.
        if a.returncode != 1 or "analysis incomplete: " not in a.stderr or "is missing for rank" not in a.stderr:
            failures.append(f"critpath-analyze with ranks {missing} missing: exit {a.returncode}, "
                            "expected 1 and a line naming the missing ranks")
    else:
        rep_path = os.path.join(args.out, "reanalysis", "report.json")
        if a.returncode != 0 or not os.path.exists(rep_path):
            failures.append(f"critpath-analyze exited {a.returncode} without a report")
        else:
            with open(rep_path) as f:
                rep = json.load(f)
            by_rank = rep["metrics"].get("late_sender", {}).get("by_rank", [])
            log(f"late sender per rank: {by_rank} (expected {LATE_SENDER_S} s on each odd rank)")
            for r in range(args.np):
                want = LATE_SENDER_S if r % 2 == 1 else 0.0
                got = by_rank[r] if r < len(by_rank) else None
                # The ranks leave MPI_Init up to ~40 ms apart on a loaded 2-core machine.
                if got is None or not (abs(got - want) <= 0.05):
                    failures.append(f"late sender on rank {r}: {got}, expected {want} s")
            notes = "\n".join(rep.get("notes", []))
            if "partial run:" not in notes or REASONS[args.kind] not in notes:
                failures.append(f"the report's notes do not name the partial run and '{REASONS[args.kind]}': {notes}")
            if "partial run:" not in a.stderr:
                failures.append("critpath-analyze did not say on stderr that the run is partial")
    for f in failures:
        log("FAIL: " + f)
    if not failures:
        log("PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
