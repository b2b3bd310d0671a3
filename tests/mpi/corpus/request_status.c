/* critpath — tests/mpi/corpus/request_status.c (corpus: np=2): MPI_Request_get_status (which
 * never frees the request) polled on pending and completed receives and sends, then the same
 * requests completed by Wait; Testall over a partly completed set; Wait/Test on
 * MPI_REQUEST_NULL. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), peer = 1 - r;
  int got = -1, v = 10 + r, flag = 0;
  MPI_Request q, s;
  MPI_Status st;
  MPI_Irecv(&got, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &q);
  MPI_Request_get_status(q, &flag, &st); /* usually pending; value not printed */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Isend(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &s);
  flag = 0;
  while (!flag) MPI_Request_get_status(q, &flag, &st);
  say("get_status: got %d source %d still a request %d", got, st.MPI_SOURCE,
      q != MPI_REQUEST_NULL);
  MPI_Wait(&q, &st);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  say("wait after get_status: source %d null %d", st.MPI_SOURCE, q == MPI_REQUEST_NULL);
  MPI_Wait(&q, &st); /* MPI_REQUEST_NULL: empty status */
  say("wait null: source any %d tag any %d", st.MPI_SOURCE == MPI_ANY_SOURCE,
      st.MPI_TAG == MPI_ANY_TAG);
  MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
  say("test null: flag %d", flag);

  MPI_Request two[2];
  int a = -1, b = -1;
  MPI_Irecv(&a, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &two[0]);
  MPI_Irecv(&b, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &two[1]);
  MPI_Send(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD); /* tag 2 has arrived or is at least matched soon; tag 3 not sent */
  MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE);
  say("testall partial: flag %d", flag);
  MPI_Barrier(MPI_COMM_WORLD); /* both ranks tested before anyone sends tag 3 */
  MPI_Send(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
  MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
  say("waitall: %d %d", a, b);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
