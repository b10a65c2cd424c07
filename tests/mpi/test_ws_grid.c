/* The wafer's rank grid for training (ws_grid.h) on 1, 2 and 4 ranks:
 * distributed products and the embedding lookup against dense products in
 * double (within the float sums' rounding bound), the same bits on every
 * rank of a wafer, and the words each moves against hand counts. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "ws_grid.h"

enum { N = 5, IC = 7, OC = 6, V = 9, T = 3 };

/* A reproducible number in [-1, 1) for place i of stream s. */
static float value(int s, int i) {
  unsigned x = (unsigned)(i + 1) * 2654435761u ^ (unsigned)(s + 1) * 40503u;
  x ^= x >> 13, x *= 0x5bd1e995u, x ^= x >> 15;
  return (float)(x % 20001u) / 10000.0f - 1.0f;
}

/* gamma_n of float: n u / (1 - n u). */
static double gamma_n(int n) { return n * 0x1p-24 / (1 - n * 0x1p-24); }

/* Every rank of the wafer holds the same bits of x. */
static int same_everywhere(const float *x, size_t n, MPI_Comm comm) {
  float *lo = malloc(n * sizeof *lo), *hi = malloc(n * sizeof *hi);
  MPI_Allreduce(x, lo, (int)n, MPI_FLOAT, MPI_MIN, comm);
  MPI_Allreduce(x, hi, (int)n, MPI_FLOAT, MPI_MAX, comm);
  int same = memcmp(lo, hi, n * sizeof *lo) == 0;
  free(lo), free(hi);
  return same;
}

/* Words received, summed over the wafer's ranks: reduce, multicast. */
static void words(const ws_grid *g, double *reduce, double *multicast) {
  double w[2] = {g->counts.reduce_words, g->counts.multicast_words};
  MPI_Allreduce(MPI_IN_PLACE, w, 2, MPI_DOUBLE, MPI_SUM, g->wafer);
  *reduce = w[0], *multicast = w[1];
}

/* On a 64 x 64 PE grid (rank grids 2 x 1, 3 x 1, 2 x 2) or, `tall`, a 1 x 64
 * one (1 x K: every grid row one rank). */
