/* The tile low-rank matrix (tl_matrix.h): the tiles' layout on the PE grid, the stacked U and
 * W bases, and the products A x and A^H y over them, partial results summed and gathered over
 * the ranks. */
#include "tl_matrix.h"

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

static size_t local_tile(const tl_matrix *a, int i, int j) {
  return (size_t)(i - a->l->i0) * (a->l->j1 - a->l->j0) + (j - a->l->j0);
}

/* Columns of a stack of `len`-long bases starting at at[k]. */
static int stacked(const size_t *at, int k, int len) { return (int)((at[k + 1] - at[k]) / len); }

/* R_i, the columns of local tile row i's stack U_i. */
static size_t stack_width(const tl_matrix *a, int i) {
  return (size_t)stacked(a->u_at, i - a->l->i0, tl_tile_rows(a->l, i));
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
    size_t widest = 0; /* the largest R_i */
    for (int i = l->i0; i < l->i1; i++)
      if (stack_width(a, i) > widest) widest = stack_width(a, i);
    /* the products' scratch: 2 (nb + R_i) values at most */
    a->scratch = malloc(2 * ((size_t)l->nb + widest) * sizeof *a->scratch);
    failed = !a->U || !a->W || !a->yu || !a->yv || !a->part || !a->scratch;
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
  free(a->yv_at), free(a->yu), free(a->yv), free(a->part), free(a->scratch);
  free(a->rows.counts), free(a->cols.counts);
  *a = (tl_matrix){0};
}

/* Within U_i (by rows), tile (i, j)'s columns start after those of the
 * tiles of row i left of it. */
void tl_tile_set_U(tl_matrix *a, int i, int j, const float complex *u) {
  const tl_layout *l = a->l;
  size_t width = stack_width(a, i), k = (size_t)a->rank[i * l->nt + j];
  size_t first = local_tile(a, i, l->j0);
  float complex *row0 =
      a->U + a->u_at[i - l->i0] + (a->yu_at[local_tile(a, i, j)] - a->yu_at[first]);
  int m = tl_tile_rows(l, i);
  for (int r = 0; r < m; r++)
    for (size_t c = 0; c < k; c++) row0[(size_t)r * width + c] = u[c * (size_t)m + r];
}

