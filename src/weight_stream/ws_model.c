/* The wafer model of a training step (ws_model.h): each matrix product weight-stationary on
 * the PE grid, the step's flops, and whether the model stays resident in SRAM or streams its
 * weights from MemoryX. */
#include "ws_model.h"

#include <math.h>
#include <stdlib.h>

#include "wf_model.h"
#include "ws_stream.h"

ws_gemm_cost ws_model_gemm(const wf_hw *hw, const wf_grid *g, wf_prec p, ws_gemm_kind kind,
                           double n, int in, int out) {
  if (kind == WS_GEMM_INPUT_GRAD) { /* the forward of W^T on the grid turned over */
    wf_grid turned = *g;
    turned.nx = g->ny, turned.ny = g->nx;
    return ws_model_gemm(hw, &turned, p, WS_GEMM_FORWARD, n, out, in);
  }
  double in_seg = ceil((double)in / g->nx), out_seg = ceil((double)out / g->ny);
  size_t bytes = (size_t)wf_prec_bytes(p);
  double word = wf_model_words(hw, bytes); /* words a value */
  /* The tile's multiply-adds a vector: weight and accumulator from SRAM, the
   * input value from the fabric as it arrives (the SDK's GEMV runs them in
   * a task each received value starts): the phase's `fabric` part. */
  wf_range fmac = wf_model_vec(hw, WF_OP_FMAC, p, in_seg * out_seg, 2, 1);
  /* Collectives from the grid's middle, both directions at once: each input
   * segment is multicast from the middle of its PE column. Tokens pipeline:
   * the first token's latency, then a token an interval, the busiest core's
   * phase (docs/model.md, "What overlaps what"). */
  int mid_x = (g->nx - 1) / 2, mid_y = (g->ny - 1) / 2;
  double down = wf_model_bcast_cycles(hw, g, bytes, g->ny, mid_y);
  double links = n * word * ((double)in * (g->ny - 1) + (double)out * (g->nx - 1));
  if (kind == WS_GEMM_WEIGHT_GRAD) { /* both segments in, an outer product in place */
    double across = wf_model_bcast_cycles(hw, g, bytes, g->nx, mid_x);
    wf_range token = wf_model_phase(hw, wf_range_of(0), fmac, (in_seg + out_seg) * word, 0);
    return (ws_gemm_cost){wf_range_plus(wf_range_scale(token, n), fmax(down, across)), links};
  }
  /* Forward: the partial outputs reduced along each PE row into its middle
   * PE, as a chain (each PE adds its own as the stream passes: the middle
   * takes in a segment from each side a token) or a tree (a shorter latency,
   * but the middle takes in a segment from each side at every level of every
   * token); a program takes the faster for its n tokens, at each end. */
  int streams = wf_model_streams(g->nx, mid_x);
  double seg = out_seg * word, far = fmax(mid_x, g->nx - 1 - mid_x);
  double per_token[2] = {streams * seg, streams * wf_model_tree_levels(far) * seg};
  double reduce[2] = {wf_model_chain_reduce_cycles(hw, g, g->nx, mid_x, seg),
                      wf_model_segment_reduce_cycles(hw, g, g->nx, mid_x, seg)};
  wf_range first = wf_model_phase(hw, wf_range_of(0), fmac, in_seg * word, 0);
  wf_range best = {INFINITY, INFINITY};
  for (int s = 0; s < 2; s++) {
    wf_range token = wf_model_phase(hw, wf_range_of(0), fmac, in_seg * word + per_token[s], 0);
    wf_range total = wf_range_plus(wf_range_add(first, wf_range_scale(token, n - 1)), reduce[s]);
    best.lo = fmin(best.lo, total.lo), best.hi = fmin(best.hi, total.hi);
  }
  return (ws_gemm_cost){wf_range_plus(best, down), links};
}

/* What the model of a step is of: a replica's batch of B sequences of the
 * model c on the wafer's PE grid, at precision prec. */
typedef struct step_case {
  const wf_wafer *wafer;
  const ws_config *c;
  wf_prec prec;
  int B;
} step_case;

