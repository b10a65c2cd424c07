/* Multi-dimensional deconvolution (MDD) in the frequency domain: given data
 * d_f = A_f x_f at every frequency f, recover the wavefield x by LSQR on the
 * block-diagonal operator diag(A_f), all frequencies in one solve (one
 * Krylov space, norms over every frequency), once with the TLR operators
 * and once with the dense ones, so that the compression's effect on the
 * inversion is measured against the same inversion without it. */
#ifndef TL_MDD_H
#define TL_MDD_H

#include "tl_dense.h"
#include "tl_lsqr.h"
#include "tl_matrix.h"

typedef struct tl_mdd {
  int nfreq, m, n;
  tl_matrix *tlr;  /* nfreq compressed operators */
  tl_dense *dense; /* the same operators, dense */
  /* Frequencies shared out over `systems` groups of `per` ranks (frequency
   * f on system f % systems, whose first rank is per (f % systems)); each
   * product is broadcast from its system over `world`. */
  int systems, system, per;
  MPI_Comm world;
} tl_mdd;

/* x (nfreq * n) from d (nfreq * m) with the TLR operators (dense = false)
 * or the dense ones. Collective. */
int tl_mdd_solve(const tl_mdd *p, bool dense, const float complex *d, const tl_lsqr_opts *o,
                 float complex *x, double *history, tl_lsqr_result *r, wf_status *st);

/* For x from a solve: ||d - A x|| and ||A^H (d - A x) - damp^2 x|| (the
 * normal equations' residual, zero at the damped least-squares solution),
 * with the TLR or the dense operators, frequency by frequency on each
 * frequency's system (not through the solves' broadcasts). Collective. */
int tl_mdd_residuals(const tl_mdd *p, bool dense, const float complex *d, const float complex *x,
                     double damp, double *residual, double *normal, wf_status *st);

/* ||v||_2 of n complex floats, summed in double (for checks; LSQR keeps its own). */
double tl_norm2(const float complex *v, size_t n);

#endif
