/* The GPT-style decoder (ws_gpt.h): the size table that carves its parameter, gradient and
 * activation buffers, each rank's tiles of the weights on a wafer, the per-layer blocks weight
 * streaming moves, the forward and backward passes, and AdamW. */
#include "ws_gpt.h"

#include "wf_cblas.h"
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wf_config.h" /* WF_HOT */
#include "wf_decomp.h"
#include "wf_memory.h"
#include "wf_random.h"
#ifndef WS_DOUBLE /* the gradient test's double build runs on one rank */
#include "ws_grid.h"
#endif

const char *const ws_param_names[WS_NPARAMS] = {
    "wte",  "wpe",  "ln1w", "ln1b", "qkvw",    "qkvb",    "attprojw", "attprojb",
    "ln2w", "ln2b", "fcw",  "fcb",  "fcprojw", "fcprojb", "lnfw",     "lnfb"};

int ws_param_per_layer(int k) { return k != WS_WTE && k != WS_WPE && k != WS_LNFW && k != WS_LNFB; }

int ws_param_tiled(int k) {
  return k == WS_WTE || k == WS_QKVW || k == WS_ATTPROJW || k == WS_FCW || k == WS_FCPROJW;
}

/* The rows and columns of tensor k's matrix (a layer's, for per-layer
 * tensors): output by input features for the weight matrices; 1 x its
 * numbers for the others. */
static void shape_of(const ws_config *c, int k, int *rows, int *cols) {
  int C = c->channels;
  *rows = 1;
  switch (k) {
  case WS_WTE: *rows = c->vocab, *cols = C; break;
  case WS_QKVW: *rows = 3 * C, *cols = C; break;
  case WS_ATTPROJW: *rows = C, *cols = C; break;
  case WS_FCW: *rows = 4 * C, *cols = C; break;
  case WS_FCPROJW: *rows = C, *cols = 4 * C; break;
  case WS_WPE: *cols = c->seq * C; break;
  case WS_QKVB: *cols = 3 * C; break;
  case WS_FCB: *cols = 4 * C; break;
  default: *cols = C; break;
  }
}

ws_tile ws_tile_at(const ws_config *c, int k, ws_place at) {
  ws_tile t;
  shape_of(c, k, &t.full_rows, &t.full_cols);
  t.row0 = t.col0 = 0, t.rows = t.full_rows, t.cols = t.full_cols;
  if (ws_param_tiled(k)) {
    wf_block_range(t.full_rows, at.py, at.q % at.py, &t.row0, &t.rows);
    wf_block_range(t.full_cols, at.px, at.q / at.py, &t.col0, &t.cols);
  }
  return t;
}

/* This rank's place: on a grid, its rank in the wafer (ws_grid numbers
 * (cx, cy) the same way); else the whole of a 1 x 1 grid. */
static ws_place place_of(const struct ws_grid *grid) {
#ifndef WS_DOUBLE
  if (grid) return (ws_place){grid->px, grid->py, grid->rank};
#else
  (void)grid;
#endif
  return (ws_place){1, 1, 0};
}

static ws_tile tile_of(const ws_config *c, const struct ws_grid *grid, int k) {
  return ws_tile_at(c, k, place_of(grid));
}

ws_tile ws_gpt_tile(const ws_gpt *m, int k) { return tile_of(&m->c, m->grid, k); }
ws_place ws_gpt_place(const ws_gpt *m) { return place_of(m->grid); }

void ws_gpt_activation_columns(const ws_gpt *m, int *lo, int *n) {
  ws_tile next = ws_gpt_tile(m, WS_FCPROJW);
  *lo = next.col0, *n = next.cols;
}

int ws_config_check(const ws_config *c, wf_status *st) {
  if (c->vocab < 2 || c->seq < 1 || c->layers < 1 || c->channels < 1)
    return wf_fail(st, WF_ERR_INPUT,
                   "a model needs a vocabulary of 2 or more, and at least one position, layer "
                   "and channel (vocab %d, seq %d, layers %d, channels %d)",
                   c->vocab, c->seq, c->layers, c->channels);
  if (c->heads < 1 || c->channels % c->heads != 0)
    return wf_fail(st, WF_ERR_INPUT, "%d channels do not split into %d heads", c->channels,
                   c->heads);
  return WF_OK;
}

int ws_config_check_grid(const ws_config *c, int px, int py, wf_status *st) {
  for (int k = 0; k < WS_NPARAMS; k++) {
    int rows, cols;
    shape_of(c, k, &rows, &cols);
    if (ws_param_tiled(k) && (rows < py || cols < px))
      return wf_fail(st, WF_ERR_INPUT,
                     "%s (%d x %d a layer) has fewer rows or columns than the wafer's %dx%d rank "
                     "grid: tiles of it would be empty (more channels, or fewer ranks a wafer)",
                     ws_param_names[k], rows, cols, px, py);
  }
  return WF_OK;
}

static void param_sizes(const ws_config *c, size_t *s) {
  size_t V = (size_t)c->vocab, T = (size_t)c->seq, L = (size_t)c->layers, C = (size_t)c->channels;
  const size_t sizes[WS_NPARAMS] = {V * C,         T * C, L * C, L * C, L * 3 * C * C, L * 3 * C,
                                    L * C * C,     L * C, L * C, L * C, L * 4 * C * C, L * 4 * C,
                                    L * C * 4 * C, L * C, C,     C};
  memcpy(s, sizes, sizeof sizes);
}

static void act_sizes(const ws_config *c, int B, int T, size_t *s) {
  size_t b = (size_t)B, t = (size_t)T, L = (size_t)c->layers, C = (size_t)c->channels,
         NH = (size_t)c->heads, V = (size_t)c->vocab;
  const size_t sizes[WS_NACTS] = {b * t * C,
                                  L * b * t * C,
                                  L * b * t,
                                  L * b * t,
                                  L * b * t * 3 * C,
                                  L * b * t * C,
                                  L * b * NH * t * t,
                                  L * b * NH * t * t,
                                  L * b * t * C,
                                  L * b * t * C,
                                  L * b * t * C,
                                  L * b * t,
                                  L * b * t,
                                  L * b * t * 4 * C,
                                  L * b * t * 4 * C,
                                  L * b * t * C,
                                  L * b * t * C,
                                  b * t * C,
                                  b * t,
                                  b * t,
                                  b * t * V,
                                  b * t * V,
                                  b * t};
  memcpy(s, sizes, sizeof sizes);
}