/* Multiply-adds of one forward pass over B x T tokens, counted from the
 * matmuls and the attention (causal: T (T + 1) / 2 scores a head). */
static double forward_flops(const ws_config *c, int B, int T) {
  double C = c->channels, L = c->layers, V = c->vocab, N = (double)B * T;
  double matmuls = N * (L * (3 * C * C + C * C + 8 * C * C) + V * C);
  double attention = L * B * (double)T * (T + 1) / 2 * 2 * C; /* scores and the weighted sum */
  return 2 * (matmuls + attention);
}

double ws_step_flops(const ws_config *c, int B, int T) { return 3 * forward_flops(c, B, T); }

/* Cycles on the wafer after each weight fetch of a training step
 * (ws_stream's order: the head, layers forward, layers backward; the LM
 * head's forward and backward go with the last forward layer): each matrix
 * product weight-stationary on the PE grid (ws_model_gemm), attention's
 * multiply-adds spread evenly over the PEs. With ReLU, the products its
 * zeros feed are scaled by the share of non-zeros: the second MLP product
 * forward, its weight gradient and both of the first product's backward.
 * Adds the fabric words to *links. */
static void fetch_cycles(const step_case *sc, const double *sparsity, wf_range *cyc,
                         double *links) {
  const ws_config *c = sc->c;
  const wf_hw *hw = &sc->wafer->hw;
  const wf_grid *g = &sc->wafer->grid;
  wf_prec p = sc->prec;
  double n = (double)sc->B * c->seq, pes = (double)g->nx * g->ny;
  int C = c->channels, L = c->layers;
  /* Attention's multiply-adds a layer (scores and weighted sums, causal). */
  double att = (double)sc->B * c->seq * (c->seq + 1) / 2 * 2 * C;
  wf_range att_fwd = wf_model_vec(hw, WF_OP_FMAC, p, att / pes, 2, 1);
  int n_fetch = ws_stream_fetches(c);
  for (int i = 0; i < n_fetch; i++) cyc[i] = (wf_range){0, 0};
  *links = 0;
  struct {
    int in, out;
    bool relu_fed;
  } gemm[4] = {{C, 3 * C, false}, {C, C, false}, {C, 4 * C, false}, {4 * C, C, true}};
  for (int l = 0; l < L; l++) {
    double dense = 1, keep = 1 - (c->relu && sparsity ? sparsity[l] : 0);
    wf_range *fwd = &cyc[1 + l], *bwd = &cyc[L + 1 + l];
    for (int k = 0; k < 4; k++) {
      ws_gemm_cost f = ws_model_gemm(hw, g, p, WS_GEMM_FORWARD, n, gemm[k].in, gemm[k].out);
      ws_gemm_cost di = ws_model_gemm(hw, g, p, WS_GEMM_INPUT_GRAD, n, gemm[k].in, gemm[k].out);
      ws_gemm_cost dw = ws_model_gemm(hw, g, p, WS_GEMM_WEIGHT_GRAD, n, gemm[k].in, gemm[k].out);
      /* fcproj reads the activation (forward, weight gradient); fc's output
       * gradient is zero where the activation was (both backward). */
      double sf = gemm[k].relu_fed ? keep : dense, sdi = k == 2 ? keep : dense;
      double sdw = k >= 2 ? keep : dense;
      fwd->lo += sf * f.cycles.lo, fwd->hi += sf * f.cycles.hi;
      bwd->lo += sdi * di.cycles.lo + sdw * dw.cycles.lo;
      bwd->hi += sdi * di.cycles.hi + sdw * dw.cycles.hi;
      *links += sf * f.link_words + sdi * di.link_words + sdw * dw.link_words;
    }
    fwd->lo += att_fwd.lo, fwd->hi += att_fwd.hi;
    bwd->lo += 2 * att_fwd.lo, bwd->hi += 2 * att_fwd.hi;
  }
  /* The LM head (tied embedding): its product forward and both backward. */
  ws_gemm_kind kinds[3] = {WS_GEMM_FORWARD, WS_GEMM_INPUT_GRAD, WS_GEMM_WEIGHT_GRAD};
  for (int k = 0; k < 3; k++) {
    ws_gemm_cost h = ws_model_gemm(hw, g, p, kinds[k], n, C, c->vocab);
    cyc[L].lo += h.cycles.lo, cyc[L].hi += h.cycles.hi, *links += h.link_words;
  }
}

