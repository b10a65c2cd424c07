/* `wafer tlrmvm`'s products and checks (tlrmvm_parts.h): random vectors,
 * the TLR products forward and adjoint timed `repeat` times, the dense
 * ones when asked, and every check of the run: against the dense product
 * and the bound acc implies, A^H against A, each product against its plain
 * recomputation in double, the dropped singular values, the survey's
 * entries against the Green's function, and the MDD's. */
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tl_mdd.h"
#include "tl_model.h"
#include "tlrmvm_parts.h"
#include "wf_io.h"
#include "wf_random.h"
#include "wf_signal.h"
#include "wf_stream.h"
#include "wf_timing.h"
#include "wf_wafer.h"

/* Uniform complex entries in [-1, 1)^2: the same on every rank. */
static void random_vector(long seed, uint64_t stream, int len, float complex *v) {
  for (int i = 0; i < len; i++) {
    uint64_t e = 2 * ((stream << 32) + (uint64_t)i);
    v[i] = (float)(2 * wf_uniform((uint64_t)seed, e) - 1) +
           I * (float)(2 * wf_uniform((uint64_t)seed, e + 1) - 1);
  }
}

/* <u, v> = sum conj(u) v, in double. */
static double complex dot(const float complex *u, const float complex *v, int len) {
  double complex s = 0;
  for (int i = 0; i < len; i++) s += conj((double complex)u[i]) * (double complex)v[i];
  return s;
}

static int vectors_alloc(MPI_Comm comm, const tlrmvm_setup *s, vectors *vec, wf_status *st) {
  size_t fm = (size_t)s->nfreq * s->m, fn = (size_t)s->nfreq * s->n;
  vec->x = malloc(fn * sizeof *vec->x);
  vec->xa = malloc(fn * sizeof *vec->xa);
  vec->y = malloc(fm * sizeof *vec->y);
  vec->v = malloc(fm * sizeof *vec->v);
  int failed = !vec->x || !vec->xa || !vec->y || !vec->v;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the vectors");
  for (int f = 0; f < s->nfreq; f++) {
    random_vector(s->seed, 2 * (uint64_t)f, s->n, vec->x + (size_t)f * s->n);
    random_vector(s->seed, 2 * (uint64_t)f + 1, s->m, vec->v + (size_t)f * s->m);
  }
  return WF_OK;
}

void tlrmvm_vectors_free(vectors *vec) { free(vec->x), free(vec->y), free(vec->v), free(vec->xa); }

/* `repeat` products of every frequency, forward (A x) or adjoint (A^H v);
 * a signal stops the run between two. Their sums and gathers go into the
 * fabric's counters, each frequency's with `cycles` modelled. */
