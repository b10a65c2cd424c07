/* Weight streaming (ws_stream.h): MemoryX ranks own parameter blocks and run AdamW, SwarmX
 * ranks relay weights down and gradient sums up, and the workers fetch each layer ahead of use
 * and count the stall. MemoryX's side: ws_stream_memx.c. */
#include "ws_stream.h"
#include "ws_stream_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_mpi.h"
#include "wf_workload.h"
#include "ws_check.h"

/* A training step's weight fetches, in order: the head, layers 0..L-1
 * forward, L-1..0 backward. A forward pass alone stops after L + 1. */
int ws_stream_fetches(const ws_config *c) { return 2 * c->layers + 1; }
int ws_stream_fetch_block(const ws_config *c, int i) {
  int L = c->layers;
  return i == 0 ? L : i <= L ? i - 1 : 2 * L - i;
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
    ws_sums_start(s, &u);
    if (ws_relay_progress(&s->relay, -1) && next == n && u.next == u.n) break;
  }
}

static ws_real train_step(ws_stream *s, ws_gpt *m, const int *tokens, const int *targets,
                          const ws_adamw *o, int step) {
  switch (s->role) {
    case WF_ROLE_WAFER: {
      ws_real loss = worker_step(s, m, tokens, targets, true);
      ws_check_reductions(s);
      return loss;
    }
    case WF_ROLE_SWARMX:
      swarm_relay(s, true);
      ws_check_reductions(s);
      return 0;
    default:
      ws_memx_serve(s, true);
      ws_check_reductions(s);
      ws_memx_update(s, o, step);
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
      ws_memx_serve(s, false);
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
