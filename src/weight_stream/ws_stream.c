/* Weight streaming (ws_stream.h): MemoryX ranks own parameter blocks and run AdamW, SwarmX
 * ranks relay weights down and gradient sums up, and the workers fetch each layer ahead of use
 * and count the stall. */
#include "ws_stream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_mpi.h"
#include "wf_workload.h"
#include "ws_check.h"

#define WS_MPI_REAL (sizeof(ws_real) == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE)

static int owner(const ws_stream *s, int b) { return b % s->nmemx; }

/* Block b as MemoryX keeps it and SwarmX relays it: packed place by place
 * (ws_block_tiles of place 0, then place 1, ...), so that lane q's part is
 * one message; lane_at(s, b, lanes) is the whole. */
static size_t lane_at(const ws_stream *s, int b, int q) {
  return s->lane_at[(size_t)b * (size_t)(s->lanes + 1) + (size_t)q];
}
static size_t lane_size(const ws_stream *s, int b, int q) {
  return lane_at(s, b, q + 1) - lane_at(s, b, q);
}
static size_t packed_size(const ws_stream *s, int b) { return lane_at(s, b, s->lanes); }
static ws_place place(const ws_stream *s, int q) { return (ws_place){s->px, s->py, q}; }
/* Lane q's part of a packed block at `mem`, as block views. */
static ws_block lane_view(const ws_stream *s, ws_real *mem, int b, int q) {
  return ws_block_tiles(mem + lane_at(s, b, q), &s->c, b, place(s, q));
}

/* A training step's weight fetches, in order: the head, layers 0..L-1
 * forward, L-1..0 backward. A forward pass alone stops after L + 1. */
int ws_stream_fetches(const ws_config *c) { return 2 * c->layers + 1; }
int ws_stream_fetch_block(const ws_config *c, int i) {
  int L = c->layers;
  return i == 0 ? L : i <= L ? i - 1 : 2 * L - i;
}

/* Relay legs, lane by lane: in lane q, fetch i of a step and block b's
 * gradient sum. The last leg measures the relay (ws_relay_rates). */
static int legs_a_lane(const ws_config *c) { return ws_stream_fetches(c) + c->layers + 1; }
static int fetch_leg(const ws_stream *s, int i, int q) { return q * legs_a_lane(&s->c) + i; }
static int up_leg(const ws_stream *s, int b, int q) {
  return q * legs_a_lane(&s->c) + ws_stream_fetches(&s->c) + b;
}
/* Whether fetch i's (block b's sum's) legs are done in every lane. */
static bool fetch_done(const ws_stream *s, int i) {
  for (int q = 0; q < s->lanes; q++)
    if (!ws_relay_done(&s->relay, fetch_leg(s, i, q))) return false;
  return true;
}
static bool up_done(const ws_stream *s, int b) {
  for (int q = 0; q < s->lanes; q++)
    if (!ws_relay_done(&s->relay, up_leg(s, b, q))) return false;
  return true;
}

static size_t largest_block(const ws_stream *s) {
  size_t nhead = packed_size(s, s->c.layers), nlayer = packed_size(s, 0);
  return nhead > nlayer ? nhead : nlayer;
}

/* `n` numbers, zero and in memory now, not only reserved: the budgets
 * count them, and a rank's peak resident set then shows them. (A volatile
 * store a page: a compiler may turn malloc and memset into calloc, whose
 * pages the kernel maps only when first written.) */
static ws_real *held(size_t n) {
  ws_real *x = calloc(n, sizeof *x);
  for (size_t i = 0; x && i < n; i += 1024) ((volatile ws_real *)x)[i] = 0;
  return x;
}

/* Room for the relay legs this rank takes part in (MemoryX: its own
 * blocks'), and for the sums it adds on their way up. */
