/* critpath — tests/mpi/corpus/grequest.c (corpus: np=2): generalized requests
 * (MPI_Grequest_start / MPI_Grequest_complete) waited on alone and mixed with a real Irecv in
 * Waitall and Testany: requests the tracer never saw created must pass through its Wait/Test
 * wrappers untouched, with the status the query function fills in. */
#include "corpus.h"

static int query_calls, free_calls;

static int query_fn(void* extra, MPI_Status* st) {
  ++query_calls;
  MPI_Status_set_elements(st, MPI_INT, *(int*)extra);
  MPI_Status_set_cancelled(st, 0);
  st->MPI_SOURCE = MPI_UNDEFINED;
  st->MPI_TAG = 77;
  return MPI_SUCCESS;
}
static int free_fn(void* extra) { (void)extra; ++free_calls; return MPI_SUCCESS; }
static int cancel_fn(void* extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), peer = 1 - r;
  int five = 5;
  MPI_Request g;
  MPI_Grequest_start(query_fn, free_fn, cancel_fn, &five, &g);
  MPI_Grequest_complete(g);
  MPI_Status st;
  MPI_Wait(&g, &st);
  int count;
  MPI_Get_count(&st, MPI_INT, &count);
  say("alone: count %d tag %d null %d", count, st.MPI_TAG, g == MPI_REQUEST_NULL);

  MPI_Request q[2];
  int v = r, got = -1;
  MPI_Grequest_start(query_fn, free_fn, cancel_fn, &five, &q[0]);
  MPI_Irecv(&got, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &q[1]);
  MPI_Send(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
  int idx = -1, flag = 0;
  while (!flag) MPI_Testany(2, q, &idx, &flag, &st);
  say("testany: first index %d got %d", idx, got);
  MPI_Grequest_complete(q[0]);
  MPI_Status sts[2];
  MPI_Waitall(2, q, sts);
  MPI_Get_count(&sts[0], MPI_INT, &count);
  say("waitall: grequest count %d tag %d", count, sts[0].MPI_TAG);
  say("query calls %d free calls %d", query_calls, free_calls);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
