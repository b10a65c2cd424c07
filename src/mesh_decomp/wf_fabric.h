/* The fabric: counters of every word moved between PEs, and the fabric's
 * primitives beyond the halo exchange (wf_halo.h), each measured on the
 * cluster and projected onto the wafer by the cost model (docs/model.md):
 *
 *   grid-wide reduce / allreduce          (dot products)
 *   multicast along PE rows / columns     (a scalar or a vector segment)
 *   reduction of segments along rows / columns   (GEMV, TLR-MVM)
 *   all-to-all within PE rows / columns   (the transposes of a pencil FFT)
 *   neighbour exchange of irregular data  (atoms: pack/unpack callbacks)
 *
 * Per-PE data passed to the collectives is a rank's block of nx*ny elements,
 * x fastest, without halo cells. Every function here is collective over the
 * wafer's communicator. */
#ifndef WF_FABRIC_H
#define WF_FABRIC_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "wf_decomp.h"
#include "wf_error.h"
#include "wf_grid.h"
#include "wf_hw.h"

typedef struct wf_fabric_counters {
  long long ops;              /* fabric operations */
  /* Of those, by what they cost a cluster as it grows (a study's "why"): */
  long long collectives;      /* over every rank (reductions): their latency grows with log P */
  long long line_collectives; /* over a row or column of ranks (multicasts, all-to-all) */
  long long messages;         /* point-to-point messages this rank sent to another rank */
  long long words_intra;      /* 32-bit words between PEs of this rank: free, but counted */
  long long words_inter;      /* words this rank's PEs received from other ranks */
  long long mpi_bytes;        /* bytes this rank received through MPI from other ranks */
  double model_cycles;        /* projected wafer cycles of all these operations */
  double seconds;             /* wall time spent in fabric calls on this rank */
} wf_fabric_counters;

/* A growable byte buffer, for irregular messages. */
typedef struct wf_buffer {
  char *data;
  size_t len, cap;
} wf_buffer;

/* Room for `bytes` in total (len unchanged). */
int wf_buffer_reserve(wf_buffer *b, size_t bytes, wf_status *st);
/* Append `bytes` from `src`. */
int wf_buffer_append(wf_buffer *b, const void *src, size_t bytes, wf_status *st);
/* Append, or end the job when out of memory: for a unit of work's loop,
 * where a failure could not reach the other ranks without a collective a
 * unit (as MPI's own allocations end it). */
void wf_buffer_push(wf_buffer *b, const void *src, size_t bytes);
void wf_buffer_free(wf_buffer *b);

typedef struct wf_fabric {
  const wf_decomp *dc;
  const wf_grid *grid;
  const wf_hw *hw;
  MPI_Comm row_comm; /* ranks sharing this rank's band of PE rows (rank = cx) */
  MPI_Comm col_comm; /* ranks sharing this rank's band of PE columns (rank = cy) */
  MPI_Comm swap_comm; /* the neighbour exchanges' own (a probe matches nothing else) */
  wf_buffer send, recv; /* scratch of the neighbour exchange */
  wf_fabric_counters c;
  /* The workload's main computation (wf_fabric_main_begin / _end): its
   * counters and its units of work (steps, iterations, products), for the
   * per-unit figures of the run's report. */
  wf_fabric_counters main, main_start;
  long long main_units;
} wf_fabric;

typedef enum { WF_SUM, WF_MAX } wf_reduce_op;
typedef enum { WF_ALONG_ROWS, WF_ALONG_COLUMNS } wf_axis;

/* The fabric over a decomposition (its row and column communicators);
 * cannot fail (MPI errors are fatal: wf_mpi.h). Collective. */
void wf_fabric_create(wf_fabric *f, const wf_decomp *dc, const wf_grid *grid, const wf_hw *hw);
void wf_fabric_free(wf_fabric *f);

/* `vals`: this rank's partial results (already reduced over its PEs); on
 * return, the grid-wide result, on every rank. */
