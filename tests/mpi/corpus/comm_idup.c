/* critpath — tests/mpi/corpus/comm_idup.c (corpus: np=3): MPI_Comm_idup — three idups in
 * flight at once (of WORLD and of a split), completed by Waitall, Test polling and Waitany,
 * overlapped with an Ibarrier and p2p on the parent, then used and freed. */
#include "corpus.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  MPI_Comm half, d[3];
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
  MPI_Request q[4];
  MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &q[0]);
  MPI_Comm_idup(half, &d[1], &q[1]);
  MPI_Ibarrier(MPI_COMM_WORLD, &q[2]);
  int tok = -1;
  MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, 0, &tok, 1, MPI_INT, (r + n - 1) % n, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
  MPI_Comm_idup(d[0], &d[2], &q[3]);
  int flag = 0;
  while (!flag) MPI_Test(&q[3], &flag, MPI_STATUS_IGNORE);
  int s0, s1, s2, one = 1;
  MPI_Allreduce(&one, &s0, 1, MPI_INT, MPI_SUM, d[0]);
  MPI_Allreduce(&one, &s1, 1, MPI_INT, MPI_SUM, d[1]);
  MPI_Allreduce(&one, &s2, 1, MPI_INT, MPI_SUM, d[2]);
  int cmp;
  MPI_Comm_compare(d[0], MPI_COMM_WORLD, &cmp);
  say("token %d sizes %d %d %d congruent %d", tok, s0, s1, s2, cmp == MPI_CONGRUENT);
  for (int i = 0; i < 3; ++i) MPI_Comm_free(&d[i]);
  /* many idups of the same parent, completed in reverse with Waitany */
  MPI_Comm e[5];
  MPI_Request eq[5];
  for (int i = 0; i < 5; ++i) MPI_Comm_idup(MPI_COMM_WORLD, &e[i], &eq[i]);
  for (int k = 0; k < 5; ++k) {
    int idx;
    MPI_Waitany(5, eq, &idx, MPI_STATUS_IGNORE);
  }
  int total = 0;
  for (int i = 0; i < 5; ++i) {
    int s;
    MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, e[i]);
    total += s;
    MPI_Comm_free(&e[i]);
  }
  say("five idups: %d", total);
  MPI_Comm_free(&half);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
