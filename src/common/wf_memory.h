/* Large arrays on transparent huge pages: a streaming kernel over hundreds
 * of megabytes (TLR bases, FFT pencils) otherwise spends a share of its
 * time on TLB misses. Linux's THP setting is often `madvise`, so the pages
 * must be asked for. */
#ifndef WF_MEMORY_H
#define WF_MEMORY_H

#include <stddef.h>

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

#endif
