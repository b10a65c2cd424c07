/* The parts of weight streaming (ws_stream.h) its two files share, private
 * to them: how a block is packed lane by lane, the relay's legs, and
 * MemoryX's side (ws_stream_memx.c: its copy of the model, serving the
 * blocks, the gradient sums, AdamW, the reductions' check), which SwarmX's
 * relay and the step in ws_stream.c call. */
#ifndef WS_STREAM_PARTS_H
#define WS_STREAM_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ws_stream.h"

#define WS_MPI_REAL (sizeof(ws_real) == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE)

static inline int owner(const ws_stream *s, int b) { return b % s->nmemx; }

/* Block b as MemoryX keeps it and SwarmX relays it: packed place by place
 * (ws_block_tiles of place 0, then place 1, ...), so that lane q's part is
 * one message; lane_at(s, b, lanes) is the whole. */
static inline size_t lane_at(const ws_stream *s, int b, int q) {
  return s->lane_at[(size_t)b * (size_t)(s->lanes + 1) + (size_t)q];
}
static inline size_t lane_size(const ws_stream *s, int b, int q) {
  return lane_at(s, b, q + 1) - lane_at(s, b, q);
}
static inline size_t packed_size(const ws_stream *s, int b) { return lane_at(s, b, s->lanes); }
static inline ws_place place(const ws_stream *s, int q) { return (ws_place){s->px, s->py, q}; }
/* Lane q's part of a packed block at `mem`, as block views. */
static inline ws_block lane_view(const ws_stream *s, ws_real *mem, int b, int q) {
  return ws_block_tiles(mem + lane_at(s, b, q), &s->c, b, place(s, q));
}

/* Relay legs, lane by lane: in lane q, fetch i of a step and block b's
 * gradient sum. The last leg measures the relay (ws_relay_rates). */
static inline int legs_a_lane(const ws_config *c) { return ws_stream_fetches(c) + c->layers + 1; }
static inline int fetch_leg(const ws_stream *s, int i, int q) { return q * legs_a_lane(&s->c) + i; }
static inline int up_leg(const ws_stream *s, int b, int q) {
  return q * legs_a_lane(&s->c) + ws_stream_fetches(&s->c) + b;
}
/* Whether fetch i's (block b's sum's) legs are done in every lane. */
static inline bool fetch_done(const ws_stream *s, int i) {
  for (int q = 0; q < s->lanes; q++)
    if (!ws_relay_done(&s->relay, fetch_leg(s, i, q))) return false;
  return true;
}
static inline bool up_done(const ws_stream *s, int b) {
  for (int q = 0; q < s->lanes; q++)
    if (!ws_relay_done(&s->relay, up_leg(s, b, q))) return false;
  return true;
}

static inline size_t largest_block(const ws_stream *s) {
  size_t nhead = packed_size(s, s->c.layers), nlayer = packed_size(s, 0);
  return nhead > nlayer ? nhead : nlayer;
}

/* A step's gradient sums a MemoryX or SwarmX rank takes part in, started
 * in the workers' order (layers L-1..0, the head), WS_UP_WINDOW at once. */
typedef struct sums {
  int block[1001];
  int n, next; /* sums to take; started so far */
} sums;

/* Starts the sums whose turn it is (SwarmX's and MemoryX's). */
void ws_sums_start(ws_stream *s, sums *u);

/* MemoryX's side of a pass: serve its blocks down their trees (updated
 * first where an update is pending) and, training, take the sums up. */
void ws_memx_serve(ws_stream *s, bool train);
/* After a step's reductions: the average, the norm, AdamW made pending. */
void ws_memx_update(ws_stream *s, const ws_adamw *o, int step);
/* Every owned block's pending update, now (before a gather). */
void ws_memx_flush(ws_stream *s);
/* The step's reductions against the workers' checksums. Collective over
 * world (every role). */
void ws_check_reductions(ws_stream *s);

#endif
