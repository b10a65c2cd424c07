/* The BLAS and LAPACK calls wafer's GEMM, GEMV and Cholesky are timed
 * against (bench/sdk/run.sh): one cblas_dgemm, cblas_dgemv or
 * LAPACKE_dpotrf of the whole problem on one core, the median of REPEAT
 * calls after one warm-up. A factorisation starts from a fresh copy of the
 * matrix, as wafer's does (the copy is timed in both).
 *
 *   blas_reference gemm M N K REPEAT     seconds a product
 *   blas_reference gemv M N REPEAT       seconds a product
 *   blas_reference potrf N REPEAT        seconds a factorisation */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

static double *filled(long n) {
  double *v = malloc((size_t)n * sizeof *v);
  for (long i = 0; i < n; i++) v[i] = 1.0 / (double)(i % 7 + 1) - 0.3;
  return v;
}

/* A symmetric, diagonally dominant (so positive definite) n x n matrix,
 * row-major, factored REPEAT times from fresh copies. */
static int potrf(int n, int repeat) {
  double *a0 = malloc((size_t)n * n * sizeof *a0), *a = malloc((size_t)n * n * sizeof *a);
  double *t = malloc((size_t)(repeat + 1) * sizeof *t);
  for (long i = 0; i < n; i++)
    for (long j = 0; j <= i; j++)
      a0[i * n + j] = a0[j * n + i] = i == j ? n : 1.0 / (double)((i + j) % 7 + 1) - 0.3;
  for (int r = 0; r <= repeat; r++) {
    double t0 = now();
    memcpy(a, a0, (size_t)n * n * sizeof *a);
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, a, n) != 0) return fprintf(stderr, "dpotrf failed\n"), 1;
    t[r] = now() - t0;
  }
  printf("%.9g\n", median(t + 1, repeat));
  free(a0), free(a), free(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "potrf") == 0) return potrf(atoi(argv[2]), atoi(argv[3]));
  int gemm = argc == 6 && strcmp(argv[1], "gemm") == 0, gemv = argc == 5 && strcmp(argv[1], "gemv") == 0;
  if (!gemm && !gemv) return fprintf(stderr, "usage: blas_reference gemm M N K REPEAT | gemv M N REPEAT | potrf N REPEAT\n"), 2;
  int m = atoi(argv[2]), n = atoi(argv[3]), k = gemm ? atoi(argv[4]) : 1, repeat = atoi(argv[argc - 1]);
  double *a = filled((long)m * (gemm ? k : n)), *b = filled((long)(gemm ? k : 1) * n),
         *c = filled((long)m * (gemm ? n : 1));
  double *t = malloc((size_t)(repeat + 1) * sizeof *t);
  for (int r = 0; r <= repeat; r++) {
    double t0 = now();
    if (gemm)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
    else
      cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, 1.0, a, n, b, 1, 1.0, c, 1);
    t[r] = now() - t0;
  }
  printf("%.9g\n", median(t + 1, repeat)); /* t[0]: the warm-up */
  free(a), free(b), free(c), free(t);
  return 0;
}
