/* `wafer spmv`: the SDK's hypersparse SpMV example (csl-examples
 * benchmarks/spmv-hypersparse) on the PE grid. What its files share. */
#ifndef SPMV_H
#define SPMV_H

#include <stdbool.h>
#include <mpi.h>
#include <stdint.h>

#include "wf_error.h"
#include "wf_model.h"
#include "wf_workload.h"

extern const wf_workload wf_spmv_workload;

/* Where the matrix comes from: a user's Matrix Market file, or a generator:
 * an R-MAT graph (Chakrabarti, Zhan and Faloutsos 2004: 2^scale vertices,
 * edge_factor edges a vertex, quadrant probabilities 0.57, 0.19, 0.19,
 * 0.05, repeated edges adding up, values uniform in [-1, 1)), or the 5- and
 * 7-point Laplacians of a side^2 or side^3 grid. */
typedef enum { SP_FILE, SP_RMAT, SP_LAPLACE2D, SP_LAPLACE3D } sp_source;

typedef struct sp_case {
  sp_source source;
  const char *matrix; /* the file, for SP_FILE */
  int scale, edge_factor, side;
  uint64_t seed;
  long long m, n;   /* rows, columns */
  long long stored; /* entries as stored (a symmetric file's one triangle) */
  bool symmetric;   /* stored entries off the diagonal stand for two */
} sp_case;

/* The matrix's size: the file's head (every rank reads it) or the
 * generator's. Fails on a file that cannot be read (naming its line). */
int sp_matrix_size(sp_case *c, wf_status *st);

/* Every entry of the matrix (a symmetric file's mirrored entries too, a
 * pattern file's as 1), in the file's or the generator's order, to `fn`;
 * stops at the first failure, or at wf_signal_stop() with the signal's
 * status. */
typedef void (*sp_entry_fn)(void *ctx, long long r, long long c, double v);
int sp_matrix_each(const sp_case *c, sp_entry_fn fn, void *ctx, wf_status *st);

/* x_j: uniform in [-1, 1) from the seed (any rank makes any entry). */
double sp_x(const sp_case *c, long long j);

/* The weight of row i in the projection w . y that compares y with
 * PETSc's, whose rows sit on other ranks: uniform in [-1, 1). */
double sp_weight(const sp_case *c, long long i);

/* PETSc's MatMult of the same matrix and x (spmv_petsc.c; a build without
 * PETSc has spmv_petsc_absent.c, which refuses): in PETSc's own row layout
 * (rank r of P owns rows [m r / P, m (r + 1) / P)), assembled from two
 * passes over the entries (counts, then values), `repeat` products timed.
 * This rank's share of the projection w . y, of its bound's sum
 * |w_i| (|A| |x|)_i, the most entries of one of its rows (repeats apart),
 * and its seconds a product. Collective over `comm`. */
typedef struct sp_petsc_part {
  double proj, abs_proj, kmax, seconds;
} sp_petsc_part;
int sp_petsc_product(const sp_case *c, MPI_Comm comm, long repeat, sp_petsc_part *p,
                     wf_status *st);
void sp_petsc_finalize(void);

/* What a rank holds (spmv_setup.c). The matrix's rows are cut into pe_ny
 * bands at rb[], its columns into pe_nx bands at cb[] (equal widths, or
 * equal nonzeros with spmv.balance), and PE (x, y) holds the block of row
 * band y and column band x. A rank holds its PEs' blocks as one CSR matrix
 * of its rows and columns; it owns one contiguous range of x (its rank
 * column's columns cut over the column's ranks) and one of y (its rank
 * row's rows cut over the row's ranks). */
typedef struct sp_rank {
  long long *rb, *cb;         /* pe_ny + 1 and pe_nx + 1 boundaries */
  long long r0, r1, c0, c1;   /* this rank's rows and columns */
  long long xo0, xo1, yo0, yo1; /* the x and y it owns */
  long long nnz;              /* its entries */
  long long *rowptr;          /* CSR over its rows, columns from c0 */
  int32_t *colidx;
  double *val;
  double *x;                  /* c1 - c0: its columns' x */
  double *ypart;              /* r1 - r0: its partial products */
  double *y;                  /* yo1 - yo0: its rows of y */
  /* The partial products each rank of its row owns: send_rows[send_off[q]
   * .. send_off[q + 1]) (its row indices), and where the received ones go:
   * recv_rows[recv_off[q] ..] (indices into y). */
  long long *send_off, *recv_off;
  int32_t *send_rows, *recv_rows;
  double *send_vals, *recv_vals;
  struct wf_piece *pieces; /* an exchange's messages: 2 max(px, py) */
  /* The busiest PE's work for the model, and the largest count of entries
   * on one PE (the imbalance). */
  double pe_nnz_max, cycles_lo, cycles_hi;
} sp_rank;

/* Build this rank's part of the matrix, its exchange plans and its PEs'
 * counts (two passes over the entries when `balance`). Collective. */
int sp_rank_create(wf_run *run, const sp_case *c, bool balance, sp_rank *r, wf_status *st);
void sp_rank_free(sp_rank *r);

/* An exchange along this rank's row by the plan: to each other rank q,
 * elements send_off[q] .. send_off[q + 1] of `esz` bytes at `send`; from
 * it, recv_off[q] .. into `recv` (`self_bytes`, `pe_words`: the fabric's
 * counts, wf_fabric_alltoall_pieces). Collective over the rank row. */
int sp_exchange_rows(wf_run *run, sp_rank *r, void *send, void *recv, size_t esz,
                     size_t self_bytes, double pe_words, wf_status *st);

/* The check (spmv_check.c): this rank's rows [r0, r1) of y against a plain
 * CSR product of the same rows from the matrix's entries, every entry
 * within 2 gamma_(k + extra) (|A| |x|) + 2 (k + extra) 2^-1074 for its
 * row's k entries (each sum's error bound, for both computations, and the
 * multiplies' below the normal range; `extra`: the partial sums the
 * distributed product adds). Sets *worst to this rank's worst ratio of
 * error to bound (NaN: a NaN). Fails when out of memory, or at a signal. */
int sp_check_rows(const sp_case *c, long long r0, long long r1, const double *y, int extra,
                  double *worst, wf_status *st);

#endif
