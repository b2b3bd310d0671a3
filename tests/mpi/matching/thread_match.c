/* critpath — tests/mpi/matching/thread_match.c: point-to-point matching between threads
 * (MPI_THREAD_MULTIPLE) that share MPI_COMM_WORLD and differ only by tag.
 *
 * 2 ranks, 4 worker threads each. Worker t of rank 1 sends round k (k = 0..3) with tag t at
 * start + (k + 1) * 40 ms and then receives an acknowledgement (tag 10 + t); worker t of rank
 * 0 receives each round at once and acknowledges it. Worker 0 sends and receives blocking,
 * worker 1 synchronously with MPI_Probe before the receive, worker 2 with persistent requests
 * (MPI_Send_init / MPI_Recv_init, MPI_Start, MPI_Wait), worker 3 with MPI_Isend and
 * MPI_Mprobe + MPI_Mrecv. Known answer: Late Sender 4 x 4 x 40 ms = 640 ms on rank 0, next to
 * none on rank 1 (only the acknowledgements' latency); every message matched. With argv[1]
 * "shared" every worker's messages carry tag 0: which worker of rank 0 receives which message
 * is MPI's choice; every message matched, no clock-condition violation. Prints "SKIP:
 * the MPI library provides thread level N" and exits 0 without MULTIPLE.
 */
#include <pthread.h>
#include <stdlib.h>

#include "waits_util.h"

#define WORKERS 4
#define ROUNDS 4
#define STEP_MS 40

static int failures[WORKERS];
static int shared; /* argv[1] "shared": every worker's messages carry tag 0 */

/* Worker t's message tag. */
static int tag_of(int t) { return shared ? 0 : t; }

/* Whether `v` is the payload worker t expects in round k: its own, or with a shared tag any
 * worker's of any round. */
static int payload_ok(int v, int t, int k) {
  return shared ? v >= 0 && v / 100 < WORKERS && v % 100 < ROUNDS : v == 100 * t + k;
}

static void send_kind(int t, int* v, MPI_Request* persistent) {
  MPI_Request q;
  switch (t) {
    case 0: MPI_Send(v, 1, MPI_INT, 1 - rank, tag_of(t), MPI_COMM_WORLD); break;
    case 1: MPI_Ssend(v, 1, MPI_INT, 1 - rank, tag_of(t), MPI_COMM_WORLD); break;
    case 2:
      MPI_Start(persistent);
      MPI_Wait(persistent, MPI_STATUS_IGNORE);
      break;
    default:
      MPI_Isend(v, 1, MPI_INT, 1 - rank, tag_of(t), MPI_COMM_WORLD, &q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
      break;
  }
}

static void recv_kind(int t, int* v, MPI_Request* persistent) {
  MPI_Status st;
  MPI_Message m;
  switch (t) {
    case 0: MPI_Recv(v, 1, MPI_INT, 1 - rank, tag_of(t), MPI_COMM_WORLD, &st); break;
    case 1:
      MPI_Probe(MPI_ANY_SOURCE, tag_of(t), MPI_COMM_WORLD, &st);
      MPI_Recv(v, 1, MPI_INT, st.MPI_SOURCE, tag_of(t), MPI_COMM_WORLD, &st);
      break;
    case 2:
      MPI_Start(persistent);
      MPI_Wait(persistent, &st);
      break;
    default:
      MPI_Mprobe(1 - rank, tag_of(t), MPI_COMM_WORLD, &m, &st);
      MPI_Mrecv(v, 1, MPI_INT, &m, &st);
      break;
  }
}

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  int out = 0, in = -1, ack = 0;
  MPI_Request ps = MPI_REQUEST_NULL, pr = MPI_REQUEST_NULL;
  if (t == 2) {
    MPI_Send_init(&out, 1, MPI_INT, 1 - rank, tag_of(t), MPI_COMM_WORLD, &ps);
    MPI_Recv_init(&in, 1, MPI_INT, 1 - rank, tag_of(t), MPI_COMM_WORLD, &pr);
  }
  for (int k = 0; k < ROUNDS; ++k) {
    if (rank == 1) {
      sleep_from_start_ms((long)(k + 1) * STEP_MS);
      out = 100 * t + k;
      send_kind(t, &out, &ps);
      MPI_Recv(&ack, 1, MPI_INT, 0, 10 + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (!shared && ack != 100 * t + k) ++failures[t];
    } else {
      recv_kind(t, &in, &pr);
      if (!payload_ok(in, t, k)) ++failures[t];
      MPI_Send(&in, 1, MPI_INT, 1, 10 + t, MPI_COMM_WORLD);
    }
  }
  if (t == 2) {
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);
  }
  return NULL;
}

/* Whether the run can go on: MPI_THREAD_MULTIPLE and 2 ranks; rank 0 says why not. */
static int runnable(int provided) {
  const char* why = provided < MPI_THREAD_MULTIPLE ? "SKIP: the MPI library provides thread level"
                    : size != 2                    ? "thread_match: needs exactly 2 ranks, not"
                                                   : NULL;
  if (why && rank == 0) printf("%s %d\n", why, provided < MPI_THREAD_MULTIPLE ? provided : size);
  return why == NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  shared = argc > 1 && !strcmp(argv[1], "shared");
  if (!runnable(provided)) {
    MPI_Finalize();
    return size != 2;
  }
  align();
  pthread_t th[WORKERS];
  for (int t = 0; t < WORKERS; ++t) pthread_create(&th[t], NULL, worker, (void*)(long)t);
  for (int t = 0; t < WORKERS; ++t) pthread_join(th[t], NULL);
  int bad = 0, all = 0;
  for (int t = 0; t < WORKERS; ++t) bad += failures[t];
  MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(all ? "thread_match: %d wrong payloads\n" : "thread_match: ok\n", all);
  MPI_Finalize();
  return all != 0;
}
