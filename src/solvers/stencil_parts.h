/* The stencil workload's private half (stencil_workload.c, stencil_check.c):
 * the resolved deck and what a solve reports, shared by the run and its
 * checks. */
#ifndef STENCIL_PARTS_H
#define STENCIL_PARTS_H

#include <stdbool.h>

#include "st_krylov.h"
#include "st_mesh.h"
#include "st_petsc.h"
#include "st_problem.h"
#include "wf_model.h"
#include "wf_workload.h"

typedef struct setup {
  int nx, ny, nz;
  bool periodic[3];
  bool variable;
  st_coef_spec coef;
  const char *rhs;
  st_method method;
  st_opts opts;
  bool petsc;
  bool petsc_unavailable; /* crosscheck = auto in a build without PETSc */
  wf_prec wafer_prec; /* of the wafer model */
} setup;

typedef struct report {
  st_result res;
  st_petsc_result pr;
  double triad, err_max, lambda_exact;
} report;

/* The answer's checks against the analytic eigenvalue or PETSc (none
 * without a reference: the solver's own test is no check). */
void stencil_check(wf_run *run, const setup *s, const st_mesh *m, const double *x,
                   const double *exact, report *rep);
/* WF_OK when the solve converged, or ran the fixed count rtol = 0 asks for;
 * else a runtime error naming the reason (exit 1). */
int stencil_require_convergence(const setup *s, const st_result *r, wf_status *st);

#endif