/* The numbers of each tensor this rank holds: tiles on a grid. */
static void local_sizes(const ws_config *c, const struct ws_grid *grid, size_t *s) {
  for (int k = 0; k < WS_NPARAMS; k++) {
    ws_tile t = tile_of(c, grid, k);
    s[k] = (size_t)(ws_param_per_layer(k) ? c->layers : 1) * (size_t)t.rows * (size_t)t.cols;
  }
}

size_t ws_param_count(const ws_config *c) {
  size_t s[WS_NPARAMS], n = 0;
  param_sizes(c, s);
  for (int k = 0; k < WS_NPARAMS; k++) n += s[k];
  return n;
}

size_t ws_act_count(const ws_config *c, int B, int T) {
  size_t s[WS_NACTS], n = 0;
  act_sizes(c, B, T, s);
  for (int k = 0; k < WS_NACTS; k++) n += s[k];
  return n;
}

/* Carve `n` tensors of sizes `size` out of one buffer. */
static ws_real *carve(ws_real **t, const size_t *size, int n, size_t *count) {
  *count = 0;
  for (int k = 0; k < n; k++) *count += size[k];
  ws_real *mem = wf_alloc_large(*count * sizeof *mem);
  if (!mem) return NULL;
  memset(mem, 0, *count * sizeof *mem);
  ws_real *at = mem;
  for (int k = 0; k < n; k++) t[k] = at, at += size[k];
  return mem;
}

static int create(ws_gpt *m, const ws_config *c, int B, int T, bool resident,
                  struct ws_grid *grid, wf_status *st) {
  *m = (ws_gpt){.c = *c, .B = B, .T = T, .grid = grid};
  if (ws_config_check(c, st) != WF_OK) return st->code;
  if (B < 1 || T < 1 || T > c->seq)
    return wf_fail(st, WF_ERR_INPUT, "a batch of %d sequences of %d tokens (at most %d)", B, T,
                   c->seq);
#ifndef WS_DOUBLE
  if (grid && ws_config_check_grid(c, grid->px, grid->py, st) != WF_OK) return st->code;
#endif
  local_sizes(c, grid, m->p.size);
  memcpy(m->g.size, m->p.size, sizeof m->p.size);
  act_sizes(c, B, T, m->a.size);
  memcpy(m->da.size, m->a.size, sizeof m->a.size);
  if (resident) {
    m->p.mem = carve(m->p.t, m->p.size, WS_NPARAMS, &m->p.count);
    m->g.mem = carve(m->g.t, m->g.size, WS_NPARAMS, &m->g.count);
  }
  m->a.mem = carve(m->a.t, m->a.size, WS_NACTS, &m->a.count);
  m->da.mem = carve(m->da.t, m->da.size, WS_NACTS, &m->da.count);
  m->zeros = calloc((size_t)c->layers, sizeof *m->zeros);
  m->norm_parts = calloc((size_t)c->layers + 1, sizeof *m->norm_parts);
  m->seen = calloc((size_t)c->layers, sizeof *m->seen);
  if ((resident && (!m->p.mem || !m->g.mem)) || !m->a.mem || !m->da.mem || !m->zeros || !m->seen ||
      !m->norm_parts) {
    ws_gpt_free(m);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the model");
  }
  return WF_OK;
}

int ws_gpt_create(ws_gpt *m, const ws_config *c, int B, int T, wf_status *st) {
  return create(m, c, B, T, true, NULL, st);
}

/* create() on a wafer's grid (or none): collective, so a failure anywhere
 * (out of memory) fails every rank; then the grid's scratch. */
static int create_on(ws_gpt *m, const ws_config *c, int B, int T, bool resident,
                     struct ws_grid *grid, wf_status *st) {
  int rc = create(m, c, B, T, resident, grid, st);
#ifndef WS_DOUBLE
  if (grid) {
    int failed = rc != WF_OK;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, grid->wafer);
    int most = c->vocab > 4 * c->channels ? c->vocab : 4 * c->channels;
    if (failed && rc == WF_OK)
      rc = wf_fail(st, WF_ERR_RUNTIME, "another rank of the wafer could not build its model");
    else if (!failed)
      rc = ws_grid_reserve(grid, (size_t)B * T, (size_t)most, c->layers + 1, st);
    if (rc != WF_OK) ws_gpt_free(m);
  }
#endif
  return rc;
}

int ws_gpt_create_on(ws_gpt *m, const ws_config *c, int B, int T, struct ws_grid *grid,
                     wf_status *st) {
  return create_on(m, c, B, T, true, grid, st);
}

int ws_gpt_create_activations_on(ws_gpt *m, const ws_config *c, int B, int T,
                                 struct ws_grid *grid, wf_status *st) {
  return create_on(m, c, B, T, false, grid, st);
}

int ws_gpt_create_activations(ws_gpt *m, const ws_config *c, int B, int T, wf_status *st) {
  return create(m, c, B, T, false, NULL, st);
}

/* ---- blocks ---- */

size_t ws_block_size(const ws_config *c, int b) {
  size_t sizes[WS_NPARAMS], n = 0;
  param_sizes(c, sizes);
  for (int k = 0; k < WS_NPARAMS; k++)
    if (ws_param_per_layer(k) == (b < c->layers))
      n += sizes[k] / (ws_param_per_layer(k) ? (size_t)c->layers : 1);
  return n;
}

/* Block b's numbers on the busiest place of a px x py grid: its tiles of
 * the weight matrices (the largest: ceil of each split) and the rest. */
static void block_parts(const ws_config *c, int b, int px, int py, double *tiles, double *rest) {
  *tiles = *rest = 0;
  for (int k = 0; k < WS_NPARAMS; k++) {
    if (ws_param_per_layer(k) != (b < c->layers)) continue;
    int rows, cols;
    shape_of(c, k, &rows, &cols);
    if (ws_param_tiled(k))
      *tiles += (double)((rows + py - 1) / py) * (double)((cols + px - 1) / px);
    else
      *rest += (double)rows * cols;
  }
}

