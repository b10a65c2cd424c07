/* What a rank holds of a model's training state (weights, their gradients,
 * AdamW's two moments), in bytes, by its role and the mapping, counted from
 * the same sizes the allocations use; and the budgets ([train] rank_mb,
 * memoryx_mb, swarmx_mb) that a run checks before any work, refusing a mapping that
 * does not fit and saying by how much; and what a SwarmX rank holds to relay.
 * Activations, MPI's own buffers and the relay's bandwidth measurement at
 * the start (freed before the first step) are not counted. */
#ifndef WS_MEMORY_H
#define WS_MEMORY_H

#include <stdbool.h>

#include "wf_error.h"
#include "ws_gpt.h"
#include "ws_stream.h"

/* A wafer rank, resident: its tiles of the weight matrices on a px x py
 * wafer (the largest, rank (0, 0)'s; 1 x 1: the whole model) and the
 * whole vectors, four numbers each (weight, gradient, two moments). */
double ws_memory_resident(const ws_config *c, int px, int py);
/* In the streamed figures the workers make wafers of px x py ranks (1 x 1:
 * a rank a wafer), and MemoryX and SwarmX hold each block packed place by
 * place (ws_stream.h: every place's tiles, the vectors once a place).
 *
 * A wafer rank, streamed: its place's part (the largest, place 0's) of the
 * head and its gradients, of prefetch + 1 layer slots and as many gradient
 * slots. */
double ws_memory_streamed(const ws_config *c, int prefetch, int px, int py);
/* MemoryX rank `index` of `nmemx`: its blocks (weights, gradients,
 * moments), the whole model it builds the first state in (weights and
 * gradients; with moments on the first MemoryX rank, which keeps it to
 * assemble checkpoints, and on every one that `restarts`: it reads them),
 * and the room its `children` in the relay's tree add their gradients in. */
double ws_memory_memoryx(const ws_config *c, int nmemx, int index, int children, bool restarts,
                         int px, int py);

/* A SwarmX rank: the head and prefetch + 1 layers on their way down, and
 * the room its `children` in the tree add their gradients in (for
 * WS_UP_WINDOW sums at once; an idle rank keeps room for one child). */
double ws_memory_swarmx(const ws_config *c, int prefetch, int children, int px, int py);

/* `need` bytes against a budget of `mb` megabytes (0: none): an input error
 * saying what `who` holds (`what`: "training state (...)", say), by how much
 * it is over, and `fix`. */
int ws_memory_check(double need, double mb, const char *who, const char *what, const char *fix,
                    wf_status *st);

#endif