static bool reserve_legs(ws_stream *s) {
  int L = s->c.layers;
  bool ok = true, memx = s->role == WF_ROLE_MEMORYX;
  for (int q = 0; q < s->lanes; q++) {
    if (s->role == WF_ROLE_WAFER && q != s->relay.lane) continue; /* a worker: its own lane */
    for (int i = 0; i < ws_stream_fetches(&s->c); i++) {
      int b = ws_stream_fetch_block(&s->c, i);
      if (!memx || owner(s, b) == s->index)
        ok &= ws_relay_reserve(&s->relay, fetch_leg(s, i, q), (int)lane_size(s, b, q));
    }
    for (int b = 0; b <= L; b++)
      if (!memx || owner(s, b) == s->index)
        ok &= ws_relay_reserve(&s->relay, up_leg(s, b, q), (int)lane_size(s, b, q));
  }
  if (s->role == WF_ROLE_WAFER) return ok;
  /* A SwarmX rank's sums land in the pool (children 0..; an idle relay's
   * stay zero), a MemoryX rank's in its gradients (children 1.. in the pool). */
  int n = ws_relay_children(&s->relay, s->index, 0, NULL); /* the same in every lane */
  s->pool_parts = (size_t)(memx ? (n > 1 ? n - 1 : 0) : (n > 0 ? n : 1));
  s->pool_slot = s->pool_parts * largest_block(s);
  s->pool = s->pool_slot ? held(WS_UP_WINDOW * s->pool_slot) : NULL;
  return ok && (s->pool || !s->pool_slot);
}

/* Owned blocks and their state (MemoryX); the head, layer and gradient
 * slots (workers); relay slots (SwarmX). False when out of memory. */
static bool allocate(ws_stream *s) {
  int L = s->c.layers, slots = s->prefetch + 1;
  bool worker = s->role == WF_ROLE_WAFER;
  /* a worker holds its lane's part of a block; a SwarmX rank relays all of it */
  size_t nhead = worker ? lane_size(s, L, s->relay.lane) : packed_size(s, L);
  size_t nlayer = worker ? lane_size(s, 0, s->relay.lane) : packed_size(s, 0);
  bool failed = false;
  s->sums = calloc(2 * (size_t)(L + 1) * (size_t)s->lanes, sizeof *s->sums);
  if (s->role == WF_ROLE_MEMORYX) {
    for (int b = 0; b <= L; b++) s->nown += owner(s, b) == s->index;
    s->own = malloc((size_t)s->nown * sizeof *s->own);
    s->updated = calloc((size_t)s->nown, sizeof *s->updated);
    ws_real ***bufs[4] = {&s->p, &s->g, &s->m, &s->v};
    for (int k = 0; k < 4; k++) *bufs[k] = calloc((size_t)s->nown, sizeof(ws_real *));
    failed = !s->sums || !s->own || !s->updated || !s->p || !s->g || !s->m || !s->v;
    for (int b = 0, i = 0; b <= L && !failed; b++) {
      if (owner(s, b) != s->index) continue;
      s->own[i] = b;
      for (int k = 0; k < 4; k++) {
        (*bufs[k])[i] = calloc(packed_size(s, b), sizeof(ws_real));
        failed |= !(*bufs[k])[i];
      }
      i++;
    }
    return !failed;
  }
  s->head = held(nhead);
  s->dhead = worker ? held(nhead) : NULL;
  s->slot = calloc((size_t)slots, sizeof *s->slot);
  s->gslot = calloc((size_t)slots, sizeof *s->gslot);
  s->gleg = malloc((size_t)(slots + 1) * sizeof *s->gleg);
  s->segment = calloc((size_t)ws_stream_fetches(&s->c), sizeof *s->segment);
  failed = !s->sums || !s->head || (worker && !s->dhead) || !s->slot || !s->gslot || !s->gleg ||
           !s->segment;
  for (int k = 0; k < slots && !failed; k++) {
    s->slot[k] = held(nlayer);
    s->gslot[k] = worker ? held(nlayer) : NULL;
    failed |= !s->slot[k] || (worker && !s->gslot[k]);
  }
  for (int k = 0; k <= slots && !failed; k++) s->gleg[k] = -1;
  return !failed;
}

/* Where each place's part of each block starts (lane_at); false when out of memory. */
static bool lay_out_lanes(ws_stream *s) {
  int L = s->c.layers, K = s->lanes;
  s->lane_at = malloc((size_t)(L + 1) * (size_t)(K + 1) * sizeof *s->lane_at);
  if (!s->lane_at) return false;
  for (int b = 0; b <= L; b++) {
    size_t *at = s->lane_at + (size_t)b * (size_t)(K + 1);
    at[0] = 0;
    for (int q = 0; q < K; q++) at[q + 1] = at[q] + ws_block_tiles_size(&s->c, b, place(s, q));
  }
  return true;
}

