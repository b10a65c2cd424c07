/* The parts of `wafer tlrmvm` (tlrmvm_workload.c): its deck, resolved
 * (tlrmvm_setup.c), the systems the frequencies are shared out over
 * (tlrmvm_systems.c), the operators and their compression
 * (tlrmvm_operators.c), the products timed and checked
 * (tlrmvm_products.c), and the multi-dimensional deconvolution
 * (tlrmvm_mdd.c). Private to the workload. */
#ifndef TLRMVM_PARTS_H
#define TLRMVM_PARTS_H

#include <complex.h>
#include <stdbool.h>
#include <stdio.h>

#include "tl_compress.h"
#include "tl_dense.h"
#include "tl_lsqr.h"
#include "tl_matrix.h"
#include "tl_survey.h"
#include "wf_decomp.h"
#include "wf_hw.h"
#include "wf_workload.h"

#define TLRMVM_SECTION "tlrmvm"
#define TLRMVM_MAX_FREQS 1024

/* The deck's [tlrmvm] section, resolved. */
typedef struct tlrmvm_setup {
  tl_survey survey;
  double hz[TLRMVM_MAX_FREQS];
  int nfreq, m, n, nb, repeat, systems, model_rank, mdd_iterations;
  double mdd_damp, mdd_depth;
  tl_compress_opts opts;
  long seed;
  bool dense_check, dense_time;
  wf_prec wafer_prec;
  const char *input, *dataset, *compressed;
} tlrmvm_setup;

/* The workload's one section, [tlrmvm]. */
extern const wf_section *const tlrmvm_sections[1];
/* The deck's [tlrmvm] section into *s (a deck error for a bad value). */
int tlrmvm_read_setup(const wf_deck *d, tlrmvm_setup *s, wf_status *st);

/* GB23 shares its frequencies out over 48 CS-2. Here the ranks split into
 * `count` equal groups, one wafer each with its own rank grid over the same
 * PE grid; system g holds the frequencies f with f % count == g and its
 * first rank is `per` g. Vectors stay whole on every rank: a frequency's
 * results are broadcast from its system. With one system the run's own
 * wafer is used. */
typedef struct tlrmvm_systems {
  int count, index, per;
  wf_decomp dc;      /* this system's rank grid (count > 1) */
  MPI_Comm row, col; /* its rows and columns of ranks */
  MPI_Comm world;    /* every rank of the run */
  bool own;          /* dc and the communicators were made here */
} tlrmvm_systems;

/* Whether frequency f is this rank's system's, and that system's first rank. */
bool tlrmvm_mine(const tlrmvm_systems *y, int f);
int tlrmvm_root_of(const tlrmvm_systems *y, int f);
/* The ranks split into the deck's systems (a deck error when they cannot be). */
int tlrmvm_systems_create(wf_run *run, const tlrmvm_setup *s, tlrmvm_systems *y, wf_status *st);
void tlrmvm_systems_free(tlrmvm_systems *y);
/* Frequency f's `len` values at `v`, from its system to every rank. */
void tlrmvm_share(const tlrmvm_systems *y, int f, float complex *v, size_t len);

/* Every frequency's operator: this system's compressed, the others' tile
 * ranks only. */
typedef struct tlrmvm_ops {
  tl_layout layout;
  tl_layout empty; /* the layout without tiles: other systems' frequencies */
  const tlrmvm_systems *sys;
  tl_matrix *a;  /* one per frequency (another system's: its ranks only) */
  double *norm;  /* ||A||_F per frequency */
  double *error; /* ||A - A_tlr||_F per frequency, from the dropped singular values (-1:
                    unknown, the operators were read from a file) */
  double bound;  /* the relative error acc allows: sqrt(tiles) acc (global norm), or acc */
  int nfreq;
  bool loaded; /* read from the compressed file */
  double compress_seconds;
} tlrmvm_ops;

/* The input file's matrix size into s->m, s->n (every dataset must have it). */
int tlrmvm_input_shape(wf_run *run, tlrmvm_setup *s, wf_status *st);
/* Every frequency's operator, compressed here or read from the compressed
 * file; every rank learns every frequency's ranks and norm. Collective. */
int tlrmvm_build(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, wf_status *st);
void tlrmvm_ops_free(tlrmvm_ops *op);
/* Frequency f's dense block (survey or input) into slot `slot` of d. */
int tlrmvm_dense_fill(wf_run *run, const tlrmvm_setup *s, tl_dense *d, int slot, int f,
                      wf_status *st);
/* Every frequency of this rank's system, dense (dense = time, and MDD). */
int tlrmvm_dense_all(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op, tl_dense *d,
                     wf_status *st);

/* A TLR product recomputed plainly in double (tlrmvm_naive.c): out = A in
 * (adjoint: A^H in) against sum_j U_ij (W_ij^H in_j) tile by tile. `worst`
 * is the largest |out - ref| / (bound scale) over the entries, scale = |U|
 * (|W|^T |in|), bound tlrmvm_naive_bound's: at most 1 for a correct
 * single-precision product. `rel` is ||out - ref|| / ||ref||. Collective
 * over the matrix's ranks. */
typedef struct tlrmvm_naive {
  double worst, rel;
} tlrmvm_naive;
int tlrmvm_naive_product(const tl_matrix *a, bool adjoint, const float complex *in,
                         const float complex *out, tlrmvm_naive *res, wf_status *st);
