/* SwarmX as a relay (ws_relay.h): the tree's shape, legs that forward and
 * add segments, and the relay's bandwidth against MPI_Bcast. */
#include "ws_relay.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WS_MPI_REAL (sizeof(ws_real) == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE)

/* ---- the tree over the nodes [owner, SwarmX 0..S-1, a lane's workers 0..W/lanes-1] ---- */

/* Worker w of lane q is the worker at place q of wafer w (wafers are
 * `lanes` consecutive workers). */
static int node_rank(const ws_relay *t, int owner, int lane, int node) {
  if (node == 0) return t->first[WF_ROLE_MEMORYX] + owner;
  if (node <= t->nswarm) return t->first[WF_ROLE_SWARMX] + node - 1;
  return t->first[WF_ROLE_WAFER] + (node - 1 - t->nswarm) * t->lanes + lane;
}

int ws_relay_parent(const ws_relay *t, int owner, int lane) {
  return t->parent < 0 ? -1 : node_rank(t, owner, lane, t->parent);
}

int ws_relay_children(const ws_relay *t, int owner, int lane, int *child) {
  for (int k = 0; k < t->nkids && child; k++) child[k] = node_rank(t, owner, lane, t->kids[k]);
  return t->nkids;
}

int ws_relay_depth(const ws_relay *t) { return t->depth; }
bool ws_relay_idle(const ws_relay *t) { return t->parent == -2; }

/* Workers the tree can take: every SwarmX rank's F places less its SwarmX
 * children (every SwarmX rank but the F under MemoryX has a SwarmX parent);
 * without SwarmX ranks, MemoryX feeds every worker itself. */
static long long worker_places(int fanout, int nswarm) {
  if (nswarm == 0) return LLONG_MAX;
  int under_memoryx = nswarm < fanout ? nswarm : fanout;
  return (long long)nswarm * fanout - (nswarm - under_memoryx);
}

bool ws_relay_fits(int fanout, int nswarm, int nworkers, wf_status *st) {
  if (fanout >= 1 && worker_places(fanout, nswarm) >= nworkers) return true;
  int need = 1;
  while (worker_places(need, nswarm) < nworkers) need++;
  long long reach = fanout >= 1 ? worker_places(fanout, nswarm) : 0;
  wf_fail(st, WF_ERR_INPUT,
          "a fan-out of %d through %d SwarmX rank%s reaches %lld worker%s (a worker never "
          "relays); %d workers need swarmx_fanout >= %d%s",
          fanout, nswarm, nswarm == 1 ? "" : "s", reach, reach == 1 ? "" : "s", nworkers, need,
          fanout >= 2 ? " or more SwarmX ranks" : "");
  return false;
}

bool ws_relay_tree(int fanout, int nswarm, int nworkers, int *parent) {
  int S = nswarm, W = nworkers, F = fanout;
  if (F < 1 || worker_places(F, S) < W) return false; /* the dealing below would not end */
  int *places = calloc((size_t)S + 1, sizeof *places);
  bool *used = calloc((size_t)S + 1, sizeof *used);
  bool ok = places && used;
  if (ok) {
    parent[0] = -1;
    places[0] = S == 0 ? W : 0; /* MemoryX feeds SwarmX ranks only, when there are any */
    for (int j = 1; j <= S; j++) places[j] = F;
    for (int j = 1; j <= S; j++) parent[j] = (j - 1) / F, places[parent[j]]--;
    for (int w = 0, round = 0; w < W; round++) /* ws_relay_fits: every worker finds a place */
      for (int j = S; j >= (S > 0) && w < W; j--)
        if (places[j] > round) parent[1 + S + w++] = j;
    /* SwarmX ranks with no worker below them leave the tree (children first). */
    for (int w = 0; w < W; w++) used[parent[1 + S + w]] = true;
    for (int j = S; j >= 1; j--) {
      if (used[j])
        used[parent[j]] = true;
      else
        parent[j] = -2;
    }
  }
  free(places), free(used);
  return ok;
}

/* Children of each node of the tree into kids[0..S] (MemoryX, then the
 * SwarmX ranks); false when out of memory. */