int ws_stream_create(ws_stream *s, const wf_roles *r, MPI_Comm world, const ws_config *c,
                     int px, int py, int prefetch, int fanout, double link_gbps, wf_status *st) {
  *s = (ws_stream){.c = *c,
                   .nmemx = r->count[WF_ROLE_MEMORYX],
                   .nworkers = r->count[WF_ROLE_WAFER],
                   .nswarm = r->count[WF_ROLE_SWARMX],
                   .lanes = px * py,
                   .px = px,
                   .py = py,
                   .role = r->role,
                   .index = r->role_rank,
                   .prefetch = prefetch,
                   .link_bytes_per_s = link_gbps * 1e9,
                   .role_comm = r->role_comm,
                   .world = world};
  if (s->nmemx < 1)
    return wf_fail(st, WF_ERR_INPUT,
                   "SwarmX ranks relay weights from MemoryX ranks to the wafers: weight streaming "
                   "needs at least one MemoryX rank");
  if (s->nmemx > c->layers + 1)
    return wf_fail(st, WF_ERR_INPUT,
                   "%d MemoryX ranks for %d blocks (%d layers and the embeddings): some would own "
                   "nothing",
                   s->nmemx, c->layers + 1, c->layers);
  int laid = lay_out_lanes(s); /* agreed: the relay below is collective */
  MPI_Allreduce(MPI_IN_PLACE, &laid, 1, MPI_INT, MPI_MIN, world);
  if (!laid) {
    free(s->lane_at);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for weight streaming");
  }
  /* A block's (a layer's, the embeddings') word count is an int in the relay and in MPI. */
  for (int b = 0; b <= c->layers; b++) {
    size_t n = packed_size(s, b);
    if (n <= WF_MPI_MAX_COUNT) continue;
    free(s->lane_at);
    return wf_fail(st, WF_ERR_INPUT,
                   "block %d holds %zu numbers, more than one MPI message carries (2^31 - 1): "
                   "use more layers of fewer channels",
                   b, n);
  }
  if (ws_relay_create(&s->relay, r, world, fanout, s->lanes, s->lanes * legs_a_lane(c) + 1, st) !=
      WF_OK) {
    free(s->lane_at);
    return st->code;
  }
  int ok = allocate(s) && reserve_legs(s);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world);
  if (!ok) {
    ws_stream_free(s);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for weight streaming");
  }
  return WF_OK;
}

void ws_stream_free(ws_stream *s) {
  ws_relay_free(&s->relay);
  ws_real **bufs[4] = {s->p, s->g, s->m, s->v};
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < s->nown && bufs[k]; i++) free(bufs[k][i]);
    free(bufs[k]);
  }
  for (int k = 0; k <= s->prefetch && s->slot; k++) free(s->slot[k]);
  for (int k = 0; k <= s->prefetch && s->gslot; k++) free(s->gslot[k]);
  free(s->own), free(s->updated), free(s->head), free(s->dhead), free(s->slot), free(s->gslot),
      free(s->gleg);
  free(s->segment), free(s->sums), free(s->pool), free(s->lane_at);
  *s = (ws_stream){.role_comm = MPI_COMM_NULL};
}

/* ---- MemoryX's copy of the model ---- */

/* Between a block in the whole layout and the same block packed place by
 * place: every place's tiles, and the untiled tensors into every place but
 * out of place 0 only (the places hold the same). */
static void lanes_copy(const ws_stream *s, ws_block *whole, ws_real *packed, int b,
                       bool to_packed) {
  for (int q = 0; q < s->lanes; q++) {
    ws_block p = lane_view(s, packed, b, q);
    ws_block_tiles_copy(whole, &p, &s->c, place(s, q), to_packed, to_packed || q == 0);
  }
}

/* Copy between the owned packed blocks and a whole-model buffer. */
static void owned_blocks(ws_stream *s, ws_real *whole, ws_real **packed, bool to_packed) {
  for (int i = 0; i < s->nown; i++) {
    ws_block w = ws_block_of(whole, &s->c, s->own[i]);
    lanes_copy(s, &w, packed[i], s->own[i], to_packed);
  }
}

void ws_stream_load(ws_stream *s, const ws_gpt *whole) {
  if (s->role != WF_ROLE_MEMORYX) return;
  owned_blocks(s, whole->p.mem, s->p, true);
  if (whole->m) owned_blocks(s, whole->m, s->m, true), owned_blocks(s, whole->v, s->v, true);
}

