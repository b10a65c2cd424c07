/* A tile low-rank (TLR) matrix and its matrix-vector products.
 *
 * The M x N matrix is cut into nb x nb tiles (the last row and column of
 * tiles may be smaller); tile (i, j) is kept as A_ij ~ U_ij W_ij^H, with
 * U_ij (m_i x k_ij) and W_ij (n_j x k_ij) from its truncated SVD
 * (W = V Sigma). The bases are stacked as KAUST's TLR-MVM stacks them:
 *
 *   W_j = [W_0j W_1j ...]   n_j x R_j, one per tile column (column-major)
 *   U_i = [U_i0 U_i1 ...]   m_i x R_i, one per tile row (row-major here)
 *
 * so that y = A x is three phases: yv_j = W_j^H x_j (one gemv per tile
 * column), a reshuffle of the yv_j segments into tile-row order (yu_i), and
 * y_i = U_i yu_i (one gemv per tile row). A^H y runs the same phases
 * backwards over the same bases.
 *
 * In memory U_i is kept by rows, so that both phases of y = A x are dot
 * products that read their stack once, in address order: a product is
 * memory-bound, and one core streams sequential reads at about twice the
 * rate it streams a column-major U_i's gemv (bench/tlrmvm). Files keep
 * KAUST's column-major U_i (tl_io.h); tl_matrix_order_U converts. A^H y
 * reads the same stacks a few rows (columns) at a time.
 *
 * Distribution: tile columns follow the PE grid's columns and tile rows its
 * rows (tl_layout), so a rank holds the tiles of its block of PEs: a block
 * of tile rows [i0, i1) x tile columns [j0, j1). The vectors x (N) and
 * y (M) are whole on every rank; a product sums the partial results over
 * the ranks that share the tile rows (or columns) and gathers the blocks. */
#ifndef TL_MATRIX_H
#define TL_MATRIX_H

#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "wf_decomp.h"
#include "wf_error.h"

typedef struct tl_layout {
  int m, n, nb;                     /* matrix rows, columns, tile size */
  int mt, nt;                       /* tile rows, tile columns */
  int i0, i1, j0, j1;               /* this rank's tile rows [i0, i1) and tile columns [j0, j1) */
  int pe_nx, pe_ny, px, py, cx, cy; /* the PE grid, the rank grid and this rank's place */
  MPI_Comm comm;                    /* every rank of the matrix */
  MPI_Comm row_comm; /* ranks holding the same tile rows (other columns); rank = cx */
  MPI_Comm col_comm; /* ranks holding the same tile columns (other rows); rank = cy */
} tl_layout;

/* The largest magnitude an operator's stored value (a dense entry, a basis
 * entry) may have: the products and norms the run takes in single precision
 * sum up to max(m, n) terms of |a|^2, which stays below FLT_MAX when |a| <=
 * sqrt(FLT_MAX) / max(m, n). Larger values would overflow to Inf (and a
 * reported error of 0): they are refused as input. */
static inline double tl_value_limit(const tl_layout *l) {
  return 1.8446742974197924e19 / (l->m > l->n ? l->m : l->n); /* sqrt(FLT_MAX) = 2^64 */
}

/* Rows (columns) of tile t of `total` cut into tiles of nb: the last shorter. */
static inline int tl_tile_len(int total, int nb, int t) {
  return total - t * nb < nb ? total - t * nb : nb;
}
static inline int tl_tile_rows(const tl_layout *l, int i) { return tl_tile_len(l->m, l->nb, i); }
static inline int tl_tile_cols(const tl_layout *l, int j) { return tl_tile_len(l->n, l->nb, j); }
/* This rank's dense block: rows [r0, r0 + rows), columns [c0, c0 + cols). */
static inline void tl_layout_block(const tl_layout *l, int *r0, int *rows, int *c0, int *cols) {
  *r0 = l->i0 * l->nb, *c0 = l->j0 * l->nb;
  *rows = l->i1 > l->i0 ? (l->i1 * l->nb < l->m ? l->i1 * l->nb : l->m) - *r0 : 0;
  *cols = l->j1 > l->j0 ? (l->j1 * l->nb < l->n ? l->j1 * l->nb : l->n) - *c0 : 0;
}

/* Tiles on the PE grid: tile column j goes with PE column
 * floor(j pe_nx / nt), tile row i with PE row floor(i pe_ny / mt); this
 * rank holds the tiles whose PE is in its block. The communicators (the
 * fabric's rows and columns of ranks) are borrowed, not owned. */
int tl_layout_init(tl_layout *l, int m, int n, int nb, const wf_decomp *dc, MPI_Comm row_comm,
                   MPI_Comm col_comm, wf_status *st);
/* The PE column (row) of tile column j (row i), and the range of tiles of
 * a range of PEs. */
int tl_tile_pe(int tile, int ntiles, int npe);
void tl_tiles_of_pes(int ntiles, int npe, int pe0, int pe1, int *t0, int *t1);

/* A gather of the ranks' blocks of a vector (counts and displacements in floats). */
typedef struct tl_gather {
  MPI_Comm comm;
  int n, len; /* ranks; this rank's entries */
  int *counts, *displs;
} tl_gather;

/* One frequency's compressed matrix: this rank's tiles. */
typedef struct tl_matrix {
  const tl_layout *l;
  int *rank;              /* [mt * nt], k_ij at i * nt + j: every tile, on every rank */
  float complex *U, *W;   /* stacked bases of the local tile rows (U) and columns (W) */
  size_t *u_at, *w_at;    /* start of U_i (i - i0) and W_j (j - j0); one extra: the end */
  size_t *yu_at, *yv_at;  /* per local tile ((i - i0) * (j1 - j0) + (j - j0)): its segment */
  size_t local_rank;      /* sum of the local tiles' ranks */
  float complex *yu, *yv; /* scratch: the segments in row and column order */
  float complex *part;    /* scratch: this rank's partial product */
  float complex *scratch; /* a product's: its input with re and im swapped, or its sums */
  tl_gather rows, cols;   /* y's blocks over the column communicator; x's over the row one */
  double dropped2;        /* sum of the squared singular values the local tiles dropped */
  long long received;     /* bytes this rank received in its products' sums and gathers */
  long long collectives;  /* and the sums and gathers it took part in (lines of ranks) */
} tl_matrix;

/* Room for the local tiles of ranks `rank` (every tile's): bases
 * uninitialised, offsets set. */
int tl_matrix_alloc(tl_matrix *a, const tl_layout *l, const int *rank, wf_status *st);
void tl_matrix_free(tl_matrix *a);
/* Tile (i, j)'s W inside its stack (local tiles only): n_j x k_ij. */
float complex *tl_tile_W(const tl_matrix *a, int i, int j);
/* Sets local tile (i, j)'s U from u, m_i x k_ij column-major. */
void tl_tile_set_U(tl_matrix *a, int i, int j, const float complex *u);
/* Reorders every U_i between the products' order (by rows, `by_rows`) and
 * the files' (column-major). Errors: out of memory (a stack's copy). */
int tl_matrix_order_U(tl_matrix *a, bool by_rows, wf_status *st);
/* Sum of every tile's rank (R in KAUST's byte count). */
long long tl_total_rank(const tl_matrix *a);

/* y = A x (conj = false) or x = A^H y: `in` whole on every rank (N, or M
 * entries), `out` whole on every rank afterwards. Collective. Times of the
 * phases are added to `seconds` (phase 1, reshuffle, phase 3, communication)
 * when not NULL. */
void tl_matrix_apply(tl_matrix *a, bool adjoint, const float complex *in, float complex *out,
                     double seconds[4]);

#endif