double ws_block_share(const ws_config *c, int b, int px, int py) {
  double tiles, rest;
  block_parts(c, b, px, py, &tiles, &rest);
  return tiles + ceil(rest / ((double)px * py));
}

double ws_block_held(const ws_config *c, int b, int px, int py) {
  double tiles, rest;
  block_parts(c, b, px, py, &tiles, &rest);
  return tiles + rest;
}

/* Block b of a buffer whose tensors have `sizes` numbers. */
static ws_block block_in(ws_real *whole, const size_t *sizes, const ws_config *c, int b) {
  size_t at = 0;
  ws_block v = {{NULL}};
  for (int k = 0; k < WS_NPARAMS; k++) {
    bool layer = ws_param_per_layer(k);
    if (layer == (b < c->layers))
      v.t[k] = whole + at + (layer ? sizes[k] / (size_t)c->layers * (size_t)b : 0);
    at += sizes[k];
  }
  return v;
}

ws_block ws_block_of(ws_real *whole, const ws_config *c, int b) {
  size_t sizes[WS_NPARAMS];
  param_sizes(c, sizes);
  return block_in(whole, sizes, c, b);
}

ws_block ws_gpt_block(const ws_gpt *m, ws_real *whole, int b) {
  return block_in(whole, m->p.size, &m->c, b);
}

ws_block ws_block_packed(ws_real *mem, const ws_config *c, int b) {
  return ws_block_tiles(mem, c, b, (ws_place){1, 1, 0});
}

/* Numbers of tensor k in one block. */
static size_t block_tensor(const ws_config *c, int k) {
  size_t sizes[WS_NPARAMS];
  param_sizes(c, sizes);
  return ws_param_per_layer(k) ? sizes[k] / (size_t)c->layers : sizes[k];
}

void ws_block_copy(const ws_block *dst, const ws_block *src, const ws_config *c) {
  for (int k = 0; k < WS_NPARAMS; k++)
    if (src->t[k]) memcpy(dst->t[k], src->t[k], block_tensor(c, k) * sizeof(ws_real));
}

double ws_block_sumsq(const ws_block *g, const ws_config *c) {
  return ws_block_tiles_sumsq(g, c, (ws_place){1, 1, 0}, true);
}

/* Numbers of tensor k in one block at place `at`. */
static size_t tile_numbers(const ws_config *c, int k, ws_place at) {
  ws_tile t = ws_tile_at(c, k, at);
  return (size_t)t.rows * (size_t)t.cols;
}

size_t ws_block_tiles_size(const ws_config *c, int b, ws_place at) {
  size_t n = 0;
  for (int k = 0; k < WS_NPARAMS; k++)
    if (ws_param_per_layer(k) == (b < c->layers)) n += tile_numbers(c, k, at);
  return n;
}

size_t ws_block_wafer_size(const ws_config *c, int b, int px, int py) {
  size_t n = 0;
  for (int q = 0; q < px * py; q++) n += ws_block_tiles_size(c, b, (ws_place){px, py, q});
  return n;
}

ws_block ws_block_tiles(ws_real *mem, const ws_config *c, int b, ws_place at) {
  ws_block v = {{NULL}};
  for (int k = 0; k < WS_NPARAMS; k++) {
    if (ws_param_per_layer(k) != (b < c->layers)) continue;
    v.t[k] = mem;
    mem += tile_numbers(c, k, at);
  }
  return v;
}

void ws_block_tiles_copy(const ws_block *whole, const ws_block *tiles, const ws_config *c,
                         ws_place at, bool to_tiles, bool untiled) {
  for (int k = 0; k < WS_NPARAMS; k++) {
    if (!whole->t[k] || !(ws_param_tiled(k) || untiled)) continue;
    ws_tile tl = ws_tile_at(c, k, at);
    for (int r = 0; r < tl.rows; r++) {
      ws_real *t = tiles->t[k] + (size_t)r * tl.cols;
      ws_real *w = whole->t[k] + (size_t)(tl.row0 + r) * tl.full_cols + tl.col0;
      memcpy(to_tiles ? t : w, to_tiles ? w : t, (size_t)tl.cols * sizeof *t);
    }
  }
}

double ws_block_tiles_sumsq(const ws_block *g, const ws_config *c, ws_place at, bool untiled) {
  double sum = 0;
  for (int k = 0; k < WS_NPARAMS; k++) {
    if (!g->t[k] || !(ws_param_tiled(k) || untiled)) continue;
    size_t n = tile_numbers(c, k, at);
    const ws_real *x = g->t[k];
#pragma omp simd reduction(+ : sum)
    for (size_t i = 0; i < n; i++) sum += (double)x[i] * x[i];
  }
  return sum;
}

void ws_gpt_tiles_copy(const ws_gpt *m, ws_real *mine, ws_real *whole, bool to_mine,
                       bool untiled) {
  size_t sizes[WS_NPARAMS];
  param_sizes(&m->c, sizes);
  ws_real *w = whole, *t = mine;
  for (int k = 0; k < WS_NPARAMS; k++) {
    ws_tile tl = ws_gpt_tile(m, k);
    int slices = ws_param_per_layer(k) ? m->c.layers : 1;
    size_t row = (size_t)tl.cols * sizeof *t;
    if (ws_param_tiled(k) || untiled)
      for (int l = 0; l < slices; l++)
        for (int r = 0; r < tl.rows; r++) {
          ws_real *a = t + ((size_t)l * tl.rows + r) * tl.cols;
          ws_real *b = w + ((size_t)l * tl.full_rows + tl.row0 + r) * tl.full_cols + tl.col0;
          memcpy(to_mine ? a : b, to_mine ? b : a, row);
        }
    w += sizes[k], t += m->p.size[k];
  }
}

void ws_gpt_free(ws_gpt *m) {
  free(m->p.mem), free(m->g.mem), free(m->a.mem), free(m->da.mem), free(m->m), free(m->v);
  free(m->zeros), free(m->seen), free(m->norm_parts);
  m->p.mem = m->g.mem = m->a.mem = m->da.mem = m->m = m->v = NULL;
  m->zeros = m->seen = m->norm_parts = NULL;
}