static void flush(ws_stream *s); /* MemoryX's side, below */

int ws_stream_gather(ws_stream *s, ws_gpt *whole, wf_status *st) {
  int rank = s->index;
  if (s->role != WF_ROLE_MEMORYX) return WF_OK;
  flush(s);
  /* Block b travels from its owner to rank 0 of the MemoryX ranks, packed. */
  ws_real *buf = rank == 0 ? malloc(largest_block(s) * sizeof *buf) : NULL;
  int ok = rank != 0 || (buf && ws_gpt_moments(whole, st) == WF_OK);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, s->role_comm);
  if (!ok) {
    free(buf);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for a checkpoint");
  }
  for (int b = 0; b <= s->c.layers; b++) {
    int from = owner(s, b), n = (int)packed_size(s, b);
    int i = 0;
    while (s->index == from && s->own[i] != b) i++;
    ws_real **src[3] = {s->p, s->m, s->v};
    for (int k = 0; k < 3; k++) {
      if (rank == 0) {
        if (from == 0)
          memcpy(buf, src[k][i], (size_t)n * sizeof *buf);
        else
          MPI_Recv(buf, n, WS_MPI_REAL, from, b, s->role_comm, MPI_STATUS_IGNORE);
        ws_real *dst = k == 0 ? whole->p.mem : k == 1 ? whole->m : whole->v;
        ws_block w = ws_block_of(dst, &s->c, b);
        lanes_copy(s, &w, buf, b, false);
      } else if (s->index == from) {
        MPI_Send(src[k][i], n, WS_MPI_REAL, 0, b, s->role_comm);
      }
    }
  }
  free(buf);
  return WF_OK;
}

/* ---- the worker's side ---- */

typedef struct fetches {
  ws_stream *s;
  int n, posted; /* fetches in this pass; posted so far */
  bool timed;    /* a training step: its compute segments are summed */
  double last;   /* when the last fetch was in hand */
} fetches;

static ws_real *fetch_buffer(const ws_stream *s, int i) {
  return i == 0 ? s->head : s->slot[(i - 1) % (s->prefetch + 1)];
}

/* Ask for the blocks up to fetch `upto` (at most prefetch ahead of use). */
static void post_fetches(fetches *f, int upto) {
  ws_stream *s = f->s;
  int q = s->relay.lane;
  for (; f->posted <= upto && f->posted < f->n; f->posted++) {
    int b = ws_stream_fetch_block(&s->c, f->posted);
    ws_relay_start(&s->relay, fetch_leg(s, f->posted, q), false, owner(s, b), q,
                   fetch_buffer(s, f->posted), NULL, (int)lane_size(s, b, q));
  }
}

/* Fetch i's block, waiting for it if it has not arrived (the stall). */
static ws_block await_fetch(fetches *f, int i) {
  ws_stream *s = f->s;
  post_fetches(f, i + s->prefetch);
  double t0 = MPI_Wtime();
  if (f->timed && i > 0) s->segment[i - 1] += t0 - f->last;
  int q = s->relay.lane, b = ws_stream_fetch_block(&s->c, i);
  ws_relay_wait(&s->relay, fetch_leg(s, i, q));
  f->last = MPI_Wtime();
  if (f->timed) s->stats.stall += f->last - t0;
  return ws_block_tiles(fetch_buffer(s, i), &s->c, b, place(s, q));
}

/* Between kernels: move the blocks on their way in and the sums on their way out. */
static void poll_requests(void *ctx) {
  fetches *f = ctx;
  ws_relay_progress(&f->s->relay, -1);
}

/* A gradient slot's sum on its way up, until it has left (the slot is free). */
static void wait_reduction(ws_stream *s, int *leg) {
  double t0 = MPI_Wtime();
  if (*leg >= 0) ws_relay_wait(&s->relay, *leg);
  *leg = -1;
  s->stats.reduce_wait += MPI_Wtime() - t0;
}

static ws_real worker_forward(ws_stream *s, fetches *f, ws_gpt *m, const int *tokens,
                              const int *targets) {
  ws_block head = await_fetch(f, 0);
  ws_forward_embed(m, &head, tokens);
  for (int l = 0; l < s->c.layers; l++) {
    ws_block w = await_fetch(f, l + 1);
    ws_forward_layer(m, l, &w);
  }
  return ws_forward_head(m, &head, targets);
}