static void test_products(checks *c, int K, bool tall) {
  ws_grid g;
  wf_status st;
  CHECK(c, ws_grid_create(&g, MPI_COMM_WORLD, K, tall ? 1 : 64, 64, &st) == WF_OK, "grid of %d: %s",
        K, st.msg);
  CHECK(c, ws_grid_reserve(&g, N, OC > IC ? OC : IC, 1, &st) == WF_OK, "reserve");
  int r0, nr, c0, nc;
  ws_grid_rows(&g, OC, &r0, &nr);
  ws_grid_cols(&g, IC, &c0, &nc);
  float in[N * IC], w[OC * IC], bias[OC], out[N * OC], dout[N * OC], din[N * IC], dbias[OC];
  float *tile = malloc((size_t)nr * nc * sizeof *tile), *dw = calloc((size_t)nr * nc, sizeof *dw);
  for (int i = 0; i < N * IC; i++) in[i] = value(1, i), din[i] = value(4, i);
  for (int i = 0; i < OC * IC; i++) w[i] = value(2, i);
  for (int o = 0; o < OC; o++) bias[o] = value(3, o), dbias[o] = value(6, o);
  for (int i = 0; i < N * OC; i++) dout[i] = value(5, i);
  for (int r = 0; r < nr; r++)
    for (int j = 0; j < nc; j++) tile[r * nc + j] = w[(r0 + r) * IC + c0 + j];
  float din0[N * IC], dbias0[OC];
  memcpy(din0, din, sizeof din), memcpy(dbias0, dbias, sizeof dbias);

  ws_grid_matmul_forward(&g, out, in, tile, bias, N, IC, OC);
  double worst = 0;
  for (int i = 0; i < N; i++)
    for (int o = 0; o < OC; o++) {
      double ref = bias[o], mag = fabs(bias[o]);
      for (int k = 0; k < IC; k++)
        ref += (double)in[i * IC + k] * w[o * IC + k], mag += fabs((double)in[i * IC + k] * w[o * IC + k]);
      worst = fmax(worst, fabs(out[i * OC + o] - ref) / (gamma_n(IC + 1) * mag + 1e-30));
    }
  CHECK(c, worst <= 1, "forward: %.3g of the rounding bound (K = %d)", worst, K);
  CHECK(c, same_everywhere(out, N * OC, g.wafer), "forward: ranks of a wafer differ");

  ws_grid_matmul_backward(&g, din, dw, dbias, dout, in, tile, N, IC, OC);
  worst = 0;
  for (int i = 0; i < N; i++)
    for (int k = 0; k < IC; k++) { /* din += dout w */
      double ref = din0[i * IC + k], mag = fabs(ref);
      for (int o = 0; o < OC; o++)
        ref += (double)dout[i * OC + o] * w[o * IC + k], mag += fabs((double)dout[i * OC + o] * w[o * IC + k]);
      worst = fmax(worst, fabs(din[i * IC + k] - ref) / (gamma_n(OC + 1) * mag + 1e-30));
    }
  for (int r = 0; r < nr; r++) /* the tile of dw = dout^T in */
    for (int j = 0; j < nc; j++) {
      double ref = 0, mag = 0;
      for (int i = 0; i < N; i++) {
        double x = (double)dout[i * OC + r0 + r] * in[i * IC + c0 + j];
        ref += x, mag += fabs(x);
      }
      worst = fmax(worst, fabs(dw[r * nc + j] - ref) / (gamma_n(N) * mag + 1e-30));
    }
  for (int o = 0; o < OC; o++) {
    double ref = dbias0[o], mag = fabs(ref);
    for (int i = 0; i < N; i++) ref += dout[i * OC + o], mag += fabs(dout[i * OC + o]);
    worst = fmax(worst, fabs(dbias[o] - ref) / (gamma_n(N + 1) * mag + 1e-30));
  }
  CHECK(c, worst <= 1, "backward: %.3g of the rounding bound (K = %d)", worst, K);
  CHECK(c, same_everywhere(din, N * IC, g.wafer), "backward: ranks of a wafer differ");

  /* Hand counts, summed over a wafer's ranks, of one product each way
   * (N = 5 tokens, IC = 7, OC = 6). A line of p ranks reduces a block of n
   * partial sums by a reduce-scatter (each rank receives its piece of the p
   * - 1 others' blocks: (p - 1) n words over the line) and an allgather of
   * the reduced pieces ((p - 1) n multicast words over the line). K = 2: a
   * 2 x 1 grid; forward, a 5 x 6 block: 30 reduce, 30 multicast; backward,
   * no reduction, each rank the other's block of din (5 x 3 and 5 x 4: 35).
   * K = 4: 2 x 2; forward, two rows reduce 5 x 3 blocks (30 and 30), then
   * each rank one 5 x 3 block from its column (60); backward, the columns
   * reduce 5 x 4 (columns 0-3) and 5 x 3 (4-6) blocks: 35 and 35, then
   * 2 x 20 + 2 x 15 = 70 from the rows. K = 3: 3 x 1; forward, a 5 x 6
   * block over 3 ranks: 60 and 60; backward the two others' blocks of din
   * (columns 3, 2, 2: 20 + 25 + 25 = 70). Tall, 1 x K: forward no
   * reduction, each rank the others' rows of out (K = 2: 5 x 3 each, 30;
   * K = 3: 5 x 4 each, 60; K = 4, rows 2, 2, 1, 1: 20 + 20 + 25 + 25 =
   * 90); backward a 5 x 7 block of din over K ranks: (K - 1) 35 each. */
  double red, mc;
  words(&g, &red, &mc);
  const double want[5][2] = {
      {0, 0}, {0, 0}, {30, 30 + 35}, {60, 60 + 70}, {30 + 35, 30 + 60 + 35 + 70}};
  const double want_tall[5][2] = {{0, 0}, {0, 0}, {35, 30 + 35}, {70, 60 + 70}, {105, 90 + 105}};
  const double *w2 = tall ? want_tall[K] : want[K];
  CHECK(c, red == w2[0] && mc == w2[1], "K = %d%s: %g reduce and %g multicast words, want %g, %g",
        K, tall ? " (1 x K)" : "", red, mc, w2[0], w2[1]);
  CHECK(c, g.counts.products == 2, "products counted");
  /* a line of two or more ranks: 2 collectives to reduce, 1 to gather */
  CHECK(c, g.counts.line_collectives == 3 * (g.px > 1) + 3 * (g.py > 1),
        "%lld collectives along lines on %d x %d ranks", g.counts.line_collectives, g.px, g.py);

  /* The embedding: rows of a V x IC table looked up by token, plus a
   * position table; its backward adds the rows back. */
  int tok[N];
  for (int i = 0; i < N; i++) tok[i] = (i * 4 + 1) % V;
  int v0, nv, e0, ne;
  ws_grid_rows(&g, V, &v0, &nv);
  ws_grid_cols(&g, IC, &e0, &ne);
  float table[V * IC], add[T * IC], emb[N * IC], dadd[T * IC] = {0};
  float *etile = malloc((size_t)nv * ne * sizeof *etile), *dtile = calloc((size_t)nv * ne, sizeof *dtile);
  for (int i = 0; i < V * IC; i++) table[i] = value(7, i);
  for (int i = 0; i < T * IC; i++) add[i] = value(8, i);
  for (int r = 0; r < nv; r++)
    for (int j = 0; j < ne; j++) etile[r * ne + j] = table[(v0 + r) * IC + e0 + j];
  double before = g.counts.multicast_words;
  ws_grid_embed_forward(&g, emb, tok, etile, add, N, T, IC, V);
  int exact = 1;
  for (int i = 0; i < N; i++)
    for (int k = 0; k < IC; k++) exact &= emb[i * IC + k] == table[tok[i] * IC + k] + add[(i % T) * IC + k];
  CHECK(c, exact, "embedding rows are not the table's plus the positions' (K = %d)", K);
  double held = 0;
  for (int i = 0; i < N; i++) held += tok[i] >= v0 && tok[i] < v0 + nv ? ne : 0;
  CHECK(c, g.counts.multicast_words - before == N * IC - held, "embedding words");
  ws_grid_embed_backward(&g, dtile, dadd, in, tok, N, T, IC, V);
  exact = 1;
  for (int r = 0; r < nv; r++)
    for (int j = 0; j < ne; j++) {
      float ref = 0;
      for (int i = 0; i < N; i++)
        if (tok[i] == v0 + r) ref += in[i * IC + e0 + j];
      exact &= dtile[r * ne + j] == ref;
    }
  for (int p = 0; p < T; p++)
    for (int k = 0; k < IC; k++) {
      float ref = 0;
      for (int i = p; i < N; i += T) ref += in[i * IC + k];
      exact &= dadd[p * IC + k] == ref;
    }
  CHECK(c, exact, "embedding backward (K = %d)", K);
  free(tile), free(dw), free(etile), free(dtile);
  ws_grid_free(&g);
}

