/* The 7-point operator on the mesh (st_op.h): the matrix-free Laplacian, or a stored
 * 7-diagonal operator built from a variable diffusion coefficient and upwind convection;
 * applying it, halo exchange included. */
#include "st_op.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wf_model.h"
#include "wf_random.h"
#include "wf_config.h" /* WF_HOT */


double st_kappa(const st_mesh *m, const st_coef_spec *spec, const int g[3]) {
  double u;
  if (strcmp(spec->kind, "random") == 0) {
    long long cell = ((long long)g[1] * m->nx + g[0]) * m->nz + g[2];
    u = wf_uniform((uint64_t)spec->seed ^ 0x6b61707061ull, (uint64_t)cell); /* "kappa" stream */
  } else {
    u = 0.5 * (1 + sin(2 * ST_PI * (g[0] + 0.5) / m->nx) * sin(2 * ST_PI * (g[1] + 0.5) / m->ny) *
                       sin(2 * ST_PI * (g[2] + 0.5) / m->nz));
  }
  return pow(spec->contrast, u);
}

/* Face coefficients (harmonic mean of the two cells' kappa; at a Dirichlet
 * boundary the ghost cell has the cell's kappa, at a Neumann one the face
 * carries nothing), then the upwind convection
 * u (x_c - x_W), which makes the operator non-symmetric. */
static void build_coefficients(st_op *op, const st_coef_spec *spec) {
  const st_mesh *m = op->m;
  const int n[3] = {m->nx, m->ny, m->nz};
  static const int dirs[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
  for (int j = 0; j < m->lny; j++)
    for (int i = 0; i < m->lnx; i++)
      for (int k = 0; k < m->nz; k++) {
        const int g[3] = {m->x0 + i, m->y0 + j, k};
        const size_t c = st_idx(m, i, j, k);
        const double kc = st_kappa(m, spec, g);
        double diag = 0;
        for (int d = 0; d < 6; d++) {
          int h[3] = {g[0] + dirs[d][0], g[1] + dirs[d][1], g[2] + dirs[d][2]};
          bool inside = true;
          for (int a = 0; a < 3; a++) {
            if (h[a] >= 0 && h[a] < n[a]) continue;
            if (op->periodic[a]) h[a] = (h[a] + n[a]) % n[a];
            else inside = false;
          }
          double kn = inside ? st_kappa(m, spec, h) : kc;
          double face = inside || !spec->neumann[d / 2] ? 2 * kc * kn / (kc + kn) : 0.0;
          op->coef[ST_W + d][c] = face;
          diag += face;
        }
        op->coef[ST_W][c] += spec->convection;
        op->coef[ST_P][c] = diag + spec->convection;
      }
}

int st_op_create(st_op *op, const st_mesh *m, wf_fabric *fab, const bool periodic[3],
                 const st_coef_spec *spec, wf_status *st) {
  memset(op, 0, sizeof *op);
  op->m = m;
  op->diag = 6.0;
  for (int d = 0; d < 3; d++) op->periodic[d] = periodic[d];
  if (spec) {
    op->general = true, op->spec = *spec;
    for (int a = 0; a < ST_NCOEF; a++)
      if (!(op->coef[a] = st_field_alloc(m))) {
        st_op_free(op);
        return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the operator's coefficients");
      }
    build_coefficients(op, spec);
  }
  if (st_mesh_halo_create(&op->halo, fab, m, sizeof(double), 1, false, periodic[0], periodic[1],
                          st) != WF_OK)
    return st->code;
  op->halo.model_cycles = st_op_halo_cycles(m, fab->hw, fab->grid).lo; /* the run's count */
  return WF_OK;
}

/* On the wafer a PE sends its brick's faces, one column deep: brick_y
 * columns across an x link, brick_x across a y link, nz fp32 values each. */
wf_range st_op_halo_cycles(const st_mesh *m, const wf_hw *hw, const wf_grid *g) {
  return wf_model_brick_halo_cycles(hw, g, m->brick_x, m->brick_y, m->nz, 1, 4);
}

void st_op_free(st_op *op) {
  wf_halo_free(&op->halo);
  for (int a = 0; a < ST_NCOEF; a++) {
    free(op->coef[a]);
    op->coef[a] = NULL;
  }
}

WF_HOT static void apply_rows(const st_op *op, const double *x, double *y, int j0, int j1, int i0,
                       int i1) {
  for (int j = j0; j < j1; j++)
    for (int i = i0; i < i1; i++) st_op_column(op, x, i, j, y + st_idx(op->m, i, j, 0));
}

void st_op_apply(st_op *op, double *x, double *y) {
  const st_mesh *m = op->m;
  wf_halo_begin(&op->halo, x);
  /* Interior columns need no halo. */
  apply_rows(op, x, y, 1, m->lny - 1, 1, m->lnx - 1);
  wf_halo_end(&op->halo, x);
  /* The ring of columns next to the rank's edge. */
  apply_rows(op, x, y, 0, 1, 0, m->lnx);
  if (m->lny > 1) apply_rows(op, x, y, m->lny - 1, m->lny, 0, m->lnx);
  apply_rows(op, x, y, 1, m->lny - 1, 0, 1);
  if (m->lnx > 1) apply_rows(op, x, y, 1, m->lny - 1, m->lnx - 1, m->lnx);
}
