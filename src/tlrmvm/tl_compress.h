/* Compression of a matrix into tile low rank: each tile's truncated SVD
 * (LAPACKE cgesdd), to the smallest rank whose dropped singular values
 * weigh at most `acc` times a norm in the Frobenius norm:
 *
 *   sqrt(sum_{l >= k} s_l^2) <= acc ||A||_F   (global: KAUST's choice), or
 *                            <= acc ||A_ij||_F (the tile's own norm).
 *
 * With T tiles the whole matrix is then within sqrt(T) acc ||A||_F of A
 * (global) or acc ||A||_F (own norms), and so is any product: ||A x - y||
 * <= that times ||x||. */
#ifndef TL_COMPRESS_H
#define TL_COMPRESS_H

#include <complex.h>
#include <stdbool.h>

#include "tl_matrix.h"
#include "wf_error.h"

typedef struct tl_compress_opts {
  double acc;       /* 0 < acc < 1 */
  bool global_norm; /* the whole matrix's norm (else each tile's) */
  int round;        /* ranks rounded up to a multiple of this (1: none) */
} tl_compress_opts;

/* Rows [r0, r0 + nr) x columns [c0, c0 + nc) of the matrix, column-major
 * with leading dimension ld. */
typedef void (*tl_fill_fn)(void *ctx, int r0, int nr, int c0, int nc, float complex *a, int ld);

/* One m x n tile (column-major, ld = m, overwritten) to rank *k <= min(m, n)
 * with dropped weight <= tol: U (m x k) and W (n x k) malloc'ed (NULL when
 * k = 0); `dropped2` = the sum of the dropped squared singular values. */
int tl_compress_tile(int m, int n, float complex *a, double tol, int round, int *k,
                     float complex **U, float complex **W, double *dropped2, wf_status *st);

/* This rank's tiles of the matrix `fill` describes, into `a` (allocated
 * here; every rank learns every tile's rank). `norm`: ||A||_F. `progress`:
 * rank 0 prints progress lines with an ETA (long compressions). Collective. */
int tl_compress(tl_matrix *a, const tl_layout *l, tl_fill_fn fill, void *ctx,
                const tl_compress_opts *o, bool progress, double *norm, wf_status *st);

#endif
