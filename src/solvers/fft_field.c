/* The data of `wafer fft` (fft_parts.h): the plane-wave field and its
 * analytic transform, a file's dataset checked and read into stage A's box,
 * the sums over every rank the checks compare (2-norms of scaled values: no
 * underflow, a few units of round-off whatever the count), and the output
 * file. */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fft_parts.h"
#include "wf_h5.h"
#include "wf_random.h"

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
double complex fft_waves_transform(const fft_setup *s, const int r[3]) {
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
void fft_fill(const fft_setup *s, const ff_box *b, void *a,
              double complex (*f)(const fft_setup *, const int *)) {
  for (int y = 0; y < b->ny; y++)
    for (int x = 0; x < b->nx; x++)
      for (int z = 0; z < b->nz; z++) {
        int r[3] = {b->x0 + x, b->y0 + y, b->z0 + z};
        set(s->prec, a, ff_index(b, x, y, z), f(s, r));
      }
}

/* The input file's dataset must be nz x ny x nx values, real or complex. */
int fft_check_input(wf_run *run, const fft_setup *s, wf_h5_input *in, wf_status *st) {
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

/* The smallest normal number of the run's precision. */
static double smallest_normal(const fft_setup *s) { return s->prec == FF_SINGLE ? FLT_MIN : DBL_MIN; }

/* The transform of N values of magnitude up to M reaches N M, and the
 * Parseval check sums N such squares: (N M)^2 must stay below the run's
 * largest number, so M <= sqrt(max) / N. Larger inputs would overflow to
 * Inf and NaN, whose differences the checks would read as 0. */
static int check_magnitude(wf_run *run, const fft_setup *s, const ff_plan *p, const void *a,
                           double below, wf_status *st) {
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
  /* At the other end, a part below the precision's smallest normal number
   * is flushed to 0 (single) or loses its digits (a subnormal): harmless
   * beside the field's largest value (below its rounding), not when it is
   * a share of the field (`below`: the largest such part, as read). A field
   * of 1e-50 in single read as zeros and passed every check. */
  double tiny = smallest_normal(s), eps = s->prec == FF_SINGLE ? FLT_EPSILON : DBL_EPSILON;
  MPI_Allreduce(MPI_IN_PLACE, &below, 1, MPI_DOUBLE, MPI_MAX, run->comm);
  if (below > 0 && below >= eps * most)
    return wf_fail(st, WF_ERR_INPUT,
                   "dataset '%s' holds a value with a part of magnitude %g: below %.3g, the "
                   "smallest normal number of %s precision, it is flushed to 0 or loses its "
                   "digits, and the field's largest value (%g) does not dwarf it (scale the "
                   "input)",
                   s->dataset, below, tiny, s->prec == FF_SINGLE ? "single" : "double", most);
  return WF_OK;
}

/* This rank's box of the input: the field, or the file's block ([z][y][x]
 * there, [y][x][z] here). */
int fft_load_input(wf_run *run, const fft_setup *s, const wf_h5_input *in, const ff_plan *p,
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
  double below = 0; /* the largest part below the precision's smallest normal, as read */
  if (wf_h5_input_read(run->comm, s->input, s->dataset, in, &hb, v, st) == WF_OK) {
    double tiny = smallest_normal(s);
    for (size_t i = 0; i < cells * parts; i++)
      if (fabs(v[i]) < tiny) below = fmax(below, fabs(v[i]));
    for (int y = 0; y < b->ny; y++)
      for (int x = 0; x < b->nx; x++)
        for (int z = 0; z < nz; z++) {
          size_t f = ((size_t)z * b->ny + y) * b->nx + x;
          put_input(s, p, a, x, y, z, parts == 2 ? v[2 * f] + I * v[2 * f + 1] : v[f]);
        }
  }
  free(v);
  if (st->code == WF_OK) check_magnitude(run, s, p, a, below, st);
  return st->code == WF_OK ? WF_OK : wf_deck_blame(run->deck, "fft", "input", st);
}

/* ---- comparisons (global) ---- */

/* The same over the input's values (real ones only, with r2c). */
fft_diff fft_compare_input(MPI_Comm comm, const fft_setup *s, const ff_plan *p, const void *a,
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
double fft_input_sum_sq(MPI_Comm comm, const fft_setup *s, const ff_plan *p, const void *a,
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
double fft_spectrum_sum_sq(MPI_Comm comm, const fft_setup *s, const ff_box *b, const void *a,
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

/* The forward transform, [z][y][x] as ParaView reads it, real and
 * imaginary parts as two fields. */
int fft_write_output(wf_run *run, const fft_setup *s, const ff_plan *p, const char *path,
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
