/* Weight streaming over MPI ranks, as a Cerebras cluster trains models too
 * big for a wafer's SRAM. The ranks' roles come from wf_roles ([wafer]
 * memoryx_ranks, swarmx_ranks). MemoryX rank i owns the parameter blocks b
 * with b % memoryx == i (layer l is block l, the embeddings and final
 * LayerNorm block L), their gradients and AdamW's moments, and runs AdamW
 * on them. The wafer ranks are the workers, in wafers of px x py ranks
 * (ws_grid.h), each wafer a data-parallel replica: a worker holds
 * activations and only its place's part of the blocks in flight (its tiles
 * of the weight matrices and the rest whole, ws_block_tiles: the head, and
 * prefetch + 1 layer slots). SwarmX ranks relay. MemoryX keeps each block
 * packed place by place, and each place's part travels its own lane of
 * trees (ws_relay.h) to the ranks at that place of every wafer.
 *
 * A training step on a worker: the head, then layers 0..L-1 forward, then
 * L-1..0 backward, each layer's weights arriving down its owner's SwarmX
 * tree (ws_relay.h: point-to-point messages the SwarmX ranks forward),
 * asked for `prefetch` layers ahead, and each layer's gradients leaving up
 * the same tree (the SwarmX ranks adding their children's) as soon as they
 * are ready. Time spent waiting for weights is the stall. The gradient sum
 * over replicas, the norm (block by block) and AdamW are those of the
 * resident data-parallel step, so the two modes give the same bits for one
 * or two replicas (more: the tree adds in another order than the resident
 * allreduce, which may differ in the last bit), on wafers of any size (a
 * resident wafer adds the norm in MemoryX's order: ws_grid_sum_blocks). */
#ifndef WS_STREAM_H
#define WS_STREAM_H

#include <mpi.h>
#include <stdbool.h>

#include "wf_error.h"
#include "wf_roles.h"
#include "ws_gpt.h"
#include "ws_relay.h"

/* Sums a MemoryX or SwarmX rank has on their way up at once. */
#define WS_UP_WINDOW 2

typedef struct ws_stream_stats {
  double stall;       /* s waiting for weights (the worker's exposed wait) */
  double reduce_wait; /* s waiting for gradient reductions to finish */
  double update;      /* s in the norm and AdamW (MemoryX; overlapped with the next pass) */
  double bytes_down;  /* bytes this rank sent down its trees (MemoryX, SwarmX) */
  double bytes_up;    /* bytes this rank sent up them (workers, SwarmX) */
  double steps;       /* training steps these figures sum over */
} ws_stream_stats;

typedef struct ws_stream {
  ws_config c;
  int nmemx, nworkers, nswarm;
  int px, py, lanes;       /* a wafer's rank grid; lanes = px * py places */
  size_t *lane_at;         /* (L + 1) x (lanes + 1): where place q's part of block b starts */
  wf_role role;            /* this rank's */
  int index;               /* within its role */
  int prefetch;            /* layers fetched ahead of the one computing */
  double link_bytes_per_s; /* MemoryX's sending pace (0: as fast as MPI goes) */
  MPI_Comm role_comm;      /* the ranks of this rank's role (wf_roles's) */
  ws_relay relay;          /* the SwarmX trees */
  /* MemoryX: the owned blocks, packed: parameters, gradients, moments; the
   * last step's AdamW update, applied to each block when next needed. */
  int nown, *own;
  ws_real **p, **g, **m, **v;
  bool pending, *updated;
  ws_adamw pending_opt;
  ws_real pending_scale;
  int pending_step;
  /* Worker: its place's part of the head and its gradients, of the layer
   * slots and of the gradient slots. SwarmX: relay slots (the head's and
   * prefetch + 1 layers', every place's). */
  ws_real *head, *dhead, **slot, **gslot;
  int *gleg; /* a gradient slot's reduction on its way (a relay leg; -1: none) */
  /* MemoryX and SwarmX: WS_UP_WINDOW sums on their way up at once, each
   * with room for its children's blocks (SwarmX: all; MemoryX: 2..). */
  ws_real *pool;
  size_t pool_slot; /* words a sum in flight uses of the pool */
  size_t pool_parts; /* children's parts of a sum the pool keeps: pool_slot's blocks */
  ws_stream_stats stats;
  double *segment; /* worker: seconds computing after each fetch of a step, summed */
  /* The reductions checked (every step): each worker's +-1 checksum of each
   * gradient block it sends and the sum of its magnitudes (2 per block and
   * place, summed over `world`), against MemoryX's checksum of the average
   * it keeps; the worst |difference| / allowed so far (MemoryX; <= 1 agrees). */
  MPI_Comm world;
  double *sums;
  double reduction_worst;
  int reductions_checked;
} ws_stream;