static int time_products(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, vectors *vec,
                         bool adjoint, double cycles, measured *m, wf_status *st) {
  long long received = 0;
  for (int f = 0; f < s->nfreq; f++) received -= op->a[f].received;
  double *t = malloc((size_t)s->repeat * sizeof *t), phase[4] = {0};
  int failed = !t;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, run->comm);
  int rc = WF_OK;
  wf_fabric *fab = &run->wafer->fab;
  long long collectives = 0;
  for (int f = 0; f < s->nfreq; f++) collectives -= op->a[f].collectives;
  wf_fabric_main_begin(fab);
  int done = 0;
  for (int r = 0; r < s->repeat; r++) {
    int sig = r > 0 ? wf_signal_poll_next(&poll) : 0;
    if (sig) {
      char where[96];
      snprintf(where, sizeof where, "after %d of %d products (nothing written)", r, s->repeat);
      rc = wf_signal_fail(st, sig, where);
      break;
    }
    wf_fabric_barrier(fab);
    double t0 = MPI_Wtime();
    /* Each system its own frequencies, all systems at once. */
    for (int f = 0; f < s->nfreq; f++) {
      size_t fm = (size_t)f * s->m, fn = (size_t)f * s->n;
      if (!tlrmvm_mine(op->sys, f)) continue;
      if (adjoint)
        tl_matrix_apply(&op->a[f], true, vec->v + fm, vec->xa + fn, phase);
      else
        tl_matrix_apply(&op->a[f], false, vec->x + fn, vec->y + fm, phase);
    }
    t[r] = wf_fabric_slowest(fab, MPI_Wtime() - t0);
    done++;
  }
  /* The products' sums and gathers ran over the layout's own lines of
   * ranks (tl_matrix.h): their counts and bytes join the fabric's. */
  for (int f = 0; f < s->nfreq; f++) {
    received += op->a[f].received;
    collectives += op->a[f].collectives;
  }
  long long ops = (long long)done * s->nfreq;
  wf_fabric_counters d = {.ops = ops, .line_collectives = collectives, .seconds = phase[3],
                          .model_cycles = cycles * (double)ops, .mpi_bytes = received};
  wf_fabric_count(fab, &d);
  wf_fabric_main_end(fab, ops);
  /* The products, whole on every rank, for the checks and the output. */
  for (int f = 0; f < s->nfreq; f++) {
    if (adjoint)
      tlrmvm_share(op->sys, f, vec->xa + (size_t)f * s->n, (size_t)s->n);
    else
      tlrmvm_share(op->sys, f, vec->y + (size_t)f * s->m, (size_t)s->m);
  }
  wf_signal_poll_end(&poll);
  if (rc == WF_OK) {
    if (adjoint) {
      m->adjoint = wf_median(t, s->repeat);
    } else {
      m->forward = wf_median(t, s->repeat);
      for (int k = 0; k < 4; k++) m->phase[k] = wf_slowest(run->comm, phase[k] / s->repeat);
    }
  }
  free(t);
  return rc;
}

/* The TLR products against the dense ones (from `all` when it holds every
 * frequency, else one frequency at a time), and A^H against A. */
