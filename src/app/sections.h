/* Every deck section the `wafer` command reads: the wafer's and the
 * output's, the fidelity command's, then each registered workload's. Apart
 * from the registry, which lists workloads only (fidelity runs workloads
 * from it). */
#ifndef WF_SECTIONS_H
#define WF_SECTIONS_H

#include "wf_deck.h"

/* [wafer], [output], [fidelity], then each workload's (at most `max`, into
 * `out`; returns how many). The deck of any run holds them all, so one deck
 * file can configure several workloads. */
int wf_all_sections(const wf_section **out, int max);

#endif
