/* `wafer tlrmvm`: GB23's tile low-rank MVM as an MPI code.
 *
 * Builds one seismic operator per frequency (tl_survey.h) or reads dense
 * ones from HDF5, compresses each into tiles of rank k (tl_compress.h) or
 * reuses a compressed file (tl_io.h), times y = A x and x = A^H y with the
 * three-phase TLR-MVM on the PE grid's tiles (tl_matrix.h), and checks them
 * against the dense product and each other. Reports the bandwidth as KAUST
 * counts it, its fraction of STREAM triad, and the wafer model (tl_model.h). */
#include "tlrmvm_workload.h"

#include "wf_cblas.h"
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tl_compress.h"
#include "tl_dense.h"
#include "tl_matrix.h"
#include "tl_mdd.h"
#include "tl_model.h"
#include "tl_survey.h"
#include "tlrmvm_parts.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_model.h"
#include "wf_random.h"
#include "wf_signal.h"
#include "wf_stream.h"
#include "wf_timing.h"
#include "wf_wafer.h"

/* ---- products and checks ---- */

typedef struct measured {
  double forward, adjoint; /* median seconds of one product of every frequency */
  double phase[4];         /* per product, slowest rank: phase 1, reshuffle, phase 3, combine */
  double dense;            /* median seconds of the dense products (dense = time) */
  double err,
      rel_err;    /* largest over frequencies: ||y - y_dense|| / (||A||_F ||x||), / ||y_dense|| */
  double bound;   /* the bound acc implies on err */
  double dropped; /* largest ||A - A_tlr||_F / ||A||_F from the SVDs (-1: unknown) */
  bool dropped_checked;  /* that figure against its recomputation, */
  double dropped_worst;  /* worst |difference| / its bound (NaN fails) */
  double adj_err; /* largest |<Ax, v> - <x, A^H v>| / (||Ax|| ||v||) */
  tlrmvm_naive naive[2]; /* A x and A^H v against their plain recomputation, worst frequency */
  double green; /* the survey's dense entries against the Green's function (-1: not checked) */
  double triad;   /* STREAM triad, bytes/s */
  long long R;    /* sum of every frequency's total rank */
  double bytes;   /* KAUST's bytes of one product of every frequency */
  double dense_bytes; /* the dense matrices' bytes */
} measured;

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

typedef struct vectors {
  float complex *x, *y, *v, *xa; /* per frequency: x (N), y = A x (M), v (M), xa = A^H v (N) */
} vectors;

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

static void vectors_free(vectors *vec) { free(vec->x), free(vec->y), free(vec->v), free(vec->xa); }

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
  for (int r = 0; r < s->repeat; r++) {
    int sig = r > 0 ? wf_signal_poll_next(&poll) : 0;
    if (sig) {
      char where[96];
      snprintf(where, sizeof where, "after %d of %d products (nothing written)", r, s->repeat);
      rc = wf_signal_fail(st, sig, where);
      break;
    }
    MPI_Barrier(run->comm);
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
    t[r] = wf_slowest(run->comm, MPI_Wtime() - t0);
  }
  /* The products, whole on every rank, for the checks and the output. */
  for (int f = 0; f < s->nfreq; f++) {
    if (adjoint)
      tlrmvm_share(op->sys, f, vec->xa + (size_t)f * s->n, (size_t)s->n);
    else
      tlrmvm_share(op->sys, f, vec->y + (size_t)f * s->m, (size_t)s->m);
  }
  wf_signal_poll_end(&poll);
  for (int f = 0; f < s->nfreq; f++) received += op->a[f].received;
  long long ops = (long long)s->repeat * s->nfreq;
  wf_fabric_count(&run->wafer->fab, ops, phase[3], cycles * (double)ops, 0, received);
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
    for (int f = 0; f < s->nfreq; f++) /* 0 / 0 (an all-zero operator): NaN, a failure */
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

