/* `wafer fft`'s reference (fft_parts.h): FFTW's wisdom, and the same
 * transform by FFTW-MPI (or serial FFTW over slabs) on the same data,
 * compared with ours. FFTW-MPI is optional (wf_config.h): without it the 3D
 * reference is unavailable, and the wisdom travels by plain MPI anyway. */
#include <complex.h>
#include <fftw3.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fft_parts.h"
#include "wf_config.h"
#include "wf_io.h"
#include "wf_timing.h"
#include "wf_wafer.h"
#include "wf_signal.h"

#if WAFER_HAVE_FFTW_MPI
#include <fftw3-mpi.h>
#endif

/* ---- comparisons (global) ---- */

fft_diff fft_compare(MPI_Comm comm, ff_prec p, const void *a, const void *ref, size_t n,
                     double scale) {
  double v[2] = {0, 0}, g[2], largest = 0;
  for (size_t i = 0; i < n; i++)
    largest = fmax(largest, fmax(cabs(fft_get(p, ref, i)), cabs(fft_get(p, a, i) * scale)));
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm);
  double unit = fft_unit_scale(largest);
  for (size_t i = 0; i < n; i++) {
    double complex r = fft_get(p, ref, i) * unit, e = fft_get(p, a, i) * scale * unit - r;
    v[0] += creal(e) * creal(e) + cimag(e) * cimag(e);
    v[1] += creal(r) * creal(r) + cimag(r) * cimag(r);
  }
  MPI_Allreduce(v, g, 2, MPI_DOUBLE, MPI_SUM, comm);
  return (fft_diff){g[0], g[1]};
}

double fft_unit_scale(double largest) {
  return largest > 0 && isfinite(largest) ? ldexp(1, -ilogb(largest)) : 1;
}

double fft_rel(fft_diff d) { return sqrt(d.ref_sq > 0 ? d.diff_sq / d.ref_sq : d.diff_sq); }

/* Higham, Accuracy and Stability of Numerical Algorithms (2002), Thm 24.2:
 * radix-2 Cooley-Tukey computes a transform of length N = 2^L with
 * ||error|| / ||exact|| <= L eta / (1 - L eta), eta = mu + gamma_4 (sqrt 2 + mu),
 * about (1 + 4 sqrt 2) u + mu < 8 u with twiddles accurate to mu <= u. FFTW's
 * algorithms for other sizes (mixed radix, Rader, Bluestein) run up to three
 * transforms' worth of levels, hence L = 3 ceil(log2 N). */
double fft_error_bound(ff_prec p, double N) {
  double u = p == FF_SINGLE ? 0x1p-24 : 0x1p-53;
  double L_eta = 3 * ceil(log2(fmax(N, 2))) * 8 * u;
  return L_eta / (1 - L_eta);
}

/* ---- FFTW wisdom (either precision), moved between ranks by plain MPI ---- */

static char *export_wisdom(ff_prec p) {
  return p == FF_SINGLE ? fftwf_export_wisdom_to_string() : fftw_export_wisdom_to_string();
}

static int import_wisdom(ff_prec p, const char *text) {
  return p == FF_SINGLE ? fftwf_import_wisdom_from_string(text)
                        : fftw_import_wisdom_from_string(text);
}

int fft_wisdom_load(MPI_Comm comm, const wf_deck *d, const fft_setup *s, wf_status *st) {
  wf_status_clear(st);
  if (!s->wisdom[0] || access(s->wisdom, F_OK) != 0) return WF_OK; /* made after the run */
  char *text = NULL;
  if (wf_read_text_bcast(comm, s->wisdom, "FFTW wisdom", WF_MAX_DECK_BYTES * 64, &text, st) !=
      WF_OK)
    return wf_deck_blame(d, "fft", "wisdom", st);
  /* A file that holds something else (an input, a deck) would be replaced
   * by the rewritten wisdom: refused, not overwritten. An empty one is new. */
  bool empty = strspn(text, " \t\r\n") == strlen(text);
  int ok = empty || import_wisdom(s->prec, text);
  free(text);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok)
    return wf_deck_fail(d, "fft", "wisdom", st,
                        "the file is not FFTW %s-precision wisdom, and the run would rewrite it: "
                        "name a wisdom file of this precision or a new file",
                        s->prec == FF_SINGLE ? "single" : "double");
  return WF_OK;
}

