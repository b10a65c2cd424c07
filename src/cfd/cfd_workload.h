/* `wafer cfd`: stencil CFD on the PE grid (docs/cfd.md). */
#ifndef CFD_WORKLOAD_H
#define CFD_WORKLOAD_H

#include "wf_workload.h"

extern const wf_workload wf_cfd_workload;

#endif
