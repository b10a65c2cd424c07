/* Blocks of the GPT's parameters (ws_gpt.h): what weight streaming moves a layer at a time,
 * whole, packed, or as one place of a wafer holds it (its tiles), with their sizes, copies
 * and sums of squares. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ws_gpt.h"

size_t ws_block_size(const ws_config *c, int b) {
  size_t sizes[WS_NPARAMS], n = 0;
  ws_param_sizes(c, sizes);
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
    ws_param_shape(c, k, &rows, &cols);
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
  ws_param_sizes(c, sizes);
  return block_in(whole, sizes, c, b);
}

ws_block ws_gpt_block(const ws_gpt *m, ws_real *whole, int b) {
  return block_in(whole, m->p.size, &m->c, b);
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
  ws_param_sizes(&m->c, sizes);
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