/* Every rank's wisdom, merged on rank 0 (what each rank planned may
 * differ). NULL on the other ranks, or when out of memory. FFTW-MPI, where
 * built in, merges in a tree; without it every rank's text is gathered on
 * rank 0 (a few KB each; past 2 GB in all, rank 0 keeps its own). */
static char *gather_wisdom(MPI_Comm comm, ff_prec p) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
#if WAFER_HAVE_FFTW_MPI
  if (p == FF_SINGLE)
    fftwf_mpi_gather_wisdom(comm);
  else
    fftw_mpi_gather_wisdom(comm);
  return rank == 0 ? export_wisdom(p) : NULL;
#endif
  char *mine = export_wisdom(p);
  int len = mine ? (int)strlen(mine) + 1 : 0;
  int *lens = rank == 0 ? calloc((size_t)nranks, sizeof *lens) : NULL;
  int *at = rank == 0 ? calloc((size_t)nranks, sizeof *at) : NULL;
  char *all = NULL;
  int ok = rank != 0 || (lens && at);
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  if (ok) {
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
    long total = 0;
    for (int r = 0; rank == 0 && r < nranks; r++) at[r] = (int)total, total += lens[r];
    all = rank == 0 && total < INT_MAX ? malloc((size_t)total + 1) : NULL;
    ok = rank != 0 || all != NULL;
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  }
  if (ok) MPI_Gatherv(mine ? mine : "", len, MPI_CHAR, all, lens, at, MPI_CHAR, 0, comm);
  free(mine);
  char *merged = NULL;
  if (rank == 0 && all) {
    for (int r = 0; r < nranks; r++)
      if (lens[r] > 0) import_wisdom(p, all + at[r]);
    merged = export_wisdom(p);
  }
  free(all), free(lens), free(at);
  return merged;
}

/* Wisdom only saves planning time: a file that cannot be written is a
 * warning (on rank 0), not a failed run. */
void fft_wisdom_save(MPI_Comm comm, const fft_setup *s) {
  int rank;
  wf_status st;
  MPI_Comm_rank(comm, &rank);
  wf_status_clear(&st);
  if (!s->wisdom[0]) return;
  char *text = gather_wisdom(comm, s->prec);
  if (rank == 0) {
    if (!text)
      wf_fail(&st, WF_ERR_RUNTIME, "FFTW could not export its wisdom");
    else
      wf_write_text_atomic(s->wisdom, text, &st);
    if (st.code != WF_OK)
      fprintf(stderr, "fft: warning: wisdom not saved to '%s': %s\n", s->wisdom, st.msg);
  }
  free(text);
}

void fft_reference_init(const fft_setup *s) {
#if WAFER_HAVE_FFTW_MPI
  if (s->prec == FF_SINGLE)
    fftwf_mpi_init();
  else
    fftw_mpi_init();
#else
  (void)s;
#endif
}

void fft_reference_finalize(void) {
#if WAFER_HAVE_FFTW_MPI
  fftw_mpi_cleanup();
  fftwf_mpi_cleanup();
#endif
}

/* ---- the reference: FFTW-MPI on the same data ---- */
#if WAFER_HAVE_FFTW_MPI

/* One FFTW-MPI transform of the field in `layout` (0: normal output,
 * y-slabs; 1: transposed output, x-slabs), timed over `repeat` runs, then
 * compared with our output `out` (box `ob`). */
