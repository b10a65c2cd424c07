/* The run's report of its wafer (the app's; mesh_decomp knows no JSON). */
#ifndef WF_REPORT_H
#define WF_REPORT_H

#include <stdio.h>

#include "wf_json.h"
#include "wf_wafer.h"

/* Two lines for the run header (rank 0 prints them). */
void app_describe_wafer(const wf_wafer *w, FILE *out);
/* The wafer part of the JSON summary. */
void app_json_wafer(const wf_wafer *w, wf_json *j);
/* The fabric counters summed over ranks, as a "fabric" object, with the
 * main computation's counts per `unit` of work (the busiest rank's) when
 * the workload marked it (wf_fabric_main_begin / _end). Collective. */
void app_json_fabric(const wf_wafer *w, const char *unit, wf_json *j);

#endif
