/* The seismic operator of a survey: frequency-domain Green's functions
 * between a grid of sources and a grid of receivers in a homogeneous medium,
 *
 *   A(r, s) = exp(-i k d) / (4 pi d),  k = 2 pi f / v,  d = |x_r - x_s|,
 *
 * one M x N matrix per frequency (M receivers, rows; N sources, columns).
 * Sources and receivers are numbered along a Hilbert curve over their grid:
 * neighbours in the matrix are then neighbours in space, so the matrix's
 * tiles are numerically low rank (row by row, far points share tiles and
 * the ranks grow several times; docs/tlrmvm.md). */
#ifndef TL_SURVEY_H
#define TL_SURVEY_H

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

#include "wf_error.h"

/* A rectangular grid of points at one depth. */
typedef struct tl_grid {
  int nx, ny;       /* points */
  double dx, dy;    /* spacing, m */
  double x0, y0, z; /* first point and depth, m */
} tl_grid;

typedef struct tl_survey {
  tl_grid src, rec;
  double velocity; /* m/s */
  bool hilbert;    /* number the points along a Hilbert curve (else row by row) */
  /* Filled by tl_survey_init: the points in matrix order, x, y, z each. */
  double *src_xyz, *rec_xyz;
} tl_survey;

/* Number the points (allocates the coordinates). */
int tl_survey_init(tl_survey *s, wf_status *st);
void tl_survey_free(tl_survey *s);
static inline int tl_survey_rows(const tl_survey *s) { return s->rec.nx * s->rec.ny; }
static inline int tl_survey_cols(const tl_survey *s) { return s->src.nx * s->src.ny; }

/* The position of grid point (x, y) along the Hilbert curve filling the
 * n x n square (n a power of two): 0 .. n^2 - 1, neighbours on the curve
 * adjacent in the grid. */
uint64_t tl_hilbert_index(uint32_t n, uint32_t x, uint32_t y);
/* The points of an nx x ny grid (index y * nx + x) in Hilbert order:
 * order[k] is the k-th point along the curve. */
int tl_hilbert_order(int nx, int ny, int *order, wf_status *st);

/* Rows [r0, r0 + nr) and columns [c0, c0 + nc) of the operator at
 * frequency `hz`, column-major with leading dimension `ld`. */
void tl_survey_block(const tl_survey *s, double hz, int r0, int nr, int c0, int nc,
                     float complex *a, int ld);

#endif
