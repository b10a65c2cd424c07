/* What `wafer fft`'s files share (fft_workload.c: the keys, the run, the
 * checks and the report; fft_field.c: the field, the input file, the sums
 * the checks compare and the output file; fft_reference.c: FFTW's wisdom and the reference
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
#include "wf_h5.h"
#include "wf_model.h"
#include "wf_workload.h"

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

/* ---- the data: input and output (fft_field.c) ---- */

/* The sum of three plane waves' transform at spectrum cell r. */
double complex fft_waves_transform(const fft_setup *s, const int r[3]);
/* Box b of an array (the run's precision) filled with f(r). */
void fft_fill(const fft_setup *s, const ff_box *b, void *a,
              double complex (*f)(const fft_setup *, const int *));
/* fft.input's dataset opened and checked: nz x ny x nx values, real or
 * complex. Collective. */
int fft_check_input(wf_run *run, const fft_setup *s, wf_h5_input *in, wf_status *st);
/* This rank's box of the input (stage A's): the field, or the file's
 * block, whose values the transform must not overflow. Collective. */
int fft_load_input(wf_run *run, const fft_setup *s, const wf_h5_input *in, const ff_plan *p,
                   void *a, wf_status *st);
/* a times scale against ref over the input's values (real ones only, with
 * r2c). Collective. */
fft_diff fft_compare_input(MPI_Comm comm, const fft_setup *s, const ff_plan *p, const void *a,
                           const void *ref, double scale);
/* sum |f|^2 over the input, and sum |F|^2 over the whole spectrum (with
 * r2c each kz but 0 and nz/2 counted for its conjugate too), of the values
 * times *unit (fft_unit_scale: exact, no underflow). Collective. */
double fft_input_sum_sq(MPI_Comm comm, const fft_setup *s, const ff_plan *p, const void *a,
                        double *unit);
double fft_spectrum_sum_sq(MPI_Comm comm, const fft_setup *s, const ff_box *b, const void *a,
                           double *unit);
/* The forward transform (ff_out(p)) to `path`, [z][y][x] as ParaView reads
 * it, real and imaginary parts as two fields. Collective. */
int fft_write_output(wf_run *run, const fft_setup *s, const ff_plan *p, const char *path,
                     wf_status *st);

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
