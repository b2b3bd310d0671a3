/* critpath — tests/mpi/corpus/init_thread.c (corpus: np=2): MPI_Init_thread asking for
 * MPI_THREAD_FUNNELED, queries around the session (Initialized, Finalized, Query_thread,
 * Is_thread_main, Get_version, Get_processor_name length), MPI_Wtime/Wtick, Pcontrol levels,
 * and a helper thread that never calls MPI. */
#include <pthread.h>

#include "corpus.h"

static void* idle(void* arg) {
  int* x = arg;
  for (int i = 0; i < 1000; ++i) *x += i;
  return NULL;
}

int main(int argc, char** argv) {
  int init = -1, fin = -1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int init2, q, main_thread, ver, sub;
  MPI_Initialized(&init2);
  MPI_Query_thread(&q);
  MPI_Is_thread_main(&main_thread);
  MPI_Get_version(&ver, &sub);
  say("before: init %d fin %d; after: init %d provided>=funneled %d query==provided %d main %d "
      "version %d.%d", init, fin, init2, provided >= MPI_THREAD_FUNNELED, q == provided,
      main_thread, ver, sub);
  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  pthread_t th;
  int acc = 0;
  pthread_create(&th, NULL, idle, &acc);
  pthread_join(th, NULL);
  MPI_Pcontrol(0);
  int v = 1, s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Pcontrol(1);
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Pcontrol(2);
  say("thread acc %d wtime ok %d tick ok %d sum %d", acc, MPI_Wtime() >= t0, tick > 0, s);
  say_flush(MPI_COMM_WORLD);
  const int r = corpus_rank();
  MPI_Finalize();
  MPI_Finalized(&fin);
  if (r == 0) printf("finalized %d\n", fin);
  return 0;
}
