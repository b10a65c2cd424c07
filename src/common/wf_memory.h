/* Large arrays on transparent huge pages: a streaming kernel over hundreds
 * of megabytes (TLR bases, FFT pencils) otherwise spends a share of its
 * time on TLB misses. Linux's THP setting is often `madvise`, so the pages
 * must be asked for. */
#ifndef WF_MEMORY_H
#define WF_MEMORY_H

#include <mpi.h>
#include <stddef.h>

#include "wf_error.h"

/* `bytes` (at least 1) aligned to 2 MiB and advised onto huge pages when
 * 2 MiB or more, else plain malloc; release with free(). NULL when out of
 * memory. */
void *wf_alloc_large(size_t bytes);

/* Bookkeeping arrays (one entry a rank, a row, a line of output): `count`
 * elements of `size` bytes, zeroed. Out of memory here means the machine is
 * already failing, and a status threaded through every collective that
 * follows would cost more than it saves: the job ends (MPI_Abort, exit 1)
 * with a message naming `what`. Every other allocation is checked and
 * reported as an error on every rank. */
void *wf_alloc_small(size_t count, size_t size, const char *what);

/* Refuse a run that cannot fit in memory before it allocates, instead of
 * meeting the OOM killer minutes in: `need` is this rank's estimate in bytes
 * (what it will hold), added over the ranks that share its node and
 * compared with what the node has free (MemAvailable, or the room left in
 * the cgroup this process sees when that is less: a container's limit, a
 * batch job's --mem where its cgroup is mounted). An input error on every rank,
 * naming `what`, the figures and `fix`. Collective. */
int wf_memory_fits(MPI_Comm comm, double need, const char *what, const char *fix,
                   wf_status *st);

/* Bytes this node has free for a run (see wf_memory_fits); -1 if unknown. */
double wf_memory_available(void);

#endif