static int check_products(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op, tl_dense *all,
                          const vectors *vec, measured *m, wf_status *st) {
  tl_dense one = {0};
  float complex *yd = malloc((size_t)s->m * sizeof *yd);
  double *residual2 = calloc((size_t)s->nfreq, sizeof *residual2); /* this rank's tiles' */
  int failed = !yd || !residual2;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) {
    free(yd), free(residual2);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  }
  int rc = s->dense_check && !all->block ? tl_dense_create(&one, &op->layout, 1, NULL, st) : WF_OK;
  m->bound = op->bound;
  m->dropped = op->loaded ? -1 : 0;
  for (int f = 0; f < s->nfreq && rc == WF_OK; f++) {
    size_t fm = (size_t)f * s->m, fn = (size_t)f * s->n;
    const float complex *x = vec->x + fn, *y = vec->y + fm;
    /* Adjoint: <A x, v> = <x, A^H v>. */
    double complex lhs = dot(y, vec->v + fm, s->m), rhs = dot(x, vec->xa + fn, s->n);
    double scale = tl_norm2(y, s->m) * tl_norm2(vec->v + fm, s->m);
    m->adj_err = wf_worse(m->adj_err, cabs(lhs - rhs) / scale);
    if (!op->loaded) m->dropped = wf_worse(m->dropped, op->error[f] / op->norm[f]);
    if (!tlrmvm_mine(op->sys, f)) continue;
    for (int adj = 0; adj < 2 && rc == WF_OK; adj++) {
      tlrmvm_naive n;
      rc = adj ? tlrmvm_naive_product(&op->a[f], true, vec->v + fm, vec->xa + fn, &n, st)
               : tlrmvm_naive_product(&op->a[f], false, x, y, &n, st);
      m->naive[adj].worst = wf_worse(m->naive[adj].worst, n.worst);
      m->naive[adj].rel = wf_worse(m->naive[adj].rel, n.rel);
    }
    if (rc != WF_OK || !s->dense_check) continue;
    if (all->block)
      tl_dense_apply(all, f, false, x, yd);
    else if ((rc = tlrmvm_dense_fill(run, s, &one, 0, f, st)) == WF_OK)
      tl_dense_apply(&one, 0, false, x, yd);
    if (rc != WF_OK) break;
    const tl_dense *dense = all->block ? all : &one;
    int slot = all->block ? f : 0;
    if (!s->input[0]) m->green = wf_worse(m->green, tlrmvm_green_check(s, dense, slot, s->hz[f]));
    if (!op->loaded) residual2[f] = tlrmvm_naive_residual2(&op->a[f], dense, slot);
    double diff = 0;
    for (int i = 0; i < s->m; i++) {
      double complex e = (double complex)y[i] - (double complex)yd[i];
      diff += creal(e) * creal(e) + cimag(e) * cimag(e);
    }
    diff = sqrt(diff);
    m->err = wf_worse(m->err, diff / (op->norm[f] * tl_norm2(x, s->n)));
    m->rel_err = wf_worse(m->rel_err, diff / tl_norm2(yd, s->m));
  }
  /* The checks that recompute (the Green's function, the bases' residual)
   * stop early on a signal, without leaving the loop and its collectives:
   * the figures are then partial, and the run ends here. */
  wf_signal_barrier(run->comm);
  int sig = wf_signal_stop();
  if (rc == WF_OK) wf_status_clear(st);
  if (rc == WF_OK && sig)
    rc = wf_signal_fail(st, sig, "while checking the products against the dense ones");
  /* The largest over every system's frequencies. */
  wf_status_agree(run->comm, st);
  double worst[7] = {m->err,          m->rel_err,       m->naive[0].worst, m->naive[0].rel,
                     m->naive[1].worst, m->naive[1].rel, m->green};
  for (int k = 0; k < 7; k++) /* MPI_MAX may drop a NaN: as infinite, it fails as it should */
    if (worst[k] != worst[k]) worst[k] = INFINITY;
  MPI_Allreduce(MPI_IN_PLACE, worst, 7, MPI_DOUBLE, MPI_MAX, run->comm);
  m->green = s->dense_check && !s->input[0] ? worst[6] : -1;
  m->err = worst[0], m->rel_err = worst[1];
  m->naive[0] = (tlrmvm_naive){worst[2], worst[3]}, m->naive[1] = (tlrmvm_naive){worst[4], worst[5]};
  /* The compression's ||A - A_tlr||_F against the dense operator minus the
   * stored bases, every frequency summed over the ranks holding its tiles. */
  m->dropped_checked = s->dense_check && !op->loaded && st->code == WF_OK;
  m->dropped_worst = 0;
  if (m->dropped_checked) {
    MPI_Allreduce(MPI_IN_PLACE, residual2, s->nfreq, MPI_DOUBLE, MPI_SUM, run->comm);
    double allowed = tlrmvm_dropped_bound(&op->layout);
    for (int f = 0; f < s->nfreq; f++) /* norm > 0: a zero operator is refused as input */
      m->dropped_worst = wf_worse(m->dropped_worst, fabs(sqrt(residual2[f]) - op->error[f]) /
                                                        (allowed * op->norm[f]));
  }
  if (one.block) tl_dense_free(&one);
  free(yd), free(residual2);
  return st->code;
}

/* The dense products of every frequency, `repeat` times (dense = time). */
static int time_dense(wf_run *run, const tlrmvm_setup *s, tl_dense *d, const vectors *vec,
                      measured *m, wf_status *st) {
  float complex *y = malloc((size_t)s->m * sizeof *y);
  double *t = malloc((size_t)s->repeat * sizeof *t);
  int failed = !y || !t;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) {
    free(y), free(t);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  }
  for (int r = 0; r < s->repeat; r++) {
    MPI_Barrier(run->comm);
    double t0 = MPI_Wtime();
    for (int f = 0; f < s->nfreq; f++)
      if (d->block[f]) tl_dense_apply(d, f, false, vec->x + (size_t)f * s->n, y);
    t[r] = wf_slowest(run->comm, MPI_Wtime() - t0);
  }
  m->dense = wf_median(t, s->repeat);
  free(y), free(t);
  return WF_OK;
}

