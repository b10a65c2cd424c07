/* Progress lines with an ETA for long runs: printed by rank 0 only, at most
 * once per `interval` seconds, never on short runs. No communication. */
#ifndef WF_PROGRESS_H
#define WF_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

typedef struct wf_progress {
  const char *what; /* "halo", "cg", ... */
  const char *unit; /* after the counts: "" (steps, iterations) or " thousandths of t_end" */
  long total;
  double t0, last, interval; /* seconds; interval defaults to 5 */
  bool enabled; /* rank 0 and not quiet */
  FILE *out;
} wf_progress;

void wf_progress_start(wf_progress *p, const char *what, long total, bool enabled, FILE *out);
/* Called after step `done` (1-based); prints when `interval` has passed. */
void wf_progress_tick(wf_progress *p, long done);

#endif
