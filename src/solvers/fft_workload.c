/* `wafer fft`: ICS23's wafer-scale FFT as an MPI code.
 *
 * Transforms an nx x ny x nz complex field laid on the PE grid (ff_pencil.h)
 * forward and back, checks the answer against FFTW-MPI on the same data
 * (both its output layouts), Parseval, the round trip and, for a sum of
 * plane waves, the analytic transform; reports the time per transform, the
 * ratio to FFTW-MPI's, the bandwidth of the transposes against STREAM
 * triad, and the modelled wafer time. */
#include "fft_workload.h"

#include <complex.h>
#include <fftw3.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ff_model.h"
#include "ff_pencil.h"
#include "fft_parts.h"
#include "wf_h5.h"
#include "wf_random.h"
#include "wf_reference.h"
#include "wf_signal.h"
#include "wf_stream.h"
#include "wf_timing.h"
#include "wf_wafer.h"

static const wf_key fft_keys[] = {
    {"nx", WF_KEY_INT, "64", 1, 1e6, NULL, "cells in x (over the PE grid's columns)", NULL},
    {"ny", WF_KEY_INT, "64", 1, 1e6, NULL, "cells in y (over the PE grid's rows)", NULL},
    {"nz", WF_KEY_INT, "64", 1, 1e6, NULL, "cells in z (in PE memory: the pencils)", NULL},
    {"dims", WF_KEY_INT, "3", 1, 3, NULL,
     "axes transformed: 1 (z, batched over the PE grid), 2 (z then x: one all-to-all within PE "
     "rows), 3 (z, x, y: all-to-alls within PE rows, then columns)",
     NULL},
    {"precision", WF_KEY_CHOICE, "double", 0, 0, "double|single", "double or float values", NULL},
    {"transform", WF_KEY_CHOICE, "c2c", 0, 0, "c2c|r2c",
     "c2c: complex data; r2c: real data, forward to the nz/2 + 1 non-negative frequencies along z "
     "(the others are their conjugates), backward complex-to-real",
     NULL},
    {"field", WF_KEY_CHOICE, "waves", 0, 0, "waves|random",
     "input: a sum of three plane waves (analytic transform) or uniform random values in "
     "[-1, 1) + i [-1, 1), seeded",
     NULL},
    {"seed", WF_KEY_INT, "1", 0, 2147483647, NULL, "seed of the random field", NULL},
    {"input", WF_KEY_INPUT, "", 0, 0, NULL,
     "HDF5 file to transform instead of the field ('' = none): a dataset of shape nz x ny x nx "
     "(slowest first, as the output), complex (h5py's {r, i} compound) or real",
     NULL},
    {"input_dataset", WF_KEY_STRING, "field", 0, 0, NULL, "the input file's dataset", NULL},
    {"repeat", WF_KEY_INT, "3", 1, 1e6, NULL,
     "forward and backward transforms timed (the report gives medians)", NULL},
    {"planner", WF_KEY_CHOICE, "measure", 0, 0, "estimate|measure|patient",
     "FFTW planner effort (ours and FFTW-MPI's)", NULL},
    {"wisdom", WF_KEY_CACHE, "", 0, 0, NULL,
     "FFTW wisdom file: read before planning if it exists, rewritten after ('' = none)", NULL},
    {"crosscheck", WF_KEY_CHOICE, "auto", 0, 0, "auto|none|fftw-mpi",
     "transform the same data with FFTW-MPI (normal and transposed output; dims < 3: FFTW on "
     "y-slabs) and compare; auto: when this wafer was built with FFTW-MPI (or dims < 3), else "
     "the run says the check is unavailable",
     NULL},
    {"wafer_precision", WF_KEY_CHOICE, "fp32", 0, 0, "fp32|fp16",
     "precision of the values in the wafer model (ICS23 ran fp32 and fp16)", NULL},
    {"model_only", WF_KEY_BOOL, "false", 0, 0, NULL,
     "only project this transform onto the wafer (no allocation): for sizes too big here", NULL},
    {"stream", WF_KEY_BOOL, "true", 0, 0, NULL,
     "measure STREAM triad here to report the fraction of it the transposes reach", NULL},
};
static const wf_section fft_section = {
    "fft", "Distributed complex FFT as pencils over the PE grid, checked against FFTW-MPI.",
    fft_keys, (int)(sizeof fft_keys / sizeof fft_keys[0]), NULL, NULL};
static const wf_section *const fft_sections[] = {&fft_section};

