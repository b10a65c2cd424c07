/* The convection run's checks and report (cfd_convection_parts.h): the
 * history's second half (Nusselt numbers, the kinetic energy's growth), the
 * growth rate while the run was linear against linear stability theory
 * (cf_rb_linear.h), the projections' divergence and the heat budget; then
 * the lines and the JSON summary. */
#include "cfd_convection_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cf_rb_linear.h"
#include "wf_checkpoint.h"
#include "wf_report.h"

bool conv_history_add(history *h, double t, const cf_rb_stats *s) {
  if (h->n == h->cap) {
    int cap = h->cap ? 2 * h->cap : 256;
    double *r = realloc(h->rows, (size_t)cap * H_COLS * sizeof *r);
    if (!r) return false;
    h->rows = r, h->cap = cap;
  }
  double *row = h->rows + (size_t)h->n++ * H_COLS;
  row[H_T] = t, row[H_NU_BOTTOM] = s->nu_bottom, row[H_NU_TOP] = s->nu_top;
  row[H_NU_VOLUME] = s->nu_volume, row[H_KINETIC] = s->kinetic, row[H_MAX_DIV] = s->max_div;
  return true;
}

/* The rows a checkpoint of step `step` keeps (at most one a step), for its
 * restart to go on from. */
int conv_history_read(MPI_Comm comm, const char *path, long long step, history *h,
                      wf_status *st) {
  unsigned long long len, most = ((unsigned long long)step + 1) * H_COLS;
  if (wf_checkpoint_read_series(comm, path, "history", most, &h->rows, &len, st) != WF_OK)
    return st->code;
  h->n = h->cap = (int)(len / H_COLS);
  if (len % H_COLS == 0 && len > 0) return WF_OK;
  return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': its history holds %llu values, not rows of %d",
                 path, len, H_COLS);
}

/* Half the slope of ln E against t (least squares) over the rows 0..r1
 * whose time is in [t0, t1] and energy positive; NAN with fewer than 2. */
static double log_slope(const history *h, int r1, double t0, double t1) {
  double st = 0, sy = 0, stt = 0, sty = 0;
  int n = 0;
  for (int r = 0; r <= r1; r++) {
    const double *row = h->rows + (size_t)r * H_COLS;
    if (row[H_T] < t0 || row[H_T] > t1 || !(row[H_KINETIC] > 0)) continue;
    double y = log(row[H_KINETIC]);
    st += row[H_T], sy += y, stt += row[H_T] * row[H_T], sty += row[H_T] * y, n++;
  }
  return n < 2 ? NAN : 0.5 * (n * sty - st * sy) / (n * stt - st * st);
}

/* The kinetic energy's growth rate over the run's second half. */
static double growth_rate(const history *h) {
  double t_end = h->rows[(size_t)(h->n - 1) * H_COLS + H_T];
  return log_slope(h, h->n - 1, 0.5 * t_end, t_end);
}

/* The mean of column `col` over the run's second half. */
static double late_mean(const history *h, int col) {
  double t_half = 0.5 * h->rows[(size_t)(h->n - 1) * H_COLS + H_T], sum = 0;
  int n = 0;
  for (int r = 0; r < h->n; r++)
    if (h->rows[(size_t)r * H_COLS + H_T] >= t_half) sum += h->rows[(size_t)r * H_COLS + col], n++;
  return n ? sum / n : NAN;
}

/* A perturbation is linear while the heat flux it adds (second order in its
 * amplitude) keeps the volume Nusselt number within 1e-3 of 1. */
static bool linear_row(const double *row) { return fabs(row[H_NU_VOLUME] - 1) < 1e-3; }

/* The kinetic energy's growth rate while the run was linear, past the
 * start's transient: over the second half of the rows before the first that
 * is not linear (NAN with fewer than 4 rows there), and over that half's
 * two halves, in q[0] and q[1]: from rest the energy first grows as t^2 and
 * the other modes decay, so the two agree only once the least stable mode
 * has taken over. */
static double linear_growth(const history *h, double q[2]) {
  int last = 0;
  while (last + 1 < h->n && linear_row(h->rows + (size_t)(last + 1) * H_COLS)) last++;
  double t_end = h->rows[(size_t)last * H_COLS + H_T], t_half = 0.5 * t_end;
  int n = 0;
  for (int r = 1; r <= last; r++) n += h->rows[(size_t)r * H_COLS + H_T] >= t_half;
  q[0] = log_slope(h, last, t_half, 0.75 * t_end);
  q[1] = log_slope(h, last, 0.75 * t_end, t_end);
  return n < 4 ? NAN : log_slope(h, last, t_half, t_end);
}