/* Attention heads split over the wafer's ranks and their columns shared:
 * every rank ends with every head's columns of every section, and the
 * words received, summed over the wafer, are (K - 1) x the matrix (each
 * rank takes all but its own heads'). */
static void test_heads(checks *c, int K, int heads) {
  enum { HS = 2, SECTIONS = 3 };
  ws_grid g;
  wf_status st;
  CHECK(c, ws_grid_create(&g, MPI_COMM_WORLD, K, 64, 64, &st) == WF_OK, "grid of %d: %s", K, st.msg);
  int width = SECTIONS * heads * HS;
  CHECK(c, ws_grid_reserve(&g, N, (size_t)width, 1, &st) == WF_OK, "reserve");
  int lo, n;
  ws_grid_heads(&g, heads, &lo, &n);
  float *x = malloc((size_t)N * width * sizeof *x);
  for (int i = 0; i < N * width; i++) {
    int h = i % (heads * HS) / HS; /* the head of column i % width */
    x[i] = h >= lo && h < lo + n ? value(9, i) : -7.0f;
  }
  ws_grid_share_heads(&g, x, N, SECTIONS, heads, HS);
  int exact = 1;
  for (int i = 0; i < N * width; i++) exact &= x[i] == value(9, i);
  CHECK(c, exact, "%d heads shared over %d ranks", heads, K);
  double got = g.counts.head_words;
  MPI_Allreduce(MPI_IN_PLACE, &got, 1, MPI_DOUBLE, MPI_SUM, g.wafer);
  /* N = 5 rows of 3 sections: 5 heads of 2 make 150 numbers, (K - 1) x 150
   * received; 1 head (K = 2: one rank has none) 30, 30 received. */
  const double want5[5] = {0, 0, 150, 300, 450}, want1[5] = {0, 0, 30, 60, 90};
  double want = heads == 5 ? want5[K] : want1[K];
  CHECK(c, got == want, "%d heads over %d ranks: %g words received, want %g", heads, K, got, want);
  free(x);
  ws_grid_free(&g);
}

