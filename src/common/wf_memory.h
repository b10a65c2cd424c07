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

#endif
