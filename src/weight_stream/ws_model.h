/* The wafer model of a training step (ws_model_step, below), built from
 * its matrix products on a wafer's PE grid, weights stationary (the
 * Cerebras SDK's GEMV layout): W (out x in) is tiled over the nx x ny PEs,
 * PE (i, j) holding output rows j * out / ny.. and input
 * columns i * in / nx.., rounded up. `n` token vectors stream through:
 *
 *   forward  y = W x: x's segment multicast from the middle of each PE
 *            column both ways, each PE's tile product, the partial y
 *            segments reduced along each PE row into its middle PE;
 *   input gradient  dx = W^T dy: the same with rows and columns swapped;
 *   weight gradient dW += dy x^T: dy's segment along the rows, x's down the
 *            columns, an outer product into each tile (no reduction).
 *
 * Pipelined over the vectors: the first vector's latency (the multicast,
 * its tile, the reduction), then a vector an interval, the busiest core's
 * phase of its tile's FMACs and what it takes in through its ramp (its
 * input segments and the partial sums), overlapped as wf_model_phase says.
 * The reduction runs as a chain or a tree (wf_model), whichever is faster
 * for the n vectors. Counted with it: the words crossing links.
 * docs/model.md, "Transformer training". */
#ifndef WS_MODEL_H
#define WS_MODEL_H

#include "wf_grid.h"
#include "wf_hw.h"
#include "wf_range.h"
#include "wf_wafer.h"
#include "wf_workload.h"
#include "ws_gpt.h"

typedef enum { WS_GEMM_FORWARD, WS_GEMM_INPUT_GRAD, WS_GEMM_WEIGHT_GRAD } ws_gemm_kind;

typedef struct ws_gemm_cost {
  wf_range cycles;   /* [fast ports, slow ports] */
  double link_words; /* 32-bit words over PE-to-PE links */
} ws_gemm_cost;

ws_gemm_cost ws_model_gemm(const wf_hw *hw, const wf_grid *g, wf_prec p, ws_gemm_kind kind,
                           double n, int in, int out);

/* Floating-point operations of a training step over B x T tokens: the
 * matmuls and the attention (causal) forward, and twice that backward. */
double ws_step_flops(const ws_config *c, int B, int T);

/* A training step on each replica's wafer (B = batch / replicas
 * sequences): the matrix products by ws_model_gemm, fetch by fetch in
 * weight streaming's order, attention's multiply-adds spread evenly over
 * the PEs; with ReLU, the products its zeros feed scaled by the share of
 * non-zeros (sparsity: each layer's share of zeros, or NULL). Resident if
 * the busiest PE's tiles of the weights (ws_block_share), their gradients,
 * AdamW's moments (fp32) and its share of the activations fit its SRAM, else weight streaming through the system's I/O from MemoryX
 * (activations, the head and prefetch + 1 layers' weights and gradients
 * on the wafer), with the stall ws_stream_predicted_stall gives for the
 * I/O's rate. docs/model.md, "Transformer training". */
typedef struct ws_wafer_step {
  bool streaming, fits;
  double resident_bytes, streaming_bytes; /* per PE */
  wf_range compute, stall;
  wf_range dense;       /* the step without skipping ReLU's zeros (= compute without ReLU) */
  double links;         /* 32-bit words over PE-to-PE links a step */
  double tokens_needed; /* per replica a step, for no stall */
} ws_wafer_step;

/* The step's projection; the figures behind it in *ws. */
wf_projection ws_model_step(const wf_wafer *wafer, const ws_config *c, wf_prec prec, int B,
                            int prefetch, const double *sparsity, ws_wafer_step *ws);

#endif
