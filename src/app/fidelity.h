/* `wafer fidelity`: the cost model against published wafer results, each on
 * its own case (the paper's hardware, precision, size and mapping), one deck
 * per case in inputs/fidelity/ with a [fidelity] section naming the figure
 * and its source. Prints one table (or, with --markdown, the README's). */
#ifndef WF_FIDELITY_H
#define WF_FIDELITY_H

#include "app.h"

extern const wf_section wf_fidelity_section;

int app_fidelity(MPI_Comm comm, int rank, const options *o, const wf_section **secs, int nsecs);

#endif
