/* The wafer model of a TLR-MVM (tl_model.h): each PE's share of the tiles' bases, the
 * multicast of x and the reduction of y along the PE grid, and KAUST's byte count for the
 * bandwidth. */
#include "tl_model.h"

#include <math.h>
#include <stdlib.h>

#include "tl_matrix.h"
#include "wf_model.h"

double tl_kaust_bytes(long long R, int nb, int m, int n) {
  return 8.0 * (2.0 * (double)R * nb + m + n + 4.0 * (double)R);
}

/* The PEs [lo, hi) of a tile along an axis of npe PEs with `ntiles` tiles:
 * its own PE, and the PEs up to the next tile's when tiles are fewer. */
static void tile_span(int t, int ntiles, int npe, int *lo, int *hi) {
  *lo = tl_tile_pe(t, ntiles, npe);
  *hi = t + 1 < ntiles ? tl_tile_pe(t + 1, ntiles, npe) : npe;
  if (*hi <= *lo) *hi = *lo + 1;
}

/* What the tiles put on the PE grid: each PE's share of the bases (complex
 * elements), the vector entries its PE column takes in (x) and its PE row
 * gives out (y), the widest tile in PE rows, and the totals. */
typedef struct pe_loads {
  double *load, *xcol, *yrow; /* [pe_ny][pe_nx], [pe_nx], [pe_ny] */
  int yspan;
  double elements;
  long long total_rank;
} pe_loads;

/* Tile by tile, each at its own rank. A tile on several PEs splits its rank
 * over them: each needs all of x_j and gives a partial y_i, summed along
 * the PE row and then over the tile's PE rows. */
static void tile_loads(const tl_model_case *c, int mt, int nt, int pe_nx, int pe_ny, pe_loads *L) {
  for (int i = 0; i < mt; i++) {
    int y0, y1, m = tl_tile_len(c->m, c->nb, i);
    tile_span(i, mt, pe_ny, &y0, &y1);
    for (int py = y0; py < y1; py++) L->yrow[py] += m;
    if (y1 - y0 > L->yspan) L->yspan = y1 - y0;
    for (int j = 0; j < nt; j++) {
      int x0, x1, n = tl_tile_len(c->n, c->nb, j);
      tile_span(j, nt, pe_nx, &x0, &x1);
      double k = c->rank[(size_t)i * nt + j], share = (double)(m + n) * k / ((x1 - x0) * (y1 - y0));
      L->total_rank += (long long)k;
      L->elements += (double)(m + n) * k;
      for (int py = y0; py < y1; py++)
        for (int px = x0; px < x1; px++) L->load[(size_t)py * pe_nx + px] += share;
      if (i == 0)
        for (int px = x0; px < x1; px++) L->xcol[px] += n;
    }
  }
}

/* The same when every tile has rank k, in O(tiles along each axis + PEs)
 * instead of O(tiles): a PE (px, py) holds k (m_i + n_j) / (sy_i sx_j) of
 * each tile (i, j) spanning it (sy, sx the tile's PE spans), which sums to
 *   k [ (sum_i m_i / sy_i)(sum_j 1 / sx_j) + (sum_i 1 / sy_i)(sum_j n_j / sx_j) ]
 * over the tiles spanning its row and column. A 10^8 x 10^8 operator (a
 * 10,000 x 10,000 survey) has 2.4e12 tiles of 64: this takes milliseconds. */
static void uniform_loads(const tl_model_case *c, int mt, int nt, int pe_nx, int pe_ny,
                          pe_loads *L) {
  double *ay = calloc((size_t)pe_ny, sizeof *ay), *by = calloc((size_t)pe_ny, sizeof *by);
  double *ax = calloc((size_t)pe_nx, sizeof *ax), *bx = calloc((size_t)pe_nx, sizeof *bx);
  double k = c->uniform_rank, sum_m = 0, sum_n = 0;
  for (int i = 0; ay && by && i < mt; i++) {
    int y0, y1, m = tl_tile_len(c->m, c->nb, i);
    tile_span(i, mt, pe_ny, &y0, &y1);
    for (int py = y0; py < y1; py++)
      L->yrow[py] += m, ay[py] += (double)m / (y1 - y0), by[py] += 1.0 / (y1 - y0);
    if (y1 - y0 > L->yspan) L->yspan = y1 - y0;
    sum_m += m;
  }
  for (int j = 0; ax && bx && j < nt; j++) {
    int x0, x1, n = tl_tile_len(c->n, c->nb, j);
    tile_span(j, nt, pe_nx, &x0, &x1);
    for (int px = x0; px < x1; px++)
      L->xcol[px] += n, ax[px] += (double)n / (x1 - x0), bx[px] += 1.0 / (x1 - x0);
    sum_n += n;
  }
  for (int py = 0; ay && by && ax && bx && py < pe_ny; py++)
    for (int px = 0; px < pe_nx; px++)
      L->load[(size_t)py * pe_nx + px] = k * (ay[py] * bx[px] + by[py] * ax[px]);
  L->total_rank = (long long)k * mt * nt;
  L->elements = k * ((double)nt * sum_m + (double)mt * sum_n);
  free(ay), free(by), free(ax), free(bx);
}

