/* A GPT-style decoder in plain C on flat float buffers (llm.c's shape):
 * token embedding, learned positions, pre-LayerNorm blocks (causal
 * multi-head attention, an MLP with GELU, residuals), a final LayerNorm and
 * an LM head tied to the token embedding. Forward and backward with
 * cblas_sgemm; AdamW with gradient clipping.
 *
 * A size table carves one parameter buffer (and one gradient buffer of the
 * same layout) and one activation buffer; each tensor's shape is in the
 * table's comments. Layer l of a per-layer tensor starts at l times its
 * per-layer size, so one layer's weights are one contiguous slice of each:
 * what weight streaming broadcasts layer by layer. */
#ifndef WS_GPT_H
#define WS_GPT_H

#include <stdbool.h>
#include <stddef.h>

#include "wf_error.h"

/* The model's numbers: float; the gradient test builds the same code in
 * double (-DWS_DOUBLE) so that finite differences resolve every gradient. */
#ifdef WS_DOUBLE
typedef double ws_real;
#define WS_EXP exp
#define WS_LOG log
#define WS_TANH tanh
#define WS_SQRT sqrt
#define WS_POW pow
#define WS_COS cos
#define WS_GEMM cblas_dgemm
#else
typedef float ws_real;
#define WS_EXP expf
#define WS_LOG logf
#define WS_TANH tanhf
#define WS_SQRT sqrtf
#define WS_POW powf
#define WS_COS cosf
#define WS_GEMM cblas_sgemm
#endif

typedef struct ws_config {
  int vocab;    /* V: 256 for bytes */
  int seq;      /* T: the longest sequence (positions) */
  int layers;   /* L */
  int heads;    /* NH; channels must be a multiple */
  int channels; /* C */
  int relu;     /* 1: ReLU in the MLP instead of tanh-GELU (sparse activations) */
} ws_config;

/* The parameter tensors, in buffer order. */
enum {
  WS_WTE,      /* V x C    token embedding, and the LM head */
  WS_WPE,      /* T x C    position embedding */
  WS_LN1W,     /* L x C    */
  WS_LN1B,     /* L x C    */
  WS_QKVW,     /* L x 3C x C */
  WS_QKVB,     /* L x 3C   */
  WS_ATTPROJW, /* L x C x C */
  WS_ATTPROJB, /* L x C    */
  WS_LN2W,     /* L x C    */
  WS_LN2B,     /* L x C    */
  WS_FCW,      /* L x 4C x C */
  WS_FCB,      /* L x 4C   */
  WS_FCPROJW,  /* L x C x 4C */
  WS_FCPROJB,  /* L x C    */
  WS_LNFW,     /* C        */
  WS_LNFB,     /* C        */
  WS_NPARAMS
};
extern const char *const ws_param_names[WS_NPARAMS];
/* The size table: numbers of each tensor (all layers); the rows and columns
 * of tensor k's matrix (a layer's, for per-layer tensors: output by input
 * features for the weight matrices, 1 x its numbers for the others). */
void ws_param_sizes(const ws_config *c, size_t *sizes); /* WS_NPARAMS of them */
void ws_param_shape(const ws_config *c, int k, int *rows, int *cols);
/* Whether tensor k has one slice per layer. */
int ws_param_per_layer(int k);
/* Whether tensor k is a weight matrix (wte, qkvw, attprojw, fcw, fcprojw),
 * which a wafer of several ranks cuts into 2D tiles (ws_grid.h); the other
 * tensors (vectors and the position table) are whole on every rank. */
int ws_param_tiled(int k);

/* The part of tensor k's matrix (a layer's slice of a per-layer tensor) one
 * rank holds: rows [row0, row0 + rows) and columns [col0, col0 + cols) of
 * its full_rows x full_cols, row-major; the tile is the whole matrix on one
 * rank and for untiled tensors (1 x its numbers). */
typedef struct ws_tile {
  int row0, rows, col0, cols, full_rows, full_cols;
} ws_tile;

