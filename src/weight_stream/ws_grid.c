/* A wafer's rank grid for training (ws_grid.h): 2D weight tiles, the
 * distributed products over them and the embedding lookup, with the words
 * each rank receives counted. */
#include "ws_grid.h"

#include "wf_cblas.h"
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wf_decomp.h"
#include "wf_mpi.h"

int ws_grid_create(ws_grid *g, MPI_Comm comm, int K, int pe_nx, int pe_ny, wf_status *st) {
  *g = (ws_grid){.wafer = MPI_COMM_NULL, .row = MPI_COMM_NULL, .col = MPI_COMM_NULL,
                 .peers = MPI_COMM_NULL};
  int n, me;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me);
  if (K < 1 || n % K != 0)
    return wf_fail(st, WF_ERR_INPUT, "%d wafer ranks do not make wafers of %d ranks", n, K);
  if (wf_rank_grid_auto(K, pe_nx, pe_ny, &g->px, &g->py) != 0)
    return wf_fail(st, WF_ERR_INPUT, "no grid of %d ranks fits a %dx%d PE grid", K, pe_nx, pe_ny);
  g->ranks = K, g->rank = me % K, g->wafers = n / K, g->wafer_id = me / K;
  g->cx = g->rank / g->py, g->cy = g->rank % g->py;
  MPI_Comm_split(comm, g->wafer_id, g->rank, &g->wafer);
  MPI_Comm_split(g->wafer, g->cy, g->cx, &g->row);
  MPI_Comm_split(g->wafer, g->cx, g->cy, &g->col);
  MPI_Comm_split(comm, g->rank, g->wafer_id, &g->peers);
  /* message sizes and places of an exchange along a line (4 a rank of
   * it) or of a gather over the wafer (2 a rank) */
  size_t line = (size_t)(g->px > g->py ? g->px : g->py);
  size_t most = 4 * line > 2 * (size_t)K ? 4 * line : 2 * (size_t)K;
  int fail = !(g->counts_buf = malloc(most * sizeof *g->counts_buf));
  MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, comm);
  return fail ? wf_fail(st, WF_ERR_RUNTIME, "out of memory for a rank grid") : WF_OK;
}

void ws_grid_free(ws_grid *g) {
  MPI_Comm *comms[] = {&g->wafer, &g->row, &g->col, &g->peers};
  for (int i = 0; i < 4; i++)
    if (*comms[i] != MPI_COMM_NULL) MPI_Comm_free(comms[i]);
  free(g->scratch), free(g->counts_buf);
  g->scratch = NULL, g->scratch_n = 0, g->counts_buf = NULL;
}

int ws_grid_reserve(ws_grid *g, size_t N, size_t dim, int blocks, wf_status *st) {
  /* A product's reduced block, then the partial sums of its line of ranks
   * or the whole result (`all`): forward px blocks of ceil(OC / py)
   * features a token, backward py of ceil(IC / px). */
  size_t px = (size_t)g->px, py = (size_t)g->py;
  size_t rows = (dim + py - 1) / py, cols = (dim + px - 1) / px;
  size_t line = px * rows > py * cols ? px * rows : py * cols;
  size_t need = N * ((rows > cols ? rows : cols) + (line > dim ? line : dim));
  size_t sums = 2 * (size_t)g->ranks * (size_t)blocks; /* ws_grid_sum_blocks's doubles */
  if (need < sums) need = sums;
  /* every number a product's exchange places (the line's partial sums: N
   * x line) must have an int displacement */
  int bad = N * (line > dim ? line : dim) > (size_t)INT_MAX;
  if (!bad && need > g->scratch_n) {
    float *s = realloc(g->scratch, need * sizeof *s);
    if (s)
      g->scratch = s, g->scratch_n = need;
    else
      bad = 2;
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, g->wafer);
  if (bad == 1)
    return wf_fail(st, WF_ERR_INPUT,
                   "a product of %zu tokens by %zu features is beyond one MPI message", N, dim);
  if (bad) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the wafer's partial sums");
  return WF_OK;
}

