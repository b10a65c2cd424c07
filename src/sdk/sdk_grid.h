/* What the SDK example kernels (src/sdk/) share on the PE grid.
 *
 * Items (pixels, cells) are spread over the PEs in balanced bands along each
 * axis: PE k of n holds items [floor(N k / n), floor(N (k+1) / n)), so a
 * rank's block of PEs holds one contiguous block of items.
 *
 * A distributed result is compared with a serial reference by a digest: the
 * sum, modulo 2^64, of a hash of every item's global index and value. One
 * wrong item changes it with probability 1 - 2^-64; it needs no gather, so a
 * check costs one reduction however large the result. */
#ifndef SDK_GRID_H
#define SDK_GRID_H

#include <stdbool.h>
#include <stdint.h>

#include "wf_error.h"
#include "wf_random.h"
#include "wf_report.h"
#include "wf_workload.h"

/* First item of PE k when n PEs share `items`. */
static inline long long sdk_part(long long items, int n, int k) {
  return items * k / n;
}

/* Items of the PEs [pe0, pe0 + npe) of a line of n PEs: [lo, hi). */
typedef struct sdk_span {
  long long lo, hi;
} sdk_span;
static inline sdk_span sdk_span_of(long long items, int n, int pe0, int npe) {
  return (sdk_span){sdk_part(items, n, pe0), sdk_part(items, n, pe0 + npe)};
}

/* The digest's term for item `index` holding `value`. */
static inline uint64_t sdk_digest_term(uint64_t index, int64_t value) {
  return wf_splitmix64(wf_splitmix64(index) ^ (uint64_t)value);
}

/* The run's digest: every rank's partial sum added up (modulo 2^64), on
 * every rank. Collective over run->comm. */
uint64_t sdk_digest_sum(const wf_run *run, uint64_t mine);

/* A serial reference, run by rank 0 alone while the others wait (passing
 * on any signal: wf_signal_barrier). `reference` returns the digest of its
 * result, or sets *stopped when wf_signal_stop() asked it to stop (it polls
 * at least every ~100 ms). The digest is given to every rank; a stop fails
 * `st` with the signal's status, on every rank. Collective. */
typedef uint64_t (*sdk_reference_fn)(const void *ctx, bool *stopped);
int sdk_reference_digest(const wf_run *run, sdk_reference_fn reference, const void *ctx,
                         const char *what, uint64_t *digest, wf_status *st);

/* The end of a phase each rank works through alone, stopping early at
 * wf_signal_stop(): after every rank is through (wf_signal_barrier), `st`
 * fails with the signal's status, `where` saying in what, on every rank
 * when any was signalled. Collective. */
int sdk_filled(const wf_run *run, const char *where, wf_status *st);

/* `repeat` timed units of work (`what`: the progress line's name; `units`:
 * "products", for the message of a stop): each a call of `one`, with a
 * signal poll before it and a barrier (the timing's) before it starts; the
 * fabric's counters of the main computation around them; the slowest
 * rank's seconds in `*seconds`. Stops cleanly at a signal or at the first
 * failing unit. Collective. */
typedef int (*sdk_unit_fn)(wf_run *run, void *ctx, wf_status *st);
int sdk_repeat(wf_run *run, const char *what, const char *units, long repeat, sdk_unit_fn one,
               void *ctx, double *seconds, wf_status *st);

/* The end of a kernel's report, after its own section: the model's
 * projection and the wafer's seconds a unit (`wafer_seconds_per_UNIT`,
 * UNIT the projection's), the report closed; the run's measured `seconds`
 * and the wafer's for `units` units. */
void sdk_report_finish(wf_report *rep, wf_run *run, double seconds, double units);

/* The machine's memory limit beside a memory-bound kernel's rate: STREAM
 * triad (bytes/s, measured in the run) and the fraction of it at which
 * `bytes` moved in `per` seconds (`text`: its report line's format). */
void sdk_report_triad(wf_report *rep, double bytes, double per, double triad, const char *text);

/* A downsampled copy of a 2D result for a plot: at most `max_side` cells a
 * side, each the largest value of the items it covers. Ranks add their
 * items with sdk_thumb_put, then sdk_thumb_gather leaves the whole on rank
 * 0. */
typedef struct sdk_thumb {
  int nx, ny;            /* the thumbnail's cells */
  long long items_x, items_y; /* the result's */
  double *v;             /* ny x nx, x fastest */
} sdk_thumb;
/* Collective: every rank gets the first failure. */
int sdk_thumb_create(const wf_run *run, sdk_thumb *t, long long items_x, long long items_y,
                     int max_side, wf_status *st);
static inline void sdk_thumb_put(sdk_thumb *t, long long x, long long y, double value) {
  double *c = &t->v[(long long)(y * t->ny / t->items_y) * t->nx + x * t->nx / t->items_x];
  if (value > *c) *c = value;
}
/* Collective; the thumbnail is whole on rank 0 only. */
void sdk_thumb_gather(const wf_run *run, sdk_thumb *t);
/* Draw it (scripts/plot_grid.py) to `png` with a colour bar named `label`.
 * Collective: every rank gets rank 0's status. */
int sdk_thumb_plot(const wf_run *run, const sdk_thumb *t, const char *png, const char *title,
                   const char *label, wf_status *st);
void sdk_thumb_free(sdk_thumb *t);

#endif
