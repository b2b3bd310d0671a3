/* critpath — tests/mpi/wrappers/wrap_nonblocking.c: nonblocking, persistent and probe calls
 * and the Wait/Test family under the tracer (2 ranks). check_nonblocking.py holds the exact
 * event sequence per rank. Where MPI could complete requests in different orders, an
 * acknowledgement (tag 99) makes the order deterministic. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#define ACK 99
static int ack_buf;

static void send_ack(int to) { MPI_Send(&ack_buf, 1, MPI_INT, to, ACK, MPI_COMM_WORLD); }
static void wait_ack(int from) {
  MPI_Recv(&ack_buf, 1, MPI_INT, from, ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static void check(int ok, int code) {
  if (!ok) MPI_Abort(MPI_COMM_WORLD, code);
}
/* Two sends that completed inside the post may come back as one shared request handle: the
 * tracer then keeps only the newer post's entry (pmpi_wrappers/semantics/handle_table.h), and
 * the Waitall completes that one. Said on stdout for check_nonblocking.py. */
static void report_shared(int rank, const MPI_Request* r) {
  if (r[0] == r[1]) {
    printf("wrap_nonblocking: rank %d: shared send handle\n", rank);
    fflush(stdout);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) MPI_Abort(MPI_COMM_WORLD, 2);
  int a[64] = {0}, b[64] = {0};
  MPI_Request r[3];
  MPI_Status st[3];
  int index, flag, outcount, indices[3];

  if (rank == 0) {
    /* 1. two sends, Waitall ignoring statuses */
    MPI_Isend(a, 10, MPI_INT, 1, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(b, 5, MPI_INT, 1, 2, MPI_COMM_WORLD, &r[1]);
    report_shared(rank, r);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    /* 2. Waitany: tag 4 is only sent after our ack, so index 0 completes first */
    MPI_Irecv(a, 64, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(b, 64, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]);
    MPI_Waitany(2, r, &index, &st[0]);
    check(index == 0 && st[0].MPI_TAG == 3, 10);
    send_ack(1);
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
    check(index == 1, 11);
    MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE); /* nothing active */
    check(index == MPI_UNDEFINED, 12);
    /* 3. Test loop: only the successful test is recorded */
    MPI_Irecv(a, 64, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[0]);
    flag = 0;
    while (!flag) MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
    /* 4. Testall loop over two receives */
    MPI_Irecv(a, 64, MPI_INT, 1, 6, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(b, 64, MPI_INT, 1, 7, MPI_COMM_WORLD, &r[1]);
    flag = 0;
    while (!flag) MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
    /* 5. Waitsome with a null in the array, then Testsome; indices map to the array */
    r[0] = MPI_REQUEST_NULL;
    MPI_Irecv(a, 64, MPI_INT, 1, 8, MPI_COMM_WORLD, &r[1]);
    r[2] = MPI_REQUEST_NULL;
    send_ack(1); /* the receive is posted: rank 1 may use a ready send */
    MPI_Waitsome(3, r, &outcount, indices, st);
    check(outcount == 1 && indices[0] == 1 && st[0].MPI_TAG == 8, 13);
    MPI_Irecv(a, 64, MPI_INT, 1, 9, MPI_COMM_WORLD, &r[2]);
    outcount = 0;
    while (outcount == 0) MPI_Testsome(3, r, &outcount, indices, MPI_STATUSES_IGNORE);
    check(outcount == 1 && indices[0] == 2, 14);
    /* 6. Testany loop */
    r[0] = MPI_REQUEST_NULL;
    MPI_Irecv(a, 64, MPI_INT, 1, 10, MPI_COMM_WORLD, &r[1]);
    flag = 0;
    while (!flag) MPI_Testany(2, r, &index, &flag, MPI_STATUS_IGNORE);
    check(index == 1, 15);
    /* 7. persistent requests: two rounds, Startall then Start */
    MPI_Request p[2];
    MPI_Send_init(a, 4, MPI_INT, 1, 20, MPI_COMM_WORLD, &p[0]);
    MPI_Recv_init(b, 64, MPI_INT, 1, 21, MPI_COMM_WORLD, &p[1]);
    MPI_Startall(2, p);
    MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
    MPI_Start(&p[0]);
    MPI_Start(&p[1]);
    MPI_Waitall(2, p, st);
    MPI_Wait(&p[0], MPI_STATUS_IGNORE); /* inactive: returns at once, no event */
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    /* 8. cancel a receive that is never matched */
    MPI_Irecv(a, 64, MPI_INT, 1, 30, MPI_COMM_WORLD, &r[0]);
    MPI_Cancel(&r[0]);
    MPI_Wait(&r[0], &st[0]);
    MPI_Test_cancelled(&st[0], &flag);
    check(flag, 16);
    /* 9. probes */
    MPI_Probe(1, 40, MPI_COMM_WORLD, &st[0]);
    MPI_Recv(a, 64, MPI_INT, 1, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    flag = 0;
    while (!flag) MPI_Iprobe(1, 41, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Recv(a, 64, MPI_INT, 1, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Message msg;
    MPI_Mprobe(1, 42, MPI_COMM_WORLD, &msg, &st[0]);
    MPI_Mrecv(a, 64, MPI_INT, &msg, MPI_STATUS_IGNORE);
    flag = 0;
    while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 43, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
    MPI_Imrecv(a, 64, MPI_INT, &msg, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    /* 10. MPI_PROC_NULL and MPI_REQUEST_NULL */
    MPI_Isend(a, 4, MPI_INT, MPI_PROC_NULL, 50, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    /* 11. a freed active send: no completion event */
    MPI_Issend(a, 2, MPI_INT, 1, 51, MPI_COMM_WORLD, &r[0]);
    MPI_Request_free(&r[0]);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    static char bsend_buffer[MPI_BSEND_OVERHEAD + 64];
    MPI_Buffer_attach(bsend_buffer, (int)sizeof bsend_buffer);
    MPI_Recv(a, 64, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(b, 64, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(a, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    wait_ack(0);
    MPI_Send(a, 2, MPI_INT, 0, 4, MPI_COMM_WORLD);
    usleep(20000); /* let rank 0 spin in MPI_Test for a while */
    MPI_Send(a, 3, MPI_INT, 0, 5, MPI_COMM_WORLD);
    MPI_Isend(a, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, &r[0]);
    MPI_Ibsend(b, 0, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[1]);
    report_shared(rank, r);
    MPI_Waitall(2, r, st);
    wait_ack(0);
    MPI_Irsend(a, 6, MPI_INT, 0, 8, MPI_COMM_WORLD, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Send(a, 7, MPI_INT, 0, 9, MPI_COMM_WORLD);
    MPI_Send(a, 8, MPI_INT, 0, 10, MPI_COMM_WORLD);
    for (int round = 0; round < 2; ++round) {
      MPI_Recv(a, 64, MPI_INT, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(a, 9, MPI_INT, 0, 21, MPI_COMM_WORLD);
    }
    MPI_Send(a, 3, MPI_INT, 0, 40, MPI_COMM_WORLD);
    MPI_Send(a, 4, MPI_INT, 0, 41, MPI_COMM_WORLD);
    MPI_Send(a, 6, MPI_INT, 0, 42, MPI_COMM_WORLD);
    MPI_Send(a, 5, MPI_INT, 0, 43, MPI_COMM_WORLD);
    MPI_Recv(a, 64, MPI_INT, 0, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    void* detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
  }
  MPI_Finalize();
  if (rank == 0) printf("wrap_nonblocking: done\n");
  return 0;
}