void ws_grid_rows(const ws_grid *g, int OC, int *lo, int *n) { wf_block_range(OC, g->py, g->cy, lo, n); }
void ws_grid_cols(const ws_grid *g, int IC, int *lo, int *n) { wf_block_range(IC, g->px, g->cx, lo, n); }

/* A product's block of partial sums reduced over a line of `parts` ranks
 * (this one at `place`): own_part says where the rank's own `n` numbers
 * go (its place in `all`, room for the line's), reduce_parts sums them
 * into `blk` on every rank of the line. With one rank in the line the
 * partial sums are the block: no message, no sum.
 *
 * A reduce-scatter, then an allgather: the block is cut into `parts`
 * pieces; each rank receives its piece of every other rank's partial sums
 * (into their places in `all`), adds them in line order (the order, so the
 * bits, whatever the line's length) and shares its reduced piece. A rank
 * receives about 2 n numbers whatever the line's length, where gathering
 * every partial would be (parts - 1) n; every rank holds the same bits,
 * since each piece is added once. Counted: the numbers received to add
 * (reduce words) and the reduced pieces received (multicast words). */
static float *own_part(float *blk, float *all, size_t n, int parts, int place) {
  return parts == 1 ? blk : all + (size_t)place * n;
}
static void reduce_parts(ws_grid *g, float *blk, float *all, size_t n, int parts, int place,
                         MPI_Comm line) {
  if (parts == 1) return;
  int *scount = g->counts_buf, *sdispl = scount + parts, *rcount = sdispl + parts,
      *rdispl = rcount + parts;
  int lo, len;
  wf_block_range((int)n, parts, place, &lo, &len);
  for (int p = 0; p < parts; p++) {
    wf_block_range((int)n, parts, p, &sdispl[p], &scount[p]);
    /* piece `place` of rank p's partial sums, at its place in `all` */
    rcount[p] = p == place ? 0 : len, rdispl[p] = (int)((size_t)p * n) + lo;
  }
  scount[place] = 0; /* this rank's own piece stays where it is */
  MPI_Alltoallv(all + (size_t)place * n, scount, sdispl, MPI_FLOAT, all, rcount, rdispl, MPI_FLOAT,
                line);
  /* in line order, a part at a time (the same bits as a sum per number) */
  for (int i = lo; i < lo + len; i++) blk[i] = all[i] + all[n + i];
  for (int p = 2; p < parts; p++) {
    const float *a = all + (size_t)p * n;
    for (int i = lo; i < lo + len; i++) blk[i] += a[i];
  }
  for (int p = 0; p < parts; p++) rcount[p] = scount[p] + (p == place ? len : 0);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, blk, rcount, sdispl, MPI_FLOAT, line);
  g->counts.line_collectives += 2;
  g->counts.reduce_words += (double)(parts - 1) * len;
  g->counts.multicast_words += (double)n - len;
}

/* Every rank of `line` (ranked by `place` of `parts`) holds the block of
 * columns [lo_p, lo_p + n_p) of an N x width matrix, n_p from splitting
 * `width` over `parts` (block: N x n_p, contiguous); afterwards `whole`
 * (N x width) holds them all, added to it when `accumulate`. Returns the
 * numbers received from the others. */
static double gather_columns(ws_grid *g, float *whole, const float *block, float *tmp, int N,
                             int width, int parts, int place, MPI_Comm line, int accumulate) {
  int *counts = g->counts_buf, *displs = g->counts_buf + parts;
  for (int p = 0, at = 0; p < parts; p++) {
    int lo, n;
    wf_block_range(width, parts, p, &lo, &n);
    counts[p] = N * n, displs[p] = at, at += N * n;
  }
  if (parts > 1) { /* one rank: its block is the whole */
    MPI_Allgatherv(block, counts[place], MPI_FLOAT, tmp, counts, displs, MPI_FLOAT, line);
    g->counts.line_collectives++;
  }
  double received = 0;
  for (int p = 0; p < parts; p++) {
    int lo, n;
    wf_block_range(width, parts, p, &lo, &n);
    const float *b = parts > 1 ? tmp + displs[p] : block;
    for (int i = 0; i < N; i++) {
      float *o = whole + (size_t)i * width + lo;
      const float *s = b + (size_t)i * n;
      if (accumulate)
        for (int j = 0; j < n; j++) o[j] += s[j];
      else
        memcpy(o, s, (size_t)n * sizeof *o);
    }
    if (p != place) received += counts[p];
  }
  return received;
}