int tl_matrix_order_U(tl_matrix *a, bool by_rows, wf_status *st) {
  const tl_layout *l = a->l;
  size_t most = 0;
  for (int i = l->i0; i < l->i1; i++)
    if (a->u_at[i - l->i0 + 1] - a->u_at[i - l->i0] > most)
      most = a->u_at[i - l->i0 + 1] - a->u_at[i - l->i0];
  float complex *copy = malloc(most * sizeof *copy + 1);
  if (!copy) return wf_fail(st, WF_ERR_RUNTIME, "out of memory reordering the U bases");
  for (int i = l->i0; i < l->i1; i++) {
    float complex *u = a->U + a->u_at[i - l->i0];
    size_t m = (size_t)tl_tile_rows(l, i), width = stack_width(a, i);
    memcpy(copy, u, m * width * sizeof *u);
    for (size_t r = 0; r < m; r++)
      for (size_t c = 0; c < width; c++)
        if (by_rows)
          u[r * width + c] = copy[c * m + r];
        else
          u[c * m + r] = copy[r * width + c];
  }
  free(copy);
  return WF_OK;
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

/* Vectors of CVEC complex floats (re, im pairs), written with the GCC/Clang
 * vector extension: one 512-bit register with AVX-512, or several narrower
 * ones. */
enum { CVEC = 8 };
typedef float cvec __attribute__((vector_size(2 * CVEC * sizeof(float))));

static inline cvec cload(const float complex *p) {
  cvec v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void cstore(float complex *p, cvec v) { memcpy(p, &v, sizeof v); }

/* out[l] = v[l] with its real and imaginary parts swapped. */
static void swap_parts(const float complex *v, int len, float complex *out) {
  for (int l = 0; l < len; l++) out[l] = cimagf(v[l]) + I * crealf(v[l]);
}

/* out[c] = sum over l < len of op(a[c stride + l]) v[l], for c < count; op
 * is the conjugate (conj) or nothing; vs is v with its parts swapped
 * (swap_parts). With stride = len it reads a once, in address order: what
 * lets one core stream it at its full read bandwidth. */
static void dot_rows(int count, int len, const float complex *a, size_t stride,
                     const float complex *v, const float complex *vs, bool conj,
                     float complex *out) {
  const int whole = len / CVEC * CVEC;
  for (int c = 0; c < count; c++) {
    const float complex *row = a + (size_t)c * stride;
    /* lanes of p: re(a) re(v), im(a) im(v); of s: re(a) im(v), im(a) re(v) */
    cvec p0 = {0}, s0 = {0}, p1 = {0}, s1 = {0};
    int l = 0;
    for (; l + 2 * CVEC <= whole; l += 2 * CVEC) {
      cvec x = cload(row + l), y = cload(row + l + CVEC);
      p0 += x * cload(v + l), s0 += x * cload(vs + l);
      p1 += y * cload(v + l + CVEC), s1 += y * cload(vs + l + CVEC);
    }
    if (l < whole) {
      cvec x = cload(row + l);
      p0 += x * cload(v + l), s0 += x * cload(vs + l);
      l += CVEC;
    }
    cvec p = p0 + p1, s = s0 + s1;
    float rr = 0, ii = 0, ri = 0, ir = 0;
    for (int q = 0; q < 2 * CVEC; q += 2) rr += p[q], ii += p[q + 1], ri += s[q], ir += s[q + 1];
    for (; l < len; l++) {
      rr += crealf(row[l]) * crealf(v[l]), ii += cimagf(row[l]) * cimagf(v[l]);
      ri += crealf(row[l]) * cimagf(v[l]), ir += cimagf(row[l]) * crealf(v[l]);
    }
    out[c] = conj ? (rr + ii) + I * (ri - ir) : (rr - ii) + I * (ri + ir);
  }
}

/* out[l] = sum over c < count of op(a[c stride + l]) v[c], for l < len (op
 * as dot_rows'): the transposed product, for A^H y. Reads AXPY_ROWS rows of
 * a at a time, each in address order, into running sums of every out[l]
 * kept in `sums` (4 len floats, in the first-level cache): re(a) re(v),
 * im(a) re(v) in its first half, re(a) im(v), im(a) im(v) in its second.
 * A block of rows amortises the sums' loads and stores; each of its rows
 * is a stream the prefetchers follow. 16 rows: 1.3x OpenBLAS's one-thread
 * cgemv on the benchmark's stacks (AMD EPYC; 8 rows 1.15x, 32 0.6x). */
enum { AXPY_ROWS = 16 };

static void axpy_rows(int count, int len, const float complex *a, size_t stride,
                      const float complex *v, bool conj, float complex *sums, float complex *out) {
  float complex *pr = sums, *pi = sums + len;
  float *prf = (float *)pr, *pif = (float *)pi;
  memset(sums, 0, 2 * (size_t)len * sizeof *sums);
  const int whole = len / CVEC * CVEC;
  for (int c0 = 0; c0 < count; c0 += AXPY_ROWS) {
    const int rows = count - c0 < AXPY_ROWS ? count - c0 : AXPY_ROWS;
    const float complex *block = a + (size_t)c0 * stride;
    float vr[AXPY_ROWS], vi[AXPY_ROWS];
    for (int k = 0; k < rows; k++) vr[k] = crealf(v[c0 + k]), vi[k] = cimagf(v[c0 + k]);
    for (int l = 0; l < whole; l += CVEC) {
      cvec p = cload(pr + l), s = cload(pi + l);
      for (int k = 0; k < rows; k++) {
        cvec x = cload(block + (size_t)k * stride + l);
        p += x * vr[k], s += x * vi[k];
      }
      cstore(pr + l, p), cstore(pi + l, s);
    }
    for (int k = 0; k < rows; k++)
      for (int l = whole; l < len; l++) {
        float complex x = block[(size_t)k * stride + l];
        prf[2 * l] += crealf(x) * vr[k], prf[2 * l + 1] += cimagf(x) * vr[k];
        pif[2 * l] += crealf(x) * vi[k], pif[2 * l + 1] += cimagf(x) * vi[k];
      }
  }
  for (int l = 0; l < len; l++)
    out[l] = conj ? (prf[2 * l] + pif[2 * l + 1]) + I * (pif[2 * l] - prf[2 * l + 1])
                  : (prf[2 * l] - pif[2 * l + 1]) + I * (pif[2 * l] + prf[2 * l + 1]);
}

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
    a->collectives++;
  }
  if (g->n == 1) {
    memcpy(out, a->part, (size_t)g->len * sizeof *out);
    return;
  }
  MPI_Allgatherv(a->part, 2 * g->len, MPI_FLOAT, out, g->counts, g->displs, MPI_FLOAT, g->comm);
  a->collectives++;
  for (int r = 0; r < g->n; r++) a->received += (long long)g->counts[r] * (long long)sizeof(float);
  a->received -= bytes;
}

