/* The logical PE grid and its defect map.
 *
 * Physically the wafer has `phys_nx = nx + spare_columns` PEs per row. A
 * defect map lists dead physical PEs; each logical row j is laid on the
 * functional PEs of physical row j, left to right, skipping the dead ones.
 * A logical link then spans more than one physical hop where it steps over a
 * dead PE: the cost model pays for those detours, the data never sees them. */
#ifndef WF_GRID_H
#define WF_GRID_H

#include "wf_error.h"

typedef struct wf_grid {
  int nx, ny;            /* logical PE grid */
  int phys_nx;           /* physical PEs per row */
  int ndead;
  int *phys_x;           /* [j*nx + i]: physical column of logical PE (i, j); NULL: no defects */
  int max_link_hops;     /* longest physical route of one logical neighbour link */
  long long extra_hops;  /* sum over logical links of (physical hops - 1) */
} wf_grid;

/* The largest side a grid (of PEs or ranks) may have: far beyond any wafer,
 * small enough that PE counts and indices never overflow. */
#define WF_GRID_MAX_SIDE 1048576

/* Parse "NXxNY" (e.g. "750x994", blanks allowed around 'x'), each side in
 * [1, WF_GRID_MAX_SIDE]; 0 on success. */
int wf_grid_parse_size(const char *text, int *nx, int *ny);

/* `defects`: text of a defect map ("x y" per line, '#' comments) or NULL;
 * `name` is used in messages ("name:line: ..."). */
int wf_grid_create(wf_grid *g, int nx, int ny, int spare_columns, const char *defects,
                   const char *name, wf_status *st);
void wf_grid_free(wf_grid *g);

int wf_grid_phys_x(const wf_grid *g, int i, int j);
/* Physical hops of the link from logical (i, j) to (i+1, j) (east = 1) or to
 * (i, j+1) (east = 0). */
int wf_grid_link_hops(const wf_grid *g, int i, int j, int east);

#endif
