/* What `wafer fft`'s two files share (fft_workload.c: the keys, the field,
 * the run, the report; fft_reference.c: FFTW's wisdom and the reference
 * transform on the same data): the resolved deck and the comparisons. */
#ifndef FFT_PARTS_H
#define FFT_PARTS_H

#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "ff_pencil.h"
#include "wf_deck.h"
#include "wf_error.h"
#include "wf_model.h"

/* The [fft] section, resolved. */
typedef struct fft_setup {
  int n[3], dims, repeat;
  ff_prec prec;
  bool r2c;
  bool waves, crosscheck;
  bool crosscheck_unavailable; /* crosscheck = auto, and this build lacks FFTW-MPI */
  long seed;
  unsigned flags;
  wf_prec wafer_prec;
  const char *wisdom;
  const char *input, *dataset; /* input file ("" = the field) and its dataset */
} fft_setup;

/* Element i of a complex array in either precision. */
static inline double complex fft_get(ff_prec p, const void *a, size_t i) {
  return p == FF_SINGLE ? (double complex)((const float complex *)a)[i]
                        : ((const double complex *)a)[i];
}

/* Two fields' difference and the reference's size, as sums of squares over
 * every rank (2-norms: the norm the FFT's error bound is stated in), of the
 * values scaled by one power of two that brings the largest near 1 (exact:
 * tiny values' squares would underflow to 0, and huge ones' overflow). */
typedef struct fft_diff {
  double diff_sq, ref_sq;
} fft_diff;

/* a times scale against ref, n local elements each. Collective. */
fft_diff fft_compare(MPI_Comm comm, ff_prec p, const void *a, const void *ref, size_t n,
                     double scale);
/* The power of two that brings `largest` (the largest magnitude, over every
 * rank) to [1, 2): 1 when it is 0. */
double fft_unit_scale(double largest);
/* ||a - ref|| / ||ref|| (||a - ref|| when the reference is 0). */
double fft_rel(fft_diff d);
/* The relative 2-norm error a computed transform of length N may carry
 * (docs/fft.md, "Tolerances"). */
double fft_error_bound(ff_prec p, double N);

/* FFTW's wisdom from and to the deck's file (nothing when it names none):
 * read on rank 0 and broadcast; gathered and written atomically, a file that
 * cannot be written a warning. An existing file that is not wisdom of the
 * run's precision is an input error (it would be rewritten). Collective. */
int fft_wisdom_load(MPI_Comm comm, const wf_deck *d, const fft_setup *s, wf_status *st);
void fft_wisdom_save(MPI_Comm comm, const fft_setup *s);

/* The reference transform and how ours compares with it. */
typedef struct fft_reference {
  bool done;
  const char *name;  /* what was run */
  double seconds[2]; /* median forward: normal, transposed output (dims 3) */
  double rel[2];     /* largest difference to ours / largest value */
  int layouts;
} fft_reference;

/* FFTW-MPI's set-up and clean-up (nothing in a build without it). */
void fft_reference_init(const fft_setup *s);
void fft_reference_finalize(void);

/* Transforms `input` (ours, on stage A's box of p) with FFTW on the same
 * ranks and compares the result with ours (ff_out(p)): FFTW-MPI in both its
 * output layouts for 3D, serial FFTW over y-slabs for 1D and 2D. Collective. */
int fft_reference_check(MPI_Comm comm, const fft_setup *s, const ff_plan *p, const void *input,
                        fft_reference *ref, wf_status *st);

#endif
