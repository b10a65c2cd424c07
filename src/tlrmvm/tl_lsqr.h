/* LSQR (Paige and Saunders, ACM TOMS 8, 1982) for complex least squares
 * min ||A x - b||^2 + damp^2 ||x||^2, with A given by its products A v and
 * A^H u. Vectors are whole on every rank (the products gather them), so
 * the iteration's own arithmetic needs no communication and every rank
 * follows the same path. Multi-dimensional deconvolution solves with it
 * over all frequencies at once. */
#ifndef TL_LSQR_H
#define TL_LSQR_H

#include <complex.h>
#include <mpi.h>
#include <stdbool.h>

#include "wf_error.h"

/* out = A in (adjoint = false: in has n entries, out m) or A^H in. */
typedef void (*tl_operator_fn)(void *ctx, bool adjoint, const float complex *in,
                               float complex *out);

typedef struct tl_lsqr_opts {
  int iterations; /* at most this many */
  double damp;    /* Tikhonov damping (0: none) */
  double atol;    /* stop when ||A^H r|| <= atol ||A|| ||r|| (0: never) */
  const MPI_Comm *poll; /* every rank of it runs the solve: a signal to any ends it
                           within an iteration (wf_signal_poll); NULL: no polling */
} tl_lsqr_opts;

typedef struct tl_lsqr_result {
  int iterations;
  double residual; /* ||b - A x|| / ||b||, from the recurrences (without the damping term) */
} tl_lsqr_result;

/* x (n entries) from x = 0; `history` (iterations + 1 entries, or NULL):
 * the relative residual after each iteration. */
int tl_lsqr(tl_operator_fn op, void *ctx, int m, int n, const float complex *b,
            const tl_lsqr_opts *o, float complex *x, double *history, tl_lsqr_result *r,
            wf_status *st);

#endif
