/* critpath — tests/mpi/corpus/errors_return.c (corpus: np=2): MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD and on a duplicate: erroneous calls (invalid rank, negative count, invalid
 * tag, invalid root, MPI_COMM_NULL, a send to a rank beyond the communicator in Isend and in
 * a persistent Send_init) return their error code to the application, unchanged by the
 * tracer; the program prints the error classes and carries on normally. */
#include "corpus.h"

static const char* cls(int rc) {
  int c = -1;
  if (rc == MPI_SUCCESS) return "SUCCESS";
  MPI_Error_class(rc, &c);
  switch (c) {
    case MPI_ERR_RANK: return "ERR_RANK";
    case MPI_ERR_COUNT: return "ERR_COUNT";
    case MPI_ERR_TAG: return "ERR_TAG";
    case MPI_ERR_ROOT: return "ERR_ROOT";
    case MPI_ERR_COMM: return "ERR_COMM";
    case MPI_ERR_ARG: return "ERR_ARG";
    case MPI_ERR_TYPE: return "ERR_TYPE";
    case MPI_ERR_REQUEST: return "ERR_REQUEST";
    default: return "OTHER";
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int v = 1, w = 0;
  MPI_Request q = MPI_REQUEST_NULL;
  say("send to rank n: %s", cls(MPI_Send(&v, 1, MPI_INT, n, 0, MPI_COMM_WORLD)));
  say("recv from rank -5: %s", cls(MPI_Recv(&v, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)));
  say("send count -1: %s", cls(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD)));
  say("send tag -3: %s", cls(MPI_Send(&v, 1, MPI_INT, 0, -3, MPI_COMM_WORLD)));
  say("isend to rank n: %s", cls(MPI_Isend(&v, 1, MPI_INT, n, 0, MPI_COMM_WORLD, &q)));
  say("bcast root n: %s", cls(MPI_Bcast(&v, 1, MPI_INT, n, MPI_COMM_WORLD)));
  say("allreduce null type: %s",
      cls(MPI_Allreduce(&v, &w, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD)));
  /* MPI_COMM_NULL errors are raised on MPI_COMM_WORLD's handler... in MPI-3.1 on the
   * default handler of the library (MPI_ERRORS_ARE_FATAL unless changed), so use a comm
   * with ERRORS_RETURN and only argument errors here. */
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d); /* inherits ERRORS_RETURN */
  MPI_Request pq = MPI_REQUEST_NULL;
  int rc = MPI_Send_init(&v, 1, MPI_INT, n + 3, 0, d, &pq);
  say("send_init to rank n+3: %s", cls(rc));
  if (rc == MPI_SUCCESS) MPI_Request_free(&pq);
  say("irecv on dup from rank n: %s", cls(MPI_Irecv(&v, 1, MPI_INT, n, 0, d, &q)));
  /* normal traffic still works afterwards */
  int x = r, y = -1;
  rc = MPI_Sendrecv(&x, 1, MPI_INT, 1 - r, 1, &y, 1, MPI_INT, 1 - r, 1, d, MPI_STATUS_IGNORE);
  say("sendrecv after errors: %s y=%d", cls(rc), y);
  MPI_Comm_free(&d);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