static ws_real worker_step(ws_stream *s, ws_gpt *m, const int *tokens, const int *targets,
                           bool train) {
  int L = s->c.layers, slots = s->prefetch + 1;
  fetches f = {.s = s, .n = train ? ws_stream_fetches(&s->c) : L + 1, .timed = train};
  m->poll = poll_requests, m->poll_ctx = &f;
  ws_real loss = worker_forward(s, &f, m, tokens, targets);
  if (train) {
    int q = s->relay.lane, at = L * s->lanes + q; /* the head's checksums' place */
    memset(s->sums, 0, 2 * (size_t)(L + 1) * (size_t)s->lanes * sizeof *s->sums); /* other lanes' */
    size_t nhead = lane_size(s, L, q), nlayer = lane_size(s, 0, q);
    memset(s->dhead, 0, nhead * sizeof *s->dhead);
    ws_block head = ws_block_tiles(s->head, &s->c, L, place(s, q));
    ws_block dhead = ws_block_tiles(s->dhead, &s->c, L, place(s, q));
    ws_backward_head(m, &head, &dhead, targets);
    for (int l = L - 1; l >= 0; l--) {
      ws_block w = await_fetch(&f, 2 * L - l);
      int k = (L - 1 - l) % slots; /* this layer's gradient slot */
      wait_reduction(s, &s->gleg[k]);
      memset(s->gslot[k], 0, nlayer * sizeof(ws_real));
      ws_block dw = ws_block_tiles(s->gslot[k], &s->c, l, place(s, q));
      ws_backward_layer(m, l, &w, &dw);
      int c = l * s->lanes + q;
      s->sums[2 * c] = ws_checksum(s->gslot[k], nlayer, l, &s->sums[2 * c + 1]);
      ws_relay_start(&s->relay, up_leg(s, l, q), true, owner(s, l), q, s->gslot[k], NULL,
                     (int)nlayer);
      s->gleg[k] = up_leg(s, l, q);
    }
    ws_backward_embed(m, &dhead, tokens);
    s->sums[2 * at] = ws_checksum(s->dhead, nhead, L, &s->sums[2 * at + 1]);
    s->segment[f.n - 1] += MPI_Wtime() - f.last;
    ws_relay_start(&s->relay, up_leg(s, L, q), true, owner(s, L), q, s->dhead, NULL, (int)nhead);
    s->gleg[slots] = up_leg(s, L, q);
    for (int k = 0; k <= slots; k++) wait_reduction(s, &s->gleg[k]);
    s->stats.steps++;
  }
  m->poll = NULL, m->poll_ctx = NULL;
  return loss;
}

/* ---- MemoryX's side ---- */

/* The index among the owned blocks of block b. */
static int owned(const ws_stream *s, int b) {
  int k = 0;
  while (s->own[k] != b) k++;
  return k;
}

/* Owned block k's AdamW update from the last step, if it has not had it:
 * updates wait until the block is next needed, so that they overlap the
 * workers' compute instead of holding up the next step. */
static void apply_pending(ws_stream *s, int k) {
  if (!s->pending || s->updated[k]) return;
  double t0 = MPI_Wtime();
  ws_adamw_apply(s->p[k], s->m[k], s->v[k], s->g[k], packed_size(s, s->own[k]), &s->pending_opt,
                 s->pending_scale, s->pending_step);
  s->updated[k] = true;
  s->stats.update += MPI_Wtime() - t0;
}

/* Every owned block's pending update, now (before a gather). */
static void flush(ws_stream *s) {
  if (s->role != WF_ROLE_MEMORYX) return;
  for (int k = 0; k < s->nown; k++) apply_pending(s, k);
  s->pending = false;
}

/* A step's gradient sums a MemoryX or SwarmX rank takes part in, started
 * in the workers' order (layers L-1..0, the head), WS_UP_WINDOW at once. */
typedef struct sums {
  int block[1001];
  int n, next; /* sums to take; started so far */
} sums;