static int read_setup(const wf_deck *d, fft_setup *s, wf_status *st) {
  s->n[0] = (int)wf_deck_int(d, "fft", "nx");
  s->n[1] = (int)wf_deck_int(d, "fft", "ny");
  s->n[2] = (int)wf_deck_int(d, "fft", "nz");
  s->dims = (int)wf_deck_int(d, "fft", "dims");
  s->repeat = (int)wf_deck_int(d, "fft", "repeat");
  s->prec = strcmp(wf_deck_str(d, "fft", "precision"), "single") == 0 ? FF_SINGLE : FF_DOUBLE;
  s->r2c = strcmp(wf_deck_str(d, "fft", "transform"), "r2c") == 0;
  s->waves = strcmp(wf_deck_str(d, "fft", "field"), "waves") == 0;
  s->seed = wf_deck_int(d, "fft", "seed");
  const char *planner = wf_deck_str(d, "fft", "planner");
  s->flags = strcmp(planner, "estimate") == 0  ? FFTW_ESTIMATE
             : strcmp(planner, "patient") == 0 ? FFTW_PATIENT
                                               : FFTW_MEASURE;
  /* 1D and 2D compare with serial FFTW, which every build has. */
  wf_ref_use use;
  if (wf_ref_choose(d, "fft", "crosscheck", "fftw-mpi", s->dims == 3 ? wf_ref_fftw_mpi_absent() : NULL,
                    &use, st) != WF_OK)
    return st->code;
  s->crosscheck = use == WF_REF_USE;
  s->crosscheck_unavailable = use == WF_REF_UNAVAILABLE;
  s->wafer_prec = strcmp(wf_deck_str(d, "fft", "wafer_precision"), "fp16") == 0 ? WF_FP16 : WF_FP32;
  s->wisdom = wf_deck_str(d, "fft", "wisdom");
  s->input = wf_deck_str(d, "fft", "input");
  s->dataset = wf_deck_str(d, "fft", "input_dataset");
  if (s->input[0]) s->waves = false; /* no analytic transform of a file */
  return WF_OK;
}

/* ---- the field and its analytic transform ---- */

#define NWAVES 3
static const double TWO_PI = 6.283185307179586476925;

/* Three plane waves f = sum_m a_m exp(2 pi i k_m . r / n), integer k_m. */
static void wave(const fft_setup *s, int m, int k[3], double complex *a) {
  const int mul[3] = {7, 5, 3}, add[3] = {1, 2, 3};
  for (int d = 0; d < 3; d++) k[d] = (m * mul[d] + add[d]) % s->n[d];
  *a = (1.0 + m) * cexp(I * (0.5 + m));
}

/* k r / n reduced to [0, 1) in integers first: the phase's round-off, and
 * so the analytic check's tolerance, does not grow with the size. */
static double turns(int k, int r, int n) {
  long long kr = ((long long)k * r) % n;
  return (double)(kr < 0 ? kr + n : kr) / n;
}

/* The field; with real data (r2c), its real part. */
static double complex field_at(const fft_setup *s, const int r[3]) {
  long long cell = ((long long)r[1] * s->n[0] + r[0]) * s->n[2] + r[2];
  if (!s->waves)
    return (2 * wf_uniform((uint64_t)s->seed, 2 * (uint64_t)cell) - 1) +
           (s->r2c ? 0 : I * (2 * wf_uniform((uint64_t)s->seed, 2 * (uint64_t)cell + 1) - 1));
  double complex f = 0;
  for (int m = 0; m < NWAVES; m++) {
    int k[3];
    double complex a;
    wave(s, m, k, &a);
    double phase = 0;
    for (int d = 0; d < 3; d++) phase += turns(k[d], r[d], s->n[d]);
    f += a * cexp(I * TWO_PI * phase);
  }
  return s->r2c ? creal(f) : f;
}

/* The transform of one wave a exp(2 pi i k . r / n) along the transformed
 * axes (z; z, x; all) at r: on those, N_d where r_d = k_d (mod n_d), else 0;
 * on the others, the wave itself. */
static double complex wave_transform(const fft_setup *s, const int k[3], double complex a,
                                     const int r[3]) {
  const bool transformed[3] = {s->dims >= 2, s->dims >= 3, true};
  double complex term = a;
  for (int d = 0; d < 3 && term != 0; d++) {
    int kd = ((k[d] % s->n[d]) + s->n[d]) % s->n[d];
    term *= transformed[d] ? (r[d] == kd ? s->n[d] : 0)
                           : cexp(I * TWO_PI * turns(k[d], r[d], s->n[d]));
  }
  return term;
}

/* The forward transform of the field of waves; a real field's waves are
 * (a e^{i theta} + conj(a) e^{-i theta}) / 2. */
static double complex waves_transform(const fft_setup *s, const int r[3]) {
  double complex f = 0;
  for (int m = 0; m < NWAVES; m++) {
    int k[3], mk[3] = {0, 0, 0};
    double complex a;
    wave(s, m, k, &a);
    if (!s->r2c) {
      f += wave_transform(s, k, a, r);
      continue;
    }
    for (int d = 0; d < 3; d++) mk[d] = -k[d];
    f += 0.5 * (wave_transform(s, k, a, r) + wave_transform(s, mk, conj(a), r));
  }
  return f;
}

static void set(ff_prec p, void *a, size_t i, double complex v) {
  if (p == FF_SINGLE)
    ((float complex *)a)[i] = (float complex)v;
  else
    ((double complex *)a)[i] = v;
}

/* The input's value at local cell (x, y, z) of stage A's box: complex, or
 * real in FFTW's padded layout (r2c). */
static void put_input(const fft_setup *s, const ff_plan *p, void *a, int x, int y, int z,
                      double complex v) {
  if (!s->r2c) {
    set(s->prec, a, ff_index(ff_in_box(p), x, y, z), v);
  } else if (s->prec == FF_SINGLE) {
    ((float *)a)[ff_real_index(p, x, y, z)] = (float)creal(v);
  } else {
    ((double *)a)[ff_real_index(p, x, y, z)] = creal(v);
  }
}

