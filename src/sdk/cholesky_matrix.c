/* The Cholesky example's matrix (cholesky.h): generated with a chosen
 * condition, or a user's Matrix Market file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cholesky.h"
#include "sdk_mtx.h"
#include "wf_deck.h"
#include "wf_signal.h"

static void unit(double *x, long long n) {
  double norm = 0;
  for (long long i = 0; i < n; i++) norm += x[i] * x[i];
  norm = sqrt(norm);
  for (long long i = 0; i < n; i++) x[i] /= norm;
}

static double dot(const double *x, const double *y, long long n) {
  double s = 0;
  for (long long i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

bool ch_spd_create(ch_spd *a, long long n, double cond, uint64_t seed) {
  *a = (ch_spd){.n = n};
  double **vec[5] = {&a->d, &a->u, &a->v, &a->dv, &a->mu};
  for (int k = 0; k < 5; k++)
    if (!(*vec[k] = malloc((size_t)n * sizeof(double)))) return ch_spd_free(a), false;
  for (long long i = 0; i < n; i++) {
    a->d[i] = n > 1 ? pow(cond, -(double)i / (double)(n - 1)) : 1.0;
    a->u[i] = 2 * wf_uniform(seed * 4 + 1, (uint64_t)i) - 1;
    a->v[i] = 2 * wf_uniform(seed * 4 + 2, (uint64_t)i) - 1;
  }
  unit(a->u, n), unit(a->v, n);
  for (long long i = 0; i < n; i++) a->dv[i] = a->d[i] * a->v[i];
  a->s = dot(a->v, a->dv, n);
  /* M u = D u - 2 v (Dv . u) - 2 Dv (v . u) + 4 s (v . u) v */
  double dvu = dot(a->dv, a->u, n), vu = dot(a->v, a->u, n);
  for (long long i = 0; i < n; i++)
    a->mu[i] = a->d[i] * a->u[i] - 2 * a->v[i] * dvu - 2 * a->dv[i] * vu + 4 * a->s * vu * a->v[i];
  a->t = dot(a->u, a->mu, n);
  return true;
}

void ch_spd_free(ch_spd *a) {
  free(a->d), free(a->u), free(a->v), free(a->dv), free(a->mu);
  a->d = a->u = a->v = a->dv = a->mu = NULL;
}

double ch_spd_entry(const ch_spd *a, long long i, long long j) {
  /* M = D - 2 v (Dv)' - 2 Dv v' + 4 s v v', A = M - 2 u (Mu)' - 2 Mu u' + 4 t u u' */
  double m = (i == j ? a->d[i] : 0) - 2 * a->v[i] * a->dv[j] - 2 * a->dv[i] * a->v[j] +
             4 * a->s * a->v[i] * a->v[j];
  return m - 2 * a->u[i] * a->mu[j] - 2 * a->mu[i] * a->u[j] + 4 * a->t * a->u[i] * a->u[j];
}

int ch_matrix_size(ch_case *c, wf_status *st) {
  if (!c->matrix[0]) return WF_OK;
  sdk_mtx_info info;
  if (sdk_mtx_head(c->matrix, "cholesky.matrix", &info, st) != WF_OK) return st->code;
  if (info.rows != info.cols)
    return wf_fail(st, WF_ERR_INPUT, "cholesky.matrix = %s: %lld x %lld: Cholesky needs a square "
                   "matrix", c->matrix, info.rows, info.cols);
  if (!info.symmetric)
    return wf_fail(st, WF_ERR_INPUT, "cholesky.matrix = %s: stored as general: Cholesky takes a "
                   "symmetric matrix in symmetric storage (the banner's last word \"symmetric\", "
                   "one triangle stored)", c->matrix);
  c->n = info.rows;
  return WF_OK;
}

/* The file's entries into the block: each stored entry of either triangle
 * to its place in the lower one; repeated entries add up (as scipy reads
 * them). */
typedef struct fill_ctx {
  const ch_case *c;
  ch_block *b;
} fill_ctx;

static int fill_size(void *ctx, const sdk_mtx_info *info, wf_status *st) {
  const fill_ctx *f = ctx;
  if (info->rows != f->c->n) /* the file changed since its head was read */
    return wf_fail(st, WF_ERR_INPUT, "cholesky.matrix = %s: changed while it was read",
                   f->c->matrix);
  return WF_OK;
}

static int fill_entry(void *ctx, long long r, long long c, double v, wf_status *st) {
  fill_ctx *f = ctx;
  ch_block *b = f->b;
  if (r < c) {
    long long t = r;
    r = c, c = t;
  }
  if (r >= b->rows.lo && r < b->rows.hi && c >= b->cols.lo && c < b->cols.hi)
    b->a[(r - b->rows.lo) * b->nc + (c - b->cols.lo)] += v;
  (void)st;
  return WF_OK;
}

/* The generated lower triangle; stops at a signal (sdk_filled reports it).
 * False when out of memory. */
static bool fill_generated(const ch_case *c, ch_block *b) {
  ch_spd spd;
  if (!ch_spd_create(&spd, c->n, c->cond, c->seed)) return false;
  for (long long i = b->rows.lo; i < b->rows.hi && !wf_signal_stop(); i++)
    for (long long j = b->cols.lo; j < b->cols.hi && j <= i; j++)
      b->a[(i - b->rows.lo) * b->nc + (j - b->cols.lo)] = ch_spd_entry(&spd, i, j);
  ch_spd_free(&spd);
  return true;
}

int ch_matrix_fill(const wf_run *run, ch_case *c, ch_block *b, wf_status *st) {
  memset(b->a, 0, (size_t)(b->nr * b->nc) * sizeof *b->a);
  wf_status_clear(st);
  if (c->matrix[0]) {
    fill_ctx f = {c, b};
    sdk_mtx_sink sink = {fill_size, fill_entry, &f};
    sdk_mtx_read(c->matrix, "cholesky.matrix", &sink, st);
  } else if (!fill_generated(c, b)) {
    wf_fail(st, WF_ERR_RUNTIME, "out of memory for the matrix's generating vectors");
  }
  return sdk_filled(run, "while making the matrix", st);
}
