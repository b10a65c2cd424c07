/* Ranks own rectangular blocks of PEs.
 *
 * The rank grid px x py is a 2D Cartesian communicator; rank (cx, cy) owns
 * PE columns [x0, x0+nx) and rows [y0, y0+ny). Block sizes along an axis
 * differ by at most one (the first n % parts blocks get one more). */
#ifndef WF_DECOMP_H
#define WF_DECOMP_H

#include <mpi.h>
#include <stdbool.h>

#include "wf_error.h"

/* Directions of the eight neighbours, faces first. */
enum { WF_E, WF_W, WF_N, WF_S, WF_NE, WF_NW, WF_SE, WF_SW, WF_NDIRS };
extern const int wf_dir_dx[WF_NDIRS], wf_dir_dy[WF_NDIRS];
int wf_dir_opposite(int dir);

typedef struct wf_decomp {
  MPI_Comm comm;          /* Cartesian; rank r has coords (r / py, r % py) */
  int rank, nranks;
  int px, py;             /* rank grid */
  int cx, cy;             /* this rank's coords */
  int pe_nx, pe_ny;       /* global logical PE grid */
  int x0, nx, y0, ny;     /* this rank's PE block */
} wf_decomp;

/* Pure block arithmetic, usable without MPI. */
void wf_block_range(int n, int parts, int idx, int *lo, int *count);
int wf_block_owner(int n, int parts, int i);
/* The rank grid for `nranks` on an nx x ny PE grid: the factorisation with
 * the shortest block perimeter (ties: more ranks along the longer axis).
 * Returns -1 if no px*py = nranks has px <= nx and py <= ny. */
int wf_rank_grid_auto(int nranks, int nx, int ny, int *px, int *py);

/* px = py = 0 picks the rank grid automatically. Collective. */
int wf_decomp_create(wf_decomp *dc, MPI_Comm comm, int pe_nx, int pe_ny, int px, int py,
                     wf_status *st);
void wf_decomp_free(wf_decomp *dc);

int wf_decomp_rank_of(const wf_decomp *dc, int cx, int cy);
int wf_decomp_owner(const wf_decomp *dc, int i, int j); /* rank owning PE (i, j) */
/* Rank in direction `dir`, MPI_PROC_NULL off a non-periodic edge. */
int wf_decomp_neighbor(const wf_decomp *dc, int dir, bool periodic_x, bool periodic_y);

#endif
