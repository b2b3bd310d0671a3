/* critpath — tests/mpi/corpus/abort_code.c (corpus: np=3 exit=launcher report=no): MPI_Abort
 * with error code 7 from rank 1 while the others wait in a barrier: the job must end (no
 * hang), with the same launcher exit status with and without the tracer (MPICH's and Open
 * MPI's mpiexec report the abort code differently: run_corpus.py records what the plain run
 * gives and requires the traced run to match). No report is expected: the job ends in
 * MPI_Abort. Nothing is printed on stdout: output still in flight when the launcher kills the
 * job may or may not arrive, so only stderr (not compared) gets a line. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank();
  int v = r, s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fprintf(stderr, "abort_code: rank %d before abort: sum %d\n", r, s);
  if (r == 1) MPI_Abort(MPI_COMM_WORLD, 7);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