/* Normal(0, 1) from two uniform numbers of stream `seed` (Box-Muller). */
static ws_real normal(uint64_t seed, uint64_t i) {
  double u1 = wf_uniform(seed, 2 * i), u2 = wf_uniform(seed, 2 * i + 1);
  return (ws_real)(sqrt(-2 * log(u1 > 0 ? u1 : 1e-300)) * cos(6.283185307179586 * u2));
}

void ws_gpt_init(ws_gpt *m, unsigned long long seed) {
  const ws_real std = 0.02f, resid = std / WS_SQRT(2.0f * m->c.layers);
  size_t whole[WS_NPARAMS];
  param_sizes(&m->c, whole);
  uint64_t base = 0; /* the tensor's first number's place in the whole model */
  for (int k = 0; k < WS_NPARAMS; k++) {
    ws_real *t = m->p.t[k];
    bool gain = k == WS_LN1W || k == WS_LN2W || k == WS_LNFW;
    bool bias = k == WS_LN1B || k == WS_LN2B || k == WS_LNFB || k == WS_QKVB || k == WS_ATTPROJB ||
                k == WS_FCB || k == WS_FCPROJB;
    ws_real s = k == WS_ATTPROJW || k == WS_FCPROJW ? resid : std;
    ws_tile tl = ws_gpt_tile(m, k);
    int slices = ws_param_per_layer(k) ? m->c.layers : 1;
    size_t e = 0;
    for (int l = 0; l < slices; l++)
      for (int r = tl.row0; r < tl.row0 + tl.rows; r++)
        for (int col = tl.col0; col < tl.col0 + tl.cols; col++, e++) {
          uint64_t i = base + ((uint64_t)l * (uint64_t)tl.full_rows + (uint64_t)r) *
                                  (uint64_t)tl.full_cols + (uint64_t)col;
          t[e] = gain ? 1.0f : bias ? 0.0f : s * normal(seed, i);
        }
    base += whole[k];
  }
}

/* ---- layers, forward ---- */

static void encoder_forward(ws_real *out, const int *tok, const ws_real *wte, const ws_real *wpe,
                            int B, int T, int C) {
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      ws_real *o = out + ((size_t)b * T + t) * C;
      const ws_real *te = wte + (size_t)tok[b * T + t] * C, *pe = wpe + (size_t)t * C;
      for (int c = 0; c < C; c++) o[c] = te[c] + pe[c];
    }
}

WF_HOT static void layernorm_forward(ws_real *out, ws_real *mean, ws_real *rstd, const ws_real *in,
                              const ws_real *w, const ws_real *bias, int N, int C) {
  for (int i = 0; i < N; i++) {
    const ws_real *x = in + (size_t)i * C;
    ws_real mu = 0, var = 0;
    for (int c = 0; c < C; c++) mu += x[c];
    mu /= C;
    for (int c = 0; c < C; c++) var += (x[c] - mu) * (x[c] - mu);
    var /= C;
    ws_real s = 1.0f / WS_SQRT(var + 1e-5f);
    ws_real *o = out + (size_t)i * C;
    for (int c = 0; c < C; c++) o[c] = (x[c] - mu) * s * w[c] + bias[c];
    mean[i] = mu, rstd[i] = s;
  }
}

/* out[N][OC] = in[N][IC] w^T (w: OC x IC, or m's tile of it) + bias. */
static void matmul_forward(const ws_gpt *m, ws_real *out, const ws_real *in, const ws_real *w,
                           const ws_real *bias, int N, int IC, int OC) {
#ifndef WS_DOUBLE
  if (m->grid) {
    ws_grid_matmul_forward(m->grid, out, in, w, bias, N, IC, OC);
    return;
  }
#else
  (void)m;
#endif
  WS_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, IC, 1.0f, in, IC, w, IC, 0.0f, out, OC);
  if (bias)
    for (int i = 0; i < N; i++)
      for (int o = 0; o < OC; o++) out[(size_t)i * OC + o] += bias[o];
}

/* a . b over n numbers in WS_LANES partial sums (lane j takes i = j mod
 * WS_LANES), then added in lane order: vectorised, yet the same bits in
 * every clone of a WF_HOT kernel (an `omp simd reduction` sums in as many
 * lanes as the clone's registers hold, so AVX2 and AVX-512 machines, ranks
 * of one wafer among them, would differ in the last bits). */
#define WS_LANES 8
static inline ws_real dot_lanes(const ws_real *a, const ws_real *b, int n) {
  ws_real acc[WS_LANES] = {0}, sum = 0;
  int i = 0;
  for (; i + WS_LANES <= n; i += WS_LANES)
    for (int j = 0; j < WS_LANES; j++) acc[j] += a[i + j] * b[i + j];
  for (int j = 0; j < WS_LANES; j++) sum += acc[j];
  for (; i < n; i++) sum += a[i] * b[i];
  return sum;
}

/* Causal multi-head attention over qkv [B][T][3C] (q, k, v each C, heads
 * of C / NH); pre and att [B][NH][T][T]; heads [h0, h0 + nh) only (a
 * wafer's ranks split them: attention_heads). The loops over a head's
 * channels are explicit SIMD loops (sums in fixed lanes: dot_lanes), which
 * the compiler would not vectorise otherwise. */
WF_HOT static void attention_forward(ws_real *out, ws_real *pre, ws_real *att, const ws_real *qkv,
                                     int B, int T, int C, int NH, int h0, int nh) {
  int hs = C / NH;
  ws_real scale = 1.0f / WS_SQRT((ws_real)hs);
  for (int b = 0; b < B; b++)
    for (int h = h0; h < h0 + nh; h++)
      for (int t = 0; t < T; t++) {
        const ws_real *q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
        ws_real *p = pre + (((size_t)b * NH + h) * T + t) * T;
        ws_real *a = att + (((size_t)b * NH + h) * T + t) * T;
        ws_real most = -INFINITY;
        for (int u = 0; u <= t; u++) {
          const ws_real *k = qkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          p[u] = dot_lanes(q, k, hs) * scale;
          if (p[u] > most) most = p[u];
        }
        ws_real sum = 0;
        for (int u = 0; u <= t; u++) sum += a[u] = WS_EXP(p[u] - most);
        for (int u = 0; u < T; u++) a[u] = u <= t ? a[u] / sum : 0.0f;
        ws_real *restrict o = out + ((size_t)b * T + t) * C + h * hs;
        for (int i = 0; i < hs; i++) o[i] = 0;
        for (int u = 0; u <= t; u++) {
          const ws_real *restrict v = qkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          ws_real w = a[u];
#pragma omp simd
          for (int i = 0; i < hs; i++) o[i] += w * v[i];
        }
      }
}

