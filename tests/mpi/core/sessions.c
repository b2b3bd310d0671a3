/* critpath — tests/mpi/core/sessions.c: an MPI-4 Sessions program without MPI_Init: a session,
 * a communicator from the mpi://WORLD process set, a ring of point-to-point messages, the
 * session finalized. critpath does not trace Sessions: it must say so once per process and
 * change nothing else (check_sessions.py). */
#include <mpi.h>
#include <stdio.h>

int main(void) {
  MPI_Session session;
  MPI_Group group;
  MPI_Comm comm;
  if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) return 1;
  MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
  MPI_Comm_create_from_group(group, "critpath.test.sessions", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
  int rank, size, token = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank == 0) {
    token = 1;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, comm);
    MPI_Recv(&token, 1, MPI_INT, size - 1, 0, comm, MPI_STATUS_IGNORE);
    printf("sessions: token went round %d ranks: %d\n", size, token);
  } else {
    MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, comm, MPI_STATUS_IGNORE);
    ++token;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, comm);
  }
  MPI_Comm_free(&comm);
  MPI_Group_free(&group);
  MPI_Session_finalize(&session);
  return 0;
}
