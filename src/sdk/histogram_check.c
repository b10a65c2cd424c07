/* The histogram's serial reference: written apart from the run (one array
 * of every bucket, each value counted where its bucket is, no PEs, no
 * routing), sharing only the values' definition (hg_value) and the
 * digest's hash. Counts are exact: every bucket must agree. */
#include <stdlib.h>

#include "histogram.h"
#include "sdk_grid.h"
#include "wf_signal.h"

uint64_t hg_reference_digest(const void *hg_case_ptr, bool *stopped) {
  const hg_case *c = hg_case_ptr;
  long long buckets = c->range / c->bucket_width;
  long long *count = calloc((size_t)buckets, sizeof *count);
  if (!count) return ~(uint64_t)0; /* a check that could not run fails */
  for (long long y = 0; y < c->pe_ny && !*stopped; y++)
    for (long long x = 0; x < c->pe_nx && !*stopped; x++) {
      if (wf_signal_stop()) *stopped = true;
      for (long long k = 0; k < c->values_per_pe && !*stopped; k++)
        count[hg_value(c, x, y, k) / c->bucket_width]++;
    }
  uint64_t digest = 0;
  for (long long b = 0; b < buckets; b++) digest += sdk_digest_term((uint64_t)b, count[b]);
  free(count);
  return digest;
}
