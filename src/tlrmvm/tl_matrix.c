#include "tl_matrix.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "wf_memory.h"

int tl_tile_pe(int tile, int ntiles, int npe) { return (int)((long long)tile * npe / ntiles); }

/* Tiles t with pe0 <= tl_tile_pe(t) < pe1: a contiguous range, since the
 * map is monotone. */
void tl_tiles_of_pes(int ntiles, int npe, int pe0, int pe1, int *t0, int *t1) {
  int t = 0;
  while (t < ntiles && tl_tile_pe(t, ntiles, npe) < pe0) t++;
  *t0 = t;
  while (t < ntiles && tl_tile_pe(t, ntiles, npe) < pe1) t++;
  *t1 = t;
}

int tl_layout_init(tl_layout *l, int m, int n, int nb, const wf_decomp *dc, MPI_Comm row_comm,
                   MPI_Comm col_comm, wf_status *st) {
  if (m < 1 || n < 1 || nb < 1)
    return wf_fail(st, WF_ERR_INPUT, "a %d x %d matrix in %d x %d tiles: sizes must be positive", m,
                   n, nb, nb);
  if (nb > m || nb > n)
    return wf_fail(st, WF_ERR_INPUT, "tile size %d is larger than the %d x %d matrix", nb, m, n);
  *l = (tl_layout){.m = m,
                   .n = n,
                   .nb = nb,
                   .mt = (m + nb - 1) / nb,
                   .nt = (n + nb - 1) / nb,
                   .pe_nx = dc->pe_nx,
                   .pe_ny = dc->pe_ny,
                   .px = dc->px,
                   .py = dc->py,
                   .cx = dc->cx,
                   .cy = dc->cy,
                   .comm = dc->comm,
                   .row_comm = row_comm,
                   .col_comm = col_comm};
  tl_tiles_of_pes(l->mt, dc->pe_ny, dc->y0, dc->y0 + dc->ny, &l->i0, &l->i1);
  tl_tiles_of_pes(l->nt, dc->pe_nx, dc->x0, dc->x0 + dc->nx, &l->j0, &l->j1);
  return WF_OK;
}

/* Where the blocks of tiles of the `parts` ranks along one axis of the rank
 * grid sit in the gathered vector (in floats), this rank's at `me`. */
static int gather_init(tl_gather *g, MPI_Comm comm, int ntiles, int npe, int parts, int me,
                       int tile, int whole) {
  *g = (tl_gather){.comm = comm, .n = parts};
  g->counts = malloc(2 * (size_t)parts * sizeof *g->counts);
  if (!g->counts) return WF_ERR_RUNTIME;
  g->displs = g->counts + parts;
  for (int r = 0; r < parts; r++) {
    int pe0, npes, t0, t1;
    wf_block_range(npe, parts, r, &pe0, &npes);
    tl_tiles_of_pes(ntiles, npe, pe0, pe0 + npes, &t0, &t1);
    int lo = t0 * tile, hi = t1 * tile < whole ? t1 * tile : whole;
    g->counts[r] = hi > lo ? 2 * (hi - lo) : 0;
    g->displs[r] = 2 * lo;
  }
  g->len = g->counts[me] / 2;
  return WF_OK;
}

