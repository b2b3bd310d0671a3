/* critpath — tests/mpi/corpus/errhandler.c (corpus: np=2): an application error handler
 * (MPI_Comm_create_errhandler) set on a communicator fires for erroneous calls made through
 * the tracer's wrappers — blocking and nonblocking p2p, a collective, and a persistent
 * request creation — and the calls return the handler's error code unchanged. The handler
 * records the error class and the communicator it was called for. */
#include "corpus.h"

static int fired;
static int last_class = -1;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void on_error(MPI_Comm* comm, int* code, ...) {
  ++fired;
  MPI_Error_class(*code, &last_class);
  last_comm = *comm;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int n = corpus_size();
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(on_error, &eh);
  MPI_Comm_set_errhandler(d, eh);
  int v = 0, rc, cls;
  MPI_Request q;

  rc = MPI_Send(&v, 1, MPI_INT, n + 1, 0, d);
  MPI_Error_class(rc, &cls);
  say("send: fired %d class rank %d rc class matches handler %d on dup %d", fired,
      cls == MPI_ERR_RANK, cls == last_class, last_comm == d);
  rc = MPI_Irecv(&v, 1, MPI_INT, -7, 0, d, &q);
  MPI_Error_class(rc, &cls);
  say("irecv: fired %d class rank %d", fired, cls == MPI_ERR_RANK);
  rc = MPI_Bcast(&v, 1, MPI_INT, n, d);
  MPI_Error_class(rc, &cls);
  say("bcast: fired %d class root %d", fired, cls == MPI_ERR_ROOT);
  rc = MPI_Recv_init(&v, -2, MPI_INT, 0, 0, d, &q);
  MPI_Error_class(rc, &cls);
  say("recv_init: fired %d class count %d", fired, cls == MPI_ERR_COUNT);
  /* an invalid datatype: the tracer must not ask MPI about it in a way that raises an error
   * on another communicator (MPI_COMM_WORLD's handler is still MPI_ERRORS_ARE_FATAL) */
  rc = MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, d);
  MPI_Error_class(rc, &cls);
  say("send null type: fired %d class type %d", fired, cls == MPI_ERR_TYPE);
  rc = MPI_Isend(&v, 1, MPI_DATATYPE_NULL, 0, 0, d, &q);
  MPI_Error_class(rc, &cls);
  say("isend null type: fired %d class type %d", fired, cls == MPI_ERR_TYPE);
  MPI_Errhandler got;
  MPI_Comm_get_errhandler(d, &got);
  say("handler still installed %d", got == eh);
  MPI_Errhandler_free(&got);
  /* a correct call on the same communicator does not fire it */
  rc = MPI_Barrier(d);
  say("barrier ok %d fired %d", rc == MPI_SUCCESS, fired);
  MPI_Errhandler_free(&eh);
  MPI_Comm_free(&d);
  EXPECT(fired == 6);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
