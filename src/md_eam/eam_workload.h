/* `wafer eam`: EAM molecular dynamics on the PE grid, checked against LAMMPS. */
#ifndef EAM_WORKLOAD_H
#define EAM_WORKLOAD_H

#include "wf_workload.h"

extern const wf_workload wf_eam_workload;

#endif