static double complex get_input(const fft_setup *s, const ff_plan *p, const void *a, int x, int y,
                                int z) {
  if (!s->r2c) return fft_get(s->prec, a, ff_index(ff_in_box(p), x, y, z));
  size_t i = ff_real_index(p, x, y, z);
  return s->prec == FF_SINGLE ? ((const float *)a)[i] : ((const double *)a)[i];
}

/* The input's z-extent: nz values, real or complex. */
static int input_nz(const fft_setup *s, const ff_plan *p) {
  return s->r2c ? s->n[2] : ff_in_box(p)->nz;
}

static void fill_input(const fft_setup *s, const ff_plan *p, void *a) {
  const ff_box *b = ff_in_box(p);
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < input_nz(s, p); z++) {
        int r[3] = {b->x0 + x, b->y0 + y, z};
        put_input(s, p, a, x, y, z, field_at(s, r));
      }
}

/* Fill box b of an array with f(r) (the transform). */
static void fill(const fft_setup *s, const ff_box *b, void *a,
                 double complex (*f)(const fft_setup *, const int *)) {
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < b->nz; z++) {
        int r[3] = {b->x0 + x, b->y0 + y, b->z0 + z};
        set(s->prec, a, ff_index(b, x, y, z), f(s, r));
      }
}

/* The input file's dataset must be nz x ny x nx values, real or complex. */
static int check_input(wf_run *run, const fft_setup *s, wf_h5_input *in, wf_status *st) {
  const wf_deck *d = run->deck;
  if (wf_h5_input_open(run->comm, s->input, s->dataset, in, st) != WF_OK)
    return wf_deck_blame(d, "fft", "input", st);
  unsigned long long want[3] = {(unsigned long long)s->n[2], (unsigned long long)s->n[1],
                                (unsigned long long)s->n[0]};
  if (in->ndim != 3 || in->dims[0] != want[0] || in->dims[1] != want[1] || in->dims[2] != want[2]) {
    char shape[96] = "";
    for (int i = 0, at = 0; i < in->ndim; i++)
      at += snprintf(shape + at, sizeof shape - (size_t)at, "%s%llu", i ? " x " : "", in->dims[i]);
    return wf_deck_fail(d, "fft", "input", st,
                        "dataset '%s' has shape %s; [fft] nx, ny, nz ask for nz x ny x nx = %llu "
                        "x %llu x %llu",
                        s->dataset, shape, want[0], want[1], want[2]);
  }
  if (s->r2c && in->complex_values)
    return wf_deck_fail(
        d, "fft", "input", st,
        "dataset '%s' holds complex values; a real-to-complex transform (fft.transform "
        "= r2c) needs real ones",
        s->dataset);
  return WF_OK;
}

/* The transform of N values of magnitude up to M reaches N M, and the
 * Parseval check sums N such squares: (N M)^2 must stay below the run's
 * largest number, so M <= sqrt(max) / N. Larger inputs would overflow to
 * Inf and NaN, whose differences the checks would read as 0. */
static int check_magnitude(wf_run *run, const fft_setup *s, const ff_plan *p, const void *a,
                           wf_status *st) {
  const ff_box *b = ff_in_box(p);
  double most = 0;
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < input_nz(s, p); z++) most = fmax(most, cabs(get_input(s, p, a, x, y, z)));
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, run->comm);
  double n = (double)s->n[0] * s->n[1] * s->n[2];
  double limit = sqrt(s->prec == FF_SINGLE ? FLT_MAX : DBL_MAX) / n;
  if (!(most <= limit))
    return wf_fail(st, WF_ERR_INPUT,
                   "dataset '%s' holds a value of magnitude %g: beyond %.3g, the transform and "
                   "its Parseval check overflow %s precision at this size (scale the input)",
                   s->dataset, most, limit, s->prec == FF_SINGLE ? "single" : "double");
  return WF_OK;
}

/* This rank's box of the input: the field, or the file's block ([z][y][x]
 * there, [y][x][z] here). */
static int load_input(wf_run *run, const fft_setup *s, const wf_h5_input *in, const ff_plan *p,
                      void *a, wf_status *st) {
  wf_status_clear(st);
  if (!s->input[0]) {
    fill_input(s, p, a);
    return WF_OK;
  }
  const ff_box *b = ff_in_box(p);
  int parts = in->complex_values ? 2 : 1, nz = input_nz(s, p);
  size_t cells = (size_t)b->nx * b->ny * nz;
  double *v = malloc(cells * parts * sizeof *v + 1);
  int failed = !v;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) {
    free(v);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory reading '%s'", s->input);
  }
  unsigned long long g[3] = {(unsigned long long)s->n[2], (unsigned long long)s->n[1],
                             (unsigned long long)s->n[0]};
  unsigned long long off[3] = {0, (unsigned long long)b->y0, (unsigned long long)b->x0};
  unsigned long long cnt[3] = {(unsigned long long)nz, (unsigned long long)b->ny,
                               (unsigned long long)b->nx};
  wf_h5_block hb = {.ndim = 3, .global = g, .offset = off, .count = cnt};
  if (wf_h5_input_read(run->comm, s->input, s->dataset, in, &hb, v, st) == WF_OK) {
    for (int y = 0; y < b->ny; y++)
      for (int x = 0; x < b->nx; x++)
        for (int z = 0; z < nz; z++) {
          size_t f = ((size_t)z * b->ny + y) * b->nx + x;
          put_input(s, p, a, x, y, z, parts == 2 ? v[2 * f] + I * v[2 * f + 1] : v[f]);
        }
  }
  free(v);
  if (st->code == WF_OK) check_magnitude(run, s, p, a, st);
  return st->code == WF_OK ? WF_OK : wf_deck_blame(run->deck, "fft", "input", st);
}

