/* The pieces of `wafer cfd` that its problems share (cfd_workload.c) and
 * the convection problem's run (cfd_convection.c). */
#ifndef CFD_CONVECTION_H
#define CFD_CONVECTION_H

#include "wf_signal.h"
#include "wf_workload.h"

/* problem = convection: the [cfd] section's keys as docs/cfd.md lists them. */
int cfd_convection_run(wf_run *run, wf_status *st);

/* A signal caught before step n stops the run there (collective); `steps`
 * < 0 when the run goes to a time instead. */
int cfd_signalled(wf_signal_poll *poll, int n, int steps, const char *problem, wf_status *st);

#endif
