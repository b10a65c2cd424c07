/* The built-in PETSc cross-check: the same operator as a PETSc AIJ matrix,
 * the same right-hand side, the same KSP type, preconditioner and
 * tolerances; iterations, time and the relative difference of the solutions.
 *
 * Global ordering: rank-blocked, so PETSc's local rows are this rank's owned
 * cells in storage order (row by row, column by column, z fastest). */
#ifndef ST_PETSC_H
#define ST_PETSC_H

#include "st_krylov.h"

typedef struct st_petsc_result {
  int its;
  char reason[64];
  double seconds; /* KSPSolve alone */
  double rnorm;
  double rel_diff; /* ||x_wafer - x_petsc|| / ||x_petsc|| */
  int signal;      /* SIGINT or SIGTERM stopped PETSc's solve (0: it ran to its end) */
} st_petsc_result;

/* `options`: extra PETSc options ("-ksp_monitor -log_view"), or NULL.
 * PETSc is initialised on first use and finalised by st_petsc_finalize(). */
int st_petsc_check(const st_op *op, st_method method, const double *b, const double *x_ours,
                   const st_opts *o, const char *options, st_petsc_result *pr, wf_status *st);
void st_petsc_finalize(void);

#endif