void tl_matrix_apply(tl_matrix *a, bool adjoint, const float complex *in, float complex *out,
                     double seconds[4]) {
  const tl_layout *l = a->l;
  double t0 = MPI_Wtime(), t1, t2, t3;
  if (!adjoint) {
    /* Phase 1: yv_j = W_j^H x_j over the local tile columns: a dot
     * product with x_j down each column of W_j. */
    for (int j = l->j0; j < l->j1; j++) {
      int n = tl_tile_cols(l, j), r = stacked(a->w_at, j - l->j0, n);
      if (r == 0) continue; /* no local tile rows, or all of rank 0: no segment */
      const float complex *x = in + (size_t)j * l->nb;
      swap_parts(x, n, a->scratch);
      dot_rows(r, n, a->W + a->w_at[j - l->j0], (size_t)n, x, a->scratch, true,
               a->yv + a->yv_at[local_tile(a, l->i0, j)]);
    }
    t1 = MPI_Wtime();
    reshuffle(a, true);
    t2 = MPI_Wtime();
    /* Phase 3: y_i = U_i yu_i over the local tile rows: a dot product
     * with yu_i along each row of U_i. */
    for (int i = l->i0; i < l->i1; i++) {
      int m = tl_tile_rows(l, i), r = stacked(a->u_at, i - l->i0, m);
      float complex *y = a->part + (size_t)(i - l->i0) * l->nb;
      if (r == 0) { /* no local tile columns (or ranks): no segment of yu */
        memset(y, 0, (size_t)m * sizeof *y);
        continue;
      }
      const float complex *yu = a->yu + a->yu_at[local_tile(a, i, l->j0)];
      swap_parts(yu, r, a->scratch);
      dot_rows(m, r, a->U + a->u_at[i - l->i0], (size_t)r, yu, a->scratch, false, y);
    }
    t3 = MPI_Wtime();
    combine(a, l->row_comm, &a->rows, out);
  } else {
    /* The same phases backwards: yu_i = U_i^H y_i (the rows of U_i
     * scaled by y_i and summed), reshuffle, x_j = W_j yv_j (the columns of
     * W_j likewise). */
    for (int i = l->i0; i < l->i1; i++) {
      int m = tl_tile_rows(l, i), r = stacked(a->u_at, i - l->i0, m);
      if (r > 0)
        axpy_rows(m, r, a->U + a->u_at[i - l->i0], (size_t)r, in + (size_t)i * l->nb, true,
                  a->scratch, a->yu + a->yu_at[local_tile(a, i, l->j0)]);
    }
    t1 = MPI_Wtime();
    reshuffle(a, false);
    t2 = MPI_Wtime();
    for (int j = l->j0; j < l->j1; j++) {
      int n = tl_tile_cols(l, j), r = stacked(a->w_at, j - l->j0, n);
      float complex *x = a->part + (size_t)(j - l->j0) * l->nb;
      if (r > 0)
        axpy_rows(r, n, a->W + a->w_at[j - l->j0], (size_t)n,
                  a->yv + a->yv_at[local_tile(a, l->i0, j)], false, a->scratch, x);
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
