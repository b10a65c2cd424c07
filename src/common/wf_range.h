/* A modelled figure known only within a range: `lo` at the fast end of the
 * hardware's public figures, `hi` at the slow end (docs/model.md). */
#ifndef WF_RANGE_H
#define WF_RANGE_H

#include <math.h>

typedef struct wf_range {
  double lo, hi;
} wf_range;

static inline wf_range wf_range_of(double x) { return (wf_range){x, x}; }
static inline wf_range wf_range_add(wf_range a, wf_range b) {
  return (wf_range){a.lo + b.lo, a.hi + b.hi};
}
static inline wf_range wf_range_plus(wf_range a, double x) { return (wf_range){a.lo + x, a.hi + x}; }
static inline wf_range wf_range_scale(wf_range a, double s) { return (wf_range){a.lo * s, a.hi * s}; }
/* max(a, x): a phase that overlaps work `a` with `x` cycles of streaming. */
static inline wf_range wf_range_max(wf_range a, double x) {
  return (wf_range){fmax(a.lo, x), fmax(a.hi, x)};
}
/* 1 / a: a time range as a rate range (the ends swap). */
static inline wf_range wf_range_inverse(wf_range a) { return (wf_range){1.0 / a.hi, 1.0 / a.lo}; }

#endif