static void start_sums(ws_stream *s, sums *u) {
  size_t kids = s->pool_parts; /* the children's parts of lane q's sum in the pool */
  while (u->next < u->n &&
         (u->next < WS_UP_WINDOW || up_done(s, u->block[u->next - WS_UP_WINDOW]))) {
    int b = u->block[u->next];
    ws_real *room = s->pool + (size_t)(u->next % WS_UP_WINDOW) * s->pool_slot;
    for (int q = 0; q < s->lanes; q++) {
      size_t at = lane_at(s, b, q), count = lane_size(s, b, q);
      ws_real *kids_at = room + kids * at;
      if (s->role == WF_ROLE_MEMORYX)
        ws_relay_start(&s->relay, up_leg(s, b, q), true, s->index, q, s->g[owned(s, b)] + at,
                       kids_at, (int)count);
      else
        ws_relay_start(&s->relay, up_leg(s, b, q), true, owner(s, b), q, kids_at, kids_at + count,
                       (int)count);
    }
    u->next++;
  }
}

/* Hold back until the link could have carried `bytes` more since `start`
 * (train.memoryx_gbps), moving the relay's legs meanwhile. */
static void pace(ws_stream *s, double start, double *sent, double bytes, sums *u) {
  if (s->link_bytes_per_s <= 0) return;
  *sent += bytes;
  while (MPI_Wtime() - start < *sent / s->link_bytes_per_s) {
    start_sums(s, u);
    ws_relay_progress(&s->relay, -1);
  }
}

/* Serve a pass's blocks down their trees, each updated first if its update
 * is pending; for training, take the gradient sums of the owned blocks
 * once every block has had its update (the forward fetches touch them all). */
static void memx_serve(ws_stream *s, bool train) {
  int L = s->c.layers, n = train ? ws_stream_fetches(&s->c) : L + 1;
  sums u = {.n = 0};
  double start = MPI_Wtime(), sent = 0;
  for (int i = 0; i < n; i++) {
    if (i == L + 1) { /* the forward fetches are out: every block is up to date */
      s->pending = false;
      for (int b = L - 1; b >= -1 && train; b--)
        if (owner(s, b < 0 ? L : b) == s->index) u.block[u.n++] = b < 0 ? L : b;
    }
    start_sums(s, &u);
    int b = ws_stream_fetch_block(&s->c, i);
    if (owner(s, b) != s->index) continue;
    int k = owned(s, b);
    apply_pending(s, k);
    pace(s, start, &sent, (double)packed_size(s, b) * sizeof(ws_real), &u);
    for (int q = 0; q < s->lanes; q++)
      ws_relay_start(&s->relay, fetch_leg(s, i, q), false, s->index, q, s->p[k] + lane_at(s, b, q),
                     NULL, (int)lane_size(s, b, q));
  }
  do start_sums(s, &u);
  while (!ws_relay_progress(&s->relay, -1) || u.next < u.n);
}

/* After a step's reductions: the gradients averaged over the replicas, their
 * norm block by block in block order (bitwise the resident one's), and the
 * AdamW update made pending, to be applied block by block as the next pass
 * needs the blocks (apply_pending). */
static void memx_update(ws_stream *s, const ws_adamw *o, int step) {
  double t0 = MPI_Wtime();
  int L = s->c.layers;
  double part[1001] = {0};
  int replicas = s->nworkers / s->lanes;
  for (int i = 0; i < s->nown; i++) {
    int b = s->own[i];
    size_t n = packed_size(s, b);
    if (replicas > 1) {
      ws_real inv = 1.0f / (ws_real)replicas;
      for (size_t e = 0; e < n; e++) s->g[i][e] *= inv;
    }
    /* Every place's untiled tensors (vectors, positions) came up the same
     * in every lane; place 0's are the ones kept, so that the copies stay
     * alike whatever a lane's sum did. The norm counts them once. */
    ws_block g0 = lane_view(s, s->g[i], b, 0);
    part[b] = ws_block_tiles_sumsq(&g0, &s->c, place(s, 0), true);
    for (int q = 1; q < s->lanes; q++) {
      ws_block g = lane_view(s, s->g[i], b, q);
      for (int k = 0; k < WS_NPARAMS; k++) {
        ws_tile whole = ws_tile_at(&s->c, k, place(s, q)); /* untiled: whole at every place */
        if (g.t[k] && !ws_param_tiled(k))
          memcpy(g.t[k], g0.t[k], (size_t)whole.rows * (size_t)whole.cols * sizeof(ws_real));
      }
      part[b] += ws_block_tiles_sumsq(&g, &s->c, place(s, q), false);
    }
  }
  /* Each block's sum comes from one rank, zeros from the others: exact. */
  MPI_Allreduce(MPI_IN_PLACE, part, L + 1, MPI_DOUBLE, MPI_SUM, s->role_comm);
  double sum = 0;
  for (int b = 0; b <= L; b++) sum += part[b];
  s->pending = true;
  s->pending_opt = *o;
  s->pending_scale = ws_clip_scale(o, (ws_real)sqrt(sum));
  s->pending_step = step;
  for (int k = 0; k < s->nown; k++) s->updated[k] = false;
  s->stats.update += MPI_Wtime() - t0;
}

