/* STREAM triad on this machine: the memory bandwidth limit that the
 * memory-bound workloads report their fraction of. */
#ifndef WF_STREAM_H
#define WF_STREAM_H

#include <mpi.h>
#include <stddef.h>

#include "wf_error.h"

/* a = b + s c over `n` doubles per rank, all ranks at once (best of 5): the
 * machine's aggregate rate in bytes/s; 0 if out of memory. A signal
 * (wf_signal_stop, between repetitions) stops it: 0, with wf_signal_fail's
 * status in `st` (WF_OK otherwise). Collective. */
double wf_stream_triad(MPI_Comm comm, size_t n, wf_status *st);

#endif
