/* Allocation helpers (wf_memory.h): large arrays on transparent huge pages, and small
 * bookkeeping arrays whose failure ends the job. */
#define _DEFAULT_SOURCE /* madvise(2), MADV_HUGEPAGE: Linux */
#include "wf_memory.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

void *wf_alloc_large(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  if (bytes < huge) return malloc(bytes ? bytes : 1);
  bytes = (bytes + huge - 1) / huge * huge;
  void *a = aligned_alloc(huge, bytes);
  if (a) madvise(a, bytes, MADV_HUGEPAGE); /* advice: failure is harmless */
  return a;
}

void *wf_alloc_small(size_t count, size_t size, const char *what) {
  void *a = calloc(count ? count : 1, size ? size : 1);
  if (!a) {
    fprintf(stderr, "wafer: error: out of memory for %s (%zu x %zu bytes): ending the job\n", what,
            count, size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return a;
}
