/* The stencil workload's checks (stencil_parts.h): the power method's
 * eigenvalue against the analytic one, a solve against PETSc's, and a solve
 * that did not converge as a failure. */
#include "stencil_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The answer's checks: convergence, the analytic eigenvalue, PETSc. The
 * manufactured solution's error is reported, not checked (its size depends
 * on the mesh; the tests check its order of convergence). */
void stencil_check(wf_run *run, const setup *s, const st_mesh *m, const double *x,
                   const double *exact, report *rep) {
  const st_result *r = &rep->res;
  /* (rtol = 0 asks for a fixed count: its end counts as converged) */
  bool converged = st_reason_converged(r->reason) ||
                   (r->reason == ST_DIVERGED_MAX_ITS && s->opts.rtol == 0);
  if (s->method == ST_POWER) {
    /* The Rayleigh quotient approaches lambda_1 as rho^2k, rho = lambda_2 /
     * lambda_1: stopped when a step moved it by rtol, it is within rtol
     * rho^2 / (1 - rho^2) of lambda_1 once that rate holds; a mix of modes
     * near lambda_2 reaches it only asymptotically (measured up to 1.01 of
     * it at 100 x 50 x 20): twice that, and a few units of round-off. */
    double second;
    const int n[3] = {s->nx, s->ny, s->nz};
    st_problem_lambda(n, s->periodic, &rep->lambda_exact, &second);
    double rho2 = pow(second / rep->lambda_exact, 2);
    double allowed = 2 * s->opts.rtol * rho2 / (1 - rho2) + 64 * 0x1p-53;
    double rel = fabs(r->lambda - rep->lambda_exact) / rep->lambda_exact;
    char what[200];
    snprintf(what, sizeof what,
             "power method converged to within %.2g of the analytic eigenvalue (what its stopping "
             "test and the analytic gap allow; %.2g)",
             allowed, rel);
    if (second < rep->lambda_exact)
      wf_run_check(run, converged && rel <= allowed, what);
    else
      wf_run_unchecked(run, "the power method's eigenvalue",
                       "the largest eigenvalue is repeated: no gap bounds the error");
  } else if (!s->petsc) {
    /* Without a reference the only assertion is the solver's own
     * convergence test, which the solver computed: not a check. */
    if (run->verbose && !converged) printf("stencil: the solver did not converge\n");
  }
  if (strcmp(s->rhs, "manufactured") == 0) {
    double e = 0;
    for (int j = 0; j < m->lny; j++)
      for (size_t k = st_row(m, j); k < st_row(m, j) + st_row_len(m); k++)
        e = fmax(e, fabs(x[k] - exact[k]));
    MPI_Allreduce(&e, &rep->err_max, 1, MPI_DOUBLE, MPI_MAX, run->comm);
  }
  if (s->petsc) {
    /* CG follows PETSc step for step. BiCGStab is sensitive to rounding:
     * PETSc's own count moves with the rank count (148 to 164, 11%, on a
     * convective random-coefficient case), so two codes each inside that
     * spread may differ by twice it: 20% on iterations. Two solutions
     * stopped at rtol differ by up to about cond(A) rtol.
     * Float vectors against PETSc's doubles: 1e-5 on the solution. Their
     * rounding (float storage, whatever the sums) perturbs the Krylov space
     * by about u_float each iteration, and how many more iterations that
     * costs depends on the spectrum and the right-hand side (mixed: 0 on a
     * 64^3 random one, 20% on the default's ones): their counts are
     * reported, not checked. */
    bool bcgs = s->method == ST_BICGSTAB, reduced = s->opts.precision != ST_DOUBLE;
    int its_tol = bcgs ? (int)ceil(0.2 * rep->pr.its) : 1;
    double x_tol = reduced ? 1e-5 : bcgs ? fmax(1e-8, 1e4 * s->opts.rtol) : 1e-8;
    if (!reduced)
      wf_run_check(run, abs(rep->pr.its - r->its) <= its_tol, "iterations agree with PETSc");
    wf_run_check(run, converged && rep->pr.rel_diff <= x_tol,
                 "converged, and the solution agrees with PETSc's");
  }
}

/* A solve that stopped short of its tolerance failed (exit 1), its report
 * and files kept; rtol = 0 asks for max_iterations steps, a fixed count. */
int stencil_require_convergence(const setup *s, const st_result *r, wf_status *st) {
  if (st_reason_converged(r->reason)) return WF_OK;
  if (r->reason == ST_DIVERGED_MAX_ITS && s->opts.rtol == 0) return WF_OK;
  return wf_fail(st, WF_ERR_RUNTIME,
                 "the solver did not converge: %s after %d iterations (stencil.rtol = 0 runs a "
                 "fixed max_iterations)",
                 st_reason_name(r->reason), r->its);
}

