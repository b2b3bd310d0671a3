/* critpath — tests/mpi/corpus/corpus.h: shared helpers of the MPI corpus programs.
 *
 * Where it sits: outside the data flow. Every corpus program is a small, legal but unusual MPI
 * program; run_corpus.py runs it twice (without and with the tracer) and requires identical
 * stdout and exit status. These helpers keep the output deterministic:
 *
 *   say("fmt", ...)     appends a line to this rank's output (not printed yet)
 *   say_flush(comm)     gathers every rank's lines to rank 0 of comm, which prints them in
 *                       rank order as "[r] line" (collective over comm)
 *   EXPECT(cond)        a self-check: on failure prints the condition to stderr and ends the
 *                       job with MPI_Abort(MPI_COMM_WORLD, 99), so both runs fail loudly
 *
 * Each program's first comment line holds `corpus: np=<N> [exit=<status>] [report=no]`, read
 * by run_corpus.py. Header-only C (static functions), no dependency on critpath. */
#ifndef CRITPATH_CORPUS_H
#define CRITPATH_CORPUS_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kSayBytes = 4096 };
static char say_buf[kSayBytes];
static int say_len;

static inline void say(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(say_buf + say_len, (size_t)(kSayBytes - say_len - 1), fmt, ap);
  va_end(ap);
  if (n < 0) return;
  say_len += n;
  if (say_len > kSayBytes - 2) say_len = kSayBytes - 2;
  say_buf[say_len++] = '\n';
  say_buf[say_len] = '\0';
}

static inline void say_flush(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  char* all = rank == 0 ? (char*)malloc((size_t)size * kSayBytes) : NULL;
  say_buf[say_len] = '\0';
  MPI_Gather(say_buf, kSayBytes, MPI_CHAR, all, kSayBytes, MPI_CHAR, 0, comm);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      const char* p = all + (size_t)r * kSayBytes;
      while (*p) {
        const char* nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        printf("[%d] %.*s\n", r, len, p);
        p += len + (nl ? 1 : 0);
      }
    }
    fflush(stdout);
    free(all);
  }
  say_len = 0;
  say_buf[0] = '\0';
}

#define EXPECT(c)                                                                        \
  do {                                                                                   \
    if (!(c)) {                                                                          \
      fprintf(stderr, "corpus %s:%d: EXPECT(%s) failed\n", __FILE__, __LINE__, #c);      \
      fflush(stderr);                                                                    \
      MPI_Abort(MPI_COMM_WORLD, 99);                                                     \
    }                                                                                    \
  } while (0)

static inline int corpus_rank(void) {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static inline int corpus_size(void) {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

#endif
