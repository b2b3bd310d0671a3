/* critpath — tests/mpi/wrappers/wrap_pcontrol.c: MPI_Pcontrol(0)/(1) with requests and
 * communicators created while paused (2 ranks). check_pcontrol.py: nothing is recorded while
 * paused, tracking continues, and ids stay consistent afterwards. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  int a[8] = {0}, b[8] = {0};
  MPI_Request q, x, p;
  MPI_Comm split;
  if (r == 0) {
    MPI_Isend(a, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &q); /* posted while recording */
    MPI_Pcontrol(0);
    MPI_Wait(&q, MPI_STATUS_IGNORE);                     /* completes while paused */
    MPI_Send_init(a, 2, MPI_INT, 1, 3, MPI_COMM_WORLD, &p);
    MPI_Irecv(b, 8, MPI_INT, 1, 4, MPI_COMM_WORLD, &x);  /* posted while paused */
    MPI_Comm_split(MPI_COMM_WORLD, 0, r, &split);
    MPI_Pcontrol(1);
    MPI_Wait(&x, MPI_STATUS_IGNORE);
    MPI_Start(&p);
    MPI_Wait(&p, MPI_STATUS_IGNORE);
    MPI_Request_free(&p);
  } else {
    MPI_Recv(a, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Pcontrol(0);
    MPI_Send(a, 3, MPI_INT, 0, 4, MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, 0, r, &split);
    MPI_Pcontrol(1);
    MPI_Recv(a, 8, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(split);
  MPI_Comm_free(&split);
  MPI_Finalize();
  if (r == 0) printf("wrap_pcontrol: done\n");
  return 0;
}
