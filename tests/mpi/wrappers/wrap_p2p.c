/* critpath — tests/mpi/wrappers/wrap_p2p.c: blocking point-to-point under the tracer (2 ranks).
 * check_p2p.py holds the exact event sequence each rank must record. Every step is
 * deterministic; keep the two files in sync. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "wrap_p2p: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int ibuf[100] = {0};
  double dbuf[10] = {0};
  MPI_Status st;
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_INT, &triple);
  MPI_Type_commit(&triple);
  int bsize = 1024 + MPI_BSEND_OVERHEAD;
  void* bbuf = malloc((size_t)bsize);
  MPI_Buffer_attach(bbuf, bsize);
  const int other = 1 - rank;

  if (rank == 0) {
    MPI_Send(ibuf, 10, MPI_INT, 1, 5, MPI_COMM_WORLD);
    MPI_Bsend(dbuf, 2, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD);
    MPI_Ssend(ibuf, 3, MPI_INT, 1, 7, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 has posted the receive for the ready send */
    MPI_Rsend(ibuf, 2, MPI_INT, 1, 8, MPI_COMM_WORLD);
    MPI_Recv(ibuf, 100, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (st.MPI_SOURCE != 1 || st.MPI_TAG != 9) MPI_Abort(MPI_COMM_WORLD, 3);
  } else {
    MPI_Request r;
    MPI_Recv(ibuf, 10, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(dbuf, 10, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(ibuf, 3, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
    MPI_Irecv(ibuf, 2, MPI_INT, 0, 8, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Send(ibuf, 4, MPI_INT, 0, 9, MPI_COMM_WORLD);
  }
  /* MPI_PROC_NULL: the calls are recorded, no message */
  MPI_Send(ibuf, 4, MPI_INT, MPI_PROC_NULL, 10, MPI_COMM_WORLD);
  MPI_Recv(ibuf, 4, MPI_INT, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &st);
  /* combined */
  MPI_Sendrecv(ibuf, 4, MPI_INT, other, 11, ibuf + 50, 10, MPI_INT, other, 11, MPI_COMM_WORLD, &st);
  MPI_Sendrecv_replace(dbuf, 5, MPI_DOUBLE, other, 12, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
  if (rank == 0) {
    MPI_Send(ibuf, 3, MPI_INT, 1, 13, MPI_COMM_WORLD);    /* smaller than the receive buffer */
    MPI_Send(ibuf, 0, MPI_INT, 1, 14, MPI_COMM_WORLD);    /* empty */
    MPI_Send(ibuf, 2, triple, 1, 15, MPI_COMM_WORLD);     /* derived type: 2 x 12 bytes */
  } else {
    MPI_Recv(ibuf, 100, MPI_INT, 0, 13, MPI_COMM_WORLD, &st);
    MPI_Recv(ibuf, 100, MPI_INT, 0, 14, MPI_COMM_WORLD, &st);
    MPI_Recv(ibuf, 2, triple, 0, 15, MPI_COMM_WORLD, &st);
  }
  MPI_Buffer_detach(&bbuf, &bsize);
  free(bbuf);
  MPI_Type_free(&triple);
  MPI_Finalize();
  if (rank == 0) printf("wrap_p2p: done\n");
  return 0;
}