/* ---- comparisons (global) ---- */

/* The same over the input's values (real ones only, with r2c). */
static fft_diff compare_input(MPI_Comm comm, const fft_setup *s, const ff_plan *p, const void *a,
                              const void *ref, double scale) {
  const ff_box *b = ff_in_box(p);
  double v[2] = {0, 0}, g[2], largest = 0;
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < input_nz(s, p); z++)
        largest = fmax(largest, fmax(cabs(get_input(s, p, ref, x, y, z)),
                                     cabs(get_input(s, p, a, x, y, z) * scale)));
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm);
  double unit = fft_unit_scale(largest);
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < input_nz(s, p); z++) {
        double complex r = get_input(s, p, ref, x, y, z) * unit;
        double complex e = get_input(s, p, a, x, y, z) * scale * unit - r;
        v[0] += creal(e) * creal(e) + cimag(e) * cimag(e);
        v[1] += creal(r) * creal(r) + cimag(r) * cimag(r);
      }
  MPI_Allreduce(v, g, 2, MPI_DOUBLE, MPI_SUM, comm);
  return (fft_diff){g[0], g[1]};
}

/* A sum of many squares to a few units of round-off whatever their count
 * (Neumaier's compensated sum; Higham 2002, section 4.3): Parseval's check
 * compares two such sums at the FFT's own accuracy. */
typedef struct sum_sq {
  double sum, carry;
} sum_sq;

static void sum_sq_add(sum_sq *a, double v) {
  double t = a->sum + v;
  a->carry += fabs(a->sum) >= fabs(v) ? (a->sum - t) + v : (v - t) + a->sum;
  a->sum = t;
}

static double sum_sq_total(MPI_Comm comm, sum_sq a) {
  double local = a.sum + a.carry, g;
  MPI_Allreduce(&local, &g, 1, MPI_DOUBLE, MPI_SUM, comm);
  return g;
}

/* sum |f|^2 of the values times *unit (fft_unit_scale: exact, no underflow). */
static double input_sum_sq(MPI_Comm comm, const fft_setup *s, const ff_plan *p, const void *a,
                           double *unit) {
  const ff_box *b = ff_in_box(p);
  double largest = 0;
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < input_nz(s, p); z++)
        largest = fmax(largest, cabs(get_input(s, p, a, x, y, z)));
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm);
  *unit = fft_unit_scale(largest);
  sum_sq sum = {0, 0};
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < input_nz(s, p); z++) {
        double complex v = get_input(s, p, a, x, y, z) * *unit;
        sum_sq_add(&sum, creal(v) * creal(v) + cimag(v) * cimag(v));
      }
  return sum_sq_total(comm, sum);
}

/* sum |F|^2 over the whole spectrum, of the values times *unit (as
 * input_sum_sq's): with r2c, every kz but 0 and nz/2 stands for itself and
 * its conjugate at -kz. */
static double spectrum_sum_sq(MPI_Comm comm, const fft_setup *s, const ff_box *b, const void *a,
                              double *unit) {
  size_t cells = ff_box_cells(b);
  double largest = 0;
  for (size_t i = 0; i < cells; i++) largest = fmax(largest, cabs(fft_get(s->prec, a, i)));
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm);
  *unit = fft_unit_scale(largest);
  sum_sq sum = {0, 0};
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < b->nz; z++) {
        int kz = b->z0 + z;
        double w = !s->r2c || kz == 0 || (s->n[2] % 2 == 0 && kz == s->n[2] / 2) ? 1 : 2;
        double complex v = fft_get(s->prec, a, ff_index(b, x, y, z)) * *unit;
        sum_sq_add(&sum, w * (creal(v) * creal(v) + cimag(v) * cimag(v)));
      }
  return sum_sq_total(comm, sum);
}

/* ---- the run ---- */

typedef struct measured {
  double forward, backward;             /* median seconds per transform */
  double fft, transpose;                /* seconds per transform, slowest rank */
  double transpose_GBps;                /* bytes read and written by the transposes / their time */
  double values; /* the complex array's, the run's stage boxes summed over the ranks */
  double analytic, parseval, roundtrip; /* relative errors, 2-norms (analytic: waves only) */
  double triad;                         /* STREAM triad, bytes/s (0: not measured) */
} measured;

static double transformed_length(const fft_setup *s) {
  return (double)s->n[2] * (s->dims >= 2 ? s->n[0] : 1) * (s->dims >= 3 ? s->n[1] : 1);
}

/* What each check allows, from the transform's error bound e (relative, in
 * 2-norm: fft_error_bound) and the units of round-off u (the run's
 * precision) and ud (double, what the checks compute in); docs/fft.md,
 * "Tolerances". */