static int fftw_mpi_case(MPI_Comm comm, const fft_setup *s, int layout, const ff_box *ib,
                         const void *input, const ff_box *ob, const void *out, fft_reference *ref,
                         wf_status *st) {
  /* FFTW's array dimensions are (y, x, z); with real data, its complex
   * array has nz/2 + 1 along z and the real one is padded to twice that. */
  ptrdiff_t ln0, l0s, ln1, l1s, n0 = s->n[1], n1 = s->n[0], n2 = s->n[2];
  ptrdiff_t n2c = s->r2c ? n2 / 2 + 1 : n2;
  ptrdiff_t alloc =
      s->prec == FF_SINGLE
          ? fftwf_mpi_local_size_3d_transposed(n0, n1, n2c, comm, &ln0, &l0s, &ln1, &l1s)
          : fftw_mpi_local_size_3d_transposed(n0, n1, n2c, comm, &ln0, &l0s, &ln1, &l1s);
  unsigned flags = s->flags | (layout ? FFTW_MPI_TRANSPOSED_OUT : 0);
  ff_box in = {0, s->n[0], (int)l0s, (int)ln0, 0, (int)n2c, FF_YXZ};
  /* Transposed output: x-slabs stored [x][y][z]. */
  ff_box res = layout ? (ff_box){(int)l1s, (int)ln1, 0, s->n[1], 0, (int)n2c, FF_XYZ} : in;
  size_t elem = s->prec == FF_SINGLE ? sizeof(float complex) : sizeof(double complex);
  void *a = s->prec == FF_SINGLE ? (void *)fftwf_alloc_complex((size_t)alloc)
                                 : (void *)fftw_alloc_complex((size_t)alloc);
  void *ours = malloc(ff_box_cells(&res) * elem + 1),
       *theirs = malloc(ff_box_cells(&res) * elem + 1);
  void *given = malloc(ff_box_cells(&in) * elem + 1); /* the input on FFTW's slabs */
  void *plan = NULL;
  if (a && s->r2c)
    plan = s->prec == FF_SINGLE
               ? (void *)fftwf_mpi_plan_dft_r2c_3d(n0, n1, n2, (float *)a, a, comm, flags)
               : (void *)fftw_mpi_plan_dft_r2c_3d(n0, n1, n2, (double *)a, a, comm, flags);
  else if (a)
    plan = s->prec == FF_SINGLE
               ? (void *)fftwf_mpi_plan_dft_3d(n0, n1, n2, a, a, comm, FFTW_FORWARD, flags)
               : (void *)fftw_mpi_plan_dft_3d(n0, n1, n2, a, a, comm, FFTW_FORWARD, flags);
  int failed = !a || !ours || !theirs || !given || !plan;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  int rc = WF_OK;
  if (failed) {
    rc = wf_fail(st, WF_ERR_RUNTIME, "could not set up FFTW-MPI's transform (out of memory?)");
  } else if (ff_redistribute(comm, s->prec, ib, input, &in, given, st) != WF_OK) {
    rc = st->code;
  } else {
    double *t = calloc((size_t)s->repeat, sizeof *t);
    for (int r = 0; r < s->repeat && rc == WF_OK; r++) {
      memcpy(a, given, ff_box_cells(&in) * elem);
      /* (the barrier before each timed transform polls for a signal) */
      rc = wf_signal_check(comm, "during FFTW-MPI's reference transforms (nothing written)", st);
      if (rc != WF_OK) break;
      double t0 = MPI_Wtime();
      ff_fftw_execute(s->prec, plan);
      double tr = wf_slowest(comm, MPI_Wtime() - t0);
      if (t) t[r] = tr;
    }
    ref->seconds[layout] = t ? wf_median(t, s->repeat) : 0;
    free(t);
    memcpy(theirs, a, ff_box_cells(&res) * elem);
    if (rc == WF_OK) rc = ff_redistribute(comm, s->prec, ob, out, &res, ours, st);
    if (rc == WF_OK)
      ref->rel[layout] = fft_rel(fft_compare(comm, s->prec, ours, theirs, ff_box_cells(&res), 1));
  }
  ff_fftw_destroy(s->prec, plan);
  if (a) {
    if (s->prec == FF_SINGLE)
      fftwf_free(a);
    else
      fftw_free(a);
  }
  free(ours), free(theirs), free(given);
  return rc;
}

#endif

/* dims 1 and 2: serial FFTW over y-slabs (all x and z on each rank), the
 * way FFTW-MPI itself does transforms that need no transpose. */
