/* Distributed complex FFT of an nx x ny x nz array laid on the PE grid as
 * the wafer lays it (ICS23's wsFFT): pencils along z in PE memory, (x, y)
 * over the PEs, then two transposes through the fabric.
 *
 *   stage A  z-pencils: PE (i, j) holds the x and y cells of its brick, all z
 *   -- all-to-all within PE rows -->
 *   stage B  x-pencils: PE (i, j) holds all x, its brick's y, z block i of pe_nx
 *   -- all-to-all within PE columns -->
 *   stage C  y-pencils: PE (i, j) holds all y, x block j of pe_ny, z block i
 *
 * A rank holds the union of its PEs' data as one box, stored [y][x][z] (z
 * fastest) in every stage. A transpose moves sub-boxes between the ranks of
 * a line as contiguous messages, straight from and into the stage arrays
 * where the sub-box's y rows are contiguous there, through a packed copy
 * where they are not; where a line of PEs lives on one rank it moves nothing
 * (FFTW reads the strided lines in place). The local transforms are FFTW
 * plans over the rank's box: one multi-dimensional plan for the stages no
 * transpose separates.
 *
 * dims = 1 transforms along z (stage A only), 2 along z and x (A, B), 3
 * along all three. Forward uses exp(-2 pi i j k / n) and neither direction
 * is normalised (FFTW's convention): backward(forward(f)) = N f, N the
 * product of the transformed lengths.
 *
 * Real-to-complex (`real_input`): stage A holds nz real values a pencil,
 * stored in place of nz/2 + 1 complex ones (FFTW's padded layout, see
 * ff_real_index); the forward transform along z keeps the nz/2 + 1
 * non-negative frequencies (the rest are their conjugates), and the
 * pipeline continues on the complex nx x ny x (nz/2 + 1) array. */
#ifndef FF_PENCIL_H
#define FF_PENCIL_H

#include <stddef.h>

#include "wf_error.h"
#include "wf_fabric.h"
#include "wf_hw.h"

typedef enum { FF_DOUBLE, FF_SINGLE } ff_prec;

/* How a box is stored: [y][x][z] or [x][y][z]; z is always fastest. */
typedef enum { FF_YXZ, FF_XYZ } ff_order;

/* The part of the global array a rank holds: cells [x0, x0 + nx) x [y0,
 * y0 + ny) x [z0, z0 + nz), stored in `order`. */
typedef struct ff_box {
  int x0, nx, y0, ny, z0, nz;
  ff_order order;
} ff_box;

static inline size_t ff_box_cells(const ff_box *b) {
  return (size_t)b->nx * (size_t)b->ny * (size_t)b->nz;
}
/* Where local cell (x, y, z) of the box is stored (cells from the box's corner). */
static inline size_t ff_index(const ff_box *b, int x, int y, int z) {
  return b->order == FF_YXZ ? ((size_t)y * b->nx + x) * b->nz + z
                            : ((size_t)x * b->ny + y) * b->nz + z;
}

/* What a transpose exchanges with one rank of the line: the cells this
 * rank sends it and receives from it (global cells), and whether both sides
 * hold each part as one contiguous block (one message; else a message a y
 * row). */
typedef struct ff_peer_part {
  ff_box send, recv;
  bool send_whole, recv_whole;
} ff_peer_part;

/* One transpose across this rank's row (column) of ranks. */
typedef struct ff_exchange {
  int parts, me;      /* ranks in the line, this rank's place */
  ff_peer_part *peer; /* [parts]; NULL: the transpose moves nothing */
  ff_box self;        /* the part that stays on this rank */
  wf_piece *pieces;   /* room for one direction's messages, sends and receives */
  int npieces;
} ff_exchange;

typedef struct ff_plan {
  ff_prec prec;
  size_t elem;   /* bytes of one complex value */
  int n[3];      /* global nx, ny, nz */
  bool r2c;      /* real input, half spectrum along z */
  int nc[3];     /* the complex array: n, with nz/2 + 1 along z for r2c */
  int dims;      /* transformed axes: 1 (z), 2 (z, x), 3 (z, x, y) */
  int stages;    /* stages used: dims */
  ff_box box[3]; /* this rank's box in stages A, B, C */
  void *data[3]; /* each stage's array (the same memory where a transpose moves nothing) */
  void *buf[2];
  size_t buf_cells; /* complex values in each buffer */
  /* FFTW plans: one per run of stages no transpose separates (all three on
   * one rank), the forward one at the run's first stage, the backward one
   * at its last; NULL elsewhere. */
  void *fwd[3], *bwd[3];
  ff_exchange row, col;        /* the transposes A -> B and B -> C */
  void *stage;                 /* packed copies of the parts that cannot move in place */
  size_t stage_bytes;
  double row_words, col_words; /* per PE pair, for the fabric's model */
  wf_fabric *fab;
  double fft_seconds, transpose_seconds; /* accumulated by ff_execute */
  double transpose_bytes;                /* bytes this rank read and wrote in transposes */
} ff_plan;

typedef struct ff_opts {
  ff_prec prec;
  int dims;
  unsigned fftw_flags; /* FFTW_ESTIMATE, FFTW_MEASURE, FFTW_PATIENT */
  bool real_input;     /* real-to-complex forward, complex-to-real backward */
  wf_prec wafer_prec;  /* of the values on the wafer (the fabric's model) */
} ff_opts;

/* Errors (input) for sizes this layout cannot take: below 1, or smaller
 * than the PE grid along a distributed direction. */
int ff_check_sizes(const int n[3], int pe_nx, int pe_ny, int dims, bool r2c, wf_status *st);

/* Plan the transform over the wafer's fabric (collective). FFTW_MEASURE
 * overwrites the arrays: fill the input after this. Errors (input): sizes
 * below 1, or smaller than the PE grid along a distributed direction. */
int ff_plan_create(ff_plan *p, wf_fabric *fab, const int n[3], const ff_opts *o, wf_status *st);
void ff_plan_free(ff_plan *p);

/* The stage the forward transform starts from (A) and ends in. */
static inline void *ff_in(const ff_plan *p) { return p->data[0]; }
static inline const ff_box *ff_in_box(const ff_plan *p) { return &p->box[0]; }
static inline void *ff_out(const ff_plan *p) { return p->data[p->stages - 1]; }
static inline const ff_box *ff_out_box(const ff_plan *p) { return &p->box[p->stages - 1]; }

/* r2c: where real value z of the input's pencil (x, y) (local cells) is,
 * counted in reals from ff_in. */
static inline size_t ff_real_index(const ff_plan *p, int x, int y, int z) {
  return 2 * ff_index(&p->box[0], x, y, 0) + (size_t)z;
}

/* In place: forward (sign -1) from ff_in to ff_out, backward (+1) from
 * ff_out to ff_in. Collective. */
int ff_execute(ff_plan *p, int sign, wf_status *st);

/* Redistribute a global array between two sets of boxes over `comm`: every
 * rank gives `src` (its box `from`) and gets `dst` (box `to`), each stored
 * in its box's order. */
int ff_redistribute(MPI_Comm comm, ff_prec prec, const ff_box *from, const void *src,
                    const ff_box *to, void *dst, wf_status *st);

/* An FFTW plan of either precision (NULL: nothing): run, destroy. */
void ff_fftw_execute(ff_prec prec, void *plan);
void ff_fftw_destroy(ff_prec prec, void *plan);

/* The MPI type of one complex value. */
MPI_Datatype ff_mpi_type(ff_prec prec);

#endif
