/* `wafer generate`: text sampled from a `wafer train` checkpoint. */
#ifndef GENERATE_WORKLOAD_H
#define GENERATE_WORKLOAD_H

#include "wf_workload.h"

extern const wf_workload wf_generate_workload;

#endif