static const ws_real GELU_SCALE = 0.7978845608028654f; /* sqrt(2 / pi) */

/* exp(x) in a form the compiler vectorises (glibc's vector expf and tanhf
 * are offered only under -ffast-math): Cephes's range reduction and
 * polynomial, within 1 ulp of expf on [-87, 88] (measured every 0.001),
 * the argument clamped there. Rounding by adding 1.5 x 2^23, which leaves
 * n in the low bits, and the clamps as separate selects: GCC 12 vectorises
 * this form and not one with floorf or a float-to-int conversion. In
 * double (the gradient test's build) the library's exp. */
#ifdef WS_DOUBLE
static inline double simd_exp(double x) { return exp(x); }
#else
static inline float simd_exp(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  union {
    float f;
    int32_t i;
  } big = {.f = 1.44269504088896341f * x + 12582912.0f}; /* n = round(x / ln 2) */
  float n = big.f - 12582912.0f;
  float r = x - n * 0.693359375f + n * 2.12194440e-4f; /* x - n ln 2, in two parts */
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  union {
    int32_t i;
    float f;
  } scale = {.i = (big.i - 0x4B400000 + 127) << 23}; /* 2^n */
  return p * scale.f;
}
#endif

/* GELU's tanh form, 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715
 * x^3), written as x sigmoid(2u): one exponential, vectorised. */
WF_HOT static void gelu_forward(ws_real *out, const ws_real *in, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    ws_real x = in[i], u = GELU_SCALE * (x + 0.044715f * x * x * x);
    out[i] = x / (1.0f + simd_exp(-2.0f * u));
  }
}

/* ReLU; returns how many outputs are zero (the multiplications a dataflow
 * machine skips in the next matrix product). */
static size_t relu_forward(ws_real *out, const ws_real *in, size_t n) {
  size_t zeros = 0;
#pragma omp simd reduction(+ : zeros)
  for (size_t i = 0; i < n; i++) {
    out[i] = in[i] > 0 ? in[i] : 0.0f;
    zeros += in[i] <= 0;
  }
  return zeros;
}

static void add(ws_real *out, const ws_real *a, const ws_real *b, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

static void softmax_forward(ws_real *probs, const ws_real *logits, int N, int V) {
  for (int i = 0; i < N; i++) {
    const ws_real *l = logits + (size_t)i * V;
    ws_real *p = probs + (size_t)i * V, most = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++) most = l[v] > most ? l[v] : most;
    for (int v = 0; v < V; v++) sum += p[v] = WS_EXP(l[v] - most);
    for (int v = 0; v < V; v++) p[v] /= sum;
  }
}

/* Layer l's slice of an activation of `size` numbers for all layers. */
static ws_real *slice(ws_real *t, size_t size, int layers, int l) {
  return t + size / (size_t)layers * (size_t)l;
}
#define A(k, l) slice(m->a.t[k], m->a.size[k], m->c.layers, l)
#define DA(k, l) slice(m->da.t[k], m->da.size[k], m->c.layers, l)

/* The heads this rank computes, [*h0, *h0 + *nh): on a wafer of ranks its
 * share (each head on one rank, its columns then shared), else all. */
static void attention_heads(const ws_gpt *m, int *h0, int *nh) {
  *h0 = 0, *nh = m->c.heads;
#ifndef WS_DOUBLE
  if (m->grid) ws_grid_heads(m->grid, m->c.heads, h0, nh);
#endif
}

/* Every rank's heads' columns of `x` (N rows of `sections` x C) to every
 * rank of the wafer. */
static void share_heads(const ws_gpt *m, ws_real *x, int sections) {
#ifndef WS_DOUBLE
  if (m->grid)
    ws_grid_share_heads(m->grid, x, m->B * m->T, sections, m->c.heads,
                        m->c.channels / m->c.heads);
#else
  (void)m, (void)x, (void)sections;
#endif
}

static void poll(const ws_gpt *m) {
  if (m->poll) m->poll(m->poll_ctx);
}

/* The residual stream into layer l. */
static ws_real *layer_input(ws_gpt *m, int l) {
  return l > 0 ? A(WS_RES3, l - 1) : m->a.t[WS_ENCODED];
}
static ws_real *layer_dinput(ws_gpt *m, int l) {
  return l > 0 ? DA(WS_RES3, l - 1) : m->da.t[WS_ENCODED];
}

void ws_forward_embed(ws_gpt *m, const ws_block *head, const int *tokens) {
#ifndef WS_DOUBLE
  if (m->grid) {
    ws_grid_embed_forward(m->grid, m->a.t[WS_ENCODED], tokens, head->t[WS_WTE], head->t[WS_WPE],
                          m->B * m->T, m->T, m->c.channels, m->c.vocab);
    return;
  }
#endif
  encoder_forward(m->a.t[WS_ENCODED], tokens, head->t[WS_WTE], head->t[WS_WPE], m->B, m->T,
                  m->c.channels);
}