/* A product's count, its messages' time (since t0) and its model cycles. */
static void count_product(ws_grid *g, double t0, bool forward, int N, int IC, int OC) {
  g->counts.products++;
  g->counts.seconds += MPI_Wtime() - t0;
  if (g->cost) g->counts.model_cycles += g->cost(g->cost_ctx, forward, N, IC, OC);
}

void ws_grid_matmul_forward(ws_grid *g, float *out, const float *in, const float *w,
                            const float *bias, int N, int IC, int OC) {
  int r0, nr, c0, nc;
  ws_grid_rows(g, OC, &r0, &nr);
  ws_grid_cols(g, IC, &c0, &nc);
  size_t part = (size_t)N * nr;
  /* The reduced block (with one rank a column, the output itself), then
   * the row's partial sums, later the column's blocks. */
  float *blk = g->py == 1 ? out : g->scratch, *all = g->scratch + part;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, nr, nc, 1.0f, in + c0, IC, w, nc, 0.0f,
              own_part(blk, all, part, g->px, g->cx), nr);
  /* Partial sums reduced along the grid row, in cx order. */
  double t0 = MPI_Wtime(); /* the messages' time, with the bias's few adds */
  reduce_parts(g, blk, all, part, g->px, g->cx, g->row);
  if (bias)
    for (int i = 0; i < N; i++)
      for (int o = 0; o < nr; o++) blk[(size_t)i * nr + o] += bias[r0 + o];
  /* The reduced blocks multicast along the grid column. */
  if (g->py > 1)
    g->counts.multicast_words += gather_columns(g, out, blk, all, N, OC, g->py, g->cy, g->col, 0);
  count_product(g, t0, true, N, IC, OC);
}

void ws_grid_matmul_backward(ws_grid *g, float *din, float *dw, float *dbias, const float *dout,
                             const float *in, const float *w, int N, int IC, int OC) {
  int r0, nr, c0, nc;
  ws_grid_rows(g, OC, &r0, &nr);
  ws_grid_cols(g, IC, &c0, &nc);
  if (dbias)
    for (int i = 0; i < N; i++)
      for (int o = 0; o < OC; o++) dbias[o] += dout[(size_t)i * OC + o];
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nr, nc, N, 1.0f, dout + r0, OC, in + c0, IC,
              1.0f, dw, nc);
  size_t part = (size_t)N * nc;
  /* The reduced block, then the column's partial sums, later the row's
   * blocks. */
  float *blk = g->scratch, *all = blk + part;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, nc, nr, 1.0f, dout + r0, OC, w, nc,
              0.0f, own_part(blk, all, part, g->py, g->cy), nc);
  /* Partial sums reduced along the grid column, in cy order. */
  double t0 = MPI_Wtime();
  reduce_parts(g, blk, all, part, g->py, g->cy, g->col);
  /* ... and multicast along the grid row. */
  g->counts.multicast_words += gather_columns(g, din, blk, all, N, IC, g->px, g->cx, g->row, 1);
  count_product(g, t0, false, N, IC, OC);
}

void ws_grid_embed_forward(ws_grid *g, float *out, const int *tok, const float *table,
                           const float *add, int N, int T, int C, int V) {
  int r0, nr, c0, nc;
  ws_grid_rows(g, V, &r0, &nr);
  ws_grid_cols(g, C, &c0, &nc);
  memset(out, 0, (size_t)N * C * sizeof *out);
  double held = 0;
  for (int n = 0; n < N; n++) {
    int t = tok[n] - r0;
    if (t < 0 || t >= nr) continue;
    memcpy(out + (size_t)n * C + c0, table + (size_t)t * nc, (size_t)nc * sizeof *out);
    held += nc;
  }
  double t0 = MPI_Wtime();
  wf_allreduce_inplace(out, (size_t)N * C, MPI_FLOAT, MPI_SUM, g->wafer);
  g->counts.seconds += MPI_Wtime() - t0;
  g->counts.collectives++;
  g->counts.exchanges++;
  g->counts.multicast_words += (double)N * C - held;
  for (int n = 0; n < N; n++) {
    float *o = out + (size_t)n * C;
    const float *a = add + (size_t)(n % T) * C;
    for (int c = 0; c < C; c++) o[c] += a[c];
  }
}

