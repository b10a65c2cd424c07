/* A 3D mesh on the PE grid: (x, y) over the PEs, z in PE memory.
 *
 * PE (i, j) holds a brick of columns: the x cells wf_block_range(nx, pe_nx, i)
 * by the y cells wf_block_range(ny, pe_ny, j), each column nz cells long. A
 * rank holds its PEs' bricks as one block of lnx x lny columns, stored column
 * by column (z fastest), with a halo of `halo` columns on every side (one for
 * the 7-point stencil, four for the 25-point wave stencil):
 * st_idx(m, i, j, k) for -halo <= i < lnx + halo, likewise j, 0 <= k < nz.
 * Owned rows (fixed j, i = 0..lnx-1) are contiguous runs of lnx*nz values. */
#ifndef ST_MESH_H
#define ST_MESH_H

#include <stddef.h>

#include "wf_error.h"
#include "wf_halo.h"
#include "wf_wafer.h"

static const double ST_PI = 3.14159265358979323846;

typedef struct st_mesh {
  int nx, ny, nz;       /* global cells */
  int x0, lnx, y0, lny; /* this rank's columns */
  int min_lnx, min_lny; /* thinnest rank block, in columns (same on every rank) */
  int brick_x, brick_y; /* largest PE brick, in columns */
  int halo;             /* halo columns on each side */
  size_t ld;            /* columns per stored row: lnx + 2 halo */
  size_t zs;            /* values per stored column: nz, or more once padded */
  size_t zh;            /* where cell k = 0 sits in its stored column: 0 unless padded */
  size_t n_owned;       /* lnx * lny * nz */
  size_t n_stored;      /* (lnx + 2 halo) * (lny + 2 halo) * zs */
  long long n_global;
  const wf_wafer *wafer;
} st_mesh;

static inline size_t st_idx(const st_mesh *m, int i, int j, int k) {
  return ((size_t)(j + m->halo) * m->ld + (size_t)(i + m->halo)) * m->zs + m->zh + (size_t)k;
}
/* First value of owned row j (a contiguous run of lnx * nz values, unless
 * the columns are padded). */
static inline size_t st_row(const st_mesh *m, int j) { return st_idx(m, 0, j, 0); }
static inline size_t st_row_len(const st_mesh *m) { return (size_t)m->lnx * (size_t)m->nz; }

/* Errors (input): non-positive sizes, a mesh smaller than the PE grid. One
 * halo column; _halo: `halo` columns. */
int st_mesh_create(st_mesh *m, const wf_wafer *w, int nx, int ny, int nz, wf_status *st);
int st_mesh_create_halo(st_mesh *m, const wf_wafer *w, int nx, int ny, int nz, int halo,
                        wf_status *st);
/* Gives every stored column room for `ghosts` cells past each end (cell k =
 * 0 on a 64-byte boundary; past the top end, past nz rounded up to whole
 * lines, so that a kernel can read and write whole 64-byte vectors of
 * cells) and pads it to an odd number of 64-byte cache lines; call before
 * allocating fields. Why the padding: a column of a power-of-two length
 * puts a cell's x and y neighbours multiples of 4 KiB apart, all in one or
 * two sets of the first-level cache, which a wide stencil then thrashes
 * (the 25-point wave stencil ran 3x slower at nz = 256 than at 260 on an
 * AMD EPYC). Whoever reads or writes such a mesh's fields goes by st_idx,
 * one column at a time. */
void st_mesh_pad_columns(st_mesh *m, int ghosts);

/* The halo of the mesh's fields (values of `value_bytes`), `width` columns
 * wide: a column is one element, of which only its nz values travel (a
 * padded column's ghosts and padding stay). */
int st_mesh_halo_create(wf_halo *h, wf_fabric *fab, const st_mesh *m, size_t value_bytes,
                        int width, bool corners, bool periodic_x, bool periodic_y, wf_status *st);

/* Columns [lo, lo + count) held by the ranks at coordinate c along an axis
 * of n cells over `pes` PEs and `parts` ranks: the union of their bricks. */
void st_rank_columns(int n, int pes, int parts, int c, int *lo, int *count);

struct wf_h5file;
/* Collective: the owned cells of a stored field as dataset `name`, shaped
 * [nz][ny][nx] (x fastest, so that ParaView shows x, y, z as its X, Y, Z),
 * listed in the file's XDMF sidecar. */
int st_mesh_write_field(struct wf_h5file *f, const st_mesh *m, const char *name,
                        const double *field, wf_status *st);

/* A zeroed, 64-byte aligned field of n_stored doubles (halo included), on
 * huge pages when 2 MiB or more; release with free(). */
double *st_field_alloc(const st_mesh *m);
/* The same for elements of `elem_bytes` (float fields). */
void *st_field_alloc_bytes(const st_mesh *m, size_t elem_bytes);

#endif
