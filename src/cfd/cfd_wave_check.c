/* `wafer cfd`'s wave run, its checks and report (cfd_wave_parts.h): the
 * shot gather, the direct wave's arrival at the receivers against distance /
 * velocity, a standing mode's eigenvalue against the stencil's and the
 * continuum's, the energy leapfrog conserves, the stencil and the source
 * against their references; then the lines and the JSON summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_wave_probe.h"
#include "cfd_wave_parts.h"
#include "wf_memory.h"
#include "wf_report.h"

/* The shot gather on rank 0: [steps][nx] (NULL elsewhere). Each gather
 * takes a block of steps from every rank at once ([steps][its lnx] each:
 * at most 64 MB, within MPI's int counts), laid out by x on rank 0.
 * Collective. */
double *cfd_wave_gather(const wave *p, wf_run *run) {
  const st_mesh *m = &p->m;
  int steps = p->s->steps, nx = m->nx, mine = p->holds_receivers ? m->lnx : 0;
  bool root = run->rank == 0;
  size_t n = root ? (size_t)run->nranks : 0;
  int *counts = root ? wf_alloc_small(n, sizeof *counts, "counts") : NULL;
  int *x0 = root ? wf_alloc_small(n, sizeof *x0, "offsets") : NULL;
  int *displ = root ? wf_alloc_small(n, sizeof *displ, "offsets") : NULL;
  MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, run->comm);
  MPI_Gather(&m->x0, 1, MPI_INT, x0, 1, MPI_INT, 0, run->comm);
  int block = ((int)1 << 23) / (nx > 0 ? nx : 1); /* steps a gather: 8M values */
  block = block < 1 ? 1 : block > steps ? steps : block;
  double *all = root ? calloc((size_t)steps * nx, sizeof *all) : NULL;
  /* bounded, and the gather must have it: out of memory ends the job */
  double *packed =
      root ? wf_alloc_small((size_t)block * nx + 1, sizeof *packed, "the gather") : NULL;
  int *part = root ? wf_alloc_small(n, sizeof *part, "counts") : NULL;
  for (int s0 = 0; s0 < steps; s0 += block) {
    int k = steps - s0 < block ? steps - s0 : block, total = 0;
    for (size_t r = 0; r < n; r++) part[r] = counts[r] * k, displ[r] = total, total += part[r];
    MPI_Gatherv(mine ? p->trace + (size_t)s0 * mine : NULL, mine * k, MPI_DOUBLE, packed, part,
                displ, MPI_DOUBLE, 0, run->comm);
    for (size_t r = 0; all && packed && r < n; r++)
      for (int s = 0; s < k; s++)
        memcpy(all + (size_t)(s0 + s) * nx + x0[r], packed + displ[r] + (size_t)s * counts[r],
               (size_t)counts[r] * sizeof *all);
  }
  free(counts), free(x0), free(displ), free(packed), free(part);
  return all;
}

/* The first reflection's delay behind the direct wave at receiver (x, y,
 * z), in seconds: the faces are free half a cell outside the mesh (behind
 * the sponge, if any), so each reflection comes from the source's image
 * across one face. */
static double reflection_delay(const cfd_setup *s, const int rec[3], double direct) {
  const int n[3] = {s->nx, s->ny, s->nz};
  double first = INFINITY;
  for (int a = 0; a < 3; a++)
    for (int side = 0; side < 2; side++) {
      double d2 = 0;
      for (int b = 0; b < 3; b++) {
        double src = s->src[b];
        if (b == a) src = side ? 2.0 * n[a] - 1 - src : -1 - src;
        d2 += pow((rec[b] - src) * s->h, 2);
      }
      first = fmin(first, (sqrt(d2) - direct) / s->v);
    }
  return first;
}

/* The direct wave's arrival: at every receiver at least 8 cells from the
 * source and out of the sponge, whose arrival comes before the run ends
 * and, with free faces, at least a period before the first reflection's
 * (the Ricker wavelet's tail a period off its peak is 1e-3 of it; behind
 * a sponge the reflections are damped twice over), the trace's peak
 * (parabolic between samples) against the source's peak (1.2 / f0) plus
 * distance over velocity. Returns the largest difference in periods
 * (1 / f0), and the receivers used in *used; on rank 0. */
static double arrival_error(const cfd_setup *s, const double *gather, int *used) {
  double worst = 0;
  *used = 0;
  for (int x = 0; x < s->nx; x++) {
    double dx = (x - s->src[0]) * s->h, dz = (s->receiver_z - s->src[2]) * s->h;
    double r = sqrt(dx * dx + dz * dz), expected = 1.2 / s->f0 + r / s->v;
    int face = x < s->nx - 1 - x ? x : s->nx - 1 - x;
    const int rec[3] = {x, s->src[1], s->receiver_z};
    if (r < 8 * s->h || face < s->sponge || expected + 1 / s->f0 > s->steps * s->dt ||
        (s->free_faces && reflection_delay(s, rec, r) < 1 / s->f0))
      continue;
    int best = 0;
    for (int n = 1; n < s->steps; n++)
      if (gather[(size_t)n * s->nx + x] > gather[(size_t)best * s->nx + x]) best = n;
    double t = (best + 1) * s->dt; /* trace[n] is u at step n + 1 */
    if (best > 0 && best < s->steps - 1) {
      double y0 = gather[(size_t)(best - 1) * s->nx + x], y1 = gather[(size_t)best * s->nx + x],
             y2 = gather[(size_t)(best + 1) * s->nx + x], den = y0 - 2 * y1 + y2;
      if (den != 0) t += 0.5 * (y0 - y2) / den * s->dt;
    }
    worst = fmax(worst, fabs(t - expected) * s->f0);
    (*used)++;
  }
  return worst;
}