void ws_grid_embed_backward(const ws_grid *g, float *dtable, float *dadd, const float *dout,
                            const int *tok, int N, int T, int C, int V) {
  int r0, nr, c0, nc;
  ws_grid_rows(g, V, &r0, &nr);
  ws_grid_cols(g, C, &c0, &nc);
  for (int n = 0; n < N; n++) {
    const float *s = dout + (size_t)n * C;
    float *a = dadd + (size_t)(n % T) * C;
    for (int c = 0; c < C; c++) a[c] += s[c];
    int t = tok[n] - r0;
    if (t < 0 || t >= nr) continue;
    float *d = dtable + (size_t)t * nc;
    for (int j = 0; j < nc; j++) d[j] += s[c0 + j];
  }
}

void ws_grid_heads(const ws_grid *g, int heads, int *lo, int *n) {
  wf_block_range(heads, g->ranks, g->rank, lo, n);
}

/* Copy rank p's heads' columns of every section between the N-row matrix
 * `x` and its contiguous block `b` (to the block when `pack`). */
static void head_block(float *x, float *b, int N, int sections, int heads, int hs, int lo, int n,
                       bool pack) {
  size_t width = (size_t)sections * heads * hs, run = (size_t)n * hs;
  for (int i = 0; i < N; i++)
    for (int s = 0; s < sections; s++, b += run) {
      float *col = x + (size_t)i * width + ((size_t)s * heads + lo) * hs;
      memcpy(pack ? b : col, pack ? col : b, run * sizeof *b);
    }
}

void ws_grid_share_heads(ws_grid *g, float *x, int N, int sections, int heads, int hs) {
  if (g->ranks == 1) return;
  int K = g->ranks, *counts = g->counts_buf, *displs = g->counts_buf + K;
  for (int p = 0, at = 0; p < K; p++) {
    int lo, n;
    wf_block_range(heads, K, p, &lo, &n);
    counts[p] = N * sections * n * hs, displs[p] = at, at += counts[p];
  }
  /* In place: the scratch holds a product's whole output, at least this. */
  float *all = g->scratch;
  int lo, n;
  ws_grid_heads(g, heads, &lo, &n);
  head_block(x, all + displs[g->rank], N, sections, heads, hs, lo, n, true);
  double t0 = MPI_Wtime();
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_FLOAT, g->wafer);
  g->counts.seconds += MPI_Wtime() - t0;
  g->counts.collectives++;
  g->counts.exchanges++;
  for (int p = 0; p < K; p++) {
    if (p == g->rank) continue;
    wf_block_range(heads, K, p, &lo, &n);
    head_block(x, all + displs[p], N, sections, heads, hs, lo, n, false);
    g->counts.head_words += counts[p];
  }
}

double ws_grid_sum_blocks(ws_grid *g, const double *parts, int nblocks) {
  /* Gathered and added in a fixed order, not MPI_Allreduce: every rank must
   * clip by the same bits. */
  double *all = (double *)g->scratch; /* ws_grid_reserve: room for K x nblocks doubles */
  MPI_Allgather(parts, nblocks, MPI_DOUBLE, all, nblocks, MPI_DOUBLE, g->wafer);
  g->counts.collectives++;
  double sum = 0;
  for (int b = 0; b < nblocks; b++) {
    double block = all[b];
    for (int r = 1; r < g->ranks; r++) block += all[(size_t)r * (size_t)nblocks + (size_t)b];
    sum += block;
  }
  return sum;
}
