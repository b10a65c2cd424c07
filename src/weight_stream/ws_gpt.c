/* The GPT-style decoder (ws_gpt.h): the size table that carves its parameter, gradient and
 * activation buffers, each rank's tiles of the weights on a wafer, the model's lifecycle and
 * initialisation, and AdamW. The blocks weight streaming moves: ws_block.c; the forward and
 * backward passes: ws_gpt_passes.c. */
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
void ws_param_shape(const ws_config *c, int k, int *rows, int *cols) {
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
  ws_param_shape(c, k, &t.full_rows, &t.full_cols);
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
    ws_param_shape(c, k, &rows, &cols);
    if (ws_param_tiled(k) && (rows < py || cols < px))
      return wf_fail(st, WF_ERR_INPUT,
                     "%s (%d x %d a layer) has fewer rows or columns than the wafer's %dx%d rank "
                     "grid: tiles of it would be empty (more channels, or fewer ranks a wafer)",
                     ws_param_names[k], rows, cols, px, py);
  }
  return WF_OK;
}

void ws_param_sizes(const ws_config *c, size_t *s) {
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
  ws_param_sizes(c, s);
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
  ws_param_sizes(&m->c, whole);
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