static bool count_children(int fanout, int nswarm, int nworkers, int *kids) {
  int n = 1 + nswarm + nworkers, *parent = malloc((size_t)n * sizeof *parent);
  bool ok = parent && ws_relay_tree(fanout, nswarm, nworkers, parent);
  for (int j = 0; j <= nswarm; j++) kids[j] = 0;
  for (int i = 1; i < n && ok; i++)
    if (parent[i] >= 0) kids[parent[i]]++;
  free(parent);
  return ok;
}

int ws_relay_root_children(int fanout, int nswarm, int nworkers) {
  int *kids = malloc((size_t)(nswarm + 1) * sizeof *kids), root = -1;
  if (kids && count_children(fanout, nswarm, nworkers, kids)) root = kids[0];
  free(kids);
  return root;
}

int ws_relay_most_children(int fanout, int nswarm, int nworkers, int *busiest) {
  int *kids = malloc((size_t)(nswarm + 1) * sizeof *kids), most = -1, who = 0;
  if (kids && count_children(fanout, nswarm, nworkers, kids)) {
    most = 0;
    for (int j = 1; j <= nswarm; j++)
      if (kids[j] > most) most = kids[j], who = j - 1;
  }
  free(kids);
  if (busiest) *busiest = who;
  return most;
}

/* The tree (ws_relay_tree), then this rank's parent and children and the
 * tree's depth. False when out of memory. */
static bool shape(ws_relay *t) {
  int S = t->nswarm, W = t->nworkers, N = 1 + S + W;
  int *parent = malloc((size_t)N * sizeof *parent);
  t->kids = malloc((size_t)N * sizeof *t->kids);
  bool ok = parent && t->kids && ws_relay_tree(t->fanout, S, W, parent);
  if (ok) {
    t->parent = parent[t->pos];
    t->nkids = 0;
    for (int i = 1; i < N && t->parent != -2; i++)
      if (parent[i] == t->pos) t->kids[t->nkids++] = i;
    t->depth = 0;
    for (int w = 0; w < W; w++) {
      int d = 0;
      for (int i = 1 + S + w; i > 0; i = parent[i]) d++;
      if (d > t->depth) t->depth = d;
    }
  }
  free(parent);
  return ok;
}

int ws_relay_create(ws_relay *t, const wf_roles *r, MPI_Comm world, int fanout, int lanes,
                    int nlegs, wf_status *st) {
  *t = (ws_relay){.comm = MPI_COMM_NULL,
                  .fanout = fanout,
                  .nswarm = r->count[WF_ROLE_SWARMX],
                  .lanes = lanes,
                  .nlegs = nlegs,
                  .role = r->role};
  memcpy(t->first, r->first, sizeof t->first);
  if (lanes < 1 || r->count[WF_ROLE_WAFER] % lanes != 0)
    return wf_fail(st, WF_ERR_INPUT, "%d workers do not make lanes of wafers of %d ranks",
                   r->count[WF_ROLE_WAFER], lanes);
  t->nworkers = r->count[WF_ROLE_WAFER] / lanes;
  if (!ws_relay_fits(fanout, t->nswarm, t->nworkers, st)) return st->code;
  /* a leg's id is its messages' tag */
  int *tag_ub, flag;
  MPI_Comm_get_attr(world, MPI_TAG_UB, &tag_ub, &flag);
  if (flag && nlegs - 1 > *tag_ub)
    return wf_fail(st, WF_ERR_INPUT,
                   "the relay needs %d message tags (transfers a step, for each rank of a wafer); "
                   "this MPI has %d: fewer layers or fewer ranks a wafer",
                   nlegs, *tag_ub + 1);
  t->pos = r->role == WF_ROLE_SWARMX  ? 1 + r->role_rank
           : r->role == WF_ROLE_WAFER ? 1 + t->nswarm + r->role_rank / lanes
                                      : 0;
  t->lane = r->role == WF_ROLE_WAFER ? r->role_rank % lanes : -1;
  t->leg = calloc((size_t)nlegs, sizeof *t->leg);
  t->active = malloc((size_t)nlegs * sizeof *t->active);
  int ok = t->leg && t->active && shape(t);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world);
  if (!ok) {
    ws_relay_free(t);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the SwarmX relay");
  }
  MPI_Comm_dup(world, &t->comm);
  return WF_OK;
}