int tl_matrix_alloc(tl_matrix *a, const tl_layout *l, const int *rank, wf_status *st) {
  *a = (tl_matrix){.l = l};
  int li = l->i1 - l->i0, lj = l->j1 - l->j0;
  size_t tiles = (size_t)l->mt * l->nt, local = (size_t)li * lj;
  a->rank = malloc(tiles * sizeof *a->rank);
  a->u_at = malloc((li + 1) * sizeof *a->u_at);
  a->w_at = malloc((lj + 1) * sizeof *a->w_at);
  a->yu_at = malloc((local + 1) * sizeof *a->yu_at);
  a->yv_at = malloc((local + 1) * sizeof *a->yv_at);
  int failed = !a->rank || !a->u_at || !a->w_at || !a->yu_at || !a->yv_at ||
               gather_init(&a->rows, l->col_comm, l->mt, l->pe_ny, l->py, l->cy, l->nb, l->m) ||
               gather_init(&a->cols, l->row_comm, l->nt, l->pe_nx, l->px, l->cx, l->nb, l->n);
  if (!failed) {
    memcpy(a->rank, rank, tiles * sizeof *rank);
    /* U_i stacks the tiles of row i in column order; W_j those of column j
     * in row order. yu and yv hold the tiles' segments in the same orders. */
    size_t u = 0, yu = 0;
    for (int i = l->i0; i < l->i1; i++) {
      a->u_at[i - l->i0] = u;
      for (int j = l->j0; j < l->j1; j++) {
        int k = rank[i * l->nt + j];
        a->yu_at[(size_t)(i - l->i0) * lj + (j - l->j0)] = yu;
        yu += k;
        u += (size_t)tl_tile_rows(l, i) * k;
      }
    }
    a->u_at[li] = u;
    size_t w = 0, yv = 0;
    for (int j = l->j0; j < l->j1; j++) {
      a->w_at[j - l->j0] = w;
      for (int i = l->i0; i < l->i1; i++) {
        int k = rank[i * l->nt + j];
        a->yv_at[(size_t)(i - l->i0) * lj + (j - l->j0)] = yv;
        yv += k;
        w += (size_t)tl_tile_cols(l, j) * k;
      }
    }
    a->w_at[lj] = w;
    a->local_rank = yu;
    int part = l->m > l->n ? l->m : l->n;
    /* The bases are what a product streams: on huge pages. */
    a->U = wf_alloc_large(u * sizeof *a->U);
    a->W = wf_alloc_large(w * sizeof *a->W);
    a->yu = malloc(yu * sizeof *a->yu + 1);
    a->yv = malloc(yv * sizeof *a->yv + 1);
    a->part = malloc((size_t)part * sizeof *a->part);
    failed = !a->U || !a->W || !a->yu || !a->yv || !a->part;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, l->comm);
  if (failed) {
    tl_matrix_free(a);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the compressed tiles");
  }
  return WF_OK;
}

void tl_matrix_free(tl_matrix *a) {
  free(a->rank), free(a->U), free(a->W), free(a->u_at), free(a->w_at), free(a->yu_at);
  free(a->yv_at), free(a->yu), free(a->yv), free(a->part), free(a->rows.counts),
      free(a->cols.counts);
  *a = (tl_matrix){0};
}

static size_t local_tile(const tl_matrix *a, int i, int j) {
  return (size_t)(i - a->l->i0) * (a->l->j1 - a->l->j0) + (j - a->l->j0);
}

/* Within U_i, tile (i, j) starts after the tiles of row i left of it. */
float complex *tl_tile_U(const tl_matrix *a, int i, int j) {
  const tl_layout *l = a->l;
  size_t first = local_tile(a, i, l->j0);
  return a->U + a->u_at[i - l->i0] +
         (size_t)tl_tile_rows(l, i) * (a->yu_at[local_tile(a, i, j)] - a->yu_at[first]);
}

float complex *tl_tile_W(const tl_matrix *a, int i, int j) {
  const tl_layout *l = a->l;
  size_t first = local_tile(a, l->i0, j);
  return a->W + a->w_at[j - l->j0] +
         (size_t)tl_tile_cols(l, j) * (a->yv_at[local_tile(a, i, j)] - a->yv_at[first]);
}

long long tl_total_rank(const tl_matrix *a) {
  long long r = 0;
  for (size_t t = 0; t < (size_t)a->l->mt * a->l->nt; t++) r += a->rank[t];
  return r;
}

/* Columns of a stack of `len`-long bases starting at at[k]. */
static int stacked(const size_t *at, int k, int len) { return (int)((at[k + 1] - at[k]) / len); }

/* Phase 2: move every local tile's segment between column order (yv) and
 * row order (yu). */
static void reshuffle(tl_matrix *a, bool to_rows) {
  const tl_layout *l = a->l;
  for (int i = l->i0; i < l->i1; i++)
    for (int j = l->j0; j < l->j1; j++) {
      size_t t = local_tile(a, i, j), k = (size_t)a->rank[i * l->nt + j];
      if (to_rows)
        memcpy(a->yu + a->yu_at[t], a->yv + a->yv_at[t], k * sizeof *a->yu);
      else
        memcpy(a->yv + a->yv_at[t], a->yu + a->yu_at[t], k * sizeof *a->yv);
    }
}

/* The partial product (this rank's block of `out`) summed over `sum`, and
 * the blocks gathered over `g` into every rank's whole vector. */