void wf_fabric_allreduce(wf_fabric *f, double *vals, int n, wf_reduce_op op);
/* As allreduce, but the result is defined only on the rank owning PE (0, 0). */
void wf_fabric_reduce(wf_fabric *f, double *vals, int n, wf_reduce_op op);

/* An allreduce over this rank's row (WF_ALONG_ROWS: the ranks sharing its
 * band of PE rows) or column of ranks: `vals` are this rank's, the result
 * the line's, on every rank of it. Cluster bookkeeping with no wafer
 * counterpart (the fold mapping's extents): no cycles. */
void wf_fabric_allreduce_line(wf_fabric *f, wf_axis axis, double *vals, int n, wf_reduce_op op);

/* The timing of a loop, counted as the collectives they are (a study sees
 * what its measurement costs): a barrier before a timed operation, and the
 * slowest rank's `seconds` after it, on every rank. No words, no cycles. */
void wf_fabric_barrier(wf_fabric *f);
double wf_fabric_slowest(wf_fabric *f, double seconds);

/* Multicast: every PE (i, j) gets the element (any size: a scalar or a
 * vector segment) of PE (root_x, j) of its row, or of PE (i, root_y) of its
 * column. */
int wf_fabric_bcast_row(wf_fabric *f, void *block, size_t elem_bytes, int root_x, wf_status *st);
int wf_fabric_bcast_col(wf_fabric *f, void *block, size_t elem_bytes, int root_y, wf_status *st);

/* The same multicast for an element every PE of a line would hold alike (a
 * matrix tile of SUMMA): the rank keeps one copy a line of its block, in
 * `lines` (its PE rows' along rows, x fastest order of its rows; its PE
 * columns' along columns), which the rank owning the root fills with the
 * root PEs' elements before the call. Counted as the per-PE multicast:
 * every PE of the line takes the element in. A line's copies over MPI's
 * int count (2^31 - 1 bytes) fail when the line spans ranks (callers
 * refuse such a problem up front: wf_fabric_lines_fit). */
int wf_fabric_bcast_lines(wf_fabric *f, wf_axis axis, void *lines, size_t elem_bytes, int root,
                          wf_status *st);
/* Whether wf_fabric_bcast_lines can multicast elements of `elem_bytes`
 * along `axis` on this decomposition (the same answer on every rank). */
bool wf_fabric_lines_fit(const wf_fabric *f, wf_axis axis, double elem_bytes);
/* Multicast within parts of lines (the triangle of PEs of a Cholesky
 * factorisation): along `axis`, line l of this block (its PE rows along
 * rows, its columns along columns, in block order) takes the element of its
 * PE root[l] onward, to its PEs root[l] + 1 .. last[l] (east along a row,
 * south down a column); a line with last[l] <= root[l] carries nothing. The
 * lines are held as in wf_fabric_bcast_lines, one copy a line, filled by the
 * ranks owning the roots before the call; every rank sharing a line must
 * give it the same root and end. Lines whose roots sit on one rank go in
 * one message. Counted for the PEs the spans reach. Collective over this
 * rank's row (column) of ranks. */
int wf_fabric_bcast_spans(wf_fabric *f, wf_axis axis, void *lines, size_t elem_bytes,
                          const int *root, const int *last, wf_status *st);
/* Reduction of segments: every PE holds `n` doubles; along each row (or
 * column) they are summed element by element into the segment of the PE at
 * position `root` of that row (column). Other PEs' segments are unchanged. */
int wf_fabric_reduce_segments(wf_fabric *f, wf_axis axis, double *block, int n, int root,
                              wf_status *st);

/* All-to-all within rows (or columns) of L PEs (L = pe_nx, or pe_ny): every
 * PE holds L chunks of `chunk_bytes`, chunk k for the k-th PE of its row
 * (column); afterwards its chunk k is the one that PE sent to it. Blocks are
 * [PE of the rank block, x fastest][k][chunk]. */
