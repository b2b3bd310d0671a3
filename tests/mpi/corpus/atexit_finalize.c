/* critpath — tests/mpi/corpus/atexit_finalize.c (corpus: np=2): MPI_Finalize called from a
 * function registered with atexit(): main returns without finalizing; the exit handler prints
 * the rank's last line, calls MPI_Finalize (where the tracer analyses and writes its report)
 * and checks MPI_Finalized. MPI-3.1 allows this (MPI_Finalize may be called from an atexit
 * handler as long as MPI_Init was called from main's thread); both launchers accept it. */
#include "corpus.h"

static int corpus_rank_cached;

static void finish(void) {
  say("in atexit handler");
  say_flush(MPI_COMM_WORLD);
  int rc = MPI_Finalize();
  int done = 0;
  MPI_Finalized(&done);
  if (corpus_rank_cached == 0) printf("finalize rc %d finalized %d\n", rc, done);
  fflush(stdout);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  corpus_rank_cached = corpus_rank();
  atexit(finish);
  int v = corpus_rank_cached, s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  say("before exit: sum %d", s);
  return 0;
}
