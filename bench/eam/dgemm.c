/* The machine's double-precision compute limit for the EAM benchmark: OpenBLAS
 * DGEMM (one thread per rank, all ranks at once), best of 5, GFLOP/s summed
 * over ranks on rank 0's stdout.   usage: mpiexec -n R dgemm [N] */
#include <cblas.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n = argc > 1 ? atoi(argv[1]) : 1500;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
         *c = malloc(sizeof(double) * n * n);
  for (long i = 0; i < (long)n * n; i++) a[i] = 1.0 / (i % 7 + 1), b[i] = 1.0 / (i % 5 + 2), c[i] = 0;
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = tmax < best ? tmax : best;
  }
  int nranks;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (rank == 0) printf("%.3f\n", 2.0 * n * n * (double)n * nranks / best / 1e9);
  free(a), free(b), free(c);
  MPI_Finalize();
  return 0;
}
