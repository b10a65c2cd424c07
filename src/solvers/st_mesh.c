/* The 3D mesh on the PE grid (st_mesh.h): each rank's block of columns and its halo, padded
 * columns, field allocation, a halo exchange for its fields, and writing a field to HDF5. */
#include "st_mesh.h"

#include <stdlib.h>
#include <string.h>

#include "wf_h5.h"
#include "wf_memory.h"

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
  return st_mesh_create_halo(m, w, nx, ny, nz, 1, st);
}

int st_mesh_create_halo(st_mesh *m, const wf_wafer *w, int nx, int ny, int nz, int halo,
                        wf_status *st) {
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
  m->halo = halo;
  m->ld = (size_t)m->lnx + 2 * (size_t)halo;
  m->n_owned = (size_t)m->lnx * m->lny * nz;
  m->zs = (size_t)nz;
  m->n_stored = m->ld * (size_t)(m->lny + 2 * halo) * m->zs;
  m->n_global = (long long)nx * ny * nz;
  return WF_OK;
}

void st_mesh_pad_columns(st_mesh *m, int ghosts) {
  const size_t line = 64 / sizeof(double);
  m->zh = ((size_t)ghosts + line - 1) / line * line;
  size_t cells = ((size_t)m->nz + line - 1) / line * line; /* whole lines of cells */
  size_t lines = (m->zh + cells + (size_t)ghosts + line - 1) / line;
  m->zs = (lines | 1) * line;
  m->n_stored = m->ld * (size_t)(m->lny + 2 * m->halo) * m->zs;
}

int st_mesh_halo_create(wf_halo *h, wf_fabric *fab, const st_mesh *m, size_t value_bytes,
                        int width, bool corners, bool periodic_x, bool periodic_y, wf_status *st) {
  wf_halo_shape cols = {.nx = m->lnx,
                        .ny = m->lny,
                        .min_nx = m->min_lnx,
                        .min_ny = m->min_lny,
                        .unit = "columns",
                        .elem_offset = m->zh * value_bytes,
                        .elem_payload = (size_t)m->nz * value_bytes};
  return wf_halo_create_shape(h, fab, &cols, m->zs * value_bytes, width, corners, periodic_x,
                              periodic_y, st);
}

void *st_field_alloc_bytes(const st_mesh *m, size_t elem_bytes) {
  size_t bytes = (m->n_stored * elem_bytes + 63) / 64 * 64;
  /* Huge pages: a stencil reads 9 rows of columns a mesh row apart. */
  void *f = bytes >= ((size_t)2 << 20) ? wf_alloc_large(bytes) : aligned_alloc(64, bytes);
  if (f) memset(f, 0, bytes);
  return f;
}

double *st_field_alloc(const st_mesh *m) { return st_field_alloc_bytes(m, sizeof(double)); }

int st_mesh_write_field(wf_h5file *f, const st_mesh *m, const char *name, const double *field,
                        wf_status *st) {
  double *v = malloc(m->n_owned * sizeof *v);
  int failed = !v;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, f->comm);
  if (failed) {
    free(v);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory writing '%s'", name);
  }
  for (int k = 0; k < m->nz; k++)
    for (int j = 0; j < m->lny; j++)
      for (int i = 0; i < m->lnx; i++)
        v[((size_t)k * m->lny + j) * m->lnx + i] = field[st_idx(m, i, j, k)];
  unsigned long long g[3] = {(unsigned long long)m->nz, (unsigned long long)m->ny,
                             (unsigned long long)m->nx};
  unsigned long long off[3] = {0, (unsigned long long)m->y0, (unsigned long long)m->x0};
  unsigned long long cnt[3] = {(unsigned long long)m->nz, (unsigned long long)m->lny,
                               (unsigned long long)m->lnx};
  wf_h5_block b = {.ndim = 3, .global = g, .offset = off, .count = cnt};
  int rc = wf_h5_write(f, name, WF_F64, &b, v, true, st);
  free(v);
  return rc;
}
