/* critpath — tests/mpi/corpus/waitsome_loop.c (corpus: np=3): Waitsome and Testsome loops over
 * 40 receives (more than the wrappers' 16 stack slots) with null requests and
 * MPI_STATUSES_IGNORE, and Waitany/Testany over arrays with holes. */
#include "corpus.h"

enum { kN = 40 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), n = corpus_size();
  int in[kN], out[kN];
  MPI_Request q[kN], s[kN];
  if (r == 0) {
    for (int i = 0; i < kN; ++i) MPI_Irecv(&in[i], 1, MPI_INT, 1 + i % (n - 1), i, MPI_COMM_WORLD, &q[i]);
    int done = 0, rounds = 0, sum = 0, idx[kN];
    MPI_Status st[kN];
    MPI_Barrier(MPI_COMM_WORLD);
    while (done < kN) {
      int outcount = 0;
      MPI_Waitsome(kN, q, &outcount, idx, st);
      for (int k = 0; k < outcount; ++k) sum += in[idx[k]] + (st[k].MPI_TAG == idx[k]);
      done += outcount;
      ++rounds;
    }
    int outcount = -2;
    MPI_Waitsome(kN, q, &outcount, idx, st);
    say("waitsome: sum=%d all done=%d trailing outcount undefined=%d", sum, done == kN,
        outcount == MPI_UNDEFINED);
    /* second round with Testsome and STATUSES_IGNORE, half the slots null */
    for (int i = 0; i < kN; ++i)
      if (i % 2) q[i] = MPI_REQUEST_NULL;
      else MPI_Irecv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, 1000 + i, MPI_COMM_WORLD, &q[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    done = sum = 0;
    while (done < kN / 2) {
      int oc = 0;
      MPI_Testsome(kN, q, &oc, idx, MPI_STATUSES_IGNORE);
      for (int k = 0; k < oc; ++k) sum += in[idx[k]];
      done += oc;
    }
    say("testsome: sum=%d", sum);
    /* Waitany/Testany with holes */
    for (int i = 0; i < 4; ++i)
      if (i == 1) q[i] = MPI_REQUEST_NULL;
      else MPI_Irecv(&in[i], 1, MPI_INT, 1, 2000 + i, MPI_COMM_WORLD, &q[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    int got = 0, flag = 0, index = -1;
    for (int k = 0; k < 2; ++k) {
      MPI_Waitany(4, q, &index, MPI_STATUS_IGNORE);
      got += in[index];
    }
    while (!flag) MPI_Testany(4, q, &index, &flag, MPI_STATUS_IGNORE);
    got += in[index];
    MPI_Testany(4, q, &index, &flag, MPI_STATUS_IGNORE);
    say("waitany/testany: sum=%d then flag=%d index undefined=%d", got, flag,
        index == MPI_UNDEFINED);
  } else {
    int ns = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < kN; ++i)
      if (1 + i % (n - 1) == r) {
        out[i] = i * 10;
        MPI_Isend(&out[i], 1, MPI_INT, 0, i, MPI_COMM_WORLD, &s[ns++]);
      }
    MPI_Waitall(ns, s, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < kN; i += 2)
      if ((i / 2) % (n - 1) == r - 1) {
        out[i] = i;
        MPI_Send(&out[i], 1, MPI_INT, 0, 1000 + i, MPI_COMM_WORLD);
      }
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 1)
      for (int i = 3; i >= 0; --i)
        if (i != 1) {
          out[i] = i + 1;
          MPI_Send(&out[i], 1, MPI_INT, 0, 2000 + i, MPI_COMM_WORLD);
        }
  }
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
