"""critpath — tests/mpi/wrappers/check_nonblocking.py: exact events of wrap_nonblocking.c.
usage: OUTDIR"""
import sys

from critpath_check import read_stdout
from wrapcheck import Expect, check_ranks

# Where a rank's two sends came back as one shared handle (both completed inside the post),
# the newer post supersedes the older one's entry: the Waitall completes only the newer.
stdout = read_stdout(sys.argv[1])
shared = [f"wrap_nonblocking: rank {r}: shared send handle" in stdout for r in (0, 1)]

W = "comm=0"


def isend(peer, tag, nbytes, req):
    return f"ISEND peer={peer} tag={tag} {W} bytes={nbytes} req=%{req}"


def irecv(peer, tag, nbytes, req):
    return f"IRECV peer={peer} tag={tag} {W} bytes={nbytes} req=%{req}"


def posted(req):
    return f"IRECV_REQUEST req=%{req}"


def done(req):
    return f"ISEND_COMPLETE req=%{req}"


ack0 = f"SEND peer=1 tag=99 {W} bytes=4"
r0 = (Expect()
      # 1. Waitall over two sends
      .call("MPI_Isend", isend(1, 1, 40, "s1")).call("MPI_Isend", isend(1, 2, 20, "s2"))
      .call("MPI_Waitall", *([done("s2")] if shared[0] else [done("s1"), done("s2")]))
      # 2. Waitany: index 0, then index 1 (after the ack), then nothing active
      .call("MPI_Irecv", posted("r1")).call("MPI_Irecv", posted("r2"))
      .call("MPI_Waitany", irecv(1, 3, 4, "r1"))
      .call("MPI_Send", ack0)
      .call("MPI_Waitany", irecv(1, 4, 8, "r2"))
      .call("MPI_Waitany")
      # 3. only the successful MPI_Test is recorded
      .call("MPI_Irecv", posted("r3")).call("MPI_Test", irecv(1, 5, 12, "r3"))
      # 4. Testall
      .call("MPI_Irecv", posted("r4")).call("MPI_Irecv", posted("r5"))
      .call("MPI_Testall", irecv(1, 6, 4, "r4"), irecv(1, 7, 0, "r5"))
      # 5. Waitsome / Testsome with nulls in the array
      .call("MPI_Irecv", posted("r6")).call("MPI_Send", ack0)
      .call("MPI_Waitsome", irecv(1, 8, 24, "r6"))
      .call("MPI_Irecv", posted("r7")).call("MPI_Testsome", irecv(1, 9, 28, "r7"))
      # 6. Testany
      .call("MPI_Irecv", posted("r8")).call("MPI_Testany", irecv(1, 10, 32, "r8"))
      # 7. persistent: fresh ids per activation
      .call("MPI_Send_init").call("MPI_Recv_init")
      .call("MPI_Startall", isend(1, 20, 16, "p1"), posted("p2"))
      .call("MPI_Waitall", done("p1"), irecv(1, 21, 36, "p2"))
      .call("MPI_Start", isend(1, 20, 16, "p3")).call("MPI_Start", posted("p4"))
      .call("MPI_Waitall", done("p3"), irecv(1, 21, 36, "p4"))
      .call("MPI_Wait")
      .call("MPI_Request_free").call("MPI_Request_free")
      # 8. cancel
      .call("MPI_Irecv", posted("c")).call("MPI_Cancel").call("MPI_Wait", "REQUEST_CANCEL req=%c")
      # 9. probes
      .call("MPI_Probe").call("MPI_Recv", f"RECV peer=1 tag=40 {W} bytes=12")
      .call("MPI_Iprobe").call("MPI_Recv", f"RECV peer=1 tag=41 {W} bytes=16")
      .call("MPI_Mprobe").call("MPI_Mrecv", f"RECV peer=1 tag=42 {W} bytes=24")
      .call("MPI_Improbe").call("MPI_Imrecv", posted("m"))
      .call("MPI_Wait", irecv(1, 43, 20, "m"))
      # 10. MPI_PROC_NULL, MPI_REQUEST_NULL
      .call("MPI_Isend").call("MPI_Wait").call("MPI_Wait")
      # 11. freed active send: no completion
      .call("MPI_Issend", isend(1, 51, 8, "f")).call("MPI_Request_free")
      .coll("MPI_Barrier", 0, -1, 0, 0))

ack1 = f"RECV peer=0 tag=99 {W} bytes=4"
r1 = (Expect()
      .call("MPI_Recv", f"RECV peer=0 tag=1 {W} bytes=40")
      .call("MPI_Recv", f"RECV peer=0 tag=2 {W} bytes=20")
      .call("MPI_Send", f"SEND peer=0 tag=3 {W} bytes=4")
      .call("MPI_Recv", ack1)
      .call("MPI_Send", f"SEND peer=0 tag=4 {W} bytes=8")
      .call("MPI_Send", f"SEND peer=0 tag=5 {W} bytes=12")
      .call("MPI_Isend", isend(0, 6, 4, "a")).call("MPI_Ibsend", isend(0, 7, 0, "b"))
      .call("MPI_Waitall", *([done("b")] if shared[1] else [done("a"), done("b")]))
      .call("MPI_Recv", ack1)
      .call("MPI_Irsend", isend(0, 8, 24, "c")).call("MPI_Wait", done("c"))
      .call("MPI_Send", f"SEND peer=0 tag=9 {W} bytes=28")
      .call("MPI_Send", f"SEND peer=0 tag=10 {W} bytes=32"))
for _ in range(2):
    r1.call("MPI_Recv", f"RECV peer=0 tag=20 {W} bytes=16")
    r1.call("MPI_Send", f"SEND peer=0 tag=21 {W} bytes=36")
for tag, nbytes in ((40, 12), (41, 16), (42, 24), (43, 20)):
    r1.call("MPI_Send", f"SEND peer=0 tag={tag} {W} bytes={nbytes}")
r1.call("MPI_Recv", f"RECV peer=0 tag=51 {W} bytes=8").coll("MPI_Barrier", 0, -1, 0, 0)

check_ranks(sys.argv[1], {0: r0.lines, 1: r1.lines})
print("check_nonblocking: ok")