void ws_relay_free(ws_relay *t) {
  for (int id = 0; id < t->nlegs && t->leg; id++) {
    ws_relay_leg *l = &t->leg[id];
    free(l->src), free(l->dst), free(l->in), free(l->out);
  }
  /* A relay never created is all zeros, and a zero handle need not be
   * MPI_COMM_NULL (Open MPI's is not): the comm exists only with the legs. */
  if (t->leg && t->comm != MPI_COMM_NULL) MPI_Comm_free(&t->comm);
  free(t->leg), free(t->active), free(t->kids);
  *t = (ws_relay){.comm = MPI_COMM_NULL};
}

/* ---- legs ---- */

/* Segments of `count` words (no count + SEGMENT - 1: that overflows near INT_MAX). */
static int segments(int count) {
  return count / WS_RELAY_SEGMENT + (count % WS_RELAY_SEGMENT != 0);
}

bool ws_relay_reserve(ws_relay *t, int id, int count) {
  ws_relay_leg *l = &t->leg[id];
  int nseg = segments(count);
  if (nseg <= l->capacity) return true;
  /* A leg talks to its parent or its children: the same children in every
   * MemoryX rank's tree. */
  size_t peers = t->nkids > 1 ? (size_t)t->nkids : 1, n = (size_t)nseg * peers;
  if (n > INT_MAX) return false; /* MPI_Testall counts requests in an int */
  free(l->src), free(l->dst), free(l->in), free(l->out);
  l->src = malloc(peers * sizeof *l->src);
  l->dst = malloc(peers * sizeof *l->dst);
  l->in = malloc(n * sizeof *l->in);
  l->out = malloc(n * sizeof *l->out);
  bool ok = l->src && l->dst && l->in && l->out;
  l->capacity = ok ? nseg : 0;
  return ok;
}

