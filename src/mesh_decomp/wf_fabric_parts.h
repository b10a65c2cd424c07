/* What the fabric's files (wf_fabric.c, wf_fabric_bcast.c) share: the
 * counting of one operation and the helpers of the row/column collectives.
 * Not for callers of the fabric. */
#ifndef WF_FABRIC_PARTS_H
#define WF_FABRIC_PARTS_H

#include <stdbool.h>
#include <stddef.h>

#include "wf_fabric.h"

/* What one operation is, for the counts by kind. */
typedef enum { KIND_NEIGHBOUR, KIND_LINE, KIND_GLOBAL } wf_fabric_kind;

/* Count one operation: its kind, its messages to other ranks, its wall time
 * since t0, its modelled cycles, the words it moved. */
void wf_fabric_count_op(wf_fabric *f, wf_fabric_kind kind, long long messages, double t0,
                        double cycles, long long intra_words, long long inter_bytes);

/* Along rows, the lines are this block's rows and a line's PEs its columns;
 * along columns the other way round: the index in the block (x fastest) of
 * PE p of line `line`. */
size_t wf_fabric_block_pe(const wf_decomp *dc, int along_x, int line, int p);

/* The scratch a row/column collective needs (the receive buffer too when
 * `both`): `bytes` on this rank, `most` the largest any rank asks, from the
 * decomposition alone, so that over MPI's int count fails `st` on every
 * rank alike without a message; out of memory ends the job, as MPI's own
 * would (the callers have checked their data's memory up front). Local: no
 * agreement, so a line collective is one operation the fabric counts. */
int wf_fabric_reserve(wf_fabric *f, size_t bytes, size_t most, bool both, const char *what,
                      wf_status *st);
/* The most lines a rank holds along `along_x` (its PE rows along rows, its
 * columns along columns), over every rank: from the decomposition alone. */
int wf_fabric_most_lines(const wf_decomp *dc, int along_x);

#endif