/* What single-precision round-off allows of |out - ref| / scale (docs/tlrmvm.md). */
double tlrmvm_naive_bound(const tl_matrix *a);
/* ||A - A_tlr||_F^2 over this rank's tiles, from dense block `slot` of d
 * minus the stored bases' U W^H (no singular values), and how far its root
 * may lie from the dropped singular values' figure, relative to ||A||_F. */
double tlrmvm_naive_residual2(const tl_matrix *a, const tl_dense *d, int slot);
double tlrmvm_dropped_bound(const tl_layout *l);

/* The survey's dense block in `slot` of d (frequency hz) against the
 * Green's function's definition, entry by entry: the worst |difference| /
 * allowed (<= 1 agrees). */
double tlrmvm_green_check(const tlrmvm_setup *s, const tl_dense *d, int slot, double hz);

/* A multi-dimensional deconvolution's results. */
/* ---- multi-dimensional deconvolution ---- */

typedef struct tlrmvm_residuals {
  double residual, normal; /* ||d - A x||, ||A^H (d - A x) - damp^2 x|| */
} tlrmvm_residuals;

typedef struct tlrmvm_mdd {
  float complex *truth, *tlr, *dense; /* nfreq * n each: the wavefield, recovered twice */
  double *history_tlr, *history_dense;
  tl_lsqr_result r_tlr, r_dense;
  double seconds_tlr, seconds_dense;
  double misfit;             /* ||x_tlr - x_dense|| / ||x_dense|| */
  double err_tlr, err_dense; /* against the true wavefield */
  double damp;               /* absolute */
  double bound;              /* on ||x_tlr - x_dense|| / ||x_dense|| (0: none, no damping) */
  tlrmvm_residuals recomputed[2]; /* TLR, dense: from the solutions, apart from LSQR */
  double lsqr_worst; /* worst |LSQR's residual - recomputed| / its rounding bound */
  /* Whether every rank's copies of the two solutions hold the same bits
   * (LSQR runs on every rank with whole vectors, each frequency's products
   * broadcast from its system): -1 on one rank, nothing to compare. */
  int same_on_ranks;
} tlrmvm_mdd;

/* Data from the dense operators, then the inversions with the TLR and the
 * dense ones, and (damped) the bound on their difference. Collective. */
int tlrmvm_mdd_solve(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, tl_dense *dense,
                     tlrmvm_mdd *r, wf_status *st);
void tlrmvm_mdd_free(tlrmvm_mdd *r);
void tlrmvm_mdd_report(wf_run *run, const tlrmvm_setup *s, const tlrmvm_mdd *r);

/* ---- products and checks (tlrmvm_products.c) ---- */

typedef struct measured {
  double forward, adjoint; /* median seconds of one product of every frequency */
  double phase[4];         /* per product, slowest rank: phase 1, reshuffle, phase 3, combine */
  double dense;            /* median seconds of the dense products (dense = time) */
  double err,
      rel_err;    /* largest over frequencies: ||y - y_dense|| / (||A||_F ||x||), / ||y_dense|| */
  double bound;   /* the bound acc implies on err */
  double dropped; /* largest ||A - A_tlr||_F / ||A||_F from the SVDs (-1: unknown) */
  bool dropped_checked;  /* that figure against its recomputation, */
  double dropped_worst;  /* worst |difference| / its bound (NaN fails) */
  double adj_err; /* largest |<Ax, v> - <x, A^H v>| / (||Ax|| ||v||) */
  tlrmvm_naive naive[2]; /* A x and A^H v against their plain recomputation, worst frequency */
  double green; /* the survey's dense entries against the Green's function (-1: not checked) */
  double triad;   /* STREAM triad, bytes/s */
  long long R;    /* sum of every frequency's total rank */
  double bytes;   /* KAUST's bytes of one product of every frequency */
  double dense_bytes; /* the dense matrices' bytes */
} measured;

typedef struct vectors {
  float complex *x, *y, *v, *xa; /* per frequency: x (N), y = A x (M), v (M), xa = A^H v (N) */
} vectors;

/* Random x and v, then `repeat` products A x and A^H v of every frequency
 * timed (their fabric counted with `cycles` modelled a product), checked
 * against the dense ones and each other, the dense ones timed when
 * s->dense_time; the ranks, KAUST's bytes and STREAM triad. Collective. */
int tlrmvm_measure(wf_run *run, const tlrmvm_setup *s, tlrmvm_ops *op, tl_dense *dense,
                   double cycles, vectors *vec, measured *m, wf_status *st);
void tlrmvm_vectors_free(vectors *vec);
/* The run's checks on what tlrmvm_measure (and the MDD, r: NULL if none)
 * found, counted on `run`. */
void tlrmvm_check(wf_run *run, const tlrmvm_setup *s, const measured *m, const tlrmvm_mdd *r);

typedef struct tlrmvm_mdd_plot {
  const tlrmvm_setup *s;
  const tlrmvm_mdd *r;
} tlrmvm_mdd_plot;

/* The plot's data file (scripts/plot_mdd.py); `data`: a tlrmvm_mdd_plot. */
void tlrmvm_mdd_write(FILE *f, const void *data);

#endif
