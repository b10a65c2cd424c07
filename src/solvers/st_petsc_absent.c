/* st_petsc.h in a build without PETSc (wf_config.h: WAFER_HAVE_PETSC 0).
 * Every caller asks wf_ref_petsc_absent() first and reports the check as
 * unavailable, or refuses a deck that asks for PETSc, so this only answers
 * a caller that forgot. */
#include "st_petsc.h"

#include "wf_reference.h"

int st_petsc_check(const st_op *op, st_method method, const double *b, const double *x_ours,
                   const st_opts *o, const char *options, st_petsc_result *pr, wf_status *st) {
  (void)op, (void)method, (void)b, (void)x_ours, (void)o, (void)options, (void)pr;
  return wf_fail(st, WF_ERR_INPUT, "%s", wf_ref_petsc_absent());
}

void st_petsc_finalize(void) {}
