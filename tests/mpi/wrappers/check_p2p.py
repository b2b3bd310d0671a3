"""critpath — tests/mpi/wrappers/check_p2p.py: exact events of wrap_p2p.c. usage: OUTDIR"""
import sys

from wrapcheck import Expect, check_ranks

W = "comm=0"
r0 = (Expect()
      .call("MPI_Send", f"SEND peer=1 tag=5 {W} bytes=40")
      .call("MPI_Bsend", f"SEND peer=1 tag=6 {W} bytes=16")
      .call("MPI_Ssend", f"SEND peer=1 tag=7 {W} bytes=12")
      .coll("MPI_Barrier", 0, -1, 0, 0)
      .call("MPI_Rsend", f"SEND peer=1 tag=8 {W} bytes=8")
      .call("MPI_Recv", f"RECV peer=1 tag=9 {W} bytes=16"))
r1 = (Expect()
      .call("MPI_Recv", f"RECV peer=0 tag=5 {W} bytes=40")
      .call("MPI_Recv", f"RECV peer=0 tag=6 {W} bytes=16")
      .call("MPI_Recv", f"RECV peer=0 tag=7 {W} bytes=12")
      .call("MPI_Irecv", "IRECV_REQUEST req=%a")
      .coll("MPI_Barrier", 0, -1, 0, 0)
      .call("MPI_Wait", f"IRECV peer=0 tag=8 {W} bytes=8 req=%a")
      .call("MPI_Send", f"SEND peer=0 tag=9 {W} bytes=16"))
for r, e in ((0, r0), (1, r1)):
    other = 1 - r
    (e.call("MPI_Send").call("MPI_Recv")
      .call("MPI_Sendrecv", f"SEND peer={other} tag=11 {W} bytes=16",
            f"RECV peer={other} tag=11 {W} bytes=16")
      .call("MPI_Sendrecv_replace", f"SEND peer={other} tag=12 {W} bytes=40",
            f"RECV peer={other} tag=12 {W} bytes=40"))
r0.call("MPI_Send", f"SEND peer=1 tag=13 {W} bytes=12")
r0.call("MPI_Send", f"SEND peer=1 tag=14 {W} bytes=0")
r0.call("MPI_Send", f"SEND peer=1 tag=15 {W} bytes=24")
r1.call("MPI_Recv", f"RECV peer=0 tag=13 {W} bytes=12")
r1.call("MPI_Recv", f"RECV peer=0 tag=14 {W} bytes=0")
r1.call("MPI_Recv", f"RECV peer=0 tag=15 {W} bytes=24")

check_ranks(sys.argv[1], {0: r0.lines, 1: r1.lines})
print("check_p2p: ok")