/* A place of a px x py grid of a wafer's ranks: place q is grid position
 * (cx, cy) = (q / py, q % py), as ws_grid numbers a wafer's ranks. */
typedef struct ws_place {
  int px, py, q;
} ws_place;
/* What place `at` holds of tensor k (ws_grid.h: rows over py, columns over px). */
ws_tile ws_tile_at(const ws_config *c, int k, ws_place at);

typedef struct ws_params {
  ws_real *t[WS_NPARAMS];
  size_t size[WS_NPARAMS]; /* floats */
  size_t count;            /* all of them */
  ws_real *mem;
} ws_params;

/* The activations of a batch of B sequences of T tokens. */
enum {
  WS_ENCODED, /* B x T x C */
  WS_LN1,     /* L x B x T x C */
  WS_LN1MEAN, /* L x B x T */
  WS_LN1RSTD, /* L x B x T */
  WS_QKV,     /* L x B x T x 3C */
  WS_ATTY,    /* L x B x T x C */
  WS_PREATT,  /* L x B x NH x T x T (a wafer's rank: its heads' only) */
  WS_ATT,     /* L x B x NH x T x T (a wafer's rank: its heads' only) */
  WS_ATTPROJ, /* L x B x T x C */
  WS_RES2,    /* L x B x T x C */
  WS_LN2,     /* L x B x T x C */
  WS_LN2MEAN, /* L x B x T */
  WS_LN2RSTD, /* L x B x T */
  WS_FCH,     /* L x B x T x 4C */
  WS_FCHGELU, /* L x B x T x 4C   GELU or ReLU (GELU on a wafer's rank: its fcproj columns) */
  WS_FCPROJ,  /* L x B x T x C */
  WS_RES3,    /* L x B x T x C */
  WS_LNF,     /* B x T x C */
  WS_LNFMEAN, /* B x T */
  WS_LNFRSTD, /* B x T */
  WS_LOGITS,  /* B x T x V */
  WS_PROBS,   /* B x T x V */
  WS_LOSSES,  /* B x T */
  WS_NACTS
};

typedef struct ws_acts {
  ws_real *t[WS_NACTS];
  size_t size[WS_NACTS];
  size_t count;
  ws_real *mem;
} ws_acts;

/* Weight streaming moves the parameters in blocks: block l < L is layer l
 * (its slice of each per-layer tensor, 12 C^2 + 13 C numbers), block L the
 * head (wte, wpe, lnfw, lnfb). A block view points at one block's tensors,
 * indexed like ws_params.t (the other entries NULL): into the whole
 * buffer, or into a packed copy (the tensors back to back, in enum order). */
typedef struct ws_block {
  ws_real *t[WS_NPARAMS];
} ws_block;
/* Numbers in block b. */
size_t ws_block_size(const ws_config *c, int b);
/* Numbers of block b the busiest place of a px x py grid (of ranks or PEs)
 * holds when the weight matrices are tiled over it as on a wafer of ranks
 * (ws_grid.h: rows over py, columns over px, the first blocks the largest,
 * so one place holds the largest tile of every matrix) and the rest
 * (vectors, positions) is spread evenly, rounded up. */
double ws_block_share(const ws_config *c, int b, int px, int py);
/* The same for a rank of a wafer of ranks, which holds the vectors whole. */
double ws_block_held(const ws_config *c, int b, int px, int py);
/* Block b of a whole buffer laid out as ws_params (parameters, gradients or
 * AdamW's moments). */
ws_block ws_block_of(ws_real *whole, const ws_config *c, int b);
/* Sum of squares of a block, in double, tensor by tensor in enum order: the
 * same number whether the block is packed or in the whole buffer, so the
 * gradient norm is bitwise the same resident and streamed. */
double ws_block_sumsq(const ws_block *g, const ws_config *c);

/* Block b as one place of a wafer's grid holds it (streamed to that
 * place): its tiles of the weight matrices and the other tensors whole,
 * packed back to back in enum order (on a 1 x 1 grid, the whole block). */