static int fftw_slab_case(MPI_Comm comm, const fft_setup *s, const ff_box *ib, const void *input,
                          const ff_box *ob, const void *out, fft_reference *ref, wf_status *st) {
  int rank, nranks, ylo, yn;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  wf_block_range(s->n[1], nranks, rank, &ylo, &yn);
  ptrdiff_t nx = s->n[0], nz = s->n[2], nzc = s->r2c ? nz / 2 + 1 : nz;
  ff_box slab = {0, s->n[0], ylo, yn, 0, (int)nzc, FF_YXZ};
  size_t cells = ff_box_cells(&slab),
         elem = s->prec == FF_SINGLE ? sizeof(float complex) : sizeof(double complex);
  void *a = malloc(cells * elem + 1), *ours = malloc(cells * elem + 1);
  void *plan = NULL;
  if (a && ours && yn > 0) {
    /* Strides in the input's units (reals with r2c: twice the complex
     * ones but along z) and in the output's. */
    ptrdiff_t r = s->r2c ? 2 : 1;
    fftw_iodim64 d[2] = {{nx, r * nzc, nzc}, {nz, 1, 1}}, h = {yn, r * nx * nzc, nx * nzc};
    fftw_iodim64 h1 = {yn * nx, r * nzc, nzc};
    int rank = s->dims == 1 ? 1 : 2;
    fftw_iodim64 *dims = s->dims == 1 ? &d[1] : d, *many = s->dims == 1 ? &h1 : &h;
    if (s->prec == FF_SINGLE) {
      fftwf_iodim64 fd[2], fh = {many->n, many->is, many->os};
      for (int i = 0; i < rank; i++) fd[i] = (fftwf_iodim64){dims[i].n, dims[i].is, dims[i].os};
      plan = s->r2c ? (void *)fftwf_plan_guru64_dft_r2c(rank, fd, 1, &fh, a, a, s->flags)
                    : (void *)fftwf_plan_guru64_dft(rank, fd, 1, &fh, a, a, FFTW_FORWARD, s->flags);
    } else {
      plan = s->r2c
                 ? (void *)fftw_plan_guru64_dft_r2c(rank, dims, 1, many, a, a, s->flags)
                 : (void *)fftw_plan_guru64_dft(rank, dims, 1, many, a, a, FFTW_FORWARD, s->flags);
    }
  }
  int failed = !a || !ours || (yn > 0 && !plan);
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  int rc = WF_OK;
  if (failed) {
    rc = wf_fail(st, WF_ERR_RUNTIME, "could not set up FFTW's reference transform");
  } else if (ff_redistribute(comm, s->prec, ib, input, &slab, a, st) != WF_OK) {
    rc = st->code;
  } else {
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    if (plan) {
      ff_fftw_execute(s->prec, plan);
    }
    ref->seconds[0] = wf_slowest(comm, MPI_Wtime() - t0);
    rc = ff_redistribute(comm, s->prec, ob, out, &slab, ours, st);
    if (rc == WF_OK) ref->rel[0] = fft_rel(fft_compare(comm, s->prec, ours, a, cells, 1));
  }
  ff_fftw_destroy(s->prec, plan);
  free(a), free(ours);
  return rc;
}

int fft_reference_check(MPI_Comm comm, const fft_setup *s, const ff_plan *p, const void *input,
                        fft_reference *ref, wf_status *st) {
  ref->done = true;
  if (s->dims < 3) {
    ref->name = "FFTW (y-slabs)";
    ref->layouts = 1;
    return fftw_slab_case(comm, s, ff_in_box(p), input, ff_out_box(p), ff_out(p), ref, st);
  }
#if WAFER_HAVE_FFTW_MPI
  ref->name = "FFTW-MPI";
  ref->layouts = 2;
  for (int layout = 0; layout < 2; layout++)
    if (fftw_mpi_case(comm, s, layout, ff_in_box(p), input, ff_out_box(p), ff_out(p), ref, st) !=
        WF_OK)
      return st->code;
  return WF_OK;
#else
  ref->done = false; /* read_setup never asks for it: crosscheck is then unavailable */
  return WF_OK;
#endif
}
