/* `wafer halo`: the fabric benchmark. */
#ifndef HALO_WORKLOAD_H
#define HALO_WORKLOAD_H

#include "wf_workload.h"

extern const wf_workload wf_halo_workload;

#endif