/* Collective over `world`, whose roles `r` are, for wafers of px x py
 * workers (ws_grid's grid: every rank passes the same); input errors
 * without a MemoryX rank, with more MemoryX ranks than blocks, or with a
 * SwarmX fan-out that does not reach every worker (ws_relay_fits). */
int ws_stream_create(ws_stream *s, const wf_roles *r, MPI_Comm world, const ws_config *c, int px,
                     int py, int prefetch, int fanout, double link_gbps, wf_status *st);
void ws_stream_free(ws_stream *s);

/* MemoryX: take the owned blocks (and moments, if any) from a whole model. */
void ws_stream_load(ws_stream *s, const ws_gpt *whole);
/* Collective over the MemoryX ranks: their blocks (updates flushed)
 * assembled into `whole` on the first (parameters and moments), for a
 * checkpoint. */
int ws_stream_gather(ws_stream *s, ws_gpt *whole, wf_status *st);

/* One training step: a worker runs the passes on its batch (returns its
 * mean loss); MemoryX serves the weights, takes the gradients, averages
 * them over the replicas (checked against the workers' checksums) and
 * runs AdamW with `o` (update number `step`, 1-based); SwarmX relays.
 * Every rank calls it (only workers use m). */
ws_real ws_stream_train_step(ws_stream *s, ws_gpt *m, const int *tokens, const int *targets,
                             const ws_adamw *o, int step);
/* A forward pass only (validation): the same streaming, no gradients. */
ws_real ws_stream_forward(ws_stream *s, ws_gpt *m, const int *tokens, const int *targets);

/* Bytes a training step sends over the SwarmX trees' hops, summed over
 * the ranks of each kind: [0] MemoryX down, [1] SwarmX down, [2] SwarmX up,
 * [3] workers up. Collective over world. */
void ws_stream_hop_bytes(const ws_stream *s, double bytes[4]);

/* The worst reduction check over the MemoryX ranks (collective over
 * world): |difference| / allowed, <= 1 agrees; NaN before any step. */
double ws_stream_reduction_worst(const ws_stream *s);

/* Bytes/s the first MemoryX rank moves to the first worker, measured
 * (collective over world). */
double ws_stream_link_rate(MPI_Comm world, const wf_roles *r);

/* Fetches in a training step, and the block fetch i brings. */
int ws_stream_fetches(const ws_config *c);
int ws_stream_fetch_block(const ws_config *c, int i);
/* The stall a worker would see a step: fetch i's block leaves its MemoryX
 * rank (one link each, `link` bytes/s, `bytes` a number) once the link has
 * carried the owner's earlier ones, and arrives once the worker has asked
 * for it, `prefetch` fetches ahead; the worker computes `segment[i]`
 * seconds after fetch i. A block is every place's part for wafers of
 * px x py ranks (1 x 1: the block). */
double ws_stream_predicted_stall(const ws_config *c, int px, int py, int nmemx, int prefetch,
                                 const double *segment,
                                 double link, double bytes);

#endif
