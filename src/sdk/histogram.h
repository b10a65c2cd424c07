/* `wafer histogram`: the SDK's histogram-torus example on the PE grid. */
#ifndef HISTOGRAM_H
#define HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "wf_random.h"
#include "wf_workload.h"

extern const wf_workload wf_histogram_workload;

/* The problem: values_per_pe values on each PE, drawn from [0, range) with
 * range = PEs x buckets_per_pe x bucket_width; value v falls in bucket
 * v / bucket_width, which PE b / buckets_per_pe (row-major) owns. */
typedef struct hg_case {
  int pe_nx, pe_ny;
  long long values_per_pe, buckets_per_pe, bucket_width, range;
  bool skewed; /* u^4: most values in the first PE row's buckets */
  uint64_t seed;
} hg_case;

/* Value k of PE (x, y): the problem's definition, which the run and the
 * serial reference both take. */
static inline uint32_t hg_value(const hg_case *c, long long x, long long y, long long k) {
  uint64_t index = (uint64_t)(((y * c->pe_nx) + x) * c->values_per_pe + k);
  double u = wf_uniform(c->seed, index);
  if (c->skewed) u = u * u * u * u;
  long long v = (long long)(u * (double)c->range);
  return (uint32_t)(v < c->range ? v : c->range - 1);
}

/* The serial reference (histogram_check.c): every value counted into one
 * array of all the buckets; the digest (sdk_grid.h) of the counts by
 * global bucket. Polls wf_signal_stop() a PE at a time. */
uint64_t hg_reference_digest(const void *hg_case_ptr, bool *stopped);

#endif
