/* critpath — benchmarks/bench_wrappers.c: the cost of the MPI wrappers per call.
 *
 * Where it sits: outside the data flow; an ordinary MPI program (1 rank: mpiexec -n 1 or a
 * singleton) run three times by benchmarks/run_wrappers.sh — without the tracer, with
 * libcritpath preloaded and CRITPATH_ENABLE=0, and with the tracer recording — to print
 *
 *   wrappers.<call>.<condition>: <ns> ns        ns per iteration (10th percentile of kReps batches)
 *   wrappers.<call>.events: <n>                 events the tracer records per iteration
 *   wrappers.<call>.mpi_calls: <n>              MPI calls per iteration (Isend+Wait: 2)
 *   wrappers.record_event.<condition>: <ns> ns  ns per event of the record API, measured in
 *                                               this process with critpath_enter/exit pairs
 *                                               (only when the tracer is present and enabled)
 *
 * <condition> is argv[1] (plain | disabled | enabled); an optional argv[2] names the only
 * call to run (for profilers: `valgrind --tool=callgrind bench enabled isend_wait_self`). run_wrappers.sh then prints
 * wrappers.<call>.added_beyond_records: enabled - plain - events x record_event, the cost of
 * the wrapper logic itself (guards, request table, ids, status substitution), per iteration
 * and per MPI call (added_per_mpi_call). Never asserts.
 *
 * Calls: MPI_Send to MPI_PROC_NULL; MPI_Isend + MPI_Wait to self (the matching receives are
 * pre-posted in batches outside the timed loop); MPI_Irecv + MPI_Test that does not complete
 * (cancelled in batches outside the timed loop); MPI_Iprobe finding nothing; MPI_Allreduce of
 * one int on 1 rank; MPI_Comm_rank (not wrapped: the floor of a call into the library). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kBatch = 256, kReps = 101 };

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* The 10th percentile of the batches: on a shared machine the median still moves with the
 * load of other processes, the low percentile is the undisturbed cost. */
static double low_percentile(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 10];
}

static int me;
static int payload, sink;
static MPI_Request pre[kBatch];
static int inbox[kBatch];

/* One batch of kBatch calls of `which`; returns ns per call. Setup and cleanup of a batch
 * (pre-posted receives, cancellations) are not timed. */
static double batch(int which) {
  double t0 = 0, t1 = 0;
  switch (which) {
    case 0:
      t0 = now_ns();
      for (int i = 0; i < kBatch; ++i) MPI_Send(&payload, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
      t1 = now_ns();
      break;
    case 1: {
      for (int i = 0; i < kBatch; ++i) MPI_Irecv(&inbox[i], 1, MPI_INT, me, 1, MPI_COMM_WORLD, &pre[i]);
      t0 = now_ns();
      for (int i = 0; i < kBatch; ++i) {
        MPI_Request q;
        MPI_Isend(&payload, 1, MPI_INT, me, 1, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
      }
      t1 = now_ns();
      MPI_Waitall(kBatch, pre, MPI_STATUSES_IGNORE);
      break;
    }
    case 2: {
      int flag = 0;
      t0 = now_ns();
      for (int i = 0; i < kBatch; ++i) {
        MPI_Irecv(&inbox[i], 1, MPI_INT, me, 2, MPI_COMM_WORLD, &pre[i]);
        MPI_Test(&pre[i], &flag, MPI_STATUS_IGNORE);
      }
      t1 = now_ns();
      for (int i = 0; i < kBatch; ++i) MPI_Cancel(&pre[i]);
      MPI_Waitall(kBatch, pre, MPI_STATUSES_IGNORE);
      break;
    }
    case 3: {
      int flag = 0;
      t0 = now_ns();
      for (int i = 0; i < kBatch; ++i) MPI_Iprobe(me, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      t1 = now_ns();
      break;
    }
    case 4:
      t0 = now_ns();
      for (int i = 0; i < kBatch; ++i) MPI_Allreduce(&payload, &sink, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      t1 = now_ns();
      break;
    case 5: {
      int r;
      t0 = now_ns();
      for (int i = 0; i < kBatch; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &r);
      t1 = now_ns();
      sink += r;
      break;
    }
  }
  return (t1 - t0) / kBatch;
}

int main(int argc, char** argv) {
  const char* cond = argc > 1 ? argv[1] : "plain";
  const char* only = argc > 2 ? argv[2] : NULL; /* one call only (profiling runs) */
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  static const char* names[] = {"send_proc_null", "isend_wait_self", "irecv_test_pending",
                                "iprobe_nothing", "allreduce_1rank", "comm_rank"};
  /* events recorded per call when enabled: ENTER+EXIT; Isend: ENTER ISEND EXIT, Wait: ENTER
   * ISEND_COMPLETE EXIT; Irecv: ENTER IRECV_REQUEST EXIT, Test without completion: none;
   * Iprobe without a message: none; Allreduce: ENTER COLL_BEGIN COLL_END EXIT; Comm_rank:
   * not wrapped. */
  static const int events[] = {2, 6, 3, 0, 4, 0};
  static const int mpi_calls[] = {1, 2, 2, 1, 1, 1}; /* MPI calls per timed iteration */
  const int ncalls = (int)(sizeof names / sizeof names[0]);
  double samples[kReps];
  for (int c = 0; c < ncalls; ++c) {
    if (only && strcmp(only, names[c]) != 0) continue;
    for (int w = 0; w < 5; ++w) batch(c); /* warm-up */
    for (int k = 0; k < kReps; ++k) samples[k] = batch(c);
    printf("wrappers.%s.%s: %.1f ns\n", names[c], cond, low_percentile(samples, kReps));
    printf("wrappers.%s.events: %d\n", names[c], events[c]);
    printf("wrappers.%s.mpi_calls: %d\n", names[c], mpi_calls[c]);
  }

  /* Record cost per event, in process, through the user-region API of the preloaded tracer. */
  unsigned (*define)(const char*) = (unsigned (*)(const char*))dlsym(RTLD_DEFAULT, "critpath_region_define");
  void (*enter)(unsigned) = (void (*)(unsigned))dlsym(RTLD_DEFAULT, "critpath_enter");
  void (*leave)(unsigned) = (void (*)(unsigned))dlsym(RTLD_DEFAULT, "critpath_exit");
  if (define && enter && leave) {
    const unsigned id = define("bench_wrappers.record");
    for (int k = 0; k < kReps; ++k) {
      const double t0 = now_ns();
      for (int i = 0; i < kBatch; ++i) {
        enter(id);
        leave(id);
      }
      samples[k] = (now_ns() - t0) / (2.0 * kBatch);
    }
    printf("wrappers.record_event.%s: %.1f ns\n", cond, low_percentile(samples, kReps));
  }
  MPI_Finalize();
  return 0;
}