typedef struct tolerances {
  double analytic, parseval, roundtrip, reference;
} tolerances;

static tolerances tolerances_of(const fft_setup *s, int nranks) {
  double e = fft_error_bound(s->prec, transformed_length(s));
  double u = s->prec == FF_SINGLE ? 0x1p-24 : 0x1p-53, ud = 0x1p-53;
  return (tolerances){
      /* the stored input is the exact field rounded (|d| <= sqrt(2) u), the
       * exact transform stored at the run's precision too (u), and computed
       * as cexp of phases below 6 pi, each wave within 48 ud: 96 ud for
       * three waves of the 2-norm */
      .analytic = e + 3 * u + 96 * ud,
      /* ||F||^2 (1 + e)^2 against N ||f||^2; two compensated sums (2 ud
       * each) and their sums over the ranks ((P - 1) ud each) */
      .parseval = 2 * e + e * e + 2 * (nranks + 1) * ud,
      /* forward, backward, then a scale by 1/N in double */
      .roundtrip = 2 * e + e * e + 2 * ud,
      /* ours and the reference, each within e of the exact transform */
      .reference = 2 * e + e * e,
  };
}

/* |a - b| / b, 0 when both are 0 (an all-zero input), infinite when only b is. */
static double rel_diff(double a, double b) {
  if (b == 0) return a == 0 ? 0 : INFINITY;
  return fabs(a - b) / b;
}

/* Forward and backward `repeat` times; the first pair's output is checked
 * (analytic, Parseval, round trip) and left in ff_out for the reference. */
static int transform(wf_run *run, const fft_setup *s, ff_plan *p, const void *orig, measured *m,
                     wf_status *st) {
  MPI_Comm comm = run->comm;
  const ff_box *ib = ff_in_box(p), *ob = ff_out_box(p);
  size_t in_cells = ff_box_cells(ib), out_cells = ff_box_cells(ob);
  void *kept = malloc(out_cells * p->elem + 1);
  void *exact = s->waves ? malloc(out_cells * p->elem + 1) : NULL;
  double *t = calloc(2 * (size_t)s->repeat, sizeof *t);
  int failed = !kept || !t || (s->waves && !exact);
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) {
    free(kept), free(exact), free(t);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for a copy of the FFT's output");
  }
  double unit_in, norm_in = input_sum_sq(comm, s, p, orig, &unit_in), N = transformed_length(s);
  int rc = WF_OK;
  p->fft_seconds = p->transpose_seconds = p->transpose_bytes = 0;
  /* A signal stops the run between two forward-backward pairs. */
  wf_signal_poll poll;
  wf_signal_poll_start(&poll, comm);
  for (int r = 0; r < s->repeat && rc == WF_OK; r++) {
    int sig = r > 0 ? wf_signal_poll_next(&poll) : 0;
    if (sig) {
      char where[96];
      snprintf(where, sizeof where, "after %d of %d transform pairs (nothing written)", r,
               s->repeat);
      rc = wf_signal_fail(st, sig, where);
      break;
    }
    memcpy(ff_in(p), orig, in_cells * p->elem);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    rc = ff_execute(p, FFTW_FORWARD, st);
    t[r] = wf_slowest(comm, MPI_Wtime() - t0);
    if (rc != WF_OK) break;
    if (r == 0) {
      memcpy(kept, ff_out(p), out_cells * p->elem);
      /* sum |F|^2 / (N sum |f|^2), each sum of scaled values: scaled back
       * by the scales' ratio (powers of two: exact) */
      double unit_out, norm_out = spectrum_sum_sq(comm, s, ob, kept, &unit_out);
      double ratio = unit_in / unit_out;
      m->parseval = rel_diff(norm_out * ratio * ratio, N * norm_in);
      if (s->waves) {
        fill(s, ob, exact, waves_transform);
        m->analytic = fft_rel(fft_compare(comm, s->prec, kept, exact, out_cells, 1));
      }
    }
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    rc = ff_execute(p, FFTW_BACKWARD, st);
    t[s->repeat + r] = wf_slowest(comm, MPI_Wtime() - t0);
    if (rc == WF_OK && r == 0)
      m->roundtrip = fft_rel(compare_input(comm, s, p, ff_in(p), orig, 1.0 / N));
  }
  wf_signal_poll_end(&poll);
  if (rc == WF_OK) {
    m->forward = wf_median(t, s->repeat);
    m->backward = wf_median(t + s->repeat, s->repeat);
    double pair = 2.0 * s->repeat;
    m->fft = wf_slowest(comm, p->fft_seconds / pair);
    m->transpose = wf_slowest(comm, p->transpose_seconds / pair);
    double bytes = p->transpose_bytes / pair, total;
    MPI_Allreduce(&bytes, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
    m->transpose_GBps = m->transpose > 0 ? total / m->transpose / 1e9 : 0;
    double cells = (double)ff_box_cells(&p->box[0]);
    MPI_Allreduce(&cells, &m->values, 1, MPI_DOUBLE, MPI_SUM, comm);
    memcpy(ff_out(p), kept, out_cells * p->elem); /* the forward result, for the reference */
  }
  free(kept), free(exact), free(t);
  return rc;
}