size_t ws_block_tiles_size(const ws_config *c, int b, ws_place at);
/* The sum of that over every place of a px x py grid: block b as weight
 * streaming's MemoryX keeps it for wafers of px x py ranks (ws_stream.h). */
size_t ws_block_wafer_size(const ws_config *c, int b, int px, int py);
ws_block ws_block_tiles(ws_real *mem, const ws_config *c, int b, ws_place at);
/* Between block views of the whole layout (ws_block_of)
 * and of a place's (ws_block_tiles): its tiles copied to the place's view
 * (to_tiles) or back into the whole; the untiled tensors too when `untiled`. */
void ws_block_tiles_copy(const ws_block *whole, const ws_block *tiles, const ws_config *c,
                         ws_place at, bool to_tiles, bool untiled);
/* ws_block_sumsq of a place's view: its tiles, and the untiled tensors
 * when `untiled` (once per wafer: every place holds the same). */
double ws_block_tiles_sumsq(const ws_block *g, const ws_config *c, ws_place at, bool untiled);

struct ws_grid; /* a wafer of several ranks: ws_grid.h */

typedef struct ws_gpt {
  ws_config c;
  int B, T;       /* the batch the activations are sized for */
  /* NULL: this rank holds every tensor whole; else the weight matrices are
   * this rank's tiles of them and their products run over the grid. */
  struct ws_grid *grid;
  ws_params p, g; /* parameters and their gradients (resident only; tiles on a grid) */
  ws_acts a, da;  /* activations and their gradients */
  ws_real *m, *v; /* AdamW's moments (NULL until the first update) */
  int steps;      /* AdamW updates done */
  /* With ReLU and `counting` set: per layer, the MLP activations the
   * forward passes found zero, and all they saw (the caller resets them). */
  double *zeros, *seen;
  double *norm_parts; /* a gradient's sum of squares block by block (ws_gpt_grad_sumsq) */
  bool counting;
  /* Called between the kernels of a layer pass, if set: weight streaming
   * gives MPI a chance to move the next layers' weights meanwhile. */
  void (*poll)(void *ctx);
  void *poll_ctx;
} ws_gpt;

/* Input errors for a shape that cannot be built (zero heads, channels not
 * a multiple of heads, ...). */
int ws_config_check(const ws_config *c, wf_status *st);
/* Input error when a weight matrix has fewer rows than py or fewer columns
 * than px: a wafer of px x py ranks would hold empty tiles of it. */
int ws_config_check_grid(const ws_config *c, int px, int py, wf_status *st);
/* Numbers in the parameters; in the activations of a B x T batch. */
size_t ws_param_count(const ws_config *c);
size_t ws_act_count(const ws_config *c, int B, int T);
/* Parameters (uninitialised), gradients and activations for batches of B x T.
 * Without `resident`, activations only: the weights come block by block. */
int ws_gpt_create(ws_gpt *m, const ws_config *c, int B, int T, wf_status *st);
/* The same with the weight matrices in this rank's tiles of `grid` (NULL:
 * whole); input error if a matrix has fewer rows or columns than the grid. */
int ws_gpt_create_on(ws_gpt *m, const ws_config *c, int B, int T, struct ws_grid *grid,
                     wf_status *st);
/* What this rank holds of tensor k; its place on the wafer's grid. */
ws_tile ws_gpt_tile(const ws_gpt *m, int k);
ws_place ws_gpt_place(const ws_gpt *m);
/* The MLP's hidden columns [*lo, *lo + *n) this rank applies GELU to: the
 * ones its tile of fcproj reads (all 4C on one rank). */
void ws_gpt_activation_columns(const ws_gpt *m, int *lo, int *n);
/* Between a buffer in m's layout (`mine`: tiles on a grid) and one of the
 * whole model's (`whole`, ws_param_count numbers): this rank's tiles copied
 * into `mine` (to_mine) or placed into `whole`; the untiled tensors too
 * when `untiled`. */
