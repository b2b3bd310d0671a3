/* critpath — tests/mpi/corpus/icoll_overlap.c (corpus: np=4): nonblocking collectives
 * overlapped with point-to-point: Ibarrier, Iallreduce, Ibcast, Igather, Ialltoallv in flight
 * together with Isend/Irecv rings, completed by one mixed Waitall, by Testall polling, and by
 * Waitany in arbitrary order. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  MPI_Request q[8];
  int v = r + 1, sum = 0, b = r == 2 ? 99 : 0, tok = -1, g[8];
  MPI_Ibarrier(MPI_COMM_WORLD, &q[0]);
  MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]);
  MPI_Irecv(&tok, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &q[2]);
  MPI_Ibcast(&b, 1, MPI_INT, 2, MPI_COMM_WORLD, &q[3]);
  MPI_Isend(&v, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &q[4]);
  MPI_Igather(&v, 1, MPI_INT, g, 1, MPI_INT, n - 1, MPI_COMM_WORLD, &q[5]);
  MPI_Waitall(6, q, MPI_STATUSES_IGNORE);
  say("mixed waitall: sum %d bcast %d token %d gather %d", sum, b, tok,
      r == n - 1 ? g[0] + g[n - 1] : 0);

  int sc[8], sd[8], out[8], in[8];
  for (int i = 0; i < n; ++i) { sc[i] = 1; sd[i] = i; out[i] = 10 * r + i; }
  MPI_Ialltoallv(out, sc, sd, MPI_INT, in, sc, sd, MPI_INT, MPI_COMM_WORLD, &q[0]);
  int tok2 = -1;
  MPI_Irecv(&tok2, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &q[1]);
  MPI_Send(&r, 1, MPI_INT, right, 6, MPI_COMM_WORLD);
  int flag = 0;
  while (!flag) MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
  say("testall: alltoallv %d %d token %d", in[0], in[n - 1], tok2);

  int x = 0, y = 0;
  MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &q[0]);
  MPI_Ibarrier(MPI_COMM_WORLD, &q[1]);
  MPI_Iallreduce(&v, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q[2]);
  int done = 0, idx;
  while (done < 3) {
    MPI_Waitany(3, q, &idx, MPI_STATUS_IGNORE);
    ++done;
  }
  say("waitany: max %d", y);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
