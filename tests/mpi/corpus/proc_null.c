/* critpath — tests/mpi/corpus/proc_null.c (corpus: np=2): MPI_PROC_NULL wherever it is legal:
 * blocking, buffered, synchronous, ready and nonblocking sends and receives, persistent
 * requests, Sendrecv(_replace), probes (Probe, Iprobe, Mprobe, Improbe + Mrecv/Imrecv of
 * MPI_MESSAGE_NO_PROC), one-sided Put/Get/Accumulate, and Cart_shift off a non-periodic edge. */
#include "corpus.h"

static void show(const char* what, const MPI_Status* st) {
  int count = -1;
  MPI_Get_count(st, MPI_INT, &count);
  say("%s: source=%s tag=%s count=%d", what,
      st->MPI_SOURCE == MPI_PROC_NULL ? "PROC_NULL" : "?",
      st->MPI_TAG == MPI_ANY_TAG ? "ANY_TAG" : "?", count);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int P = MPI_PROC_NULL;
  int buf[4] = {1, 2, 3, 4};
  MPI_Status st;
  MPI_Send(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD);
  MPI_Ssend(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD);
  MPI_Rsend(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD);
  MPI_Bsend(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD);
  MPI_Recv(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &st);
  show("recv", &st);

  MPI_Request q[6];
  MPI_Isend(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &q[0]);
  MPI_Issend(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &q[1]);
  MPI_Irsend(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &q[2]);
  MPI_Ibsend(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &q[3]);
  MPI_Irecv(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &q[4]);
  MPI_Irecv(buf, 4, MPI_INT, P, MPI_ANY_TAG, MPI_COMM_WORLD, &q[5]);
  MPI_Status sts[6];
  MPI_Waitall(6, q, sts);
  show("waitall irecv", &sts[4]);

  MPI_Request ps[2];
  MPI_Send_init(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &ps[0]);
  MPI_Recv_init(buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &ps[1]);
  for (int i = 0; i < 3; ++i) {
    MPI_Startall(2, ps);
    MPI_Waitall(2, ps, sts);
  }
  show("persistent recv", &sts[1]);
  MPI_Request_free(&ps[0]);
  MPI_Request_free(&ps[1]);

  MPI_Sendrecv(buf, 4, MPI_INT, P, 0, buf, 4, MPI_INT, P, 0, MPI_COMM_WORLD, &st);
  show("sendrecv", &st);
  MPI_Sendrecv_replace(buf, 4, MPI_INT, P, 0, P, 0, MPI_COMM_WORLD, &st);
  show("sendrecv_replace", &st);

  MPI_Probe(P, 0, MPI_COMM_WORLD, &st);
  show("probe", &st);
  int flag = 0;
  MPI_Iprobe(P, 0, MPI_COMM_WORLD, &flag, &st);
  say("iprobe flag=%d", flag);
  MPI_Message m;
  MPI_Mprobe(P, 0, MPI_COMM_WORLD, &m, &st);
  say("mprobe message is NO_PROC: %d", m == MPI_MESSAGE_NO_PROC);
  MPI_Mrecv(buf, 4, MPI_INT, &m, &st);
  show("mrecv", &st);
  MPI_Improbe(P, 0, MPI_COMM_WORLD, &flag, &m, &st);
  MPI_Request mq;
  MPI_Imrecv(buf, 4, MPI_INT, &m, &mq);
  MPI_Wait(&mq, &st);
  show("imrecv", &st);

  int win_mem[4] = {0, 0, 0, 0};
  MPI_Win win;
  MPI_Win_create(win_mem, sizeof win_mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  MPI_Put(buf, 4, MPI_INT, P, 0, 4, MPI_INT, win);
  MPI_Get(buf, 4, MPI_INT, P, 0, 4, MPI_INT, win);
  MPI_Accumulate(buf, 4, MPI_INT, P, 0, 4, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  say("rma to PROC_NULL: window untouched=%d", win_mem[0] == 0 && win_mem[3] == 0);

  MPI_Comm line;
  int dims[1] = {0}, periods[1] = {0};
  MPI_Dims_create(corpus_size(), 1, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
  int src, dst;
  MPI_Cart_shift(line, 0, 1, &src, &dst);
  int v = corpus_rank(), got = -1;
  MPI_Sendrecv(&v, 1, MPI_INT, dst, 5, &got, 1, MPI_INT, src, 5, line, &st);
  say("cart shift: left edge=%d right edge=%d got=%d", src == P, dst == P, got);
  MPI_Comm_free(&line);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
