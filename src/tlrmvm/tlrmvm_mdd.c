/* The multi-dimensional deconvolution of `wafer tlrmvm` (tlrmvm_parts.h,
 * docs/tlrmvm.md): LSQR over all frequencies with the TLR and the dense
 * operators, and the bound on their difference. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_mdd.h"
#include "tlrmvm_parts.h"
#include "wf_io.h"
#include "wf_report.h"
#include "wf_timing.h"

void tlrmvm_mdd_free(tlrmvm_mdd *r) {
  free(r->truth), free(r->tlr), free(r->dense), free(r->history_tlr), free(r->history_dense);
}

/* The wavefield at the sources of a point source at the grid's centre,
 * mdd_depth deep: what MDD recovers from d_f = A_f x_f. */
static void true_wavefield(const tlrmvm_setup *s, float complex *x) {
  const tl_grid *g = &s->survey.src;
  double c[3] = {g->x0 + 0.5 * (g->nx - 1) * g->dx, g->y0 + 0.5 * (g->ny - 1) * g->dy,
                 s->mdd_depth};
  for (int f = 0; f < s->nfreq; f++)
    for (int j = 0; j < s->n; j++) {
      const double *p = s->survey.src_xyz + 3 * (size_t)j;
      double r = sqrt(pow(p[0] - c[0], 2) + pow(p[1] - c[1], 2) + pow(p[2] - c[2], 2));
      double k = 2 * 3.14159265358979323846 * s->hz[f] / s->survey.velocity;
      x[(size_t)f * s->n + j] =
          (float complex)(cexp(-I * k * r) / (4 * 3.14159265358979323846 * fmax(r, 1e-3)));
    }
}

static double rel_diff(const float complex *a, const float complex *b, size_t n) {
  double d = 0, r = 0;
  for (size_t i = 0; i < n; i++) {
    double complex e = (double complex)a[i] - (double complex)b[i];
    d += creal(e) * creal(e) + cimag(e) * cimag(e);
    r += (double)crealf(b[i]) * crealf(b[i]) + (double)cimagf(b[i]) * cimagf(b[i]);
  }
  return r > 0 ? sqrt(d / r) : sqrt(d);
}

/* How far the damped inversion with the TLR operators may lie from the
 * dense one's. For x = argmin ||A x - d||^2 + l^2 ||x||^2 and x~ the same
 * with A + E (docs/tlrmvm.md): ||x~ - x|| <= ||E|| (||d - A x|| / l^2 +
 * ||x|| / (2 l)). The solves stop short of the exact minimisers by at most
 * ||A^H (d - A x_k) - l^2 x_k|| / l^2 each, which the bound carries too,
 * with its effect on ||d - A x|| and ||x||. ||E||_2 <= max_f ||E_f||_F: from
 * the dropped singular values, or (a reused file) acc's bound. */
static void mdd_bound(const tlrmvm_setup *s, const tlrmvm_ops *op, double largest,
                      const double xnorm[2], tlrmvm_mdd *r) {
  double e = 0;
  for (int f = 0; f < s->nfreq; f++)
    e = fmax(e, op->loaded ? op->bound * op->norm[f] : op->error[f]);
  double l2 = r->damp * r->damp, res_d = r->recomputed[1].residual;
  double short_d = r->recomputed[1].normal / l2, short_t = r->recomputed[0].normal / l2;
  double exact = e * ((res_d + largest * short_d) / l2 + (xnorm[1] + short_d) / (2 * r->damp));
  r->bound = (exact + short_d + short_t) / xnorm[1];
}

/* How far LSQR's ||d - A x|| / ||d|| from its recurrences (exact in exact
 * arithmetic) may lie from the same recomputed from x, in units of ||d||:
 * x is the sum of k float updates and the recomputation one product of at
 * most n + nb + P terms (dense: n; TLR: phase 1's nb, phase 3's R <= n, P
 * ranks' partial sums) and one subtraction, so gamma_K (||A|| ||x|| +
 * ||d||) / ||d||, K = k + n + nb + P + 4 (Higham 2002, 3.1 and 3.5; the
 * updates' sizes taken as ||x||). The recurrences' own drift, from the
 * bidiagonalisation's lost orthogonality, is assumed inside it: measured
 * at 5e-6 to 0.054 of it. A search direction gone wrong leaves the
 * recurrences describing another x: 83 to 500 times over; a wrong
 * bidiagonalisation coefficient 6.9 times on the default deck (0.99 on a
 * two-frequency one with damping 0.001: docs/tlrmvm.md). */