/* Whether the wafer model's all-to-alls carry the whole array: over every
 * PE, one PE's words to each PE of its line (row_words, col_words) add up
 * to at least the complex array's values times a value's words, in each
 * transpose the transform makes; more where the PE grid does not divide the
 * array. The values are the run's own stage boxes summed over the ranks
 * (nx ny nz, or nz / 2 + 1 along z for real input), not the model's
 * bricks, and a value's words come from its bytes here, not from the
 * model. One-sided: a model that counts too much passes. */
static bool model_carries_array(const wf_run *run, const fft_setup *s, const measured *m,
                                const ff_model *t) {
  const wf_decomp *dc = &run->wafer->dc;
  double pes = (double)dc->pe_nx * dc->pe_ny;
  double need = m->values * wf_model_words(&run->wafer->hw, 2 * (size_t)wf_prec_bytes(s->wafer_prec));
  return t->row_words * dc->pe_nx * pes >= need &&
         (s->dims < 3 || t->col_words * dc->pe_ny * pes >= need);
}

static void check(wf_run *run, const fft_setup *s, const measured *m, const fft_reference *ref,
                  const ff_model *t) {
  tolerances tol = tolerances_of(s, run->nranks);
  char what[160];
  if (s->dims >= 2)
    wf_run_check(run, model_carries_array(run, s, m, t),
                 "the wafer model's all-to-alls carry the whole array (its words against the "
                 "run's boxes)");
  if (s->waves) {
    snprintf(what, sizeof what, "forward transform of the plane waves is exact to %.1e",
             tol.analytic);
    wf_run_check(run, m->analytic <= tol.analytic, what);
  }
  snprintf(what, sizeof what, "Parseval: sum |F|^2 = N sum |f|^2 to %.1e", tol.parseval);
  wf_run_check(run, m->parseval <= tol.parseval, what);
  snprintf(what, sizeof what, "backward(forward(f)) / N = f to %.1e", tol.roundtrip);
  wf_run_check(run, m->roundtrip <= tol.roundtrip, what);
  for (int l = 0; ref->done && l < ref->layouts; l++) {
    snprintf(what, sizeof what, "agrees with %s%s to %.1e", ref->name,
             ref->layouts == 2 ? (l ? " (transposed output)" : " (normal output)") : "",
             tol.reference);
    wf_run_check(run, ref->rel[l] <= tol.reference, what);
  }
}

static const char *const prec_names[] = {"double", "single"};

static ff_model project(wf_run *run, const fft_setup *s) {
  const wf_wafer *w = run->wafer;
  /* r2c: the half spectrum's complex transform (docs/model.md, "FFT"). */
  int nc[3] = {s->n[0], s->n[1], s->r2c ? s->n[2] / 2 + 1 : s->n[2]};
  ff_model t =
      ff_model_transform(&w->hw, &w->grid, w->dc.pe_nx, w->dc.pe_ny, nc, s->dims, s->wafer_prec);
  run->model = (wf_projection){.valid = true,
                               .unit = "transform",
                               .seconds = t.seconds,
                               .flops = t.flops,
                               .bytes_per_pe = t.bytes_per_pe,
                               .sram_for_data = wf_model_sram_for_data(&w->hw),
                               .pes_needed = (double)w->dc.pe_nx * w->dc.pe_ny,
                               .pes_offered = (double)w->hw.pe_nx * w->hw.pe_ny};
  return t;
}

static void report_model(const wf_run *run, const fft_setup *s, const ff_model *t) {
  const wf_hw *hw = &run->wafer->hw;
  const wf_projection *p = &run->model;
  wf_range f = wf_model_seconds(hw, wf_range_add(wf_range_add(t->fft[0], t->fft[1]), t->fft[2]));
  wf_range tr = wf_model_seconds(hw, wf_range_of(t->transpose[0] + t->transpose[1]));
  if (run->verbose) {
    wf_range us = wf_range_scale(p->seconds, 1e6), fus = wf_range_scale(f, 1e6);
    wf_range tus = wf_range_scale(tr, 1e6);
    printf(
        "fft: wafer model (%s, %s, %dx%d PEs): [%.1f, %.1f] us/transform = local FFTs [%.1f, "
        "%.1f] + all-to-alls [%.1f, %.1f] (%.0f words a PE pair in rows, %.0f in columns); "
        "%.0f B/PE of %.0f (%s)\n",
        hw->machine, s->wafer_prec == WF_FP16 ? "fp16" : "fp32", run->wafer->dc.pe_nx,
        run->wafer->dc.pe_ny, us.lo, us.hi, fus.lo, fus.hi, tus.lo, tus.hi, t->row_words,
        t->col_words, p->bytes_per_pe, p->sram_for_data,
        p->bytes_per_pe <= p->sram_for_data ? "fits" : "does NOT fit");
  }
  wf_json *j = run->summary;
  wf_json_begin(j, "model");
  wf_projection_json(p, j);
  wf_json_range(j, "fft_seconds", f.lo, f.hi);
  wf_json_range(j, "alltoall_seconds", tr.lo, tr.hi);
  wf_json_num(j, "row_words", t->row_words);
  wf_json_num(j, "col_words", t->col_words);
  wf_json_end(j);
}

