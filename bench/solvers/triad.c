/* STREAM triad a = b + s c on every rank at once, as STREAM counts it (24
 * bytes per element, no write-allocate): the machine's memory bandwidth
 * limit for the solver benchmark. Usage: mpiexec -n N triad [MiB per array] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
  size_t n = mib * 1024 * 1024 / sizeof(double) / (size_t)size;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (size_t i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2;
  double best = 1e30;
  for (int rep = 0; rep < 10; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (size_t i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (tmax < best) best = tmax;
  }
  if (rank == 0) printf("%.6g\n", 24.0 * (double)n * size / best / 1e9);
  if (a[n / 2] != 7.0) fprintf(stderr, "triad: wrong result\n");
  free(a), free(b), free(c);
  MPI_Finalize();
  return 0;
}