int wf_fabric_alltoall(wf_fabric *f, wf_axis axis, const void *send, void *recv,
                       size_t chunk_bytes, wf_status *st);

/* One contiguous message of an all-to-all within this rank's row (column)
 * of ranks: `bytes` (at most WF_PIECE_MAX) at `data`, to or from the rank
 * at place `peer` along that line. */
typedef struct wf_piece {
  int peer;
  void *data;
  size_t bytes;
} wf_piece;
#define WF_PIECE_MAX ((size_t)1 << 30)

/* The same all-to-all for data a caller keeps in its own layout, cut into
 * contiguous pieces: each piece is one message, and the pieces between two
 * ranks are matched in the order each side lists them, so both must cut
 * the data alike. Open MPI moves a large contiguous message between the
 * processes of a node in one copy (CMA), where a datatype's costs two
 * (packed into shared memory, unpacked from it). Every receive is posted
 * first, the sends go 32 at a time. The pencil FFT's transposes move
 * sub-boxes of its arrays this way and copy this rank's own part themselves
 * (`self_bytes`, counted as words inside the rank). `pe_chunk_words`: what
 * one PE sends each PE of its line, for the model. */
int wf_fabric_alltoall_pieces(wf_fabric *f, wf_axis axis, const wf_piece *send, int nsend,
                              const wf_piece *recv, int nrecv, size_t self_bytes,
                              double pe_chunk_words, wf_status *st);

/* Neighbour exchange of irregular data (CoMD's shape): `pack` appends to
 * `out` what goes to the neighbouring rank on `side` (0: lower, 1: upper)
 * of `axis` (0: x, 1: y; periodic); what arrives from the opposite
 * neighbour is handed to `unpack`. One message each way, sized by the
 * receiver's probe; no global step. With one rank along the axis the
 * neighbour is this rank: the bytes go straight to unpack, no MPI.
 *
 * Returns this rank's status. A rank whose `st` already holds an error,
 * or whose pack fails, still takes part (it sends a failure notice, and
 * its partner skips that unpack), so a caller runs all its exchanges and
 * then calls wf_status_agree once to give every rank the first error. */
typedef int (*wf_pack_fn)(void *ctx, wf_buffer *out, wf_status *st);
typedef int (*wf_unpack_fn)(void *ctx, const char *data, size_t bytes, wf_status *st);
int wf_fabric_exchange(wf_fabric *f, int axis, int side, wf_pack_fn pack, wf_unpack_fn unpack,
                       void *ctx, wf_status *st);

/* The same swap when both sides know the sizes (a refresh of ghosts whose
 * lists an exchange built): `send_bytes` from `send` to the neighbour on
 * `side` of `axis`, `recv_bytes` into `recv` from the opposite one (with
 * one rank along the axis, a copy). Cannot fail; one message each way. */
void wf_fabric_shift(wf_fabric *f, int axis, int side, const void *send, size_t send_bytes,
                     void *recv, size_t recv_bytes);

/* Add operations a workload ran over communicators of its own (the TLR
 * product's sums and gathers, the training grid's products): `d` holds
 * their counts, wall time, modelled cycles and words; its words_inter is
 * derived from mpi_bytes. */
void wf_fabric_count(wf_fabric *f, const wf_fabric_counters *d);

/* Mark the workload's main computation: counters from _begin to _end are
 * added to f->main, with `units` units of work. Local (no communication). */
void wf_fabric_main_begin(wf_fabric *f);
void wf_fabric_main_end(wf_fabric *f, long long units);

/* The run's counters over all ranks: words and bytes summed, times and
 * cycles the slowest rank's; ops and the kinds of operation are this
 * rank's. Collective. */
wf_fabric_counters wf_fabric_totals(const wf_fabric *f);
/* The busiest rank's value of each count in `c` (each rank passes its
 * own): what limits a step as the cluster grows. Collective. */
wf_fabric_counters wf_fabric_busiest(const wf_fabric *f, const wf_fabric_counters *c);

#endif
