/* Weight streaming's MemoryX side (ws_stream_parts.h): the owned blocks,
 * packed lane by lane, loaded from and gathered into a whole model; served
 * down the relay trees each pass, their updates applied as each is next
 * needed; the gradient sums taken up, averaged, checked against the
 * workers' checksums, and AdamW's step made pending. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_mpi.h"
#include "wf_workload.h"
#include "ws_check.h"
#include "ws_stream_parts.h"

/* ---- its copy of the model ---- */

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

int ws_stream_gather(ws_stream *s, ws_gpt *whole, wf_status *st) {
  int rank = s->index;
  if (s->role != WF_ROLE_MEMORYX) return WF_OK;
  ws_memx_flush(s);
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

/* ---- serving, the sums, the update ---- */

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
void ws_memx_flush(ws_stream *s) {
  if (s->role != WF_ROLE_MEMORYX) return;
  for (int k = 0; k < s->nown; k++) apply_pending(s, k);
  s->pending = false;
}

void ws_sums_start(ws_stream *s, sums *u) {
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
    ws_sums_start(s, u);
    ws_relay_progress(&s->relay, -1);
  }
}

/* Serve a pass's blocks down their trees, each updated first if its update
 * is pending; for training, take the gradient sums of the owned blocks
 * once every block has had its update (the forward fetches touch them all). */
void ws_memx_serve(ws_stream *s, bool train) {
  int L = s->c.layers, n = train ? ws_stream_fetches(&s->c) : L + 1;
  sums u = {.n = 0};
  double start = MPI_Wtime(), sent = 0;
  for (int i = 0; i < n; i++) {
    if (i == L + 1) { /* the forward fetches are out: every block is up to date */
      s->pending = false;
      for (int b = L - 1; b >= -1 && train; b--)
        if (owner(s, b < 0 ? L : b) == s->index) u.block[u.n++] = b < 0 ? L : b;
    }
    ws_sums_start(s, &u);
    int b = ws_stream_fetch_block(&s->c, i);
    if (owner(s, b) != s->index) continue;
    int k = owned(s, b);
    apply_pending(s, k);
    pace(s, start, &sent, (double)packed_size(s, b) * sizeof(ws_real), &u);
    for (int q = 0; q < s->lanes; q++)
      ws_relay_start(&s->relay, fetch_leg(s, i, q), false, s->index, q, s->p[k] + lane_at(s, b, q),
                     NULL, (int)lane_size(s, b, q));
  }
  do ws_sums_start(s, &u);
  while (!ws_relay_progress(&s->relay, -1) || u.next < u.n);
}

/* After a step's reductions: the gradients averaged over the replicas, their
 * norm block by block in block order (bitwise the resident one's), and the
 * AdamW update made pending, to be applied block by block as the next pass
 * needs the blocks (apply_pending). */
void ws_memx_update(ws_stream *s, const ws_adamw *o, int step) {
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
void ws_check_reductions(ws_stream *s) {
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