void tlrmvm_check(wf_run *run, const tlrmvm_setup *s, const measured *m, const tlrmvm_mdd *r) {
  char what[160];
  if (s->dense_check) {
    snprintf(what, sizeof what,
             "TLR product within the bound acc implies: ||y_tlr - y_dense|| <= %.2e ||A||_F ||x||",
             m->bound + 1e-5);
    wf_run_check(run, m->err <= m->bound + 1e-5, what);
  }
  wf_run_check(run, m->adj_err <= 1e-4, "<A x, v> = <x, A^H v> to 1e-4 (the adjoint product)");
  if (m->dropped_checked) {
    snprintf(what, sizeof what,
             "the reported ||A - A_tlr||_F (the dropped singular values) against the dense "
             "operator minus U W^H, entry by entry over every tile (worst %.2g of the SVD's "
             "round-off)",
             m->dropped_worst);
    wf_run_check(run, m->dropped_worst <= 1, what);
  } else if (!s->dense_check) {
    wf_run_unchecked(run, "the TLR products and ||A - A_tlr||_F against the dense operator",
                     "tlrmvm.dense = none");
  }
  for (int adj = 0; adj < 2; adj++) {
    snprintf(what, sizeof what,
             "%s equals its plain recomputation from the stored bases within single-precision "
             "round-off (worst entry %.2g of its bound)",
             adj ? "A^H v" : "A x", m->naive[adj].worst);
    wf_run_check(run, m->naive[adj].worst <= 1, what);
  }
  if (r) {
    snprintf(what, sizeof what,
             "both MDD solves' residual from LSQR's recurrences against ||d - A x|| recomputed "
             "from the solution (worst %.2g of the rounding bound)",
             r->lsqr_worst);
    wf_run_check(run, r->lsqr_worst <= 1, what);
  }
  if (r && r->bound > 0) {
    snprintf(what, sizeof what,
             "damped MDD with the TLR operators within %.2e of the dense one's (the bound their "
             "difference implies)",
             r->bound);
    wf_run_check(run, r->misfit <= r->bound, what);
  }
  if (m->green >= 0) {
    snprintf(what, sizeof what,
             "the survey's dense operator, entry by entry, against exp(-i k d) / (4 pi d) (worst "
             "%.2g of float round-off)",
             m->green);
    wf_run_check(run, m->green <= 1, what);
  }
  if (r && r->same_on_ranks >= 0)
    wf_run_check(run, r->same_on_ranks,
                 "every rank's copies of the MDD solutions hold the same bits (each frequency's "
                 "products reach every rank whole)");
}

/* Products timed and checked, the dense ones timed when asked. */
int tlrmvm_measure(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, tl_dense *dense,
                   double cycles, vectors *vec, measured *m, wf_status *st) {
  int rc = vectors_alloc(run->comm, s, vec, st);
  if (rc == WF_OK) rc = time_products(run, s, op, vec, false, cycles, m, st);
  if (rc == WF_OK) rc = time_products(run, s, op, vec, true, cycles, m, st);
  if (rc == WF_OK) rc = check_products(run, s, op, dense, vec, m, st);
  if (rc == WF_OK && s->dense_time) rc = time_dense(run, s, dense, vec, m, st);
  if (rc != WF_OK) return rc;
  for (int f = 0; f < s->nfreq; f++) {
    long long R = tl_total_rank(&op->a[f]);
    m->R += R;
    m->bytes += tl_kaust_bytes(R, s->nb, s->m, s->n);
  }
  m->dense_bytes = 8.0 * s->m * s->n * s->nfreq;
  if (wf_deck_bool(run->deck, TLRMVM_SECTION, "stream")) {
    m->triad = wf_stream_triad(run->comm, (size_t)4 << 20, st);
    return st->code;
  }
  return WF_OK;
}