void ws_forward_layer(ws_gpt *m, int l, const ws_block *w) {
  int B = m->B, T = m->T, C = m->c.channels, NH = m->c.heads, N = B * T;
  size_t NC = (size_t)N * C;
  const ws_real *residual = layer_input(m, l);
  layernorm_forward(A(WS_LN1, l), A(WS_LN1MEAN, l), A(WS_LN1RSTD, l), residual, w->t[WS_LN1W],
                    w->t[WS_LN1B], N, C);
  matmul_forward(m, A(WS_QKV, l), A(WS_LN1, l), w->t[WS_QKVW], w->t[WS_QKVB], N, C, 3 * C);
  poll(m);
  int h0, nh;
  attention_heads(m, &h0, &nh);
  attention_forward(A(WS_ATTY, l), A(WS_PREATT, l), A(WS_ATT, l), A(WS_QKV, l), B, T, C, NH, h0,
                    nh);
  share_heads(m, A(WS_ATTY, l), 1);
  poll(m);
  matmul_forward(m, A(WS_ATTPROJ, l), A(WS_ATTY, l), w->t[WS_ATTPROJW], w->t[WS_ATTPROJB], N, C, C);
  add(A(WS_RES2, l), residual, A(WS_ATTPROJ, l), NC);
  layernorm_forward(A(WS_LN2, l), A(WS_LN2MEAN, l), A(WS_LN2RSTD, l), A(WS_RES2, l), w->t[WS_LN2W],
                    w->t[WS_LN2B], N, C);
  poll(m);
  matmul_forward(m, A(WS_FCH, l), A(WS_LN2, l), w->t[WS_FCW], w->t[WS_FCB], N, C, 4 * C);
  poll(m);
  if (m->c.relu) {
    size_t zeros = relu_forward(A(WS_FCHGELU, l), A(WS_FCH, l), 4 * NC);
    if (m->counting) m->zeros[l] += (double)zeros, m->seen[l] += 4.0 * (double)NC;
  } else { /* only the columns this rank's next product reads */
    int lo, n;
    ws_gpt_activation_columns(m, &lo, &n);
    size_t row = 4 * (size_t)C, at = (size_t)lo;
    for (int i = 0; i < N; i++, at += row)
      gelu_forward(A(WS_FCHGELU, l) + at, A(WS_FCH, l) + at, (size_t)n);
  }
  matmul_forward(m, A(WS_FCPROJ, l), A(WS_FCHGELU, l), w->t[WS_FCPROJW], w->t[WS_FCPROJB], N, 4 * C,
                 C);
  add(A(WS_RES3, l), A(WS_RES2, l), A(WS_FCPROJ, l), NC);
  poll(m);
}

ws_real ws_forward_head(ws_gpt *m, const ws_block *head, const int *targets) {
  int C = m->c.channels, V = m->c.vocab, N = m->B * m->T;
  layernorm_forward(m->a.t[WS_LNF], m->a.t[WS_LNFMEAN], m->a.t[WS_LNFRSTD],
                    layer_input(m, m->c.layers), head->t[WS_LNFW], head->t[WS_LNFB], N, C);
  matmul_forward(m, m->a.t[WS_LOGITS], m->a.t[WS_LNF], head->t[WS_WTE], NULL, N, C, V);
  softmax_forward(m->a.t[WS_PROBS], m->a.t[WS_LOGITS], N, V);
  if (!targets) return 0;
  double loss = 0;
  for (int i = 0; i < N; i++) {
    ws_real l = -WS_LOG(m->a.t[WS_PROBS][(size_t)i * V + targets[i]]);
    m->a.t[WS_LOSSES][i] = l;
    loss += l;
  }
  return (ws_real)(loss / N);
}

ws_real ws_gpt_forward(ws_gpt *m, const int *tokens, const int *targets) {
  ws_block head = ws_gpt_block(m, m->p.mem, m->c.layers);
  ws_forward_embed(m, &head, tokens);
  for (int l = 0; l < m->c.layers; l++) {
    ws_block w = ws_gpt_block(m, m->p.mem, l);
    ws_forward_layer(m, l, &w);
  }
  return ws_forward_head(m, &head, targets);
}

/* ---- layers, backward (gradients accumulate: +=) ---- */

static void encoder_backward(ws_real *dwte, ws_real *dwpe, const ws_real *dout, const int *tok,
                             int B, int T, int C) {
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      const ws_real *d = dout + ((size_t)b * T + t) * C;
      ws_real *te = dwte + (size_t)tok[b * T + t] * C, *pe = dwpe + (size_t)t * C;
      for (int c = 0; c < C; c++) te[c] += d[c], pe[c] += d[c];
    }
}

WF_HOT static void layernorm_backward(ws_real *din, ws_real *dw, ws_real *db, const ws_real *dout,
                               const ws_real *in, const ws_real *w, const ws_real *mean,
                               const ws_real *rstd, int N, int C) {
  for (int i = 0; i < N; i++) {
    const ws_real *d = dout + (size_t)i * C, *x = in + (size_t)i * C;
    ws_real mu = mean[i], s = rstd[i], dmean = 0, dnorm_norm = 0;
    for (int c = 0; c < C; c++) {
      ws_real norm = (x[c] - mu) * s, dnorm = w[c] * d[c];
      dmean += dnorm;
      dnorm_norm += dnorm * norm;
    }
    dmean /= C;
    dnorm_norm /= C;
    ws_real *dx = din + (size_t)i * C;
    for (int c = 0; c < C; c++) {
      ws_real norm = (x[c] - mu) * s, dnorm = w[c] * d[c];
      db[c] += d[c];
      dw[c] += norm * d[c];
      dx[c] += (dnorm - dmean - norm * dnorm_norm) * s;
    }
  }
}

/* For out = in w^T + bias: din += dout w, dw += dout^T in, dbias += sum dout. */
static void matmul_backward(const ws_gpt *m, ws_real *din, ws_real *dw, ws_real *dbias,
                            const ws_real *dout, const ws_real *in, const ws_real *w, int N, int IC,
                            int OC) {
#ifndef WS_DOUBLE
  if (m->grid) {
    ws_grid_matmul_backward(m->grid, din, dw, dbias, dout, in, w, N, IC, OC);
    return;
  }
#else
  (void)m;
#endif
  WS_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0f, dout, OC, w, IC, 1.0f, din,
          IC);
  WS_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, N, 1.0f, dout, OC, in, IC, 1.0f, dw, IC);
  if (dbias)
    for (int i = 0; i < N; i++)
      for (int o = 0; o < OC; o++) dbias[o] += dout[(size_t)i * OC + o];
}