/* The step's reductions against the workers' checksums, lane by lane,
 * before MemoryX averages them (and keeps place 0's vectors for every
 * place's): the sum MemoryX holds of lane q's part of block b is sum_w g_w
 * over the lane's w workers (one a wafer), each number summed in float in
 * the relay tree's order (any order: w - 1 additions), so within gamma_w of
 * sum_w |g_w|; a +-1 checksum over the part within that many times the sum
 * of the magnitudes, and the double sums' own rounding. Collective over
 * world (the other roles' sums are zero). */
static void check_reductions(ws_stream *s) {
  int L = s->c.layers, nb = 2 * (L + 1) * s->lanes;
  if (s->role != WF_ROLE_WAFER) memset(s->sums, 0, (size_t)nb * sizeof *s->sums);
  MPI_Allreduce(MPI_IN_PLACE, s->sums, nb, MPI_DOUBLE, MPI_SUM, s->world);
  if (s->role != WF_ROLE_MEMORYX) return;
  const double u = 0x1p-24;
  double w = s->nworkers / s->lanes;
  for (int i = 0; i < s->nown; i++)
    for (int q = 0; q < s->lanes; q++) {
      int b = s->own[i], c = b * s->lanes + q;
      size_t n = lane_size(s, b, q);
      double mag, sum = ws_checksum(s->g[i] + lane_at(s, b, q), n, b, &mag);
      double want = s->sums[2 * c], size = s->sums[2 * c + 1];
      double allowed = (wf_gamma(w, u) + 2.0 * (double)n * 0x1p-53) * size + 1e-300;
      s->reduction_worst = wf_worse(s->reduction_worst, fabs(sum - want) / allowed);
    }
  s->reductions_checked++;
}

double ws_stream_reduction_worst(const ws_stream *s) {
  double worst[2] = {s->reduction_worst, s->reductions_checked};
  if (isnan(worst[0])) worst[0] = INFINITY;
  MPI_Allreduce(MPI_IN_PLACE, worst, 2, MPI_DOUBLE, MPI_MAX, s->world);
  return worst[1] > 0 ? worst[0] : NAN;
}

/* ---- SwarmX's side ---- */

/* Relay this pass's blocks down (a slot per block in flight: a block waits
 * until the one before it in its slot has reached every child) and, for
 * training, the gradient sums up, adding the children's. */
static void swarm_relay(ws_stream *s, bool train) {
  int L = s->c.layers, n = train ? ws_stream_fetches(&s->c) : L + 1, slots = s->prefetch + 1;
  sums u = {.n = 0};
  if (ws_relay_idle(&s->relay)) return;
  for (int b = L - 1; b >= -1 && train; b--) u.block[u.n++] = b < 0 ? L : b;
  for (int next = 0;;) {
    for (; next < n && (next <= slots || fetch_done(s, next - slots)); next++) {
      int b = ws_stream_fetch_block(&s->c, next);
      for (int q = 0; q < s->lanes; q++)
        ws_relay_start(&s->relay, fetch_leg(s, next, q), false, owner(s, b), q,
                       fetch_buffer(s, next) + lane_at(s, b, q), NULL, (int)lane_size(s, b, q));
    }
    start_sums(s, &u);
    if (ws_relay_progress(&s->relay, -1) && next == n && u.next == u.n) break;
  }
}

static ws_real train_step(ws_stream *s, ws_gpt *m, const int *tokens, const int *targets,
                          const ws_adamw *o, int step) {
  switch (s->role) {
    case WF_ROLE_WAFER: {
      ws_real loss = worker_step(s, m, tokens, targets, true);
      check_reductions(s);
      return loss;
    }
    case WF_ROLE_SWARMX:
      swarm_relay(s, true);
      check_reductions(s);
      return 0;
    default:
      memx_serve(s, true);
      check_reductions(s);
      memx_update(s, o, step);
      return 0;
  }
}

