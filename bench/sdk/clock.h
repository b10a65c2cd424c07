/* What the reference programs of bench/sdk share: a monotonic clock and
 * the median of a run of timings. */
#ifndef BENCH_SDK_CLOCK_H
#define BENCH_SDK_CLOCK_H

#include <stdlib.h>
#include <time.h>

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of t[0..n), sorted in place. */
static inline double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, by_value);
  return t[n / 2];
}

#endif
