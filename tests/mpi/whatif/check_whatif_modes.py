"""critpath — tests/mpi/whatif/check_whatif_modes.py: the what-if replay gives the same figures
gathered on rank 0 and distributed over the ranks (docs/metrics.md "What-if simulation", The
replay; CRITPATH_DEBUG_SIMULATION_REPLAY), on a kept trace with every kind of dependency the
program has (point to point, blocking and nonblocking collectives, one-sided epochs).

usage: check_whatif_modes.py OUTDIR NP MPI MPIEXEC ANALYZE SHIM
  OUTDIR  the run, kept with CRITPATH_KEEP_TRACE=1 (its in-situ replay ran in `auto` mode)
  NP      processes for critpath-analyze (the run's ranks)

`critpath-analyze` runs the kept trace twice, gathered and distributed; both reports must
say how they replayed (whatif_gathered), simulate every hypothesis, and agree with each other
and with the in-situ report on every predicted span and waiting time, the POP metrics and
the model check, to 1e-9 relative (the distributed replay's sim-time entries are exact to a
picosecond).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from critpath_check import check, compare_modes  # noqa: E402

SCALARS = ["whatif_identity_span_s", "whatif_identity_wait_s", "whatif_measured_wait_s",
           "whatif_identity_span_error_pct", "whatif_identity_wait_error_pct", "whatif_clamped_calls"]


def figures(rep, label):
    """The report's what-if figures as (name, value) pairs."""
    notes = [n for n in rep.get("notes", []) if "what-if: not simulated" in n]
    check(not notes, f"{label}: the replay did not run: {notes}")
    check("whatif" in rep and rep["whatif"], f"{label}: no what-if hypotheses in report.json")
    out = []
    for e in rep["whatif"]:
        for k in ("predicted_span_s", "predicted_runtime_s", "predicted_wait_s"):
            if k in e:
                out.append((f"{e['hypothesis']}.{k}", e[k]))
    for k, v in sorted(rep.get("pop", {}).items()):
        if isinstance(v, (int, float)):
            out.append((f"pop.{k}", v))
    for k in SCALARS:
        check(k in rep["scalars"], f"{label}: scalars.{k} missing")
        out.append((k, rep["scalars"][k]))
    return out


def main(argv):
    return compare_modes("whatif", argv, "CRITPATH_DEBUG_SIMULATION_REPLAY", "whatif_gathered",
                         [("gathered", 1), ("distributed", 0)], figures, rel=1e-9)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