void ws_relay_start(ws_relay *t, int id, bool up, int owner, int lane, ws_real *data,
                    ws_real *extra, int count) {
  ws_relay_leg *l = &t->leg[id];
  /* a caller's bug: past the reservation, or a worker in another lane's tree */
  if (segments(count) > l->capacity || !l->src || (t->lane >= 0 && lane != t->lane)) {
    fprintf(stderr, "wafer: relay leg %d started with %d words in lane %d, reserved for %lld "
            "(this rank's lane %d)\n", id, count, lane,
            (long long)l->capacity * WS_RELAY_SEGMENT, t->lane);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int parent = ws_relay_parent(t, owner, lane), *kids = up ? l->src : l->dst;
  int nkids = ws_relay_children(t, owner, lane, kids);
  *l = (ws_relay_leg){.up = up,
                      .owner = owner,
                      .count = count,
                      .data = data,
                      .extra = extra,
                      .tag = id,
                      .nseg = segments(count),
                      .src = l->src,
                      .dst = l->dst,
                      .in = l->in,
                      .out = l->out,
                      .capacity = l->capacity,
                      .active = true};
  if (up) {
    l->nsrc = nkids;
    l->ndst = parent >= 0;
    l->dst[0] = parent;
  } else {
    l->nsrc = parent >= 0;
    l->src[0] = parent;
    l->ndst = nkids;
  }
  /* Every segment's receives posted at once: MPI matches one sender's
   * messages of one tag in order, so segment k lands in place k. */
  for (int k = 0; k < l->nseg; k++) {
    int off = k * WS_RELAY_SEGMENT,
        len = count - off < WS_RELAY_SEGMENT ? count - off : WS_RELAY_SEGMENT;
    for (int c = 0; c < l->nsrc; c++) {
      ws_real *into = c == 0 ? data : extra + (size_t)(c - 1) * (size_t)count;
      MPI_Irecv(into + off, len, WS_MPI_REAL, l->src[c], id, t->comm, &l->in[(size_t)k * l->nsrc + c]);
    }
    for (int d = 0; d < l->ndst; d++) l->out[(size_t)k * l->ndst + d] = MPI_REQUEST_NULL;
  }
  t->active[t->nactive++] = id;
}

/* Forward every segment that has arrived (an up leg adds its children's
 * first, in child order); true once the leg's sends are done too. */
static bool leg_progress(ws_relay *t, ws_relay_leg *l) {
  int flag = 1;
  while (l->forwarded < l->nseg) {
    int k = l->forwarded, off = k * WS_RELAY_SEGMENT;
    int len = l->count - off < WS_RELAY_SEGMENT ? l->count - off : WS_RELAY_SEGMENT;
    if (l->nsrc > 0) MPI_Testall(l->nsrc, &l->in[(size_t)k * l->nsrc], &flag, MPI_STATUSES_IGNORE);
    if (!flag) return false;
    for (int c = 1; c < l->nsrc && l->up; c++) {
      const ws_real *add = l->extra + (size_t)(c - 1) * (size_t)l->count + off;
      ws_real *sum = l->data + off;
      for (int e = 0; e < len; e++) sum[e] += add[e];
    }
    for (int d = 0; d < l->ndst; d++)
      MPI_Isend(l->data + off, len, WS_MPI_REAL, l->dst[d], l->tag, t->comm,
                &l->out[(size_t)k * l->ndst + d]);
    *(l->up ? &t->bytes_up : &t->bytes_down) += (double)len * l->ndst * sizeof(ws_real);
    l->forwarded++;
  }
  MPI_Testall(l->nseg * l->ndst, l->out, &flag, MPI_STATUSES_IGNORE);
  return flag;
}

bool ws_relay_progress(ws_relay *t, int id) {
  for (int i = 0; i < t->nactive;) {
    ws_relay_leg *l = &t->leg[t->active[i]];
    if (leg_progress(t, l)) {
      l->active = false;
      t->active[i] = t->active[--t->nactive];
    } else {
      i++;
    }
  }
  return id < 0 ? t->nactive == 0 : !t->leg[id].active;
}

bool ws_relay_done(const ws_relay *t, int id) { return !t->leg[id].active; }

void ws_relay_wait(ws_relay *t, int id) {
  while (!ws_relay_progress(t, id)) {
  }
}

/* ---- the relay against MPI_Bcast ---- */

void ws_relay_rates(ws_relay *t, MPI_Comm world, int count, double rate[2]) {
  /* The first MemoryX rank's tree of lane 0: it (rank 0 of `tree`), the
   * SwarmX ranks in the tree and lane 0's workers. */
  int rank, id = t->nlegs - 1;
  MPI_Comm_rank(world, &rank);
  bool in = t->role == WF_ROLE_MEMORYX ? rank == t->first[WF_ROLE_MEMORYX]
                                       : !ws_relay_idle(t) && t->lane <= 0;
  MPI_Comm tree;
  MPI_Comm_split(world, in ? 0 : MPI_UNDEFINED, t->role == WF_ROLE_MEMORYX ? -1 : rank, &tree);
  /* A relay adds nothing here (a copy down), so `extra` stays unused. */
  ws_real *buf = in ? calloc((size_t)count, sizeof *buf) : NULL;
  int ok = !in || (buf && ws_relay_reserve(t, id, count));
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world);
  double bytes[2] = {t->bytes_down, t->bytes_up}; /* a step's counts leave this out */
  rate[0] = rate[1] = 0;
  for (int k = 0; k < 6 && ok; k++) { /* alternating, the best of 3 each */
    bool bcast = k % 2 == 1;
    MPI_Barrier(world);
    double t0 = MPI_Wtime();
    if (in && bcast) MPI_Bcast(buf, count, WS_MPI_REAL, 0, tree);
    if (in && !bcast) {
      ws_relay_start(t, id, false, 0, 0, buf, NULL, count);
      ws_relay_wait(t, id);
    }
    double s = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, world);
    double bytes_per_s = s > 0 ? (double)count * sizeof *buf / s : 0;
    if (bytes_per_s > rate[bcast]) rate[bcast] = bytes_per_s;
  }
  t->bytes_down = bytes[0], t->bytes_up = bytes[1];
  if (tree != MPI_COMM_NULL) MPI_Comm_free(&tree);
  free(buf);
}