WF_HOT static void attention_backward(ws_real *dqkv, ws_real *dpre, ws_real *datt,
                                      const ws_real *dout, const ws_real *qkv, const ws_real *att,
                                      int B, int T, int C, int NH, int h0, int nh) {
  int hs = C / NH;
  ws_real scale = 1.0f / WS_SQRT((ws_real)hs);
  for (int b = 0; b < B; b++)
    for (int h = h0; h < h0 + nh; h++)
      for (int t = 0; t < T; t++) {
        const ws_real *a = att + (((size_t)b * NH + h) * T + t) * T;
        ws_real *da = datt + (((size_t)b * NH + h) * T + t) * T;
        ws_real *dp = dpre + (((size_t)b * NH + h) * T + t) * T;
        const ws_real *restrict d = dout + ((size_t)b * T + t) * C + h * hs;
        const ws_real *restrict q = qkv + ((size_t)b * T + t) * 3 * C + h * hs;
        ws_real *restrict dq = dqkv + ((size_t)b * T + t) * 3 * C + h * hs;
        /* out = sum_u a[u] v_u */
        for (int u = 0; u <= t; u++) {
          const ws_real *restrict v = qkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          ws_real *restrict dv = dqkv + ((size_t)b * T + u) * 3 * C + 2 * C + h * hs;
          ws_real au = a[u];
          da[u] += dot_lanes(v, d, hs);
#pragma omp simd
          for (int i = 0; i < hs; i++) dv[i] += au * d[i];
        }
        /* Softmax: dp[u] = a[u] (da[u] - sum_w a[w] da[w]). */
        ws_real dot = 0;
        for (int u = 0; u <= t; u++) dot += a[u] * da[u];
        for (int u = 0; u <= t; u++) dp[u] += a[u] * (da[u] - dot);
        /* p[u] = scale q . k_u */
        for (int u = 0; u <= t; u++) {
          const ws_real *restrict k = qkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          ws_real *restrict dk = dqkv + ((size_t)b * T + u) * 3 * C + C + h * hs;
          ws_real g = dp[u] * scale;
#pragma omp simd
          for (int i = 0; i < hs; i++) {
            dq[i] += k[i] * g;
            dk[i] += q[i] * g;
          }
        }
      }
}

WF_HOT static void gelu_backward(ws_real *din, const ws_real *in, const ws_real *dout, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    ws_real x = in[i], u = GELU_SCALE * (x + 0.044715f * x * x * x);
    ws_real sig = 1.0f / (1.0f + simd_exp(-2.0f * u)); /* (1 + tanh u) / 2 */
    ws_real sech2 = 4.0f * sig * (1.0f - sig);         /* 1 - tanh^2 u */
    ws_real grad = sig + 0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
    din[i] += grad * dout[i];
  }
}

static void relu_backward(ws_real *din, const ws_real *in, const ws_real *dout, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; i++) din[i] += in[i] > 0 ? dout[i] : 0.0f;
}

static void accumulate(ws_real *out, const ws_real *in, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] += in[i];
}

void ws_backward_head(ws_gpt *m, const ws_block *head, const ws_block *dhead, const int *targets) {
  int C = m->c.channels, V = m->c.vocab, L = m->c.layers, N = m->B * m->T;
  memset(m->da.mem, 0, m->da.count * sizeof *m->da.mem);
  /* The mean loss: d/dlogits of softmax + cross-entropy, (p - onehot) / N. */
  ws_real *dlogits = m->da.t[WS_LOGITS];
  for (int i = 0; i < N; i++) {
    const ws_real *p = m->a.t[WS_PROBS] + (size_t)i * V;
    ws_real *dl = dlogits + (size_t)i * V;
    for (int v = 0; v < V; v++) dl[v] = (p[v] - (v == targets[i] ? 1.0f : 0.0f)) / N;
  }
  matmul_backward(m, m->da.t[WS_LNF], dhead->t[WS_WTE], NULL, dlogits, m->a.t[WS_LNF], head->t[WS_WTE],
                  N, C, V);
  layernorm_backward(layer_dinput(m, L), dhead->t[WS_LNFW], dhead->t[WS_LNFB], m->da.t[WS_LNF],
                     layer_input(m, L), head->t[WS_LNFW], m->a.t[WS_LNFMEAN], m->a.t[WS_LNFRSTD], N,
                     C);
}

void ws_backward_layer(ws_gpt *m, int l, const ws_block *w, const ws_block *dw) {
  int B = m->B, T = m->T, C = m->c.channels, NH = m->c.heads, N = B * T;
  size_t NC = (size_t)N * C;
  ws_real *residual = layer_input(m, l), *dresidual = layer_dinput(m, l);
  /* res3 = res2 + fcproj */
  accumulate(DA(WS_RES2, l), DA(WS_RES3, l), NC);
  accumulate(DA(WS_FCPROJ, l), DA(WS_RES3, l), NC);
  matmul_backward(m, DA(WS_FCHGELU, l), dw->t[WS_FCPROJW], dw->t[WS_FCPROJB], DA(WS_FCPROJ, l),
                  A(WS_FCHGELU, l), w->t[WS_FCPROJW], N, 4 * C, C);
  poll(m);
  if (m->c.relu)
    relu_backward(DA(WS_FCH, l), A(WS_FCH, l), DA(WS_FCHGELU, l), 4 * NC);
  else
    gelu_backward(DA(WS_FCH, l), A(WS_FCH, l), DA(WS_FCHGELU, l), 4 * NC);
  matmul_backward(m, DA(WS_LN2, l), dw->t[WS_FCW], dw->t[WS_FCB], DA(WS_FCH, l), A(WS_LN2, l),
                  w->t[WS_FCW], N, C, 4 * C);
  poll(m);
  layernorm_backward(DA(WS_RES2, l), dw->t[WS_LN2W], dw->t[WS_LN2B], DA(WS_LN2, l), A(WS_RES2, l),
                     w->t[WS_LN2W], A(WS_LN2MEAN, l), A(WS_LN2RSTD, l), N, C);
  /* res2 = residual + attproj */
  accumulate(dresidual, DA(WS_RES2, l), NC);
  accumulate(DA(WS_ATTPROJ, l), DA(WS_RES2, l), NC);
  matmul_backward(m, DA(WS_ATTY, l), dw->t[WS_ATTPROJW], dw->t[WS_ATTPROJB], DA(WS_ATTPROJ, l),
                  A(WS_ATTY, l), w->t[WS_ATTPROJW], N, C, C);
  poll(m);
  int h0, nh;
  attention_heads(m, &h0, &nh);
  attention_backward(DA(WS_QKV, l), DA(WS_PREATT, l), DA(WS_ATT, l), DA(WS_ATTY, l), A(WS_QKV, l),
                     A(WS_ATT, l), B, T, C, NH, h0, nh);
  share_heads(m, DA(WS_QKV, l), 3); /* q, k and v: three sections of C */
  poll(m);
  matmul_backward(m, DA(WS_LN1, l), dw->t[WS_QKVW], dw->t[WS_QKVB], DA(WS_QKV, l), A(WS_LN1, l),
                  w->t[WS_QKVW], N, C, 3 * C);
  layernorm_backward(dresidual, dw->t[WS_LN1W], dw->t[WS_LN1B], DA(WS_LN1, l), residual,
                     w->t[WS_LN1W], A(WS_LN1MEAN, l), A(WS_LN1RSTD, l), N, C);
  poll(m);
}

