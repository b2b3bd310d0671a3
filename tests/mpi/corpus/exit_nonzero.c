/* critpath — tests/mpi/corpus/exit_nonzero.c (corpus: np=2 exit=3): a program that finalizes
 * normally and then returns 3 from main on every rank: the launcher's exit status (3) must be
 * the same with and without the tracer, and the tracer still writes its report. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int v = corpus_rank() + 1, s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  say("sum %d; exiting with status 3 after MPI_Finalize", s);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 3;
}
