/* The SDK kernels' shared pieces: the digest, the serial reference's solo
 * phase and the plot's thumbnail (sdk_grid.h). */
#include "sdk_grid.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "wf_io.h"
#include "wf_progress.h"
#include "wf_wafer.h"
#include "wf_signal.h"

uint64_t sdk_digest_sum(const wf_run *run, uint64_t mine) {
  uint64_t all = 0; /* unsigned: the sum wraps modulo 2^64, as the digest's definition says */
  MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, run->comm);
  return all;
}

int sdk_reference_digest(const wf_run *run, sdk_reference_fn reference, const void *ctx,
                         const char *what, uint64_t *digest, wf_status *st) {
  bool stopped = false;
  uint64_t d = 0;
  if (run->rank == 0) d = reference(ctx, &stopped);
  wf_signal_barrier(run->comm);
  int sig = wf_signal_stop();
  wf_status_clear(st);
  if (sig || stopped) {
    char where[160];
    snprintf(where, sizeof where, "while computing %s", what);
    wf_signal_fail(st, sig ? sig : SIGTERM, where);
  }
  wf_status_agree(run->comm, st);
  MPI_Bcast(&d, 1, MPI_UINT64_T, 0, run->comm);
  *digest = d;
  return st->code;
}

int sdk_filled(const wf_run *run, const char *where, wf_status *st) {
  wf_signal_barrier(run->comm);
  int sig = wf_signal_stop();
  if (st->code == WF_OK && sig) wf_signal_fail(st, sig, where);
  wf_status_agree(run->comm, st);
  return st->code;
}

int sdk_repeat(wf_run *run, const char *what, const char *units, long repeat, sdk_unit_fn one,
               void *ctx, double *seconds, wf_status *st) {
  wf_fabric *fab = &run->wafer->fab;
  wf_progress prog;
  wf_progress_start(&prog, what, repeat, run->verbose, stdout);
  wf_signal_poll sig;
  wf_signal_poll_start(&sig, run->comm);
  double t = 0;
  long done = 0;
  int signal = 0, rc = WF_OK;
  wf_fabric_main_begin(fab);
  for (long i = 0; i < repeat && rc == WF_OK; i++) {
    if ((signal = wf_signal_poll_next(&sig)) != 0) break;
    wf_fabric_barrier(fab);
    double t0 = MPI_Wtime();
    rc = one(run, ctx, st);
    t += MPI_Wtime() - t0;
    if (rc == WF_OK) done = i + 1;
    wf_progress_tick(&prog, done);
  }
  wf_fabric_main_end(fab, done);
  wf_signal_poll_end(&sig);
  *seconds = wf_fabric_slowest(fab, t);
  char where[96];
  snprintf(where, sizeof where, "after %ld of %ld %s (nothing written)", done, repeat, units);
  if (rc == WF_OK && signal) rc = wf_signal_fail(st, signal, where);
  /* A unit a signal cut short (its ranks skip their work but keep to its
   * collectives) is not done: one check after the last. */
  if (rc == WF_OK) rc = wf_signal_check(run->comm, where, st);
  return rc;
}

void sdk_report_finish(wf_report *rep, wf_run *run, double seconds, double units) {
  char key[64];
  snprintf(key, sizeof key, "wafer_seconds_per_%s", run->model.unit);
  wf_report_model(rep, &run->model);
  wf_report_range(rep, key, run->model.seconds.lo, run->model.seconds.hi, 1, NULL);
  wf_report_end(rep);
  wf_report_close(rep);
  run->seconds = seconds;
  run->wafer_seconds = wf_range_scale(run->model.seconds, units);
}

void sdk_report_triad(wf_report *rep, double bytes, double per, double triad, const char *text) {
  wf_report_scaled(rep, "stream_triad_GBps", triad, 1e-9, "STREAM triad %.2f GB/s");
  wf_report_scaled(rep, "fraction_of_triad", per > 0 && triad > 0 ? bytes / per / triad : 0, 100,
                   text);
}

int sdk_thumb_create(const wf_run *run, sdk_thumb *t, long long items_x, long long items_y,
                     int max_side, wf_status *st) {
  t->items_x = items_x, t->items_y = items_y;
  t->nx = (int)(items_x < max_side ? items_x : max_side);
  t->ny = (int)(items_y < max_side ? items_y : max_side);
  t->v = calloc((size_t)t->nx * (size_t)t->ny, sizeof *t->v);
  wf_status_clear(st);
  if (!t->v) wf_fail(st, WF_ERR_RUNTIME, "out of memory for a %d x %d plot", t->nx, t->ny);
  wf_status_agree(run->comm, st);
  return st->code;
}

void sdk_thumb_gather(const wf_run *run, sdk_thumb *t) {
  int n = t->nx * t->ny;
  if (run->rank == 0)
    MPI_Reduce(MPI_IN_PLACE, t->v, n, MPI_DOUBLE, MPI_MAX, 0, run->comm);
  else
    MPI_Reduce(t->v, NULL, n, MPI_DOUBLE, MPI_MAX, 0, run->comm);
}

typedef struct thumb_file {
  const sdk_thumb *t;
  const char *label;
} thumb_file;

static void write_thumb(FILE *f, const void *data) {
  const thumb_file *tf = data;
  fprintf(f, "%d %d %lld %lld %s\n", tf->t->ny, tf->t->nx, tf->t->items_y, tf->t->items_x,
          tf->label);
  for (int j = 0; j < tf->t->ny; j++)
    for (int i = 0; i < tf->t->nx; i++)
      fprintf(f, "%.17g%c", tf->t->v[(size_t)j * tf->t->nx + i], i + 1 < tf->t->nx ? ' ' : '\n');
}

int sdk_thumb_plot(const wf_run *run, const sdk_thumb *t, const char *png, const char *title,
                   const char *label, wf_status *st) {
  thumb_file tf = {t, label};
  return wf_run_plot(run, "plot_grid.py", png, title, write_thumb, &tf, st);
}

void sdk_thumb_free(sdk_thumb *t) {
  free(t->v);
  t->v = NULL;
}