void ws_backward_embed(ws_gpt *m, const ws_block *dhead, const int *tokens) {
#ifndef WS_DOUBLE
  if (m->grid) {
    ws_grid_embed_backward(m->grid, dhead->t[WS_WTE], dhead->t[WS_WPE], m->da.t[WS_ENCODED],
                           tokens, m->B * m->T, m->T, m->c.channels, m->c.vocab);
    return;
  }
#endif
  encoder_backward(dhead->t[WS_WTE], dhead->t[WS_WPE], m->da.t[WS_ENCODED], tokens, m->B, m->T,
                   m->c.channels);
}

void ws_gpt_backward(ws_gpt *m, const int *tokens, const int *targets) {
  int L = m->c.layers;
  memset(m->g.mem, 0, m->g.count * sizeof *m->g.mem);
  ws_block head = ws_gpt_block(m, m->p.mem, L), dhead = ws_gpt_block(m, m->g.mem, L);
  ws_backward_head(m, &head, &dhead, targets);
  for (int l = L - 1; l >= 0; l--) {
    ws_block w = ws_gpt_block(m, m->p.mem, l), dw = ws_gpt_block(m, m->g.mem, l);
    ws_backward_layer(m, l, &w, &dw);
  }
  ws_backward_embed(m, &dhead, tokens);
}

/* ---- optimiser ---- */

#ifndef WS_DOUBLE
double ws_gpt_grad_sumsq(const ws_gpt *m) {
  ws_place at = ws_gpt_place(m);
  double sum = 0;
  for (int b = 0; b <= m->c.layers; b++) {
    /* the vectors (the same on every rank of a wafer) from the first rank only */
    ws_block g = ws_gpt_block(m, m->g.mem, b);
    m->norm_parts[b] = ws_block_tiles_sumsq(&g, &m->c, at, at.q == 0);
    sum += m->norm_parts[b];
  }
  return m->grid ? ws_grid_sum_blocks(m->grid, m->norm_parts, m->c.layers + 1) : sum;
}
#endif

int ws_gpt_moments(ws_gpt *m, wf_status *st) {
  if (m->m) return WF_OK;
  m->m = calloc(m->p.count, sizeof *m->m);
  m->v = calloc(m->p.count, sizeof *m->v);
  if (!m->m || !m->v) {
    free(m->m), free(m->v);
    m->m = m->v = NULL;
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for AdamW's moments");
  }
  return WF_OK;
}

ws_real ws_clip_scale(const ws_adamw *o, ws_real norm) {
  /* As torch.nn.utils.clip_grad_norm_ scales. */
  return o->clip > 0 && norm > o->clip ? o->clip / (norm + 1e-6f) : 1.0f;
}

void ws_adamw_apply(ws_real *p, ws_real *m, ws_real *v, const ws_real *g, size_t n,
                    const ws_adamw *o, ws_real scale, int step) {
  /* The settings as locals: the stores below could alias *o otherwise, and
   * reloading it each element keeps the loop from vectorising. */
  const ws_real lr = o->lr, b1 = o->beta1, b2 = o->beta2, eps = o->eps, wd = o->weight_decay;
  const ws_real c1 = 1.0f - WS_POW(b1, (ws_real)step), c2 = 1.0f - WS_POW(b2, (ws_real)step);
#pragma omp simd
  for (size_t i = 0; i < n; i++) {
    ws_real gi = g[i] * scale;
    m[i] = b1 * m[i] + (1.0f - b1) * gi;
    v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
    ws_real mhat = m[i] / c1, vhat = v[i] / c2;
    p[i] -= lr * (mhat / (WS_SQRT(vhat) + eps) + wd * p[i]);
  }
}

ws_real ws_gpt_update(ws_gpt *m, const ws_adamw *o, wf_status *st) {
  if (ws_gpt_moments(m, st) != WF_OK) return -1;
  /* The norm block by block (layers, then the head), as weight streaming's
   * MemoryX ranks add it up. */
  double sum = 0;
#ifndef WS_DOUBLE
  sum = ws_gpt_grad_sumsq(m);
#else
  for (int b = 0; b <= m->c.layers; b++) {
    ws_block g = ws_gpt_block(m, m->g.mem, b);
    sum += ws_block_sumsq(&g, &m->c);
  }
#endif
  ws_real norm = (ws_real)sqrt(sum);
  m->steps++;
  ws_adamw_apply(m->p.mem, m->m, m->v, m->g.mem, m->p.count, o, ws_clip_scale(o, norm), m->steps);
  return norm;
}

ws_real ws_lr_schedule(int step, int warmup, int total, ws_real lr, ws_real min_lr) {
  if (step < warmup) return lr * (ws_real)(step + 1) / (ws_real)warmup;
  if (total <= warmup) return lr;
  ws_real progress = (ws_real)(step - warmup) / (ws_real)(total - warmup);
  if (progress > 1) progress = 1;
  return min_lr + 0.5f * (lr - min_lr) * (1.0f + WS_COS(3.14159265358979f * progress));
}
