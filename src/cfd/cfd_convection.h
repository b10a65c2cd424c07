/* The convection problem's run of `wafer cfd` (cfd_convection.c). */
#ifndef CFD_CONVECTION_H
#define CFD_CONVECTION_H

#include "wf_workload.h"

/* problem = convection: the [cfd] section's keys as docs/cfd.md lists them. */
int cfd_convection_run(wf_run *run, wf_status *st);

#endif