wf_range tl_model_bound(const wf_hw *hw, double pes, wf_prec p) {
  /* A complex element: 2 values, four real multiply-adds as tl_model_mvm's. */
  double cycles = wf_model_vec(hw, WF_OP_FMAC, p, 4, 2, 1).lo;
  /* seconds a byte at the clock's range, inverted */
  double bytes_per_cycle = pes * 2 * wf_prec_bytes(p) / cycles;
  return wf_range_inverse(wf_model_seconds(hw, wf_range_of(1 / bytes_per_cycle)));
}

tl_model tl_model_mvm(const wf_hw *hw, const wf_grid *g, int pe_nx, int pe_ny,
                      const tl_model_case *c, wf_prec p) {
  tl_model r = {0};
  int mt = (c->m + c->nb - 1) / c->nb, nt = (c->n + c->nb - 1) / c->nb;
  pe_loads L = {.load = calloc((size_t)pe_nx * pe_ny, sizeof *L.load),
                .xcol = calloc((size_t)pe_nx, sizeof *L.xcol),
                .yrow = calloc((size_t)pe_ny, sizeof *L.yrow),
                .yspan = 1};
  if (!L.load || !L.xcol || !L.yrow) {
    free(L.load), free(L.xcol), free(L.yrow);
    return r;
  }
  if (c->rank)
    tile_loads(c, mt, nt, pe_nx, pe_ny, &L);
  else /* every tile at one rank: the sums factorise */
    uniform_loads(c, mt, nt, pe_nx, pe_ny, &L);
  r.total_rank = L.total_rank;
  double most = 0, xmost = 0, ymost = 0;
  for (size_t e = 0; e < (size_t)pe_nx * pe_ny; e++) most = fmax(most, L.load[e]);
  for (int px = 0; px < pe_nx; px++) xmost = fmax(xmost, L.xcol[px]);
  for (int py = 0; py < pe_ny; py++) ymost = fmax(ymost, L.yrow[py]);
  free(L.load), free(L.xcol), free(L.yrow);

  int per_system = (c->frequencies + c->systems - 1) / c->systems;
  double value = 2 * wf_prec_bytes(p); /* a complex value */
  r.pe_elements = most;
  /* x from the middle of each PE column, both ways at once; y into the middle of each row */
  r.bcast_cycles =
      wf_model_bcast_cycles(hw, g, (size_t)(ceil(xmost) * value), pe_ny, (pe_ny - 1) / 2);
  double ywords = wf_model_words(hw, (size_t)(ceil(ymost) * value));
  r.reduce_cycles = wf_model_segment_reduce_cycles(hw, g, pe_nx, (pe_nx - 1) / 2, ywords);
  if (L.yspan > 1)
    r.reduce_cycles += wf_model_segment_reduce_cycles(hw, g, L.yspan, (L.yspan - 1) / 2, ywords);
  /* Four real multiply-adds per complex element, each reading two operands
   * and writing one (dest = dest + a * b over the stacked bases). */
  wf_range compute = wf_range_scale(wf_model_vec(hw, WF_OP_FMAC, p, 4 * most, 2, 1), per_system);
  double fabric = per_system * (r.bcast_cycles + r.reduce_cycles);
  r.compute_seconds = wf_model_seconds(hw, compute);
  r.seconds = wf_model_seconds(hw, wf_range_plus(compute, fabric));
  /* Its bases, and its x and partial y segments, for each of its frequencies. */
  r.bytes_per_pe = per_system * (most + xmost + ymost) * value;
  r.kaust_bytes = c->frequencies * tl_kaust_bytes(r.total_rank, c->nb, c->m, c->n);
  r.flops = 8.0 * c->frequencies * L.elements;
  r.bandwidth = wf_range_inverse(wf_range_scale(r.seconds, 1.0 / r.kaust_bytes));
  return r;
}
