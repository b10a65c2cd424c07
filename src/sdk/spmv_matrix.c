/* The SpMV example's matrices (spmv.h): a user's Matrix Market file, an
 * R-MAT graph, or a Laplacian. */
#include <stdlib.h>

#include "sdk_mtx.h"
#include "spmv.h"
#include "wf_random.h"
#include "wf_signal.h"

int sp_matrix_size(sp_case *c, wf_status *st) {
  c->symmetric = false;
  if (c->source == SP_FILE) {
    sdk_mtx_info info;
    if (sdk_mtx_head(c->matrix, "spmv.matrix", &info, st) != WF_OK) return st->code;
    c->m = info.rows, c->n = info.cols, c->stored = info.entries, c->symmetric = info.symmetric;
  } else if (c->source == SP_RMAT) {
    c->m = c->n = 1LL << c->scale;
    c->stored = c->m * c->edge_factor;
  } else {
    long long s = c->side, points = c->source == SP_LAPLACE2D ? s * s : s * s * s;
    c->m = c->n = points;
    c->stored = points * (c->source == SP_LAPLACE2D ? 5 : 7);
  }
  return WF_OK;
}

double sp_x(const sp_case *c, long long j) {
  return 2 * wf_uniform(c->seed * 4 + 3, (uint64_t)j) - 1;
}

double sp_weight(const sp_case *c, long long i) {
  return 2 * wf_uniform(c->seed * 4 + 4, (uint64_t)i) - 1;
}

/* R-MAT: each edge descends `scale` levels, choosing a quadrant with
 * probabilities a, b, c, d by a uniform draw from the edge's counter. */
static int each_rmat(const sp_case *c, sp_entry_fn fn, void *ctx, wf_status *st) {
  const double a = 0.57, b = 0.19, cq = 0.19;
  for (long long e = 0; e < c->stored; e++) {
    int sig = (e & 0xffff) == 0 ? wf_signal_stop() : 0;
    if (sig) return wf_signal_fail(st, sig, "while making the matrix");
    long long r = 0, col = 0;
    for (int level = 0; level < c->scale; level++) {
      double u = wf_uniform(c->seed * 4 + 1, (uint64_t)(e * 64 + level));
      int down = u >= a + b, right = (u >= a && u < a + b) || u >= a + b + cq;
      r = 2 * r + down, col = 2 * col + right;
    }
    fn(ctx, r, col, 2 * wf_uniform(c->seed * 4 + 2, (uint64_t)e) - 1);
  }
  return WF_OK;
}

/* The Laplacian of a side^d grid with zero boundaries: 2d on the diagonal,
 * -1 for each neighbour. */
static int each_laplace(const sp_case *c, sp_entry_fn fn, void *ctx, wf_status *st) {
  long long s = c->side;
  int dims = c->source == SP_LAPLACE2D ? 2 : 3;
  long long stride[3] = {1, s, s * s};
  for (long long p = 0; p < c->m; p++) {
    int sig = (p & 0xffff) == 0 ? wf_signal_stop() : 0;
    if (sig) return wf_signal_fail(st, sig, "while making the matrix");
    fn(ctx, p, p, 2.0 * dims);
    for (int d = 0; d < dims; d++) {
      long long at = p / stride[d] % s;
      if (at > 0) fn(ctx, p, p - stride[d], -1.0);
      if (at + 1 < s) fn(ctx, p, p + stride[d], -1.0);
    }
  }
  return WF_OK;
}

/* A file's entries, each mirrored when the storage is symmetric. */
typedef struct file_ctx {
  const sp_case *c;
  sp_entry_fn fn;
  void *ctx;
} file_ctx;

static int file_size(void *ctx, const sdk_mtx_info *info, wf_status *st) {
  const file_ctx *f = ctx;
  if (info->rows != f->c->m || info->cols != f->c->n || info->entries != f->c->stored)
    return wf_fail(st, WF_ERR_INPUT, "spmv.matrix = %s: changed while it was read",
                   f->c->matrix);
  return WF_OK;
}

static int file_entry(void *ctx, long long r, long long c, double v, wf_status *st) {
  const file_ctx *f = ctx;
  f->fn(f->ctx, r, c, v);
  if (f->c->symmetric && r != c) f->fn(f->ctx, c, r, v);
  (void)st;
  return WF_OK;
}

int sp_matrix_each(const sp_case *c, sp_entry_fn fn, void *ctx, wf_status *st) {
  if (c->source == SP_RMAT) return each_rmat(c, fn, ctx, st);
  if (c->source != SP_FILE) return each_laplace(c, fn, ctx, st);
  file_ctx f = {c, fn, ctx};
  sdk_mtx_sink sink = {file_size, file_entry, &f};
  return sdk_mtx_read(c->matrix, "spmv.matrix", &sink, st);
}