/* The mode's eigenvalue from its amplitudes: A_{n+1} + A_{n-1} = 2 cos(theta)
 * A_n, least squares over the run; lambda h^2 = 2 (1 - cos theta) / a. */
static double mode_lambda(const wave *p) {
  double num = 0, den = 0;
  for (int n = 1; n < p->s->steps; n++) {
    num += p->amplitude[n] * (p->amplitude[n + 1] + p->amplitude[n - 1]);
    den += 2 * p->amplitude[n] * p->amplitude[n];
  }
  return 2 * (1 - num / den) / p->a;
}

void cfd_wave_check(wave *p, wf_run *run, const double *gather, wave_findings *f) {
  const cfd_setup *s = p->s;
  char what[200];
  snprintf(what, sizeof what,
           "one step of the stencil on a standing mode against the order-8 coefficients from "
           "their Taylor conditions: worst cell %.2g of its round-off bound",
           f->probe);
  wf_run_check(run, f->probe <= 1, what);
  /* Leapfrog on u_tt = v^2 lap(u) is stable while (v dt / h)^2 3 S(pi) <=
   * 4, S the 1D operator's symbol, here from the reference coefficients:
   * the step is cfl times that limit (or, given, within it). */
  double limit = 2 * s->h / (s->v * sqrt(3 * cf_reference_symbol(CF_RADIUS, ST_PI)));
  bool given = wf_deck_real(run->deck, "cfd", "dt") > 0;
  double want = given ? fmin(s->dt, limit) : s->cfl * limit;
  snprintf(what, sizeof what,
           "time step %.6g s %s leapfrog's stability limit %.6g s from the reference "
           "coefficients",
           s->dt, given ? "within" : "at cfl times", limit);
  wf_run_check(run, fabs(s->dt - want) <= 8 * 0x1p-53 * limit, what);
  f->balance = -1;
  if (s->init == CFD_INIT_SOURCE && p->first_step > 0)
    wf_run_unchecked(run, "the source's balance", "a restart does not start from rest");
  if (s->init == CFD_INIT_SOURCE && p->first_step == 0 && p->balance.steps > 0) {
    f->balance = cf_balance_check(&p->balance, s->dt, s->v, s->h, s->f0, p->a,
                                  (double)s->nx * s->ny * s->nz);
    snprintf(what, sizeof what,
             "the field's sum over its first %d steps against the source's wavelet (a point "
             "source of dt^2 v^2 r(t) / h^3): worst %.2g of the round-off bound",
             p->balance.steps, f->balance);
    wf_run_check(run, f->balance <= 1, what);
  }
  bool in_sponge = false; /* a source there is damped as it starts */
  for (int a = 0; a < 3; a++) {
    const int n[3] = {s->nx, s->ny, s->nz};
    in_sponge |= s->src[a] < s->sponge || n[a] - 1 - s->src[a] < s->sponge;
  }
  if (s->init == CFD_INIT_SOURCE && in_sponge)
    wf_run_unchecked(run, "the direct wave's arrival",
                     "the source sits in the sponge, which damps it as it starts");
  if (s->init == CFD_INIT_SOURCE && !in_sponge) {
    if (run->rank == 0) f->arrival = arrival_error(s, gather, &f->receivers);
    MPI_Bcast(&f->arrival, 1, MPI_DOUBLE, 0, run->comm);
    MPI_Bcast(&f->receivers, 1, MPI_INT, 0, run->comm);
    if (f->receivers > 0) {
      snprintf(what, sizeof what,
               "direct wave at %d receivers within %.3f periods of distance / velocity (allowed "
               "0.02)",
               f->receivers, f->arrival);
      wf_run_check(run, f->arrival <= 0.02, what);
    } else {
      wf_run_unchecked(run, "the direct wave's arrival",
                       "no receiver is 8 cells from the source, out of the sponge, reached a "
                       "period before the run ends and before the first reflection");
    }
  }
  double e0 = p->energy[1], most = 0;
  for (int k = 0; k < p->nenergy; k++) most = fmax(most, fabs(p->energy[2 * k + 1] - e0));
  f->drift = e0 != 0 ? most / fabs(e0) : 0;
  if (s->free_faces && s->init != CFD_INIT_SOURCE) {
    snprintf(what, sizeof what, "energy conserved with free faces: drift %.2e (allowed 1e-10)",
             f->drift);
    wf_run_check(run, f->drift <= 1e-10, what);
  }
  if (s->init == CFD_INIT_MODE && s->free_faces) {
    int n[3] = {s->nx, s->ny, s->nz};
    f->lambda_discrete = f->lambda_continuum = 0;
    for (int a = 0; a < 3; a++) {
      f->lambda_discrete += cf_reference_symbol(CF_RADIUS, ST_PI / n[a]);
      f->lambda_continuum += pow(ST_PI / n[a], 2);
    }
    f->lambda_run = mode_lambda(p);
    double rel = fabs(f->lambda_run - f->lambda_discrete) / f->lambda_discrete;
    snprintf(what, sizeof what,
             "standing mode's eigenvalue from the run against the stencil's closed form: %.2e "
             "relative (allowed 1e-9)",
             rel);
    wf_run_check(run, rel <= 1e-9, what);
  }
}

