"""critpath — tests/mpi/core/check_inconsistent.py: the known answers of inconsistent.c (3
ranks, rank 1's recording paused around a send and a barrier): the report is written and says
what it could not use in `analysis incomplete:` notes naming the ranks, one unmatched message
on rank 0 and one collective left out on each of ranks 0 and 2; report.json says the analysis
is incomplete; the application printed its result (run_mpi_test.py checked the exit status).
usage: OUTDIR"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from critpath_check import check, load_report, read_stdout, read_text  # noqa: E402

out = sys.argv[1]
check("inconsistent: sum 84" in read_stdout(out), "the application's line 'inconsistent: sum 84' is missing")
rep = load_report(out)
s = rep["scalars"]
check(s.get("unmatched_messages") == 1, f"scalars.unmatched_messages is {s.get('unmatched_messages')!r}, expected 1")
check(s.get("collectives_left_out") == 2,
      f"scalars.collectives_left_out is {s.get('collectives_left_out')!r}, expected 2 (one on rank 0, one on rank 2)")
check(s.get("analysis_complete") is False, f"scalars.analysis_complete is {s.get('analysis_complete')!r}, expected false")
notes = rep["notes"]
incomplete = [n for n in notes if n.startswith("analysis incomplete: ")]
listing = "\n  ".join(notes) or "(none)"
msg = [n for n in incomplete if "1 message could not be matched" in n]
check(len(msg) == 1 and "rank (messages): 0 (1))" in msg[0],
      f"expected one 'analysis incomplete: 1 message could not be matched ... 0 (1)' note; notes:\n  {listing}")
coll = [n for n in incomplete if "different numbers of collectives" in n]
check(len(coll) == 1 and "on 1 communicator " in coll[0] and "0 (1), 2 (1))" in coll[0],
      f"expected one 'analysis incomplete: on 1 communicator ... 0 (1), 2 (1)' note; notes:\n  {listing}")
check(s.get("analysis_incomplete_notes") == len(incomplete),
      f"scalars.analysis_incomplete_notes is {s.get('analysis_incomplete_notes')!r}, the notes have {len(incomplete)}")
summary = read_text(out, "summary.txt")
check(f"@ Completeness    : analysis incomplete: {len(incomplete)} notes say what is left out (Notes)" in summary,
      "summary.txt's header does not say the analysis is incomplete")
check(all(n in summary for n in incomplete), "summary.txt's Notes lack the analysis incomplete notes")
print("check_inconsistent: ok")