static void report(wf_run *run, const fft_setup *s, const measured *m, const fft_reference *ref) {
  /* The usual count: 5 N log2 N for complex data, half that for real. */
  double N = (double)s->n[0] * s->n[1] * s->n[2];
  double gflops = (s->r2c ? 2.5 : 5.0) * N * log2(transformed_length(s)) / m->forward / 1e9;
  if (run->verbose) {
    printf(
        "fft: forward %.3f ms, backward %.3f ms (median of %d), %.2f GFLOP/s; per transform "
        "local FFTs %.3f ms, transposes %.3f ms",
        m->forward * 1e3, m->backward * 1e3, s->repeat, gflops, m->fft * 1e3, m->transpose * 1e3);
    if (m->transpose > 0) {
      printf(" (%.1f GB/s", m->transpose_GBps);
      if (m->triad > 0)
        printf(" = %.0f%% of STREAM triad, %.1f GB/s", 100 * m->transpose_GBps * 1e9 / m->triad,
               m->triad / 1e9);
      printf(")");
    }
    printf("\n");
    if (s->waves)
      printf("fft: plane waves: error %.2e of the exact transform (2-norm)\n", m->analytic);
    printf("fft: Parseval %.2e, round trip %.2e (relative)\n", m->parseval, m->roundtrip);
    for (int l = 0; ref->done && l < ref->layouts; l++)
      printf(
          "fft: %s%s: forward %.3f ms; ratio wafer/%s %.2f; largest difference %.2e of the "
          "largest value\n",
          ref->name, ref->layouts == 2 ? (l ? " transposed output" : " normal output") : "",
          ref->seconds[l] * 1e3, ref->name, m->forward / ref->seconds[l], ref->rel[l]);
    if (!ref->done && !s->crosscheck_unavailable)
      printf("fft: no reference transform (fft.crosscheck = none)\n");
  }
  wf_json *j = run->summary;
  wf_json_begin(j, "fft");
  long long n[3] = {s->n[0], s->n[1], s->n[2]};
  wf_json_ints(j, "size", n, 3);
  wf_json_int(j, "dims", s->dims);
  wf_json_str(j, "precision", prec_names[s->prec]);
  wf_json_str(j, "transform", s->r2c ? "r2c" : "c2c");
  wf_json_num(j, "forward_seconds", m->forward);
  wf_json_num(j, "backward_seconds", m->backward);
  wf_json_num(j, "fft_seconds", m->fft);
  wf_json_num(j, "transpose_seconds", m->transpose);
  wf_json_num(j, "transpose_GBps", m->transpose_GBps);
  if (m->triad > 0) {
    wf_json_num(j, "stream_triad_GBps", m->triad / 1e9);
    wf_json_num(j, "transpose_fraction_of_triad", m->transpose_GBps * 1e9 / m->triad);
  }
  wf_json_num(j, "GFLOPs", gflops);
  if (s->waves) wf_json_num(j, "analytic_rel_error", m->analytic);
  wf_json_num(j, "parseval_rel_error", m->parseval);
  wf_json_num(j, "roundtrip_rel_error", m->roundtrip);
  wf_json_end(j);
  if (ref->done) {
    wf_json_begin(j, s->dims == 3 ? "fftw_mpi" : "fftw");
    wf_json_num(j, "forward_seconds", ref->seconds[0]);
    wf_json_num(j, "ratio", m->forward / ref->seconds[0]);
    wf_json_num(j, "rel_diff", ref->rel[0]);
    if (ref->layouts == 2) {
      wf_json_num(j, "transposed_forward_seconds", ref->seconds[1]);
      wf_json_num(j, "transposed_ratio", m->forward / ref->seconds[1]);
      wf_json_num(j, "transposed_rel_diff", ref->rel[1]);
    }
    wf_json_end(j);
  }
  snprintf(run->headline, sizeof run->headline, "%dx%dx%d %s, %.2f ms/transform%s", s->n[0],
           s->n[1], s->n[2], prec_names[s->prec], m->forward * 1e3,
           ref->done ? (run->checks_failed ? ", FFTW differs" : ", = FFTW") : "");
}

/* The forward transform, [z][y][x] as ParaView reads it, real and
 * imaginary parts as two fields. */
