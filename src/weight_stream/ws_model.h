/* Matrix products of a training step on a wafer's PE grid, weights
 * stationary (the Cerebras SDK's GEMV layout): W (out x in) is tiled over
 * the nx x ny PEs, PE (i, j) holding output rows j * out / ny.. and input
 * columns i * in / nx.., rounded up. `n` token vectors stream through:
 *
 *   forward  y = W x: x's segment multicast down each PE column, each PE's
 *            tile product, the partial y segments reduced along each PE
 *            row into its first PE;
 *   input gradient  dx = W^T dy: the same with rows and columns swapped;
 *   weight gradient dW += dy x^T: dy's segment along the rows, x's down the
 *            columns, an outer product into each tile (no reduction).
 *
 * Pipelined over the vectors: per vector the busiest of the tile's FMACs,
 * what the core takes in through its ramp (its input segments and the
 * partial sums passing through) and sends out; plus one pass's latency
 * (wf_model's multicast and segment reduction). Counted with it: the words
 * crossing links. docs/model.md, "Transformer training". */
#ifndef WS_MODEL_H
#define WS_MODEL_H

#include "wf_grid.h"
#include "wf_hw.h"
#include "wf_range.h"

typedef enum { WS_GEMM_FORWARD, WS_GEMM_INPUT_GRAD, WS_GEMM_WEIGHT_GRAD } ws_gemm_kind;

typedef struct ws_gemm_cost {
  wf_range cycles;   /* [fast ports, slow ports] */
  double link_words; /* 32-bit words over PE-to-PE links */
} ws_gemm_cost;

ws_gemm_cost ws_model_gemm(const wf_hw *hw, const wf_grid *g, wf_prec p, ws_gemm_kind kind,
                           double n, int in, int out);

#endif
