#include "st_op.h"

#include "wf_model.h"

int st_op_create(st_op *op, const st_mesh *m, wf_fabric *fab, const bool periodic[3],
                 wf_status *st) {
  op->m = m;
  op->diag = 6.0;
  for (int d = 0; d < 3; d++) op->periodic[d] = periodic[d];
  wf_halo_shape cols = {m->lnx, m->lny, m->min_lnx, m->min_lny, "columns"};
  if (wf_halo_create_shape(&op->halo, fab, &cols, (size_t)m->nz * sizeof(double), 1, false,
                           periodic[0], periodic[1], st) != WF_OK)
    return st->code;
  op->halo.model_cycles = st_op_halo_cycles(m, fab->hw, fab->grid);
  return WF_OK;
}

/* On the wafer a PE sends its brick's faces: brick_y columns across an x
 * link, brick_x across a y link, nz values each (fp32: one word per value),
 * all links at once. */
double st_op_halo_cycles(const st_mesh *m, const wf_hw *hw, const wf_grid *g) {
  double words = (double)(m->brick_x > m->brick_y ? m->brick_x : m->brick_y) * m->nz;
  return words / (hw->link_bytes_per_cycle / 4.0) + g->max_link_hops * hw->hop_cycles;
}

void st_op_free(st_op *op) { wf_halo_free(&op->halo); }

static void apply_rows(const st_op *op, const double *x, double *y, int j0, int j1, int i0,
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
