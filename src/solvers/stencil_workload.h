/* `wafer stencil`: 7-point solvers on the PE grid, checked against PETSc. */
#ifndef STENCIL_WORKLOAD_H
#define STENCIL_WORKLOAD_H

#include "wf_workload.h"

extern const wf_workload wf_stencil_workload;

#endif