/* Linear theory for this run: the perturbation (cos(k x) sin(pi z), k = 2 pi
 * / Lx; uniform in y) excites the modes of wavenumber k alone while it is
 * small, and the least stable of them takes over. The grid's second
 * differences see a mode e^{qz} with relative error (q h)^2 / 12: scaling
 * every operator by 1 - e is, in the normal modes' cubic, sigma -> (1 - e)
 * sigma at Ra / (1 - e)^2, so sigma moves by e (|sigma| + 2 Ra |dsigma/dRa|);
 * allowed: twice that with e from the mode's largest wavenumber (docs/cfd.md). */
static void compare_linear_theory(wf_run *run, const conv_setup *s, const history *h,
                                  conv_findings *f) {
  f->k = 2 * ST_PI * s->nz / s->nx;
  f->ra_onset = cf_rb_neutral_ra(f->k);
  f->growth_linear = f->growth_theory = f->growth_allowed = NAN;
  if (s->side_walls) {
    wf_run_unchecked(run, "growth rate against linear theory",
                     "no-slip side walls: the flow has no separable normal mode to compare with");
    return;
  }
  double quarters[2];
  f->growth_linear = linear_growth(h, quarters);
  if (!(s->amplitude > 0) || !isfinite(f->growth_linear)) {
    wf_run_unchecked(run, "growth rate against linear theory",
                     "the run was not linear for 4 history rows past its start: a smaller "
                     "perturbation, more steps or a smaller energy_every would be");
    return;
  }
  double q, q1, h_grid = 1.0 / s->nz;
  f->growth_theory = cf_rb_growth_rate(s->ra, s->pr, f->k, &q);
  double ds_dra = (cf_rb_growth_rate(1.01 * s->ra, s->pr, f->k, &q1) - f->growth_theory) /
                  (0.01 * s->ra);
  double e = (q * q + f->k * f->k) * h_grid * h_grid / 12;
  f->growth_allowed = 2 * e * (fabs(f->growth_theory) + 2 * s->ra * fabs(ds_dra));
  if (!(fabs(quarters[0] - quarters[1]) <= f->growth_allowed / 2)) {
    wf_run_unchecked(run, "growth rate against linear theory",
                     "the growth had not settled into one normal mode while the run was linear "
                     "(the last two quarters of that phase grew at different rates): a smaller "
                     "perturbation or more steps would let it");
    f->growth_theory = NAN;
    return;
  }
  char what[240];
  snprintf(what, sizeof what,
           "growth rate while linear %.4g per thermal time against the normal mode's %.4g at Ra "
           "%g, k = %.4f (allowed %.2g: the grid's truncation)",
           f->growth_linear, f->growth_theory, s->ra, f->k, f->growth_allowed);
  wf_run_check(run, fabs(f->growth_linear - f->growth_theory) <= f->growth_allowed, what);
}

void conv_check(wf_run *run, const conv_setup *s, const cf_rb *rb, const history *h,
                conv_findings *f) {
  char what[220];
  f->div_ratio = rb->div_ratio;
  /* PCG leaves its tolerance; the FFT solve is exact: round-off. */
  double allowed = s->solver == CF_POISSON_FFT ? 1e-12 : 10 * s->poisson.rtol;
  snprintf(what, sizeof what,
           "each projection leaves ||div u|| at most %.0e of what it found (worst %.2e, %d "
           "projections)",
           allowed, f->div_ratio, rb->solves);
  wf_run_check(run, rb->solves > 0 && f->div_ratio <= allowed, what);
  snprintf(what, sizeof what,
           "heat budget: the temperature's right-hand side sums over the cells to what the "
           "walls conduct in (%.2g of the round-off bound)",
           f->heat_budget);
  wf_run_check(run, f->heat_budget <= 1, what);
  const cf_rb_truncation *t = &f->truncation;
  snprintf(what, sizeof what,
           "the %c equation's right-hand side on a manufactured state against its exact one: "
           "%.2g, %.2g of what second-order truncation allows",
           "uvwT"[t->equation], t->error, t->worst);
  wf_run_check(run, t->worst <= 1, what);
  f->growth = growth_rate(h);
  f->nu = late_mean(h, H_NU_VOLUME);
  f->nu_bottom = late_mean(h, H_NU_BOTTOM);
  f->nu_top = late_mean(h, H_NU_TOP);
  f->linear = true;
  for (int r = 0; r < h->n; r++) f->linear = f->linear && linear_row(h->rows + (size_t)r * H_COLS);
  compare_linear_theory(run, s, h, f);
}

