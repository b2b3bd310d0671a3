/* critpath — tests/mpi/faults/faults.c: a known-answer run that ends in a fault.
 *
 *   faults KIND WHO     KIND: segv bus fpe abrt term int exit abort none
 *                       WHO:  all, or the one rank that faults
 *
 * After a barrier, every even rank r sleeps 300 ms, then sends one int to rank r+1 (a Late Sender of 0.3 s on
 * each odd rank), everyone meets in a barrier and prints one line. Then the faulting ranks
 * fault; the others wait for a message that never comes, until the launcher ends them. With
 * KIND none everyone finalizes. The SIGSEGV, SIGBUS and SIGFPE are real hardware faults. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void fault(const char* kind) {
  if (!strcmp(kind, "segv")) {
    volatile int* volatile bad = (int*)(uintptr_t)8;
    *bad = 1;
  } else if (!strcmp(kind, "bus")) {
    FILE* f = tmpfile(); /* an empty file mapped: touching it is a SIGBUS */
    volatile char* p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
    p[0] = 1;
  } else if (!strcmp(kind, "fpe")) {
    volatile int zero = 0, one = 1; /* both volatile: GCC turns 1 / x into a comparison */
    volatile int x = one / zero;
    (void)x;
  } else if (!strcmp(kind, "abrt")) {
    abort();
  } else if (!strcmp(kind, "term")) {
    raise(SIGTERM);
  } else if (!strcmp(kind, "int")) {
    raise(SIGINT);
  } else if (!strcmp(kind, "exit")) {
    exit(3);
  } else if (!strcmp(kind, "abort")) {
    MPI_Abort(MPI_COMM_WORLD, 5);
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: faults KIND WHO\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, token = 7;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD); /* the ranks leave MPI_Init far apart on a loaded machine */
  if (rank % 2 == 0 && rank + 1 < size) {
    usleep(300000);
    MPI_Send(&token, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
  } else if (rank % 2 == 1) {
    MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: exchange done\n", rank);
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  const int all = !strcmp(argv[2], "all");
  if (strcmp(argv[1], "none") != 0) {
    if (all || atoi(argv[2]) == rank) {
      fault(argv[1]);
    } else {
      MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Finalize();
  return 0;
}