static double lsqr_allowed(const tlrmvm_setup *s, int iterations, int ranks, double largest,
                           double xnorm, double dnorm) {
  double K = (double)iterations + s->n + s->nb + ranks + 4;
  return wf_gamma(K, 0x1p-24) * (largest * xnorm + dnorm) / dnorm;
}

/* Each solve's residuals recomputed from its solution through its own
 * operator, and LSQR's recurrences against them. */
static int recompute(const tlrmvm_setup *s, const tl_mdd *p, const float complex *d,
                     double largest, int ranks, tlrmvm_mdd *r, double xnorm[2], wf_status *st) {
  size_t xn = (size_t)s->nfreq * s->n;
  double dnorm = tl_norm2(d, (size_t)s->nfreq * s->m);
  r->lsqr_worst = 0;
  for (int dense = 0; dense < 2; dense++) {
    const float complex *x = dense ? r->dense : r->tlr;
    const tl_lsqr_result *claim = dense ? &r->r_dense : &r->r_tlr;
    tlrmvm_residuals *t = &r->recomputed[dense];
    if (tl_mdd_residuals(p, dense, d, x, r->damp, &t->residual, &t->normal, st) != WF_OK)
      return st->code;
    xnorm[dense] = tl_norm2(x, xn);
    if (dnorm > 0) {
      double gap = fabs(claim->residual - t->residual / dnorm);
      r->lsqr_worst = wf_worse(r->lsqr_worst, gap / lsqr_allowed(s, claim->iterations, ranks,
                                                                  largest, xnorm[dense], dnorm));
    }
  }
  return WF_OK;
}

/* Whether x (n numbers) holds the same bits on every rank of comm: a
 * 64-bit FNV-1a hash of its bytes, its least and largest over the ranks. */
static bool same_bits(const float complex *x, size_t n, MPI_Comm comm) {
  const unsigned char *b = (const unsigned char *)x;
  uint64_t h[2] = {1469598103934665603ull, 0};
  for (size_t i = 0; i < n * sizeof *x; i++) h[0] = (h[0] ^ b[i]) * 1099511628211ull;
  h[1] = ~h[0]; /* the largest hash as the least of its complement */
  MPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_UINT64_T, MPI_MIN, comm);
  return h[0] == ~h[1];
}

/* Data from the dense operators, then the two inversions. */
int tlrmvm_mdd_solve(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, tl_dense *dense,
                     tlrmvm_mdd *r, wf_status *st) {
  size_t xn = (size_t)s->nfreq * s->n, dm = (size_t)s->nfreq * s->m;
  int its = s->mdd_iterations;
  r->truth = malloc(xn * sizeof *r->truth);
  r->tlr = malloc(xn * sizeof *r->tlr);
  r->dense = malloc(xn * sizeof *r->dense);
  r->history_tlr = malloc((size_t)(its + 1) * sizeof *r->history_tlr);
  r->history_dense = malloc((size_t)(its + 1) * sizeof *r->history_dense);
  float complex *d = malloc(dm * sizeof *d);
  int failed = !r->truth || !r->tlr || !r->dense || !r->history_tlr || !r->history_dense || !d;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) {
    free(d);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the MDD");
  }
  true_wavefield(s, r->truth);
  const tlrmvm_systems *y = op->sys;
  for (int f = 0; f < s->nfreq; f++) {
    if (tlrmvm_mine(y, f))
      tl_dense_apply(dense, f, false, r->truth + (size_t)f * s->n, d + (size_t)f * s->m);
    tlrmvm_share(y, f, d + (size_t)f * s->m, (size_t)s->m);
  }
  tl_mdd p = {s->nfreq, s->m, s->n, op->a, dense, y->count, y->index, y->per, y->world};
  double largest = 0; /* max_f ||A_f||_F: the scale of damp, and >= ||diag(A_f)||_2 */
  for (int f = 0; f < s->nfreq; f++) largest = fmax(largest, op->norm[f]);
  r->damp = s->mdd_damp * largest;
  tl_lsqr_opts o = {.iterations = its, .damp = r->damp, .atol = 1e-6, .poll = &y->world};
  double t0 = MPI_Wtime();
  int rc = tl_mdd_solve(&p, false, d, &o, r->tlr, r->history_tlr, &r->r_tlr, st);
  r->seconds_tlr = wf_slowest(run->comm, MPI_Wtime() - t0);
  t0 = MPI_Wtime();
  if (rc == WF_OK) rc = tl_mdd_solve(&p, true, d, &o, r->dense, r->history_dense, &r->r_dense, st);
  r->seconds_dense = wf_slowest(run->comm, MPI_Wtime() - t0);
  if (rc == WF_OK) {
    r->misfit = rel_diff(r->tlr, r->dense, xn);
    r->err_tlr = rel_diff(r->tlr, r->truth, xn);
    r->err_dense = rel_diff(r->dense, r->truth, xn);
  }
  int ranks;
  MPI_Comm_size(y->world, &ranks);
  double xnorm[2];
  if (rc == WF_OK) rc = recompute(s, &p, d, largest, ranks, r, xnorm, st);
  if (rc == WF_OK && r->damp > 0) mdd_bound(s, op, largest, xnorm, r);
  r->same_on_ranks = ranks < 2 ? -1 : same_bits(r->tlr, xn, y->world) && same_bits(r->dense, xn, y->world);
  free(d);
  return rc;
}