/* Sums of blocks over a wafer of K ranks, by hand: rank r's part of block
 * b is (r + 1) 10^b, so the sum over 3 blocks is 111 K (K + 1) / 2; and
 * the order MemoryX adds them in (within a block over the ranks, then block
 * by block): rank 0's parts 1e16 and 1, rank 1's -1e16 and 0 give 1 in
 * that order, 0 added rank by rank (1e16 + 1 is 1e16 in double). */
static void test_sum_blocks(checks *c, int K) {
  ws_grid g;
  wf_status st;
  CHECK(c, ws_grid_create(&g, MPI_COMM_WORLD, K, 64, 64, &st) == WF_OK, "grid of %d", K);
  CHECK(c, ws_grid_reserve(&g, 1, 1, 3, &st) == WF_OK, "reserve");
  double parts[3] = {g.rank + 1.0, 10 * (g.rank + 1.0), 100 * (g.rank + 1.0)};
  double sum = ws_grid_sum_blocks(&g, parts, 3);
  CHECK(c, sum == 111.0 * K * (K + 1) / 2, "sum of 3 blocks over %d ranks: %g", K, sum);
  if (K >= 2) {
    double order[2] = {g.rank == 0 ? 1e16 : g.rank == 1 ? -1e16 : 0, g.rank == 0 ? 1 : 0};
    sum = ws_grid_sum_blocks(&g, order, 2);
    CHECK(c, sum == 1, "within a block over the ranks, then block by block: %g, want 1", sum);
  }
  ws_grid_free(&g);
}

int main(int argc, char **argv) {
  checks c = checks_start(&argc, &argv);
  int n;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK(&c, n <= 4, "hand counts are written for 1 to 4 ranks, not %d", n);
  if (n > 4) return checks_finish(&c, "test_ws_grid");
  test_products(&c, n, false); /* one wafer of every rank */
  test_products(&c, n, true);  /* ... as one column of ranks */
  if (n == 4) test_products(&c, 2, false); /* two wafers of two */
  test_heads(&c, n, 5);
  test_heads(&c, n, 1); /* more ranks than heads */
  test_sum_blocks(&c, n);
  /* Bad input: K that does not divide the ranks; a grid the PEs cannot hold. */
  ws_grid g;
  wf_status st;
  if (n > 1) {
    CHECK(&c, ws_grid_create(&g, MPI_COMM_WORLD, n + 1, 64, 64, &st) == WF_ERR_INPUT, "K = n + 1");
    ws_grid_free(&g);
    CHECK(&c, ws_grid_create(&g, MPI_COMM_WORLD, n, 1, 1, &st) == WF_ERR_INPUT, "a 1 x 1 PE grid");
    ws_grid_free(&g);
  }
  return checks_finish(&c, "test_ws_grid");
}