void conv_report(wf_run *run, const conv_setup *s, const cf_rb *rb, const conv_result *r,
                 const conv_findings *f, const history *h) {
  const st_mesh *m = rb->m;
  double its = rb->solves ? (double)rb->poisson_its / rb->solves : 0;
  wf_report rep;
  wf_report_open(&rep, run, "cfd");
  wf_report_begin(&rep, "cfd");
  wf_report_line(&rep, NULL);
  wf_report_str(&rep, "problem", "convection", "%s");
  long long cells[3] = {s->nx, s->ny, s->nz};
  wf_report_ints(&rep, "cells", cells, 3, "%d cells");
  wf_report_int(&rep, "dims", rb->dims, "%dD");
  if (rb->dims == 3)
    wf_report_note(&rep, "box %.4g x %.4g x 1", (double)s->nx / s->nz, (double)s->ny / s->nz);
  else
    wf_report_note(&rep, "box %.4g x 1", (double)s->nx / s->nz);
  wf_report_num(&rep, "wavenumber", f->k, "wavenumber 2 pi / Lx = %.4f");
  if (isfinite(f->ra_onset)) wf_report_num(&rep, "ra_onset", f->ra_onset, "its onset Ra %.2f");
  wf_report_num(&rep, "ra", s->ra, "Ra %g");
  wf_report_num(&rep, "pr", s->pr, "Pr %g");
  wf_report_line(&rep, "run");
  wf_report_int(&rep, "first_step", r->first_step, "from step %d");
  wf_report_int(&rep, "steps", r->steps, "%d steps");
  wf_report_num(&rep, "t", r->t, "to t = %.4g");
  wf_report_num(&rep, "dt_last", r->dt_last, "last dt %.3g");
  wf_report_num(&rep, "seconds_per_step", r->seconds / fmax(r->steps, 1), "%.3g s/step");
  wf_report_scaled(&rep, "cell_updates_per_s", (double)m->n_global * r->steps / r->seconds, 1e-6,
                   "%.2f Mcell/s");
  wf_report_line(&rep, "pressure");
  wf_report_str(&rep, "poisson", rb->solver == CF_POISSON_FFT ? "fft" : "pcg", "by %s");
  wf_report_int(&rep, "poisson_solves", rb->solves, "%d solves");
  wf_report_num(&rep, "poisson_iterations_per_solve", its, "%.1f iterations each");
  wf_report_scaled(&rep, "poisson_fraction_of_time",
                   rb->poisson_seconds / fmax(r->seconds, 1e-300), 100, "%.0f%% of the time");
  wf_report_num(&rep, "divergence_ratio", f->div_ratio,
                "worst ||div u|| after / before a projection %.2e");
  wf_report_num(&rep, "max_divergence", r->last.max_div, "last max |div u| %.2e");
  wf_report_line(&rep, "Nusselt (second half's mean)");
  wf_report_num(&rep, "nusselt", f->nu, "volume %.5f");
  wf_report_num(&rep, "nusselt_bottom", f->nu_bottom, "bottom %.5f");
  wf_report_num(&rep, "nusselt_top", f->nu_top, "top %.5f");
  wf_report_num(&rep, "kinetic_energy", r->last.kinetic, "last kinetic energy %.4g");
  wf_report_num(&rep, "heat_budget_of_bound", f->heat_budget,
                "heat budget %.2g of the round-off bound");
  wf_report_num(&rep, "truncation_of_bound", f->truncation.worst,
                "operator truncation %.2g of the second-order bound");
  wf_report_line(&rep, "growth");
  if (isfinite(f->growth))
    wf_report_num(&rep, "growth_rate", f->growth,
                  "the kinetic energy's over the second half %.5g per thermal time");
  wf_report_bool(&rep, "linear", f->linear, "linear throughout: %s");
  if (isfinite(f->growth_theory)) {
    wf_report_num(&rep, "growth_rate_linear", f->growth_linear, "while linear %.5g");
    wf_report_num(&rep, "growth_rate_theory", f->growth_theory, "the normal mode's %.5g");
    wf_report_num(&rep, "growth_rate_allowed", f->growth_allowed, "allowed difference %.2g");
  }
  double nus[3] = {r->last.nu_bottom, r->last.nu_top, r->last.nu_volume};
  wf_report_nums(&rep, "nusselt_last", nus, 3, NULL);
  wf_report_int(&rep, "history_rows", h->n, NULL);
  wf_report_end(&rep);
  wf_report_model(&rep, &run->model);
  wf_report_end(&rep);
  wf_report_close(&rep);
  snprintf(run->headline, sizeof run->headline, "convection %dD Ra %g, %d steps, Nu %.3f", rb->dims,
           s->ra, r->steps, f->nu);
}