/* The step's compute on the wafer, fetch by fetch, in seconds ([fast,
 * slow] in lo, hi); returns the total, the fabric words in *links. */
static wf_range wafer_compute(const step_case *sc, const double *sparsity, double *seg_lo,
                              double *seg_hi, wf_range *cyc, double *links) {
  const wf_hw *hw = &sc->wafer->hw;
  wf_range total = {0, 0};
  fetch_cycles(sc, sparsity, cyc, links);
  for (int i = 0; i < ws_stream_fetches(sc->c); i++) {
    wf_range sec = wf_model_seconds(hw, cyc[i]);
    seg_lo[i] = sec.lo, seg_hi[i] = sec.hi;
    total.lo += sec.lo, total.hi += sec.hi;
  }
  return total;
}

wf_projection ws_model_step(const wf_wafer *wafer, const ws_config *c, wf_prec prec, int B,
                            int prefetch, const double *sparsity, ws_wafer_step *ws) {
  const step_case sc = {wafer, c, prec, B};
  const wf_hw *hw = &wafer->hw;
  int n = ws_stream_fetches(c), T = c->seq;
  double pes = (double)wafer->dc.pe_nx * wafer->dc.pe_ny;
  double value = wf_prec_bytes(prec);
  /* The busiest PE's share of the weights: its tiles of every weight matrix
   * (the tiling ws_model_gemm's products run on) and its share of the rest. */
  int nx = wafer->grid.nx, ny = wafer->grid.ny;
  double head = ws_block_share(c, c->layers, nx, ny), layer = ws_block_share(c, 0, nx, ny);
  double params = head + c->layers * layer, acts = (double)ws_act_count(c, B, T) / pes;
  ws->resident_bytes = params * (2 * value + 8) + acts * value;
  ws->streaming_bytes = acts * value + 2 * value * ((prefetch + 1) * layer + head);
  double sram = wf_model_sram_for_data(hw);
  ws->streaming = ws->resident_bytes > sram;
  ws->fits = (ws->streaming ? ws->streaming_bytes : ws->resident_bytes) <= sram;

  wf_range *cyc = malloc((size_t)n * sizeof *cyc);
  double *seg_lo = malloc((size_t)n * sizeof *seg_lo), *seg_hi = malloc((size_t)n * sizeof *seg_hi);
  double total = ws_step_flops(c, B, T), dense_links;
  ws->compute = ws->dense = ws->stall = (wf_range){0, 0};
  if (cyc && seg_lo && seg_hi) {
    ws->dense = wafer_compute(&sc, NULL, seg_lo, seg_hi, cyc, &dense_links);
    ws->compute = wafer_compute(&sc, c->relu ? sparsity : NULL, seg_lo, seg_hi, cyc, &ws->links);
    if (ws->streaming) { /* the stall is largest when compute is fastest */
      /* a wafer takes whole blocks from one MemoryX link */
      double link = hw->io_bytes_per_s;
      ws->stall.lo = ws_stream_predicted_stall(c, 1, 1, 1, prefetch, seg_hi, link, value);
      ws->stall.hi = ws_stream_predicted_stall(c, 1, 1, 1, prefetch, seg_lo, link, value);
    }
  }
  free(cyc), free(seg_lo), free(seg_hi);
  /* Forward: 2 flops a weight a token against `value` bytes a weight. */
  ws->tokens_needed = value * (total / ws->compute.lo) / (2 * hw->io_bytes_per_s);
  return (wf_projection){.valid = true,
                         .unit = "step",
                         .seconds = {ws->compute.lo + ws->stall.lo, ws->compute.hi + ws->stall.hi},
                         .flops = total,
                         .bytes_per_pe = ws->streaming ? ws->streaming_bytes : ws->resident_bytes,
                         .sram_for_data = sram,
                         .pes_needed = pes,
                         .pes_offered = (double)hw->pe_nx * hw->pe_ny};
}
