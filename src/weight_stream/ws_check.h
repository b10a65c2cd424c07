/* A training step checked against references that share none of its code
 * (`wafer train`'s in-run checks, docs/train.md "Checks"), in resident mode
 * (the parameters, gradients and moments whole on every replica):
 *
 * - the gradient against central differences of the loss: along each
 *   piece's own gradient g_k (a piece: a tensor's slice for one layer, the
 *   attention's q, k and v rows apart), the replicas' mean loss L(theta +
 *   s g_k / |g_k|) has slope |g_k| at s = 0; the forward pass alone
 *   computes it, no line of the backward pass;
 * - the AdamW step against a scalar AdamW written from its definition
 *   (Loshchilov and Hutter 2019, as torch.optim.AdamW), on a sample of
 *   parameters, with the clipping norm from a plain double sum and the
 *   learning rate from the schedule's definition. */
#ifndef WS_CHECK_H
#define WS_CHECK_H

#include <mpi.h>

#include "wf_error.h"
#include "ws_gpt.h"

typedef struct ws_grad_check {
  double worst;          /* the largest |difference| / allowed over the pieces: <= 1 agrees */
  char worst_piece[40];  /* its piece, e.g. "qkvw[1].k" */
  int pieces;            /* the pieces compared (a zero gradient has no direction) */
  double base;           /* the replicas' mean loss at the checked parameters */
} ws_grad_check;

/* m's gradients (the replicas' mean) against the loss's slopes on this
 * replica's batch; the parameters are left as they were, bit for bit.
 * Collective over the replicas. */
int ws_check_gradient(ws_gpt *m, const int *tok, const int *tgt, MPI_Comm replicas, bool split,
                      ws_grad_check *out, wf_status *st);

/* The kernels whose definitions are conventions the slope check cannot
 * see (it checks the backward against the forward, whatever the forward
 * computes), and the elementwise ones whose errors are too small for it:
 * from the last forward and backward's activations, every row's LayerNorm
 * mean and 1/sqrt(biased variance + 1e-5), every MLP activation against
 * GELU's definition (or ReLU's, exactly) and its slope against central
 * differences of the definition, in double; resident, the layers'
 * LayerNorm parameter gradients against their sums over the rows (the
 * slope check at the first step cannot see a gain gradient scaled by the
 * gain: the gains start at 1). Ratios to the float round-off
 * each may have (<= 1 agrees). Runs on a worker's activations, resident or
 * streaming. */
typedef struct ws_kernel_check {
  double layernorm, activation, activation_slope;
  /* resident: the layers' LayerNorm gain and bias gradients (one
   * replica's, before the average) against their sums over the rows from
   * the definition (-1: not compared) */
  double layernorm_grads;
  int rows;        /* LayerNorm rows */
  size_t elements; /* activations (a wafer's rank: those it computes) */
} ws_kernel_check;
ws_kernel_check ws_check_kernels(const ws_gpt *m);

/* A checksum of a gradient block for checking its reductions: the sum of
 * its numbers, each times +1 or -1 by a hash of (block, index), in double;
 * *magnitude the sum of their absolute values. A reduction that drops,
 * doubles or keeps a stale part of the block moves it by about the square
 * root of the number of numbers, far outside the rounding. */
double ws_checksum(const ws_real *g, size_t n, int block, double *magnitude);

/* Parameters AdamW's check follows through one update: per tensor its
 * first, middle and last numbers and the one with the largest gradient. */
enum { WS_PROBES = 4 * WS_NPARAMS };

typedef struct ws_adamw_probe {
  size_t at[WS_PROBES];          /* into the whole buffer */
  double p[WS_PROBES], m[WS_PROBES], v[WS_PROBES], g[WS_PROBES]; /* before the update */
  double norm;                   /* of the whole gradient, a plain sum in double */
} ws_adamw_probe;

/* Before the update: the sampled numbers (the moments must exist:
 * ws_gpt_moments). */
void ws_adamw_probe_take(ws_adamw_probe *pr, const ws_gpt *m);
/* After update number `t` (1-based) with settings `o` (lr excluded: the
 * reference takes it from `lr`, the schedule's definition): the largest
 * |p - reference| / allowed over the samples (<= 1 agrees). */
double ws_adamw_probe_compare(const ws_adamw_probe *pr, const ws_gpt *m, const ws_adamw *o,
                              double lr, int t);
/* The learning rate at 0-based `step` from its definition (linear warmup
 * to `lr` over `warmup` steps, then half a cosine down to `min_lr` at
 * `total`), in double. */
double ws_lr_reference(int step, int warmup, int total, double lr, double min_lr);
/* ws_lr_schedule against ws_lr_reference at every step of a run of
 * `total`: the largest difference / allowed (<= 1 agrees). */
double ws_lr_schedule_check(int warmup, int total, float lr, float min_lr);

#endif
