/* The 7-point operator on the mesh, matrix-free: (A x)_c = 6 x_c - sum of the
 * six neighbours (the Laplacian scaled by h^2), Dirichlet (neighbour = 0) or
 * periodic per axis. x's halo is exchanged through the fabric. */
#ifndef ST_OP_H
#define ST_OP_H

#include <stdbool.h>

#include "st_mesh.h"
#include "wf_halo.h"

typedef struct st_op {
  const st_mesh *m;
  bool periodic[3];
  double diag;
  wf_halo halo; /* one column of nz doubles per item, width 1, no corners */
} st_op;

int st_op_create(st_op *op, const st_mesh *m, wf_fabric *fab, const bool periodic[3],
                 wf_status *st);
void st_op_free(st_op *op);

/* Modelled wafer cycles of one halo exchange of the mesh (docs/model.md). */
double st_op_halo_cycles(const st_mesh *m, const wf_hw *hw, const wf_grid *g);

/* y = A x on the owned cells. Exchanges x's halo, computing the interior
 * columns while the messages fly. */
void st_op_apply(st_op *op, double *x, double *y);

/* The five neighbouring columns of owned column (i, j) of a field. */
typedef struct st_cols {
  const double *restrict c, *restrict w, *restrict e, *restrict s, *restrict n;
} st_cols;

static inline st_cols st_columns(const st_mesh *m, const double *x, int i, int j) {
  const double *c = x + st_idx(m, i, j, 0);
  const size_t row = m->ld * (size_t)m->nz;
  return (st_cols){c, c - m->nz, c + m->nz, c - row, c + row};
}

/* (A x) at cell k of a column, 0 < k < nz - 1 (no z boundary). */
static inline double st_stencil_inner(st_cols q, double diag, int k) {
  return diag * q.c[k] - (q.c[k - 1] + q.c[k + 1]) - (q.w[k] + q.e[k]) - (q.s[k] + q.n[k]);
}

/* (A x) at cell k = 0 or nz - 1: z wraps when periodic, is zero when not. */
static inline double st_stencil_end(const st_op *op, st_cols q, int k) {
  const int nz = op->m->nz;
  const bool pz = op->periodic[2];
  double below = k > 0 ? q.c[k - 1] : pz ? q.c[nz - 1] : 0.0;
  double above = k < nz - 1 ? q.c[k + 1] : pz ? q.c[0] : 0.0;
  return op->diag * q.c[k] - (below + above) - (q.w[k] + q.e[k]) - (q.s[k] + q.n[k]);
}

/* The cells at the ends of a column: 0 and nz - 1 (just 0 when nz = 1). */
static inline int st_end_step(const st_mesh *m) { return m->nz > 1 ? m->nz - 1 : 1; }

/* (A x) of owned column (i, j) into out[0..nz); x's halo must be current. */
static inline void st_op_column(const st_op *op, const double *x, int i, int j,
                                double *restrict out) {
  const st_cols q = st_columns(op->m, x, i, j);
  const int nz = op->m->nz;
  const double d = op->diag;
  for (int k = 1; k < nz - 1; k++) out[k] = st_stencil_inner(q, d, k);
  for (int k = 0; k < nz; k += st_end_step(op->m)) out[k] = st_stencil_end(op, q, k);
}

#endif
