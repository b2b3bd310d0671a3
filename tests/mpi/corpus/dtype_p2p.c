/* critpath — tests/mpi/corpus/dtype_p2p.c (corpus: np=2): derived datatypes in point-to-point:
 * vector, indexed, struct, resized and subarray types, sent with one type and received with
 * another of the same signature (blocking, nonblocking and persistent). */
#include <stddef.h>

#include "corpus.h"

struct Particle {
  double pos[3];
  int id;
  char tag;
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int r = corpus_rank(), peer = 1 - r;
  MPI_Status st;
  int count;

  /* vector: every other element of 16 ints, received contiguously */
  MPI_Datatype vec;
  MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int grid[16], flat[8];
  for (int i = 0; i < 16; ++i) grid[i] = i + 100 * r;
  MPI_Sendrecv(grid, 1, vec, peer, 1, flat, 8, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  say("vector: %d %d %d count=%d", flat[0], flat[1], flat[7], count);

  /* indexed */
  MPI_Datatype idx;
  int lens[3] = {2, 1, 3}, disp[3] = {0, 5, 10};
  MPI_Type_indexed(3, lens, disp, MPI_INT, &idx);
  MPI_Type_commit(&idx);
  int big[16] = {0}, six[6];
  for (int i = 0; i < 16; ++i) big[i] = i * (r + 1);
  MPI_Request q[2];
  MPI_Irecv(six, 6, MPI_INT, peer, 2, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(big, 1, idx, peer, 2, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  say("indexed: %d %d %d %d %d %d", six[0], six[1], six[2], six[3], six[4], six[5]);

  /* struct, resized to the C struct's extent, 3 of them */
  MPI_Datatype ps, pt;
  int bl[3] = {3, 1, 1};
  MPI_Aint dd[3] = {offsetof(struct Particle, pos), offsetof(struct Particle, id),
                    offsetof(struct Particle, tag)};
  MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
  MPI_Type_create_struct(3, bl, dd, ty, &ps);
  MPI_Type_create_resized(ps, 0, sizeof(struct Particle), &pt);
  MPI_Type_commit(&pt);
  struct Particle mine[3], theirs[3];
  for (int i = 0; i < 3; ++i) {
    mine[i].pos[0] = i; mine[i].pos[1] = r; mine[i].pos[2] = 0.5;
    mine[i].id = 10 * r + i; mine[i].tag = (char)('a' + i);
  }
  MPI_Request pr[2];
  MPI_Send_init(mine, 3, pt, peer, 3, MPI_COMM_WORLD, &pr[0]);
  MPI_Recv_init(theirs, 3, pt, peer, 3, MPI_COMM_WORLD, &pr[1]);
  MPI_Startall(2, pr);
  MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
  MPI_Request_free(&pr[0]);
  MPI_Request_free(&pr[1]);
  say("struct: id=%d,%d,%d tag=%c%c%c pos=%.1f", theirs[0].id, theirs[1].id, theirs[2].id,
      theirs[0].tag, theirs[1].tag, theirs[2].tag, theirs[2].pos[0] + theirs[1].pos[1]);

  /* subarray: the 2x2 centre of a 4x4 block */
  MPI_Datatype sub;
  int sizes[2] = {4, 4}, subs[2] = {2, 2}, starts[2] = {1, 1};
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
  MPI_Type_commit(&sub);
  int blk[16], centre[16] = {0};
  for (int i = 0; i < 16; ++i) blk[i] = i + 50 * r;
  if (r == 0) {
    MPI_Send(blk, 1, sub, 1, 4, MPI_COMM_WORLD);
  } else {
    MPI_Recv(centre, 1, sub, 0, 4, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, sub, &count);
    int elems;
    MPI_Get_elements(&st, MPI_INT, &elems);
    say("subarray: %d %d %d %d count=%d elements=%d", centre[5], centre[6], centre[9], centre[10],
        count, elems);
  }
  MPI_Type_free(&vec);
  MPI_Type_free(&idx);
  MPI_Type_free(&ps);
  MPI_Type_free(&pt);
  MPI_Type_free(&sub);
  say_flush(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
