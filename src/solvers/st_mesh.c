#include "st_mesh.h"

#include <stdlib.h>
#include <string.h>

/* Columns held by ranks at rank coordinate `c` along an axis of `n` cells,
 * `pes` PEs and `parts` ranks: the union of their PEs' bricks. */
void st_rank_columns(int n, int pes, int parts, int c, int *lo, int *count) {
  int pe_lo, pe_n, cell_lo, cell_n, end_lo, end_n;
  wf_block_range(pes, parts, c, &pe_lo, &pe_n);
  wf_block_range(n, pes, pe_lo, &cell_lo, &cell_n);
  wf_block_range(n, pes, pe_lo + pe_n - 1, &end_lo, &end_n);
  *lo = cell_lo;
  *count = end_lo + end_n - cell_lo;
}

static int thinnest(int n, int pes, int parts) {
  int best = n, lo, cnt;
  for (int c = 0; c < parts; c++) {
    st_rank_columns(n, pes, parts, c, &lo, &cnt);
    if (cnt < best) best = cnt;
  }
  return best;
}

int st_mesh_create(st_mesh *m, const wf_wafer *w, int nx, int ny, int nz, wf_status *st) {
  const wf_decomp *dc = &w->dc;
  memset(m, 0, sizeof *m);
  if (nx < 1 || ny < 1 || nz < 1)
    return wf_fail(st, WF_ERR_INPUT, "mesh %dx%dx%d: every size must be at least 1", nx, ny, nz);
  if (nx < dc->pe_nx || ny < dc->pe_ny)
    return wf_fail(st, WF_ERR_INPUT,
                   "mesh %dx%dx%d is smaller than the %dx%d PE grid in x or y: every PE needs at "
                   "least one column (use a smaller [wafer] pe_grid)",
                   nx, ny, nz, dc->pe_nx, dc->pe_ny);
  m->nx = nx;
  m->ny = ny;
  m->nz = nz;
  m->wafer = w;
  st_rank_columns(nx, dc->pe_nx, dc->px, dc->cx, &m->x0, &m->lnx);
  st_rank_columns(ny, dc->pe_ny, dc->py, dc->cy, &m->y0, &m->lny);
  m->min_lnx = thinnest(nx, dc->pe_nx, dc->px);
  m->min_lny = thinnest(ny, dc->pe_ny, dc->py);
  m->brick_x = (nx + dc->pe_nx - 1) / dc->pe_nx;
  m->brick_y = (ny + dc->pe_ny - 1) / dc->pe_ny;
  m->ld = (size_t)m->lnx + 2;
  m->n_owned = (size_t)m->lnx * m->lny * nz;
  m->n_stored = m->ld * (size_t)(m->lny + 2) * nz;
  m->n_global = (long long)nx * ny * nz;
  return WF_OK;
}

void *st_field_alloc_bytes(const st_mesh *m, size_t elem_bytes) {
  size_t bytes = (m->n_stored * elem_bytes + 63) / 64 * 64;
  void *f = aligned_alloc(64, bytes);
  if (f) memset(f, 0, bytes);
  return f;
}

double *st_field_alloc(const st_mesh *m) { return st_field_alloc_bytes(m, sizeof(double)); }
