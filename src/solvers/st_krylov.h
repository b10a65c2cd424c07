/* Krylov solvers and the power method on the stencil operator.
 *
 * Dot products and norms are fabric allreduces. CG is fused to two sweeps
 * per iteration (8 values moved per cell, see st_krylov.c); BiCGStab and the
 * power method are written plainly around st_op_apply. The convergence test
 * is PETSc's default: ||r_k|| <= max(rtol ||b||, atol), and divergence when
 * ||r_k|| > dtol ||b||. */
#ifndef ST_KRYLOV_H
#define ST_KRYLOV_H

#include <stdbool.h>

#include "st_op.h"

typedef enum { ST_CG, ST_PCG, ST_BICGSTAB, ST_POWER } st_method;

typedef enum {
  ST_CONVERGED_RTOL,
  ST_CONVERGED_ATOL,
  ST_DIVERGED_MAX_ITS,
  ST_DIVERGED_DTOL,       /* ||r|| grew past dtol ||b|| */
  ST_DIVERGED_BREAKDOWN,  /* BiCGStab: rho or (v, r0) vanished */
  ST_DIVERGED_INDEFINITE, /* CG: p'Ap <= 0, the operator is not SPD */
  ST_DIVERGED_NONFINITE,  /* a NaN or Inf appeared */
  ST_INTERRUPTED,         /* a rank caught SIGINT or SIGTERM (st_result.signal) */
} st_reason;

const char *st_reason_name(st_reason r);
bool st_reason_converged(st_reason r);

/* Vectors and arithmetic: double; single (float vectors, float sums); mixed
 * (float vectors, double accumulation of the dot products). */
typedef enum { ST_DOUBLE, ST_SINGLE, ST_MIXED } st_precision;

typedef struct st_opts {
  double rtol, atol, dtol;
  int max_its;
  st_precision precision;
  /* Start from the x given (PETSc's KSPSetInitialGuessNonzero), not from 0;
   * rtol stays relative to ||b||. CG and PCG on a stored operator only. */
  bool nonzero_guess;
  /* The caller's step loop owns SIGINT/SIGTERM (a solve inside a time
   * step): the solve runs to its end, the loop stops between steps with its
   * state whole (and checkpointed). Otherwise the solve stops at the
   * iteration the signal arrives (ST_INTERRUPTED). */
  bool ignore_signals;
} st_opts;

typedef struct st_result {
  int its;
  st_reason reason;
  double rnorm0, rnorm; /* residual norms (preconditioned for PCG) */
  double lambda;        /* power method: the largest eigenvalue */
  int signal;           /* ST_INTERRUPTED: the signal */
  double *history;      /* residual norm (or eigenvalue estimate) per iteration */
  int history_len;      /* its + 1, unless memory ran out for more */
  int history_cap;
  double seconds;       /* the iterations alone */
  double bytes_per_cell_it; /* memory traffic the kernels need, per cell and iteration */
  /* The fused CG's last r'r as its accumulator summed it, and the same from
   * the residual vector in double (0, 0 for the other solvers). */
  double rr, rr_vector;
} st_result;

/* Solve A x = b (x starts at 0, or at x with nonzero_guess). b's halo is
 * not used. */
int st_solve(st_op *op, st_method method, const double *b, double *x, const st_opts *o,
             st_result *res, wf_status *st);
/* Largest eigenvalue of A from the start vector v (overwritten). */
int st_power(st_op *op, double *v, const st_opts *o, st_result *res, wf_status *st);
void st_result_free(st_result *res);

/* Local partial dot product over owned cells (for tests and the workload). */
double st_dot_local(const st_mesh *m, const double *a, const double *b);

#endif