static void check(wf_run *run, const tlrmvm_setup *s, const measured *m, const tlrmvm_mdd *r) {
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

/* ---- model and report ---- */

/* The wafer projection of one product of every frequency: each frequency's
 * own ranks, the frequencies shared out over `systems` wafers. */
static tl_model project(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op) {
  const wf_wafer *w = run->wafer;
  tl_model sum = {0};
  int per_system = (s->nfreq + s->systems - 1) / s->systems;
  for (int f = 0; f < s->nfreq; f++) {
    tl_model_case c = {.m = s->m,
                       .n = s->n,
                       .nb = s->nb,
                       .rank = op ? op->a[f].rank : NULL,
                       .uniform_rank = s->model_rank,
                       .frequencies = 1,
                       .systems = 1};
    tl_model t = tl_model_mvm(&w->hw, &w->grid, w->dc.pe_nx, w->dc.pe_ny, &c, s->wafer_prec);
    double share = (double)per_system / s->nfreq; /* of this frequency's time on its wafer */
    sum.seconds = wf_range_add(sum.seconds, wf_range_scale(t.seconds, share));
    sum.compute_seconds =
        wf_range_add(sum.compute_seconds, wf_range_scale(t.compute_seconds, share));
    sum.bytes_per_pe += t.bytes_per_pe * share;
    sum.kaust_bytes += t.kaust_bytes;
    sum.flops += t.flops;
    sum.total_rank += t.total_rank;
    sum.bcast_cycles = fmax(sum.bcast_cycles, t.bcast_cycles);
    sum.reduce_cycles = fmax(sum.reduce_cycles, t.reduce_cycles);
  }
  sum.bandwidth = wf_range_inverse(wf_range_scale(sum.seconds, 1.0 / sum.kaust_bytes));
  run->model = (wf_projection){.valid = true,
                               .unit = "product",
                               .seconds = sum.seconds,
                               .flops = sum.flops,
                               .bytes_per_pe = sum.bytes_per_pe,
                               .sram_for_data = wf_model_sram_for_data(&w->hw),
                               .pes_needed = (double)w->dc.pe_nx * w->dc.pe_ny * s->systems,
                               .pes_offered = (double)w->hw.pe_nx * w->hw.pe_ny * s->systems};
  return sum;
}

static void report_model(const wf_run *run, const tlrmvm_setup *s, const tl_model *t) {
  const wf_hw *hw = &run->wafer->hw;
  const wf_projection *p = &run->model;
  if (run->verbose)
    printf(
        "tlrmvm: wafer model (%s x %d, %s, %dx%d PEs each): [%.2f, %.2f] us/product of %d "
        "frequencies (multiply-adds [%.2f, %.2f] us), %.0f x %.0f cycles multicast x / reduce y; "
        "[%.3g, %.3g] PB/s by KAUST's count; %.0f B/PE of %.0f (%s)\n",
        hw->machine, s->systems, s->wafer_prec == WF_FP16 ? "fp16" : "fp32", run->wafer->dc.pe_nx,
        run->wafer->dc.pe_ny, p->seconds.lo * 1e6, p->seconds.hi * 1e6, s->nfreq,
        t->compute_seconds.lo * 1e6, t->compute_seconds.hi * 1e6, t->bcast_cycles, t->reduce_cycles,
        t->bandwidth.lo / 1e15, t->bandwidth.hi / 1e15, p->bytes_per_pe, p->sram_for_data,
        p->bytes_per_pe <= p->sram_for_data ? "fits" : "does NOT fit");
  wf_json *j = run->summary;
  wf_json_begin(j, "model");
  wf_projection_json(p, j);
  wf_json_range(j, "compute_seconds", t->compute_seconds.lo, t->compute_seconds.hi);
  wf_json_num(j, "bcast_cycles", t->bcast_cycles);
  wf_json_num(j, "reduce_cycles", t->reduce_cycles);
  wf_json_num(j, "kaust_bytes", t->kaust_bytes);
  wf_json_range(j, "bandwidth", t->bandwidth.lo, t->bandwidth.hi);
  wf_json_int(j, "systems", s->systems);
  wf_json_end(j);
}

static void report(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op, const measured *m) {
  const tl_layout *l = &op->layout;
  double gbps = m->bytes / m->forward / 1e9,
         ratio = (double)s->m * s->n * s->nfreq / (2.0 * (double)m->R * s->nb);
  if (run->verbose) {
    printf(
        "tlrmvm: %d frequencies, %d x %d in %dx%d tiles of %d, R = %lld (%.2gx %s than "
        "dense)%s\n",
        s->nfreq, s->m, s->n, l->mt, l->nt, s->nb, m->R, ratio >= 1 ? ratio : 1 / ratio,
        ratio >= 1 ? "smaller" : "larger",
        op->loaded ? ", read from the compressed file" : "");
    printf(
        "tlrmvm: A x %.3f ms, A^H y %.3f ms (median of %d, every frequency); phases %.3f + "
        "%.3f + %.3f ms, combine %.3f ms\n",
        m->forward * 1e3, m->adjoint * 1e3, s->repeat, m->phase[0] * 1e3, m->phase[1] * 1e3,
        m->phase[2] * 1e3, m->phase[3] * 1e3);
    printf("tlrmvm: %.1f GB/s by KAUST's byte count", gbps);
    if (m->triad > 0)
      printf(" = %.0f%% of STREAM triad (%.1f GB/s)", 100 * gbps * 1e9 / m->triad, m->triad / 1e9);
    printf("\n");
    if (m->dense > 0)
      printf("tlrmvm: dense cgemv %.3f ms (%.1f GB/s); TLR/dense time %.3f\n", m->dense * 1e3,
             m->dense_bytes / m->dense / 1e9, m->forward / m->dense);
    if (s->dense_check)
      printf("tlrmvm: ||y_tlr - y_dense|| = %.2e ||A||_F ||x|| (bound %.2e) = %.2e ||y_dense||\n",
             m->err, m->bound, m->rel_err);
    if (m->dropped >= 0 && m->dropped_checked)
      printf("tlrmvm: ||A - A_tlr||_F / ||A||_F = %.2e (the dropped singular values; the dense "
             "operator minus U W^H agrees to %.2g of the SVD's round-off)\n",
             m->dropped, m->dropped_worst);
    else if (m->dropped >= 0)
      printf("tlrmvm: ||A - A_tlr||_F / ||A||_F = %.2e (the dropped singular values)\n",
             m->dropped);
    printf("tlrmvm: adjoint: |<A x, v> - <x, A^H v>| = %.2e ||A x|| ||v||\n", m->adj_err);
    printf("tlrmvm: against the plain recomputation: A x %.2e, A^H v %.2e (relative); worst entry "
           "%.2g, %.2g of its round-off bound\n",
           m->naive[0].rel, m->naive[1].rel, m->naive[0].worst, m->naive[1].worst);
  }
  wf_json *j = run->summary;
  wf_json_begin(j, "tlrmvm");
  long long size[3] = {s->nfreq, s->m, s->n};
  wf_json_ints(j, "size", size, 3);
  wf_json_int(j, "nb", s->nb);
  wf_json_num(j, "acc", s->opts.acc);
  wf_json_int(j, "total_rank", m->R);
  wf_json_num(j, "compression_ratio", ratio);
  wf_json_bool(j, "loaded", op->loaded);
  if (!op->loaded) wf_json_num(j, "compress_seconds", op->compress_seconds);
  wf_json_num(j, "mvm_seconds", m->forward);
  wf_json_num(j, "adjoint_seconds", m->adjoint);
  wf_json_num(j, "phase1_seconds", m->phase[0]);
  wf_json_num(j, "reshuffle_seconds", m->phase[1]);
  wf_json_num(j, "phase3_seconds", m->phase[2]);
  wf_json_num(j, "combine_seconds", m->phase[3]);
  wf_json_num(j, "kaust_bytes", m->bytes);
  wf_json_num(j, "GBps", gbps);
  if (m->triad > 0) {
    wf_json_num(j, "stream_triad_GBps", m->triad / 1e9);
    wf_json_num(j, "fraction_of_triad", gbps * 1e9 / m->triad);
  }
  if (m->dense > 0) {
    wf_json_num(j, "dense_seconds", m->dense);
    wf_json_num(j, "dense_GBps", m->dense_bytes / m->dense / 1e9);
  }
  /* against the plain recomputation: relative 2-norm, and the worst entry
   * as a fraction of what round-off allows */
  wf_json_num(j, "naive_rel_error", m->naive[0].rel);
  wf_json_num(j, "naive_worst_of_bound", m->naive[0].worst);
  wf_json_num(j, "adjoint_naive_rel_error", m->naive[1].rel);
  wf_json_num(j, "adjoint_naive_worst_of_bound", m->naive[1].worst);
  if (m->green >= 0) wf_json_num(j, "green_worst_of_allowed", m->green);
  if (s->dense_check) {
    wf_json_num(j, "error", m->err);
    wf_json_num(j, "error_bound", m->bound);
    wf_json_num(j, "rel_error", m->rel_err);
  }
  if (m->dropped >= 0) wf_json_num(j, "dropped", m->dropped);
  if (m->dropped_checked) wf_json_num(j, "dropped_worst_of_bound", m->dropped_worst);
  wf_json_num(j, "adjoint_error", m->adj_err);
  wf_json_end(j);
  snprintf(run->headline, sizeof run->headline, "%dx%d, %d Hz-matrices, R %lld, %.3f ms/MVM%s",
           s->m, s->n, s->nfreq, m->R, m->forward * 1e3,
           s->dense_check ? (run->checks_failed ? ", dense differs" : ", = dense to acc") : "");
}

/* ---- output ---- */

static int write_output(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op,
                        const vectors *vec, const tlrmvm_mdd *r, const char *path, wf_status *st) {
  const tl_layout *l = &op->layout;
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  size_t tiles = (size_t)l->mt * l->nt;
  int64_t *rank = malloc(tiles * sizeof *rank + 1);
  int failed = !rank, rc = WF_OK;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory writing '%s'", path);
  /* The vectors are whole on every rank: rank 0 writes them. */
  bool root = run->rank == 0;
  unsigned long long zero = 0;
  for (int q = 0; rc == WF_OK && q < s->nfreq; q++) {
    char name[64];
    unsigned long long nt = (unsigned long long)l->mt, nn = (unsigned long long)s->n,
                       nm = (unsigned long long)s->m;
    for (size_t t = 0; t < tiles; t++) rank[t] = op->a[q].rank[t];
    wf_h5_rows rr = {(unsigned long long)l->mt, (unsigned long long)l->nt, root, &zero, &nt};
    wf_h5_rows rx = {nn, 2, root, &zero, &nn}, ry = {nm, 2, root, &zero, &nm};
    snprintf(name, sizeof name, "ranks_%d", q);
    if (wf_h5_write_rows(&f, name, WF_I64, &rr, rank, st) != WF_OK) break;
    snprintf(name, sizeof name, "x_%d", q);
    if (wf_h5_write_rows(&f, name, WF_F32, &rx, vec->x + (size_t)q * s->n, st) != WF_OK) break;
    snprintf(name, sizeof name, "y_%d", q);
    if (wf_h5_write_rows(&f, name, WF_F32, &ry, vec->y + (size_t)q * s->m, st) != WF_OK) break;
    snprintf(name, sizeof name, "hz_%d", q);
    if (wf_h5_attr_num(&f, name, s->hz[q], st) != WF_OK) break;
    const float complex *mdd[3] = {r ? r->truth : NULL, r ? r->tlr : NULL, r ? r->dense : NULL};
    static const char *const what[3] = {"mdd_true", "mdd_tlr", "mdd_dense"};
    for (int k = 0; r && k < 3 && st->code == WF_OK; k++) {
      snprintf(name, sizeof name, "%s_%d", what[k], q);
      wf_h5_write_rows(&f, name, WF_F32, &rx, mdd[k] + (size_t)q * s->n, st);
    }
    if (st->code != WF_OK) break;
  }
  if (r && st->code == WF_OK) {
    double *h[2] = {r->history_tlr, r->history_dense};
    int iterations[2] = {r->r_tlr.iterations, r->r_dense.iterations};
    static const char *const hn[2] = {"mdd_residual_tlr", "mdd_residual_dense"};
    for (int k = 0; k < 2 && st->code == WF_OK; k++) {
      unsigned long long its = (unsigned long long)iterations[k] + 1;
      wf_h5_rows rh = {its, 1, root, &zero, &its};
      wf_h5_write_rows(&f, hn[k], WF_F64, &rh, h[k], st);
    }
  }
  if (rc == WF_OK) rc = st->code;
  free(rank);
  return wf_h5_finish(&f, rc, st);
}

typedef struct rank_map {
  const tl_layout *l;
  const int *rank;
  double hz;
} rank_map;

/* "mt nt hz", then one row of tile ranks a line (scripts/plot_ranks.py). */
static void write_ranks(FILE *f, const void *data) {
  const rank_map *r = data;
  fprintf(f, "%d %d %g\n", r->l->mt, r->l->nt, r->hz);
  for (int i = 0; i < r->l->mt; i++)
    for (int j = 0; j < r->l->nt; j++)
      fprintf(f, "%d%c", r->rank[i * r->l->nt + j], j + 1 < r->l->nt ? ' ' : '\n');
}

/* ---- the run ---- */

static int model_only(wf_run *run, const tlrmvm_setup *s, wf_status *st) {
  if (s->model_rank < 1)
    return wf_deck_fail(run->deck, TLRMVM_SECTION, "model_rank", st,
                        "a model-only run compresses nothing: give the tiles' rank (>= 1)");
  if (s->nb > s->m || s->nb > s->n)
    return wf_deck_fail(run->deck, TLRMVM_SECTION, "nb", st,
                        "tile size %d is larger than the %d x %d "
                        "matrix",
                        s->nb, s->m, s->n);
  tl_model t = project(run, s, NULL);
  report_model(run, s, &t);
  run->wafer_seconds = run->model.seconds;
  snprintf(run->headline, sizeof run->headline, "model only: %.3g-%.3g PB/s on %d %s",
           t.bandwidth.lo / 1e15, t.bandwidth.hi / 1e15, s->systems, run->wafer->hw.name);
  return WF_OK;
}

/* Products timed and checked, the dense ones timed when asked. */
static int measure(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, vectors *vec,
                   tl_dense *dense, const tl_model *t, measured *m, wf_status *st) {
  double cycles = t->bcast_cycles + t->reduce_cycles; /* a product's fabric, the wafer's */
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
  if (wf_deck_bool(run->deck, TLRMVM_SECTION, "stream"))
    m->triad = wf_stream_triad(run->comm, (size_t)4 << 20);
  return WF_OK;
}

static int plots(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op, const tlrmvm_mdd *r,
                 wf_status *st) {
  const char *png = wf_deck_str(run->deck, TLRMVM_SECTION, "plot");
  char title[160];
  if (png[0]) {
    rank_map map = {&op->layout, op->a[0].rank, s->hz[0]};
    snprintf(title, sizeof title, "tile ranks, %d x %d at %g Hz, nb %d, acc %g", s->m, s->n,
             s->hz[0], s->nb, s->opts.acc);
    if (wf_run_plot(run, "plot_ranks.py", png, title, write_ranks, &map,
                    st) != WF_OK)
      return st->code;
  }
  png = wf_deck_str(run->deck, TLRMVM_SECTION, "mdd_plot");
  if (png[0] && r->truth) {
    tlrmvm_mdd_plot p = {s, r};
    snprintf(title, sizeof title, "MDD at %g Hz: %d LSQR iterations, acc %g", s->hz[0],
             r->r_tlr.iterations, s->opts.acc);
    return wf_run_plot(run, "plot_mdd.py", png, title, tlrmvm_mdd_write,
                       &p, st);
  }
  return WF_OK;
}

static int tlrmvm_run(wf_run *run, wf_status *st) {
  /* One BLAS thread a rank: the ranks are the parallelism. */
  wf_blas_single_thread();
  const wf_deck *d = run->deck;
  tlrmvm_setup s;
  if (tlrmvm_read_setup(d, &s, st) != WF_OK) return st->code;
  if (wf_deck_bool(d, TLRMVM_SECTION, "model_only")) return model_only(run, &s, st);
  if (s.input[0] && tlrmvm_input_shape(run, &s, st) != WF_OK) return st->code;
  tlrmvm_systems sys;
  if (tlrmvm_systems_create(run, &s, &sys, st) != WF_OK) return st->code;
  tlrmvm_ops op = {.sys = &sys};
  if (tl_layout_init(&op.layout, s.m, s.n, s.nb, &sys.dc, sys.row, sys.col, st) != WF_OK) {
    tlrmvm_systems_free(&sys);
    return wf_deck_blame(d, TLRMVM_SECTION, "nb", st);
  }
  if (!s.input[0] && tl_survey_init(&s.survey, st) != WF_OK) {
    tlrmvm_systems_free(&sys);
    return st->code;
  }
  bool do_mdd = s.mdd_iterations > 0 && !s.input[0];
  if (run->verbose)
    printf(
        "tlrmvm: %d x %d operator%s at %d frequencies (%g .. %g Hz), tiles of %d on %dx%d PEs, "
        "%d system%s of %dx%d ranks\n",
        s.m, s.n, s.input[0] ? "s from the input file" : "s of the survey", s.nfreq, s.hz[0],
        s.hz[s.nfreq - 1], s.nb, sys.dc.pe_nx, sys.dc.pe_ny, sys.count, sys.count > 1 ? "s" : "",
        sys.dc.px, sys.dc.py);
  if (run->verbose && s.mdd_iterations > 0 && !do_mdd)
    printf(
        "tlrmvm: no MDD: it recovers a point source's wavefield through the survey's "
        "geometry, which an input file does not give\n");
  measured m = {.green = -1};
  vectors vec = {0};
  tl_dense dense = {0};
  tlrmvm_mdd r = {0};
  tl_model t = {0};
  int rc = tlrmvm_build(run, &s, &op, st);
  if (rc == WF_OK) t = project(run, &s, &op);
  if (rc == WF_OK && (s.dense_time || do_mdd)) rc = tlrmvm_dense_all(run, &s, &op, &dense, st);
  if (rc == WF_OK) rc = measure(run, &s, &op, &vec, &dense, &t, &m, st);
  if (rc == WF_OK && do_mdd) rc = tlrmvm_mdd_solve(run, &s, &op, &dense, &r, st);
  if (rc == WF_OK) {
    check(run, &s, &m, do_mdd ? &r : NULL);
    report(run, &s, &op, &m);
    if (do_mdd) tlrmvm_mdd_report(run, &s, &r);
    report_model(run, &s, &t);
    run->seconds = m.forward * s.repeat;
    run->wafer_seconds = wf_range_scale(run->model.seconds, s.repeat);
  }
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &s, &op, &vec, do_mdd ? &r : NULL, out, st);
  if (rc == WF_OK) rc = plots(run, &s, &op, &r, st);
  tlrmvm_mdd_free(&r);
  if (dense.block) tl_dense_free(&dense);
  vectors_free(&vec);
  tlrmvm_ops_free(&op);
  tl_survey_free(&s.survey);
  tlrmvm_systems_free(&sys);
  return rc;
}

const wf_workload wf_tlrmvm_workload = {
    .name = "tlrmvm",
    .help = "tile low-rank MVM of seismic operators (GB23), checked against the dense product",
    .sections = tlrmvm_sections,
    .nsections = 1,
    .run = tlrmvm_run,
    .rank_layout = WF_RANKS_ROWS,
};