ws_real ws_stream_train_step(ws_stream *s, ws_gpt *m, const int *tokens, const int *targets,
                             const ws_adamw *o, int step) {
  double down = s->relay.bytes_down, up = s->relay.bytes_up;
  ws_real loss = train_step(s, m, tokens, targets, o, step);
  s->stats.bytes_down += s->relay.bytes_down - down;
  s->stats.bytes_up += s->relay.bytes_up - up;
  return loss;
}

void ws_stream_hop_bytes(const ws_stream *s, double bytes[4]) {
  double mine[4] = {0};
  double steps = s->stats.steps > 0 ? s->stats.steps : 1; /* workers count the steps */
  MPI_Allreduce(MPI_IN_PLACE, &steps, 1, MPI_DOUBLE, MPI_MAX, s->world);
  if (s->role == WF_ROLE_MEMORYX) mine[0] = s->stats.bytes_down;
  if (s->role == WF_ROLE_SWARMX) mine[1] = s->stats.bytes_down, mine[2] = s->stats.bytes_up;
  if (s->role == WF_ROLE_WAFER) mine[3] = s->stats.bytes_up;
  MPI_Allreduce(mine, bytes, 4, MPI_DOUBLE, MPI_SUM, s->world);
  for (int k = 0; k < 4; k++) bytes[k] /= steps;
}

ws_real ws_stream_forward(ws_stream *s, ws_gpt *m, const int *tokens, const int *targets) {
  switch (s->role) {
    case WF_ROLE_WAFER:
      return worker_step(s, m, tokens, targets, false);
    case WF_ROLE_SWARMX:
      swarm_relay(s, false);
      return 0;
    default:
      memx_serve(s, false);
      return 0;
  }
}

double ws_stream_link_rate(MPI_Comm world, const wf_roles *r) {
  /* 16 MB from the first MemoryX rank to the first worker, best of 3. */
  int rank, from = r->first[WF_ROLE_MEMORYX], to = r->first[WF_ROLE_WAFER];
  MPI_Comm_rank(world, &rank);
  const int n = 1 << 22;
  float *buf = rank == from || rank == to ? calloc((size_t)n, sizeof *buf) : NULL;
  int ok = buf || (rank != from && rank != to);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world);
  double best = 0;
  for (int k = 0; k < 3 && ok; k++) {
    MPI_Barrier(world);
    double t0 = MPI_Wtime();
    if (rank == from) MPI_Send(buf, n, MPI_FLOAT, to, 7, world);
    if (rank == to) MPI_Recv(buf, n, MPI_FLOAT, from, 7, world, MPI_STATUS_IGNORE);
    double t = MPI_Wtime() - t0;
    MPI_Bcast(&t, 1, MPI_DOUBLE, to, world);
    if (t > 0 && 4.0 * n / t > best) best = 4.0 * n / t;
  }
  free(buf);
  return best;
}

double ws_stream_predicted_stall(const ws_config *c, int px, int py, int nmemx, int prefetch,
                                 const double *segment,
                                 double link, double bytes) {
  int n = ws_stream_fetches(c);
  double *link_free = calloc((size_t)nmemx, sizeof *link_free); /* each owner's link, busy until */
  double *returned = malloc((size_t)n * sizeof *returned);      /* when the worker had fetch i */
  if (!link_free || !returned) {
    free(link_free), free(returned);
    return 0;
  }
  double t = 0, stall = 0;
  for (int i = 0; i < n; i++) {
    int b = ws_stream_fetch_block(c, i), o = b % nmemx;
    double posted = i > prefetch ? returned[i - prefetch - 1] : 0;
    /* The owner releases its blocks back to back at the link's rate (as
     * memx_serve paces them); one arrives once released and asked for. */
    link_free[o] += (double)ws_block_wafer_size(c, b, px, py) * bytes / link;
    double arrives = posted > link_free[o] ? posted : link_free[o];
    if (arrives > t) stall += arrives - t, t = arrives;
    returned[i] = t;
    t += segment[i];
  }
  free(link_free), free(returned);
  return stall;
}