void ws_gpt_tiles_copy(const ws_gpt *m, ws_real *mine, ws_real *whole, bool to_mine,
                       bool untiled);
/* Block b of one of m's buffers laid out as its parameters (tiles on a
 * grid): ws_block_of for m's own layout. */
ws_block ws_gpt_block(const ws_gpt *m, ws_real *whole, int b);
/* The same for a rank of a wafer's `grid`, or one holding the model whole
 * when `grid` is NULL (weight streaming: the blocks, or a wafer's tiles of
 * them, arrive block by block). Collective over the wafer. */
int ws_gpt_create_activations_on(ws_gpt *m, const ws_config *c, int B, int T,
                                 struct ws_grid *grid, wf_status *st);
void ws_gpt_free(ws_gpt *m);
/* GPT-2's initialisation: normal(0, 0.02) weights, the residual projections
 * scaled by 1/sqrt(2L), zero biases, unit LayerNorm gains; from `seed`,
 * each number drawn by its place in the whole model (a tile holds the same
 * numbers as the whole model's). */
void ws_gpt_init(ws_gpt *m, unsigned long long seed);

/* Forward over tokens [B][T]; with targets, returns the mean loss (else 0). */
ws_real ws_gpt_forward(ws_gpt *m, const int *tokens, const int *targets);
/* Gradients of the last forward's mean loss into m->g (overwritten). */
void ws_gpt_backward(ws_gpt *m, const int *tokens, const int *targets);

/* The same passes a block at a time (what ws_gpt_forward and _backward do
 * with the resident weights): the embedding, layers 0..L-1, the head; then
 * the head, layers L-1..0, the embedding. Gradients accumulate (+=) into
 * the gradient blocks, which the caller zeroes. */
void ws_forward_embed(ws_gpt *m, const ws_block *head, const int *tokens);
void ws_forward_layer(ws_gpt *m, int l, const ws_block *w);
ws_real ws_forward_head(ws_gpt *m, const ws_block *head, const int *targets);
void ws_backward_head(ws_gpt *m, const ws_block *head, const ws_block *dhead, const int *targets);
void ws_backward_layer(ws_gpt *m, int l, const ws_block *w, const ws_block *dw);
void ws_backward_embed(ws_gpt *m, const ws_block *dhead, const int *tokens);

typedef struct ws_adamw {
  ws_real lr, beta1, beta2, eps, weight_decay;
  ws_real clip; /* global gradient norm clipped to this (0: no clipping) */
} ws_adamw;

/* AdamW on n numbers: the gradient scaled by `scale` (clipping), update
 * number `step` (1-based) for the bias corrections. Elementwise: the same
 * bits on a packed block as on the whole buffer. */
void ws_adamw_apply(ws_real *p, ws_real *m, ws_real *v, const ws_real *g, size_t n,
                    const ws_adamw *o, ws_real scale, int step);
/* The clipping factor for a gradient of this norm. */
ws_real ws_clip_scale(const ws_adamw *o, ws_real norm);

/* AdamW's moments, zero, if not there yet. */
int ws_gpt_moments(ws_gpt *m, wf_status *st);
/* The gradient's sum of squares in double, block by block (ws_block_sumsq)
 * and on a grid within a block over the wafer's ranks in rank order, the
 * vectors once (ws_grid_sum_blocks: collective over the wafer): the order
 * weight streaming's MemoryX ranks add it in. */
double ws_gpt_grad_sumsq(const ws_gpt *m);
/* One AdamW update from m->g; returns the gradient norm before clipping
 * (negative, with st set, when the moments cannot be allocated). */
ws_real ws_gpt_update(ws_gpt *m, const ws_adamw *o, wf_status *st);

/* The learning rate at `step` (0-based): linear warmup over `warmup` steps,
 * then cosine decay to `min_lr` at `total`. */
ws_real ws_lr_schedule(int step, int warmup, int total, ws_real lr, ws_real min_lr);

#endif
