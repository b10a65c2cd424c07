#include "ws_model.h"

#include <math.h>

#include "wf_model.h"

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
  /* The tile's multiply-adds a vector: weight and accumulator from SRAM. */
  wf_range fmac = wf_model_vec(hw, WF_OP_FMAC, p, in_seg * out_seg, 2, 1);
  /* Both: the input segment down the columns; forward, the partial outputs
   * along the rows, through every core; weight gradient, the output
   * gradient's segment along the rows, and nothing out. */
  double take = (in_seg + out_seg) * word;
  double give = kind == WS_GEMM_FORWARD ? out_seg * word : 0;
  double down = wf_model_bcast_cycles(hw, g, bytes, g->ny, 0);
  double latency = kind == WS_GEMM_FORWARD
                       ? down + wf_model_segment_reduce_cycles(hw, g, g->nx, 0, out_seg * word)
                       : fmax(down, wf_model_bcast_cycles(hw, g, bytes, g->nx, 0));
  double links = n * word * ((double)in * (g->ny - 1) + (double)out * (g->nx - 1));
  double ramp = fmax(wf_model_ramp(hw, take), wf_model_ramp(hw, give));
  return (ws_gemm_cost){{n * fmax(fmac.lo, ramp) + latency, n * fmax(fmac.hi, ramp) + latency},
                        links};
}
