/* Fidelity cases that are one kernel, not a workload's run (`[fidelity] kernel`):
 *   gemv          y = W x, rows x cols, one vector, on the deck's PE grid, by the
 *                 weight-stationary product of the training model (WaferLLM's GEMV);
 *   tlrmvm_bound  the bandwidth `systems` wafers sustain at most, every PE streaming
 *                 its bases at the multiply-adds' rate, the fabric free (GB23): a
 *                 ceiling, so a published figure above it is outside.
 * Each fills a projection as a workload's run would (docs/model.md). */
#ifndef WF_FIDELITY_KERNEL_H
#define WF_FIDELITY_KERNEL_H

#include <stdbool.h>

#include "wf_deck.h"
#include "wf_workload.h"

int fidelity_kernel(const wf_deck *deck, wf_projection *p, wf_status *st);
/* The case's model figure is a ceiling, not an estimate. */
bool fidelity_kernel_is_bound(const wf_deck *deck);

#endif
