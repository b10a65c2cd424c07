/* `wafer widemul`: wide (multi-limb) integer multiplication on the PE
 * grid, after the SDK's shift-and-add example. */
#ifndef WIDEMUL_H
#define WIDEMUL_H

#include "wf_workload.h"

extern const wf_workload wf_widemul_workload;

#endif
