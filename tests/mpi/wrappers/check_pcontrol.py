"""critpath — tests/mpi/wrappers/check_pcontrol.py: exact events of wrap_pcontrol.c.
usage: OUTDIR"""
import sys

from wrapcheck import Expect, check_ranks

W = "comm=0"
r0 = (Expect()
      .call("MPI_Isend", f"ISEND peer=1 tag=1 {W} bytes=4 req=%a")
      .raw("MEASUREMENT_OFF", "MEASUREMENT_ON")
      .call("MPI_Wait")  # its receive was posted while paused: no IRECV
      .call("MPI_Start", f"ISEND peer=1 tag=3 {W} bytes=8 req=%b")
      .call("MPI_Wait", "ISEND_COMPLETE req=%b")
      .call("MPI_Request_free"))
r1 = (Expect()
      .call("MPI_Recv", f"RECV peer=0 tag=1 {W} bytes=4")
      .raw("MEASUREMENT_OFF", "MEASUREMENT_ON")
      .call("MPI_Recv", f"RECV peer=0 tag=3 {W} bytes=8"))
for e in (r0, r1):
    e.coll("MPI_Barrier", "$split", -1, 0, 0).call("MPI_Comm_free")

check_ranks(sys.argv[1], {0: r0.lines, 1: r1.lines})
print("check_pcontrol: ok")