void tlrmvm_mdd_report(wf_run *run, const tlrmvm_setup *s, const tlrmvm_mdd *r) {
  wf_report rep;
  wf_report_open(&rep, run, "tlrmvm");
  wf_report_begin(&rep, "mdd");
  wf_report_line(&rep, "MDD");
  wf_report_note(&rep, "over %d frequencies", s->nfreq);
  wf_report_num(&rep, "damp", s->mdd_damp, "damping %g ||A||_F");
  wf_report_int(&rep, "iterations", r->r_tlr.iterations, "LSQR %d iterations with the TLR operators");
  wf_report_num(&rep, "tlr_seconds", r->seconds_tlr, "%.3f s");
  wf_report_int(&rep, "dense_iterations", r->r_dense.iterations, "%d with the dense ones");
  wf_report_num(&rep, "dense_seconds", r->seconds_dense, "%.3f s");
  wf_report_num(&rep, "tlr_residual", r->r_tlr.residual, "residual %.2e");
  wf_report_num(&rep, "dense_residual", r->r_dense.residual, "vs %.2e");
  wf_report_line(&rep, "MDD");
  wf_report_num(&rep, "lsqr_residual_worst_of_bound", r->lsqr_worst,
                "recomputed from the solutions, the residuals agree with LSQR's to %.2g of the "
                "rounding bound");
  wf_report_line(&rep, "MDD");
  wf_report_num(&rep, "misfit", r->misfit, "||x_tlr - x_dense|| = %.2e ||x_dense||");
  if (r->bound > 0)
    wf_report_num(&rep, "misfit_bound", r->bound, "bound %.2e");
  else
    wf_report_note(&rep, "not checked: without damping the difference has no bound");
  wf_report_num(&rep, "tlr_error", r->err_tlr, "from the true wavefield %.2e (TLR)");
  wf_report_num(&rep, "dense_error", r->err_dense, "%.2e (dense)");
  wf_report_end(&rep);
  wf_report_close(&rep);
}

/* "nx ny hz", then "ix iy true tlr dense" (real parts) for every source of
 * the first frequency (scripts/plot_mdd.py). */
void tlrmvm_mdd_write(FILE *f, const void *data) {
  const tlrmvm_mdd_plot *p = data;
  const tl_grid *g = &p->s->survey.src;
  fprintf(f, "%d %d %g\n", g->nx, g->ny, p->s->hz[0]);
  for (int j = 0; j < p->s->n; j++) {
    const double *x = p->s->survey.src_xyz + 3 * (size_t)j;
    fprintf(f, "%d %d %.6g %.6g %.6g\n", (int)lround((x[0] - g->x0) / g->dx),
            (int)lround((x[1] - g->y0) / g->dy), crealf(p->r->truth[j]), crealf(p->r->tlr[j]),
            crealf(p->r->dense[j]));
  }
}