static int write_output(wf_run *run, const fft_setup *s, const ff_plan *p, const char *path,
                        wf_status *st) {
  const ff_box *b = ff_out_box(p);
  size_t cells = ff_box_cells(b);
  double *re = malloc(cells * sizeof *re + 1), *im = malloc(cells * sizeof *im + 1);
  int failed = !re || !im;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) {
    free(re), free(im);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory writing the FFT's output");
  }
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < b->nz; z++) {
        double complex v = fft_get(s->prec, ff_out(p), ff_index(b, x, y, z));
        size_t o = ((size_t)z * b->ny + y) * b->nx + x;
        re[o] = creal(v), im[o] = cimag(v);
      }
  unsigned long long g[3] = {(unsigned long long)p->nc[2], (unsigned long long)p->nc[1],
                             (unsigned long long)p->nc[0]};
  unsigned long long off[3] = {(unsigned long long)b->z0, (unsigned long long)b->y0,
                               (unsigned long long)b->x0};
  unsigned long long cnt[3] = {(unsigned long long)b->nz, (unsigned long long)b->ny,
                               (unsigned long long)b->nx};
  wf_h5_block hb = {.ndim = 3, .global = g, .offset = off, .count = cnt};
  wf_h5file f;
  int rc = wf_run_h5_create(run, path, &f, st);
  if (rc == WF_OK) {
    if (wf_h5_reserve(&f, 16.0 * g[0] * g[1] * g[2], st) != WF_OK ||
        wf_h5_write(&f, "forward_re", WF_F64, &hb, re, true, st) != WF_OK ||
        wf_h5_write(&f, "forward_im", WF_F64, &hb, im, true, st) != WF_OK ||
        wf_h5_attr_int(&f, "fft_dims", s->dims, st) != WF_OK ||
        wf_h5_attr_str(&f, "fft_convention",
                       "forward: F(k) = sum_r f(r) exp(-2 pi i k.r / n), unnormalised",
                       st) != WF_OK)
      rc = st->code;
    rc = wf_h5_finish(&f, rc, st);
  }
  free(re), free(im);
  return rc;
}

static int fft_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  fft_setup s;
  if (read_setup(d, &s, st) != WF_OK) return st->code;
  fft_reference_init(&s);
  const wf_decomp *dc = &run->wafer->dc;
  if (ff_check_sizes(s.n, dc->pe_nx, dc->pe_ny, s.dims, s.r2c, st) != WF_OK)
    return wf_deck_blame(d, "fft", "nx", st);
  ff_model t = project(run, &s);
  if (wf_deck_bool(d, "fft", "model_only")) {
    report_model(run, &s, &t);
    run->wafer_seconds = run->model.seconds;
    snprintf(run->headline, sizeof run->headline, "model only: %.1f-%.1f us/transform on %s",
             run->model.seconds.lo * 1e6, run->model.seconds.hi * 1e6, run->wafer->hw.name);
    return WF_OK;
  }
  if (s.crosscheck_unavailable) wf_run_unavailable(run, "FFTW-MPI reference", wf_ref_fftw_mpi_absent());
  wf_h5_input in = {0};
  if (s.input[0] && check_input(run, &s, &in, st) != WF_OK) return st->code;
  if (fft_wisdom_load(run->comm, d, &s, st) != WF_OK) return st->code;
  ff_plan p;
  ff_opts o = {s.prec, s.dims, s.flags, s.r2c, s.wafer_prec};
  if (ff_plan_create(&p, &run->wafer->fab, s.n, &o, st) != WF_OK) return st->code;
  if (wf_signal_check(run->comm, "after planning (nothing written)", st) != WF_OK) {
    ff_plan_free(&p);
    return st->code;
  }
  if (run->verbose)
    printf("fft: %dx%dx%d complex %s, %dD (%s), %s%s, on %dx%d PEs, %dx%d ranks\n", s.n[0], s.n[1],
           s.n[2], prec_names[s.prec], s.dims,
           s.dims == 3   ? "z, x, y"
           : s.dims == 2 ? "z, x"
                         : "z",
           s.input[0] ? s.input
           : s.waves  ? "plane-wave field"
                      : "random field",
           s.input[0] ? (in.complex_values ? " (complex)" : " (real)") : "", dc->pe_nx, dc->pe_ny,
           dc->px, dc->py);
  measured m = {0};
  fft_reference ref = {0};
  /* The input, kept for the round trip and the reference. */
  void *input = malloc(ff_box_cells(ff_in_box(&p)) * p.elem + 1);
  int failed = !input, rc;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed)
    rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the FFT's input");
  else
    rc = load_input(run, &s, &in, &p, input, st);
  if (rc == WF_OK) rc = transform(run, &s, &p, input, &m, st);
  if (rc == WF_OK && s.crosscheck) rc = fft_reference_check(run->comm, &s, &p, input, &ref, st);
  if (rc == WF_OK) rc = wf_signal_check(run->comm, "before the output (nothing written)", st);
  if (rc == WF_OK) fft_wisdom_save(run->comm, &s);
  if (rc == WF_OK && wf_deck_bool(d, "fft", "stream")) {
    /* Arrays of at least 32 MB, so that the triad runs from memory, not cache. */
    size_t doubles = ff_box_cells(ff_in_box(&p)) * p.elem / sizeof(double), least = 4 << 20;
    m.triad = wf_stream_triad(run->comm, doubles > least ? doubles : least);
  }
  if (rc == WF_OK) {
    check(run, &s, &m, &ref, &t);
    report(run, &s, &m, &ref);
    report_model(run, &s, &t);
    run->seconds = m.forward * s.repeat;
    run->wafer_seconds = wf_range_scale(run->model.seconds, s.repeat);
  }
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &s, &p, out, st);
  free(input);
  ff_plan_free(&p);
  return rc;
}


const wf_workload wf_fft_workload = {
    .name = "fft",
    .help = "3D (or 1D/2D) complex FFT as pencils over the PE grid, checked against FFTW-MPI",
    .sections = fft_sections,
    .nsections = 1,
    .run = fft_run,
    .finalize = fft_reference_finalize,
    .rank_layout = WF_RANKS_ROWS,
};
