/* critpath — tests/mpi/corpus/scan_exscan.c (corpus: np=4): prefix reductions — Scan and Exscan
 * with SUM, PROD, MAX and MAXLOC (a pair type), on MPI_COMM_WORLD and a reversed split, plus
 * Iscan/Iexscan. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  int v = r + 1, s = 0, p = 0, m = 0, e = -1;
  MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(&v, &p, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
  int w = (r * 7) % n;
  MPI_Scan(&w, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Exscan(&v, &e, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  say("scan sum %d prod %d max %d exscan %d", s, p, m, r == 0 ? 0 : e);
  struct { double val; int rank; } in = {(double)((r * 5) % n), r}, out;
  MPI_Scan(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  say("maxloc prefix: %.0f at %d", out.val, out.rank);
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, n - r, &rev);
  MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, rev);
  say("reversed scan %d", s);
  MPI_Request q[2];
  int is = 0, ie = -1;
  MPI_Iscan(&v, &is, 1, MPI_INT, MPI_SUM, rev, &q[0]);
  MPI_Iexscan(&v, &ie, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  say("iscan %d iexscan %d", is, r == 0 ? 0 : ie);
  MPI_Comm_free(&rev);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
