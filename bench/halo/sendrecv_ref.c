/* Reference for the halo benchmark: the same bytes between two ranks as one
 * MPI_Sendrecv per exchange, no packing: what the MPI library and the
 * machine allow. Usage: mpiexec -n 2 sendrecv_ref BYTES ITERATIONS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3 || size != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -n 2 %s BYTES ITERATIONS\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  long bytes = atol(argv[1]), iters = atol(argv[2]);
  char *s = calloc((size_t)bytes + 1, 1), *r = calloc((size_t)bytes + 1, 1);
  int peer = 1 - rank;
  MPI_Sendrecv(s, (int)bytes, MPI_BYTE, peer, 0, r, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = 0;
  for (long i = 0; i < iters; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Sendrecv(s, (int)bytes, MPI_BYTE, peer, 0, r, (int)bytes, MPI_BYTE, peer, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    t += MPI_Wtime() - t0;
  }
  double tmax;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%.9g\n", tmax / (double)iters);
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
