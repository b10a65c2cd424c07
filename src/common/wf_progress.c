/* Progress lines for long runs (wf_progress.h): rank 0 prints the steps done and an ETA, at
 * most once per interval. */
#include "wf_progress.h"

#include <time.h>

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void wf_progress_start(wf_progress *p, const char *what, long total, bool enabled, FILE *out) {
  p->what = what;
  p->unit = "";
  p->total = total;
  p->t0 = p->last = now_seconds();
  p->interval = 5.0;
  p->enabled = enabled;
  p->out = out;
}

void wf_progress_tick(wf_progress *p, long done) {
  if (!p->enabled) return;
  double now = now_seconds();
  if (now - p->last < p->interval || done >= p->total) return;
  p->last = now;
  double elapsed = now - p->t0;
  double eta = done > 0 ? elapsed * (double)(p->total - done) / (double)done : 0.0;
  fprintf(p->out, "%s: %ld/%ld%s (%.0f%%), %.1f s elapsed, ETA %.1f s\n", p->what, done,
          p->total, p->unit, 100.0 * (double)done / (double)p->total, elapsed, eta);
  fflush(p->out);
}
