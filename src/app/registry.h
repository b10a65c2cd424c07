/* The workloads the `wafer` command knows. */
#ifndef WF_REGISTRY_H
#define WF_REGISTRY_H

#include "wf_workload.h"

extern const wf_workload *const wf_workloads[];
extern const int wf_nworkloads;

const wf_workload *wf_find_workload(const char *name);
/* Let every workload release what outlives its runs (PETSc, say). */
void wf_finalize_workloads(void);

#endif
