/* The 7-point operator on the mesh, Dirichlet (neighbour = 0) or periodic
 * per axis; x's halo is exchanged through the fabric. Two kinds:
 *  - the Laplacian scaled by h^2, matrix-free: (A x)_c = 6 x_c - sum of the
 *    six neighbours;
 *  - a general 7-diagonal operator with its coefficients stored per cell, as
 *    MFIX's systems are: (A x)_c = aP x_c - aW x_W - aE x_E - aS x_S - aN x_N
 *    - aB x_B - aT x_T, built from a variable diffusion coefficient (harmonic
 *    means on the faces) plus an optional upwind convection in x, which makes
 *    it non-symmetric. */
#ifndef ST_OP_H
#define ST_OP_H

#include <stdbool.h>

#include "st_mesh.h"
#include "wf_halo.h"
#include "wf_range.h"

/* Coefficient arrays of the general operator, in the mesh's field layout. */
enum { ST_P, ST_W, ST_E, ST_S, ST_N, ST_B, ST_T, ST_NCOEF };

/* The variable diffusion coefficient: "smooth" (a product of sines) or
 * "random" (seeded per cell), between 1 and `contrast` (1: the constant
 * coefficient of the Laplacian, stored); the same on any rank count. A
 * non-periodic axis is Dirichlet (the ghost cell is zero) unless `neumann`
 * (no flux through the face: a pressure's walls). */
typedef struct st_coef_spec {
  const char *kind;
  double contrast, convection;
  long seed;
  bool neumann[3];
} st_coef_spec;

typedef struct st_op {
  const st_mesh *m;
  bool periodic[3];
  double diag;              /* the Laplacian's diagonal (6) */
  double *coef[ST_NCOEF];   /* general operator; all NULL for the Laplacian */
  wf_halo halo; /* one column of nz doubles per item, width 1, no corners */
  /* The definition it was built from (the general operator's), for a
   * reference to build its own matrix from (st_petsc.c). */
  bool general;
  st_coef_spec spec;
} st_op;

/* The diffusion coefficient of global cell g (the problem's input field),
 * in [1, contrast]. */
double st_kappa(const st_mesh *m, const st_coef_spec *spec, const int g[3]);

/* `spec` NULL: the Laplacian. */
int st_op_create(st_op *op, const st_mesh *m, wf_fabric *fab, const bool periodic[3],
                 const st_coef_spec *spec, wf_status *st);
/* Diagonal of A at a stored index (for Jacobi). */
static inline double st_op_diag(const st_op *op, size_t c) {
  return op->coef[ST_P] ? op->coef[ST_P][c] : op->diag;
}
void st_op_free(st_op *op);

/* Modelled wafer cycles of one halo exchange of the mesh, [fast, slow] (docs/model.md). */
wf_range st_op_halo_cycles(const st_mesh *m, const wf_hw *hw, const wf_grid *g);

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

/* The general operator on owned column (i, j). */
static inline void st_op_column_coef(const st_op *op, const double *x, int i, int j,
                                     double *restrict out) {
  const st_mesh *m = op->m;
  const st_cols q = st_columns(m, x, i, j);
  const int nz = m->nz;
  const size_t c = st_idx(m, i, j, 0);
  const double *restrict aP = op->coef[ST_P] + c, *restrict aW = op->coef[ST_W] + c,
                         *restrict aE = op->coef[ST_E] + c, *restrict aS = op->coef[ST_S] + c,
                         *restrict aN = op->coef[ST_N] + c, *restrict aB = op->coef[ST_B] + c,
                         *restrict aT = op->coef[ST_T] + c;
  const bool pz = op->periodic[2];
  for (int k = 0; k < nz; k++) {
    double below = k > 0 ? q.c[k - 1] : pz ? q.c[nz - 1] : 0.0;
    double above = k < nz - 1 ? q.c[k + 1] : pz ? q.c[0] : 0.0;
    out[k] = aP[k] * q.c[k] - aW[k] * q.w[k] - aE[k] * q.e[k] - aS[k] * q.s[k] -
             aN[k] * q.n[k] - aB[k] * below - aT[k] * above;
  }
}

/* (A x) of owned column (i, j) into out[0..nz); x's halo must be current. */
static inline void st_op_column(const st_op *op, const double *x, int i, int j,
                                double *restrict out) {
  if (op->coef[ST_P]) {
    st_op_column_coef(op, x, i, j, out);
    return;
  }
  const st_cols q = st_columns(op->m, x, i, j);
  const int nz = op->m->nz;
  const double d = op->diag;
  for (int k = 1; k < nz - 1; k++) out[k] = st_stencil_inner(q, d, k);
  for (int k = 0; k < nz; k += st_end_step(op->m)) out[k] = st_stencil_end(op, q, k);
}

#endif