static void combine(tl_matrix *a, MPI_Comm sum, const tl_gather *g, float complex *out) {
  int nsum;
  MPI_Comm_size(sum, &nsum);
  /* Received bytes: an allreduce's least (reduce-scatter, then allgather),
   * and the other ranks' blocks of the gather. */
  long long bytes = (long long)g->len * (long long)sizeof *out;
  if (nsum > 1) {
    MPI_Allreduce(MPI_IN_PLACE, a->part, 2 * g->len, MPI_FLOAT, MPI_SUM, sum);
    a->received += 2 * bytes * (nsum - 1) / nsum;
  }
  if (g->n == 1) {
    memcpy(out, a->part, (size_t)g->len * sizeof *out);
    return;
  }
  MPI_Allgatherv(a->part, 2 * g->len, MPI_FLOAT, out, g->counts, g->displs, MPI_FLOAT, g->comm);
  for (int r = 0; r < g->n; r++) a->received += (long long)g->counts[r] * (long long)sizeof(float);
  a->received -= bytes;
}

void tl_matrix_apply(tl_matrix *a, bool adjoint, const float complex *in, float complex *out,
                     double seconds[4]) {
  const tl_layout *l = a->l;
  const float complex one = 1, zero = 0;
  double t0 = MPI_Wtime(), t1, t2, t3;
  if (!adjoint) {
    /* Phase 1: yv_j = W_j^H x_j over the local tile columns. */
    for (int j = l->j0; j < l->j1; j++) {
      int n = tl_tile_cols(l, j), r = stacked(a->w_at, j - l->j0, n);
      if (r > 0)
        cblas_cgemv(CblasColMajor, CblasConjTrans, n, r, &one, a->W + a->w_at[j - l->j0], n,
                    in + (size_t)j * l->nb, 1, &zero, a->yv + a->yv_at[local_tile(a, l->i0, j)], 1);
    }
    t1 = MPI_Wtime();
    reshuffle(a, true);
    t2 = MPI_Wtime();
    /* Phase 3: y_i = U_i yu_i over the local tile rows. */
    for (int i = l->i0; i < l->i1; i++) {
      int m = tl_tile_rows(l, i), r = stacked(a->u_at, i - l->i0, m);
      float complex *y = a->part + (size_t)(i - l->i0) * l->nb;
      if (r > 0)
        cblas_cgemv(CblasColMajor, CblasNoTrans, m, r, &one, a->U + a->u_at[i - l->i0], m,
                    a->yu + a->yu_at[local_tile(a, i, l->j0)], 1, &zero, y, 1);
      else
        memset(y, 0, (size_t)m * sizeof *y);
    }
    t3 = MPI_Wtime();
    combine(a, l->row_comm, &a->rows, out);
  } else {
    /* The same phases backwards: yu_i = U_i^H y_i, reshuffle, x_j = W_j yv_j. */
    for (int i = l->i0; i < l->i1; i++) {
      int m = tl_tile_rows(l, i), r = stacked(a->u_at, i - l->i0, m);
      if (r > 0)
        cblas_cgemv(CblasColMajor, CblasConjTrans, m, r, &one, a->U + a->u_at[i - l->i0], m,
                    in + (size_t)i * l->nb, 1, &zero, a->yu + a->yu_at[local_tile(a, i, l->j0)], 1);
    }
    t1 = MPI_Wtime();
    reshuffle(a, false);
    t2 = MPI_Wtime();
    for (int j = l->j0; j < l->j1; j++) {
      int n = tl_tile_cols(l, j), r = stacked(a->w_at, j - l->j0, n);
      float complex *x = a->part + (size_t)(j - l->j0) * l->nb;
      if (r > 0)
        cblas_cgemv(CblasColMajor, CblasNoTrans, n, r, &one, a->W + a->w_at[j - l->j0], n,
                    a->yv + a->yv_at[local_tile(a, l->i0, j)], 1, &zero, x, 1);
      else
        memset(x, 0, (size_t)n * sizeof *x);
    }
    t3 = MPI_Wtime();
    combine(a, l->col_comm, &a->cols, out);
  }
  if (seconds) {
    seconds[0] += t1 - t0;
    seconds[1] += t2 - t1;
    seconds[2] += t3 - t2;
    seconds[3] += MPI_Wtime() - t3;
  }
}
