/* The convection problem's run of `wafer cfd` (cfd_convection.c). */
#ifndef CFD_CONVECTION_H
#define CFD_CONVECTION_H

#include "wf_workload.h"

/* problem = convection: the [cfd] section's keys as docs/cfd.md lists them. */
int cfd_convection_run(wf_run *run, wf_status *st);
/* The time series' files (snapshot_every > 0), declared to the run's file
 * registry: base_NNNNNN.h5 (with their sidecars) and base_series.xmf beside
 * output.file, so that no input or output of the run can be one of them. */
int cfd_convection_claim_files(const wf_deck *deck, struct wf_files *files, wf_status *st);

#endif
