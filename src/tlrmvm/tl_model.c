#include "tl_model.h"

#include <math.h>
#include <stdlib.h>

#include "tl_matrix.h"
#include "wf_model.h"

double tl_kaust_bytes(long long R, int nb, int m, int n) {
  return 8.0 * (2.0 * (double)R * nb + m + n + 4.0 * (double)R);
}

static int tile_rank(const tl_model_case *c, int nt, int i, int j) {
  return c->rank ? c->rank[i * nt + j] : c->uniform_rank;
}

/* The PEs [lo, hi) of a tile along an axis of npe PEs with `ntiles` tiles:
 * its own PE, and the PEs up to the next tile's when tiles are fewer. */
static void tile_span(int t, int ntiles, int npe, int *lo, int *hi) {
  *lo = tl_tile_pe(t, ntiles, npe);
  *hi = t + 1 < ntiles ? tl_tile_pe(t + 1, ntiles, npe) : npe;
  if (*hi <= *lo) *hi = *lo + 1;
}

/* The per-PE loads of tl_model_mvm when every tile has rank k, in
 * O(tiles along each axis + PEs) instead of O(tiles): a PE (px, py) holds
 * k (m_i + n_j) / (sy_i sx_j) of each tile (i, j) spanning it (sy, sx the
 * tile's PE spans), which sums to
 *   k [ (sum_i m_i / sy_i)(sum_j 1 / sx_j) + (sum_i 1 / sy_i)(sum_j n_j / sx_j) ]
 * over the tiles spanning its row and column. A 10^8 x 10^8 operator (a
 * 10,000 x 10,000 survey) has 2.4e12 tiles of 64: this takes milliseconds. */
static void uniform_load(const tl_model_case *c, int mt, int nt, int pe_nx, int pe_ny,
                         double *load, double *xcol, double *yrow, int *yspan, double *elements,
                         long long *total_rank) {
  double *ay = calloc((size_t)pe_ny, sizeof *ay), *by = calloc((size_t)pe_ny, sizeof *by);
  double *ax = calloc((size_t)pe_nx, sizeof *ax), *bx = calloc((size_t)pe_nx, sizeof *bx);
  double k = c->uniform_rank, sum_m = 0, sum_n = 0;
  for (int i = 0; ay && by && i < mt; i++) {
    int y0, y1, m = tl_tile_len(c->m, c->nb, i);
    tile_span(i, mt, pe_ny, &y0, &y1);
    for (int py = y0; py < y1; py++) yrow[py] += m, ay[py] += (double)m / (y1 - y0), by[py] += 1.0 / (y1 - y0);
    if (y1 - y0 > *yspan) *yspan = y1 - y0;
    sum_m += m;
  }
  for (int j = 0; ax && bx && j < nt; j++) {
    int x0, x1, n = tl_tile_len(c->n, c->nb, j);
    tile_span(j, nt, pe_nx, &x0, &x1);
    for (int px = x0; px < x1; px++) xcol[px] += n, ax[px] += (double)n / (x1 - x0), bx[px] += 1.0 / (x1 - x0);
    sum_n += n;
  }
  for (int py = 0; ay && by && ax && bx && py < pe_ny; py++)
    for (int px = 0; px < pe_nx; px++)
      load[(size_t)py * pe_nx + px] = k * (ay[py] * bx[px] + by[py] * ax[px]);
  *total_rank = (long long)k * mt * nt;
  *elements = k * ((double)nt * sum_m + (double)mt * sum_n);
  free(ay), free(by), free(ax), free(bx);
}

