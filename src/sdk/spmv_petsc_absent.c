/* spmv.h's PETSc product in a build without PETSc (wf_config.h:
 * WAFER_HAVE_PETSC 0). The workload asks wf_ref_petsc_absent() first and
 * reports the check as unavailable, or refuses a deck that asks for PETSc,
 * so this only answers a caller that forgot. */
#include "spmv.h"
#include "wf_reference.h"

int sp_petsc_product(const sp_case *c, MPI_Comm comm, long repeat, sp_petsc_part *p,
                     wf_status *st) {
  (void)c, (void)comm, (void)repeat, (void)p;
  return wf_fail(st, WF_ERR_INPUT, "%s", wf_ref_petsc_absent());
}

void sp_petsc_finalize(void) {}
