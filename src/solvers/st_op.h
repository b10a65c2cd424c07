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

/* y = A x on the owned cells. Exchanges x's halo, computing the interior
 * columns while the messages fly. */
void st_op_apply(st_op *op, double *x, double *y);

/* (A x) of owned column (i, j) into out[0..nz); x's halo must be current. */
static inline void st_op_column(const st_op *op, const double *x, int i, int j,
                                double *restrict out) {
  const st_mesh *m = op->m;
  const int nz = m->nz;
  const size_t row = m->ld * (size_t)nz;
  const double *restrict c = x + st_idx(m, i, j, 0);
  const double *restrict w = c - nz, *restrict e = c + nz;
  const double *restrict s = c - row, *restrict n = c + row;
  const double d = op->diag;
  for (int k = 1; k < nz - 1; k++)
    out[k] = d * c[k] - (c[k - 1] + c[k + 1]) - (w[k] + e[k]) - (s[k] + n[k]);
  /* The ends of the column: a wrap when z is periodic, zero when not. */
  const bool pz = op->periodic[2];
  for (int k = 0; k < nz; k += (nz > 1 ? nz - 1 : 1)) {
    double below = k > 0 ? c[k - 1] : pz ? c[nz - 1] : 0.0;
    double above = k < nz - 1 ? c[k + 1] : pz ? c[0] : 0.0;
    out[k] = d * c[k] - (below + above) - (w[k] + e[k]) - (s[k] + n[k]);
  }
}

#endif