tl_model tl_model_mvm(const wf_hw *hw, const wf_grid *g, int pe_nx, int pe_ny,
                      const tl_model_case *c, wf_prec p) {
  tl_model r = {0};
  int mt = (c->m + c->nb - 1) / c->nb, nt = (c->n + c->nb - 1) / c->nb;
  /* Each PE's share of the bases (complex elements), and the vector
   * entries its PE column takes in (x) and its PE row gives out (y). */
  double *load = calloc((size_t)pe_nx * pe_ny, sizeof *load);
  double *xcol = calloc((size_t)pe_nx, sizeof *xcol), *yrow = calloc((size_t)pe_ny, sizeof *yrow);
  if (!load || !xcol || !yrow) {
    free(load), free(xcol), free(yrow);
    return r;
  }
  double elements = 0;
  int yspan = 1;
  if (!c->rank) { /* every tile at one rank: the sums factorise (no loop over tiles) */
    uniform_load(c, mt, nt, pe_nx, pe_ny, load, xcol, yrow, &yspan, &elements, &r.total_rank);
    mt = 0; /* the per-tile loop below has nothing left to do */
  }
  for (int i = 0; i < mt; i++) {
    int y0, y1, m = tl_tile_len(c->m, c->nb, i);
    tile_span(i, mt, pe_ny, &y0, &y1);
    /* A tile on several PEs splits its rank over them: each needs all of
     * x_j and gives a partial y_i, summed along the PE row and then over
     * the tile's PE rows. */
    for (int py = y0; py < y1; py++) yrow[py] += m;
    if (y1 - y0 > yspan) yspan = y1 - y0;
    for (int j = 0; j < nt; j++) {
      int x0, x1, n = tl_tile_len(c->n, c->nb, j);
      tile_span(j, nt, pe_nx, &x0, &x1);
      double k = tile_rank(c, nt, i, j), share = (double)(m + n) * k / ((x1 - x0) * (y1 - y0));
      r.total_rank += (long long)k;
      elements += (double)(m + n) * k;
      for (int py = y0; py < y1; py++)
        for (int px = x0; px < x1; px++) load[(size_t)py * pe_nx + px] += share;
      if (i == 0)
        for (int px = x0; px < x1; px++) xcol[px] += n;
    }
  }
  double most = 0, xmost = 0, ymost = 0;
  for (size_t e = 0; e < (size_t)pe_nx * pe_ny; e++) most = fmax(most, load[e]);
  for (int px = 0; px < pe_nx; px++) xmost = fmax(xmost, xcol[px]);
  for (int py = 0; py < pe_ny; py++) ymost = fmax(ymost, yrow[py]);
  free(load), free(xcol), free(yrow);

  int per_system = (c->frequencies + c->systems - 1) / c->systems;
  double value = 2 * wf_prec_bytes(p); /* a complex value */
  r.pe_elements = most;
  r.bcast_cycles = wf_model_bcast_cycles(hw, g, (size_t)(ceil(xmost) * value), pe_ny, 0);
  double ywords = wf_model_words(hw, (size_t)(ceil(ymost) * value));
  r.reduce_cycles = wf_model_segment_reduce_cycles(hw, g, pe_nx, pe_nx / 2, ywords);
  if (yspan > 1) r.reduce_cycles += wf_model_segment_reduce_cycles(hw, g, yspan, yspan / 2, ywords);
  /* Four real multiply-adds per complex element, each reading two operands
   * and writing one (dest = dest + a * b over the stacked bases). */
  wf_range compute = wf_range_scale(wf_model_vec(hw, WF_OP_FMAC, p, 4 * most, 2, 1), per_system);
  double fabric = per_system * (r.bcast_cycles + r.reduce_cycles);
  r.compute_seconds = wf_model_seconds(hw, compute);
  r.seconds = wf_model_seconds(hw, wf_range_plus(compute, fabric));
  /* Its bases, and its x and partial y segments, for each of its frequencies. */
  r.bytes_per_pe = per_system * (most + xmost + ymost) * value;
  r.kaust_bytes = c->frequencies * tl_kaust_bytes(r.total_rank, c->nb, c->m, c->n);
  r.flops = 8.0 * c->frequencies * elements;
  r.bandwidth = wf_range_inverse(wf_range_scale(r.seconds, 1.0 / r.kaust_bytes));
  return r;
}
