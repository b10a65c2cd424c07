/* A wafer made of ranks, for training: the K ranks of one wafer form a
 * px x py rank grid over the wafer's PE grid (wf_rank_grid_auto, as every
 * workload lays out its ranks), and each weight matrix W (OC x IC: output
 * features by input features) is cut into 2D tiles: rank (cx, cy) holds the
 * rows of block cy of py and the columns of block cx of px (blocks differ by
 * at most one, as PE blocks do). This is the wafer's weight-stationary GEMM
 * (Cerebras's 2020 talk, ../docs/train.md) at the granularity of ranks.
 *
 * The activations a product reads and writes are whole on every rank of a
 * wafer (attention's heads are split over its ranks, their outputs then
 * shared: ws_grid_share_heads). A product out = in W^T:
 * each rank multiplies its columns of `in` (the input multicast along its
 * grid column) by its tile; the partial sums are reduced along grid rows
 * (a reduce-scatter, each piece summed in cx order by one rank, then an
 * allgather: every rank holds the same bits); the reduced blocks are
 * multicast along grid columns, so every rank ends with the whole output. The backward pass swaps the two directions.
 * Every word a rank receives is counted.
 *
 * The ranks at one grid position in every wafer are its `peers`: they
 * average their gradients (data parallelism over wafers). */
#ifndef WS_GRID_H
#define WS_GRID_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "wf_error.h"

typedef struct ws_grid_counts {
  double reduce_words;    /* partial sums this rank received, to reduce */
  double multicast_words; /* words of reduced blocks or embedding rows it received */
  double head_words;      /* attention heads' columns it received from their ranks */
  long long products;     /* distributed matrix products run (a backward pass: one) */
  long long exchanges;    /* embedding lookups and head shares run */
  long long collectives;      /* MPI collectives over the wafer (all of the above, the sums) */
  long long line_collectives; /* ... and along a grid row or column */
  double seconds;         /* wall time in the messages of all these */
  double model_cycles;    /* the products on the wafer's PE grid (ws_grid.cost) */
} ws_grid_counts;

/* The cycles of one product out[N][OC] = in[N][IC] W^T on the wafer's PE
 * grid (forward), or of its backward pass (input and weight gradients). */
typedef double (*ws_grid_cost_fn)(void *ctx, bool forward, int N, int IC, int OC);

typedef struct ws_grid {
  MPI_Comm wafer;        /* this wafer's K ranks */
  MPI_Comm row;          /* this grid row (same cy), ranked by cx */
  MPI_Comm col;          /* this grid column (same cx), ranked by cy */
  MPI_Comm peers;        /* this grid position in every wafer, ranked by wafer */
  int ranks, rank;       /* K, and this rank's place in `wafer` */
  int px, py, cx, cy;    /* rank grid; place (cx, cy) = (rank / py, rank % py) */
  int wafers, wafer_id;  /* wafers, and this rank's */
  ws_grid_counts counts; /* accumulated over the run */
  ws_grid_cost_fn cost;  /* if set, each product's model cycles are counted */
  void *cost_ctx;
  float *scratch;        /* partial sums and gathered blocks */
  size_t scratch_n;
  int *counts_buf; /* message sizes and places of a gather along a line or over the wafer */
} ws_grid;

/* The workers `comm` (its size a multiple of `K`) as wafers of K
 * consecutive ranks, each a rank grid over a pe_nx x pe_ny PE grid. Input
 * errors: K does not divide the workers; no rank grid of K fits the PEs.
 * Collective over `comm`. */
int ws_grid_create(ws_grid *g, MPI_Comm comm, int K, int pe_nx, int pe_ny, wf_status *st);
void ws_grid_free(ws_grid *g);

/* Scratch for products of N tokens with matrices of at most `dim` rows and
 * columns, for sharing heads of at most `dim` columns a token, and for sums
 * of `blocks` blocks (collective over the wafer: every rank's allocation
 * agrees). */
int ws_grid_reserve(ws_grid *g, size_t N, size_t dim, int blocks, wf_status *st);

/* This rank's rows of an OC-row matrix: [*lo, *lo + *n); its columns of an
 * IC-column one. */
void ws_grid_rows(const ws_grid *g, int OC, int *lo, int *n);
void ws_grid_cols(const ws_grid *g, int IC, int *lo, int *n);

/* out[N][OC] = in[N][IC] W^T + bias: `w` is this rank's tile (rows x cols,
 * row-major), `bias` (OC, or NULL) whole on every rank; `in` and `out`
 * whole on every rank. Collective over the wafer. */
void ws_grid_matmul_forward(ws_grid *g, float *out, const float *in, const float *w,
                            const float *bias, int N, int IC, int OC);
/* Its backward pass: din[N][IC] += dout W (whole); dw (the tile) +=
 * dout^T in on the tile's rows and columns; dbias (whole, or NULL) += the
 * column sums of dout. Collective over the wafer. */
void ws_grid_matmul_backward(ws_grid *g, float *din, float *dw, float *dbias, const float *dout,
                             const float *in, const float *w, int N, int IC, int OC);

/* Rows of a V x C table tiled like a weight matrix, looked up by token:
 * out[n][:] = table[tok[n]][:] + add[pos[n]][:] with `add` (positions x C)
 * whole on every rank, pos[n] = n % T. Each number comes from the one rank
 * holding it (a sum over the wafer with zeros elsewhere: exact). Collective. */
void ws_grid_embed_forward(ws_grid *g, float *out, const int *tok, const float *table,
                           const float *add, int N, int T, int C, int V);
/* Its backward pass: dtable (the tile) += dout's rows at their tokens,
 * dadd (whole) += them at their positions (no communication). */
void ws_grid_embed_backward(const ws_grid *g, float *dtable, float *dadd, const float *dout,
                            const int *tok, int N, int T, int C, int V);

/* This rank's share of `heads` attention heads, [*lo, *lo + *n): the
 * wafer's ranks split them as evenly as they go (a rank may have none).
 * Each head is computed on one rank only, by the same kernel as on one
 * rank, so the heads' bits do not depend on the wafer's size. */
void ws_grid_heads(const ws_grid *g, int heads, int *lo, int *n);
/* x: N rows of `sections` sections of heads x hs columns each (a row is
 * sections * heads * hs numbers). On entry each rank holds its own heads'
 * columns of every section, on exit every rank holds all of them.
 * Collective over the wafer; the words received are counted (head_words). */
void ws_grid_share_heads(ws_grid *g, float *x, int N, int sections, int heads, int hs);

/* Sum over blocks b of the sum over the wafer's ranks r of r's parts[b]
 * (nblocks doubles a rank: a gradient's sums of squares block by block),
 * added block by block and within a block in rank order. Weight streaming's
 * MemoryX adds a block's places in that order (ws_stream.c), so a resident
 * and a streamed wafer clip by the same bits. Every rank gets the same.
 * Collective over the wafer. */
double ws_grid_sum_blocks(ws_grid *g, const double *parts, int nblocks);

#endif
