/* `wafer cholesky`: the SDK's Cholesky example (csl-examples
 * benchmarks/cholesky) on the PE grid. What its files share. */
#ifndef CHOLESKY_H
#define CHOLESKY_H

#include <stdbool.h>
#include <stdint.h>

#include "sdk_grid.h"
#include "wf_decomp.h"
#include "wf_workload.h"

extern const wf_workload wf_cholesky_workload;

/* The generated matrix A = H_u H_v D H_v H_u: D's eigenvalues spaced
 * geometrically from 1 down to 1 / cond, turned by two Householder
 * reflections of random unit vectors u and v, so A is dense, symmetric,
 * positive definite with 2-norm condition `cond`, and any rank makes any
 * entry in O(1) from O(n) vectors (the way LAPACK's test matrices are
 * made, with two reflections instead of a random orthogonal matrix). */
typedef struct ch_spd {
  long long n;
  double *d, *u, *v, *dv, *mu; /* D, u, v, D v, M u with M = H_v D H_v */
  double s, t;                 /* v' D v, u' M u */
} ch_spd;

/* O(n) work and memory; false when out of memory. */
bool ch_spd_create(ch_spd *a, long long n, double cond, uint64_t seed);
void ch_spd_free(ch_spd *a);
/* Entry (i, j) of the lower triangle (i >= j; the upper mirrors it). */
double ch_spd_entry(const ch_spd *a, long long i, long long j);

/* The problem on the grid: an n x n matrix on P x P PEs, PE (x, y) with
 * x <= y holding the tile of rows band y and columns band x (sdk_grid.h). */
typedef struct ch_case {
  long long n;
  int P;
  const char *matrix; /* a user's Matrix Market file, or "" */
  double cond;
  uint64_t seed;
} ch_case;

/* This rank's block of the matrix: rows `rows`, columns `cols`, row-major
 * (the tiles of PEs above the diagonal are held but unused). */
typedef struct ch_block {
  sdk_span rows, cols;
  long long nr, nc;
  double *a; /* nr x nc */
} ch_block;

/* Fill this rank's block with the lower triangle of A (zeros above the
 * diagonal), from the generator or the user's file (which also sets
 * c->n); the file's errors name its line. Collective: every rank gets the
 * first failure. */
int ch_matrix_fill(const wf_run *run, ch_case *c, ch_block *b, wf_status *st);
/* A user's matrix's size (c->n) from its file's head, read by every rank
 * (nothing to do for a generated one). Fails on a file Cholesky cannot
 * take. */
int ch_matrix_size(ch_case *c, wf_status *st);

/* What a rank holds for the factorisation: its block, the block as made
 * (each timed factorisation starts from it; the check compares with it),
 * and the multicasts' lines. An element of a line is a header (the first
 * failed pivot's 1-based row, 0 for none) and a tile of at most mt x mt,
 * row-major with its band's width as leading dimension. */
typedef struct ch_rank {
  ch_block b;
  double *a0;            /* nr x nc */
  long long mt, esz;     /* the widest band; doubles an element */
  double *dline;         /* nx elements: the diagonal tile down its column */
  double *rline, *cline; /* ny elements along rows, nx down columns */
  double *panel;         /* nc x mt: the column tiles packed */
  int *root, *last;      /* a multicast's lines' roots and ends: max(nx, ny) each */
  long long failed;      /* the first failed pivot's row (1-based), 0 */
} ch_rank;

/* Tile column s's multicasts, from the tiles in the block (the panel L(y, s)
 * of each PE row y >= from): each PE (s, y) sends its tile east to the
 * diagonal (r->rline); each diagonal PE (x, x), x >= from, forwards its
 * row's tile L(x, s) south (r->cline) and the rank packs the tiles of its
 * columns into r->panel. Headers carry r->failed and update it.
 * Collective. */
int ch_panels(wf_run *run, const ch_case *c, ch_rank *r, int s, int from, wf_status *st);

/* After ch_panels(.., s, from, ..): out(y, x) += alpha L(y, s) L(x, s)' for
 * every tile (x, y) of this rank's PEs with from <= x <= y (out: nr x nc,
 * as the block). */
void ch_panel_update(const wf_decomp *dc, const ch_case *c, const ch_rank *r, int s, int from,
                     double alpha, double *out);

/* The checks (cholesky_check.c): `worst` the largest ratio of error to its
 * bound over the ranks. L L' = A: replaying the panels' products, every
 * entry within 2 gamma_(n+2) (|L| |L'|). L against LAPACKE_dpotrf of each
 * rank's leading rows: Frobenius norm of the difference within the
 * perturbation bound; *applicable false when the matrix is too ill-
 * conditioned for it. Collective. */
int ch_check_residual(wf_run *run, const ch_case *c, ch_rank *r, double *worst, wf_status *st);
int ch_check_lapack(wf_run *run, ch_case *c, const ch_rank *r, double *worst, bool *applicable,
                    wf_status *st);

#endif