void cfd_wave_report(wf_run *run, const wave *p, const wave_measured *r, const wave_findings *f) {
  const cfd_setup *s = p->s;
  const st_mesh *m = &p->m;
  double updates = (double)m->n_global * r->steps / r->seconds;
  double bytes = 24.0 * updates; /* read u^n and u^{n-1}, write u^{n+1} */
  wf_report rep;
  wf_report_open(&rep, run, "cfd");
  wf_report_begin(&rep, "cfd");
  wf_report_line(&rep, NULL);
  wf_report_str(&rep, "problem", "wave", "%s");
  long long cells[3] = {s->nx, s->ny, s->nz};
  wf_report_ints(&rep, "cells", cells, 3, "%d cells");
  wf_report_note(&rep, "of %g m, v %g m/s", s->h, s->v);
  wf_report_num(&rep, "dt", s->dt, "dt %.4g s");
  wf_report_num(&rep, NULL, s->dt / cf_dt_max(s->h, s->v), "cfl %.2f");
  wf_report_int(&rep, "first_step", p->first_step, "from step %d");
  wf_report_int(&rep, "steps", r->steps, "%d steps");
  wf_report_num(&rep, "seconds_per_step", r->seconds / r->steps, "%.3g s/step");
  wf_report_scaled(&rep, "cell_updates_per_s", updates, 1e-6, "%.1f Mcell/s");
  wf_report_num(&rep, "GBps", bytes / 1e9, "%.2f GB/s counted");
  wf_report_str(&rep, "kernel", p->w.kernel, "(the %s kernel)");
  if (r->triad > 0) {
    wf_report_num(&rep, "triad_GBps", r->triad / 1e9, "STREAM triad %.2f GB/s");
    wf_report_scaled(&rep, "fraction_of_triad", bytes / r->triad, 100, "%.0f%% of it");
  }
  if (s->init == CFD_INIT_SOURCE) {
    wf_report_line(&rep, "Ricker source");
    wf_report_num(&rep, NULL, s->f0, "%g Hz");
    wf_report_int(&rep, "arrival_receivers", f->receivers, "the direct wave's peak at %d receivers");
    wf_report_num(&rep, "arrival_error_periods", f->arrival,
                  "within %.4f periods of distance / velocity");
  }
  if (s->init == CFD_INIT_MODE) {
    wf_report_line(&rep, "standing mode, eigenvalue x h^2");
    wf_report_num(&rep, "lambda_run", f->lambda_run, "from the run %.12g");
    wf_report_num(&rep, "lambda_stencil", f->lambda_discrete, "the stencil's %.12g");
    wf_report_num(&rep, "lambda_continuum", f->lambda_continuum, "the continuum's %.12g");
    /* relative errors at full precision (the values above have 9 digits) */
    wf_report_num(&rep, "lambda_error",
                  fabs(f->lambda_run - f->lambda_continuum) / f->lambda_continuum,
                  "relative error %.3e (the stencil's)");
    wf_report_num(&rep, "lambda_stencil_error",
                  fabs(f->lambda_run - f->lambda_discrete) / f->lambda_discrete, NULL);
  }
  wf_report_line(&rep, "checks");
  if (s->free_faces && s->init != CFD_INIT_SOURCE)
    wf_report_num(&rep, "energy_drift", f->drift, "energy drift %.3e");
  wf_report_num(&rep, "stencil_probe_of_bound", f->probe,
                "the stencil on a standing mode against the reference coefficients: worst cell "
                "%.2g of its round-off bound");
  if (f->balance >= 0)
    wf_report_num(&rep, "source_balance_of_bound", f->balance,
                  "the field's sums against the wavelet's %.2g of their bound");
  wf_report_end(&rep);
  wf_report_model(&rep, &run->model);
  wf_report_note(&rep, "%s", s->wafer_prec == WF_FP16 ? "fp16" : "fp32");
  wf_report_note(&rep, "bricks of %dx%d columns", m->brick_x, m->brick_y);
  wf_report_end(&rep);
  wf_report_close(&rep);
  snprintf(run->headline, sizeof run->headline, "wave %dx%dx%d, %d steps, %.1f Mcell/s", s->nx,
           s->ny, s->nz, r->steps, updates / 1e6);
}

