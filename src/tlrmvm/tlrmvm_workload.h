/* `wafer tlrmvm`: tile low-rank matrix-vector products of seismic
 * frequency-domain operators (GB23), checked against the dense product. */
#ifndef TLRMVM_WORKLOAD_H
#define TLRMVM_WORKLOAD_H

#include "wf_workload.h"

extern const wf_workload wf_tlrmvm_workload;

#endif
