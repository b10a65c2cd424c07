/* SwarmX as a relay: the tree that carries weights from a MemoryX rank to
 * the wafers and their gradients' sum back, built from point-to-point
 * messages that the SwarmX ranks forward (down) and add (up).
 *
 * The tree of MemoryX rank m: the SwarmX ranks hang under m as an F-ary
 * heap (F = [train] swarmx_fanout; SwarmX j's parent is m for j < F, else
 * SwarmX j / F - 1), and the workers hang under the SwarmX ranks,
 * each taking at most F children in all: one worker a SwarmX rank in turn,
 * the last SwarmX rank (the deepest) first, round after round. Without
 * SwarmX ranks m feeds every worker itself (F bounds relays, and there are
 * none). With wafers of K ranks there are K lanes, each with its own
 * tree of that shape: lane q's workers are the ranks at place q of every
 * wafer, and its blocks are place q's tiles (ws_block_tiles); every SwarmX
 * rank relays in every lane. A worker never relays: a
 * fan-out too small to reach every worker is refused, and a SwarmX rank
 * with no worker below it stays out of the tree. A block moves in segments
 * of WS_RELAY_SEGMENT words so that a relay forwards one while the next
 * arrives; a node adds its children's segments in child order, so a sum's
 * bits do not depend on arrival order.
 *
 * A transfer in flight at one rank is a "leg": the rank's part of one
 * block's trip (receive from the parent and send to the children, or
 * receive from the children, add and send to the parent). Legs move only
 * when the rank calls ws_relay_progress, which every role does while it
 * waits. */
#ifndef WS_RELAY_H
#define WS_RELAY_H

#include <mpi.h>
#include <stdbool.h>

#include "wf_error.h"
#include "wf_roles.h"
#include "ws_gpt.h"

#define WS_RELAY_SEGMENT (1 << 17)

typedef struct ws_relay_leg {
  bool up;          /* a sum up the tree (else a copy down it) */
  int owner, count; /* the MemoryX rank whose tree; words */
  ws_real *data;    /* down: the block; up: the rank's own part (a worker) or where the sum lands */
  ws_real *extra;   /* up at a relay: children 1.. land here, (children - 1) x count */
  int tag, nsrc, ndst, nseg, forwarded;
  int *src, *dst;        /* world ranks it receives from, sends to */
  MPI_Request *in, *out; /* nseg x nsrc receives, nseg x ndst sends */
  int capacity;          /* segments reserved */
  bool active;
} ws_relay_leg;

typedef struct ws_relay {
  MPI_Comm comm; /* a duplicate of world: the relay's messages only */
  int fanout, nswarm;
  int lanes;    /* trees a MemoryX rank has: one per place of a wafer's rank grid */
  int nworkers; /* in each lane */
  int lane;     /* a worker's (its place in its wafer); -1 for the other roles */
  int nlegs;    /* legs, ids 0..nlegs-1 */
  int first[WF_NROLES]; /* world rank of each role's first rank */
  wf_role role;
  int pos;              /* this rank's node in [owner, SwarmX..., workers...]; 0 for MemoryX */
  int parent;           /* its parent's node; -1 at the root, -2 out of the tree (an idle SwarmX) */
  int nkids, *kids;     /* its children's nodes, in node order (the order sums add in) */
  int depth;            /* hops from MemoryX to the deepest worker */
  ws_relay_leg *leg;    /* nlegs */
  int *active, nactive; /* the ids of the legs in flight */
  double bytes_down, bytes_up; /* this rank has sent, since created */
} ws_relay;

/* In these three, W is the workers of one lane (the wafers).
 * The fan-out F reaches W workers through S > 0 SwarmX ranks when no worker
 * has a child (always with S = 0); false (and a message naming the fan-out
 * needed) when it does not. */
bool ws_relay_fits(int fanout, int nswarm, int nworkers, wf_status *st);
/* Every node's parent in the tree over the nodes [MemoryX, SwarmX 1..S,
 * workers S+1..S+W] (parent[0] = -1; -2: an idle SwarmX rank, out of the
 * tree), for a fan-out that fits. False when out of memory. */
bool ws_relay_tree(int fanout, int nswarm, int nworkers, int *parent);
/* How many children MemoryX has in that tree; the most a SwarmX rank has
 * (0 without SwarmX ranks), and which one has them (into *busiest unless
 * NULL: the first). -1 when out of memory. */
int ws_relay_root_children(int fanout, int nswarm, int nworkers);
int ws_relay_most_children(int fanout, int nswarm, int nworkers, int *busiest);
/* Collective over `world`: trees of `lanes` lanes (the workers make wafers
 * of that many ranks; each tree carries one place's tiles), legs with ids
 * 0..nlegs-1 (input error when MPI's tags do not reach that far). */
int ws_relay_create(ws_relay *t, const wf_roles *r, MPI_Comm world, int fanout, int lanes,
                    int nlegs, wf_status *st);
void ws_relay_free(ws_relay *t);

/* This rank's parent in MemoryX rank `owner`'s tree of lane `lane` (world
 * rank; -1 at the root) and its children (world ranks, at most fanout, into
 * `child` unless NULL; returns how many). Every lane's tree has the same
 * shape: a SwarmX rank's children are the same nodes in each. */
int ws_relay_parent(const ws_relay *t, int owner, int lane);
int ws_relay_children(const ws_relay *t, int owner, int lane, int *child);
/* Hops from MemoryX to the deepest worker (1: MemoryX feeds them). */
int ws_relay_depth(const ws_relay *t);
/* A SwarmX rank with no worker below it: it takes part in nothing. */
bool ws_relay_idle(const ws_relay *t);

/* Room for leg `id` (< nlegs) to carry up to `count` words
 * (its requests), reserved once so that a step allocates nothing. False
 * when out of memory. */
bool ws_relay_reserve(ws_relay *t, int id, int count);
/* Start leg `id` (reserved, not active) on this rank: block `data` of
 * `count` words down from / up to MemoryX rank `owner` through lane
 * `lane`'s tree (a worker: its own lane); its messages carry tag `id` on
 * every rank of the trip. An up leg at a relay needs `extra` for children
 * 1.. (unused with one child). */
void ws_relay_start(ws_relay *t, int id, bool up, int owner, int lane, ws_real *data,
                    ws_real *extra, int count);
/* Move every active leg as far as it goes without waiting; true when leg
 * `id` is done (or -1: when every leg is done). */
bool ws_relay_progress(ws_relay *t, int id);
/* Whether leg `id` is done (or was never started), without moving anything. */
bool ws_relay_done(const ws_relay *t, int id);
/* Progress until leg `id` (or -1: every leg) is done. */
void ws_relay_wait(ws_relay *t, int id);

/* Seconds to move `count` words from the first MemoryX rank to lane 0's
 * workers through its tree and by MPI_Bcast over the same ranks, the best of 3 of
 * each. Collective over world; rate[0] relay, rate[1] MPI_Bcast (bytes/s). */
void ws_relay_rates(ws_relay *t, MPI_Comm world, int count, double rate[2]);

#endif
