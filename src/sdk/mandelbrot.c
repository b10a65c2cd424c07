/* `wafer mandelbrot`: the SDK's Mandelbrot example on the PE grid.
 *
 * The SDK's kernel (csl-examples benchmarks/mandelbrot) passes pixels east
 * along a 4 x 4 pipeline, each PE running up to 8 more iterations
 * (docs/sdk-kernels.md). Here each PE owns a block of the image, as the
 * wafer's PE grid would hold it for any image size: the image is split over
 * the PEs in balanced bands (sdk_grid.h), each PE iterates its own pixels,
 * and nothing crosses the fabric but the checks' and the plot's reductions.
 * The work is as uneven as the set: the run reports the busiest PE against
 * the mean, and the model charges the busiest. */
#include "mandelbrot.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sdk_grid.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_model.h"
#include "wf_progress.h"
#include "wf_report.h"
#include "wf_signal.h"
#include "wf_config.h"
#include "wf_wafer.h"

static const wf_key mandelbrot_keys[] = {
    {"width", WF_KEY_INT, "640", 1, 1e8, NULL, "image width in pixels (at least the PE grid's)",
     NULL},
    {"height", WF_KEY_INT, "480", 1, 1e8, NULL,
     "image height in pixels (at least the PE grid's)", NULL},
    {"max_iters", WF_KEY_INT, "256", 1, 1e8, NULL, "iterations of z <- z^2 + c at most a pixel",
     NULL},
    {"re_min", WF_KEY_REAL, "-2.25", -1e6, 1e6, NULL, "left edge of the image (real axis)", NULL},
    {"re_max", WF_KEY_REAL, "0.75", -1e6, 1e6, NULL, "right edge (real axis)", NULL},
    {"im_min", WF_KEY_REAL, "-1.125", -1e6, 1e6, NULL, "bottom edge (imaginary axis)", NULL},
    {"im_max", WF_KEY_REAL, "1.125", -1e6, 1e6, NULL, "top edge (imaginary axis)", NULL},
    {"repeat", WF_KEY_INT, "1", 1, 1e9, NULL, "timed computations of the image", NULL},
    {"check", WF_KEY_BOOL, "true", 0, 0, NULL,
     "compare every pixel's count with a serial reference on rank 0 (costs one serial image)",
     NULL},
    {"plot", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "PNG of the iteration counts (at most 512 x 512, each the largest it covers; matplotlib)",
     NULL},
};
static const wf_section mandelbrot_section = {
    "mandelbrot", "The SDK's Mandelbrot example: escape counts of an image split over the PEs.",
    mandelbrot_keys, (int)(sizeof mandelbrot_keys / sizeof mandelbrot_keys[0]), NULL, NULL};
static const wf_section *const mandelbrot_sections[] = {&mandelbrot_section};

/* The SDK kernel's scalar loop (common.csl, `mandelbrot`), one instruction a
 * cycle (wf_model_scalar): per iteration re^2, im^2, their sum, the
 * compare, re^2, im^2, the difference, re im twice, their sum, + x, + y and
 * iters + 1 (13) and a square root; per pixel the final test (5) and get_x
 * / get_y (a subtraction, a multiply and an add each: 6) and 2 divisions.
 * A square root and a division cost the hardware's range (docs/model.md). */
#define MB_ITER_PLAIN 13.0
#define MB_PIXEL_PLAIN 11.0

/* The escape counts of a row of n pixels (points cr[k] + i ci): iterations
 * of z <- z^2 + c from 0 until |z|^2 > 4, at most max_iters. Eight pixels
 * at a time, as vector lanes: a lane that has escaped keeps its z (so it
 * stays out) and stops counting, and each lane does a pixel's own
 * arithmetic, operation for operation (no fused multiply-add: the
 * library's -ffp-contract=off), so the counts are the scalar loop's. */
WF_HOT static void escape_row(const double *restrict cr, double ci, long long n, int max_iters,
                              int32_t *restrict count) {
  enum { LANES = 8 };
  for (long long p0 = 0; p0 < n; p0 += LANES) {
    double x[LANES] = {0}, y[LANES] = {0}, x2[LANES] = {0}, y2[LANES] = {0}, c[LANES];
    int32_t k[LANES] = {0};
    for (int l = 0; l < LANES; l++) c[l] = p0 + l < n ? cr[p0 + l] : 4.0; /* a spare lane escapes at once */
    for (int it = 0; it < max_iters; it++) {
      int live = 0;
      for (int l = 0; l < LANES; l++) {
        int in = x2[l] + y2[l] <= 4.0;
        double ny = 2.0 * x[l] * y[l] + ci, nx = x2[l] - y2[l] + c[l];
        x[l] = in ? nx : x[l], y[l] = in ? ny : y[l];
        x2[l] = x[l] * x[l], y2[l] = y[l] * y[l];
        k[l] += in, live |= in;
      }
      if (!live) break;
    }
    for (int l = 0; l < LANES && p0 + l < n; l++) count[p0 + l] = k[l];
  }
}

/* This rank's pixels: [x.lo, x.hi) x [y.lo, y.hi), and their counts. */
typedef struct mb_block {
  sdk_span x, y;
  long long w, h;
  int32_t *count; /* h x w, x fastest */
  double *cr;     /* w: the real parts of a row's points */
} mb_block;

/* What the PEs did: the largest of a PE's cycles (each end of the model's
 * range), iterations and pixels, and the totals over the PEs. */
typedef struct mb_work {
  double max[4]; /* cycles fast, cycles slow, iterations, pixels */
  double sum[2]; /* iterations, pixels reaching max_iters */
} mb_work;

/* One image: the block's pixels row by row (a row's points along x once),
 * then each PE's iterations from its pixels' counts. Stops early (the
 * image partial) when wf_signal_stop() says so, polled every 512 pixels. */
static void compute(const wf_wafer *wf, const mb_image *im, mb_block *b, double *cr,
                    mb_work *work) {
  const wf_decomp *dc = &wf->dc;
  wf_range iter = wf_model_scalar(&wf->hw, MB_ITER_PLAIN, 1, 0);
  wf_range pixel = wf_model_scalar(&wf->hw, MB_PIXEL_PLAIN, 0, 2);
  *work = (mb_work){{0}, {0}};
  for (long long x = 0; x < b->w; x++) {
    double ci;
    mb_pixel_point(im, b->x.lo + x, 0, &cr[x], &ci);
  }
  const long long piece = 512; /* pixels between two polls */
  for (long long y = 0; y < b->h && !wf_signal_stop(); y++) {
    double cre, ci;
    mb_pixel_point(im, b->x.lo, b->y.lo + y, &cre, &ci);
    for (long long x = 0; x < b->w && (x == 0 || !wf_signal_stop()); x += piece)
      escape_row(cr + x, ci, b->w - x < piece ? b->w - x : piece, im->max_iters,
                 b->count + y * b->w + x);
  }
  for (int pj = dc->y0; pj < dc->y0 + dc->ny; pj++)
    for (int pi = dc->x0; pi < dc->x0 + dc->nx; pi++) {
      sdk_span xs = sdk_span_of(im->width, dc->pe_nx, pi, 1);
      sdk_span ys = sdk_span_of(im->height, dc->pe_ny, pj, 1);
      double iters = 0, inside = 0;
      for (long long y = ys.lo; y < ys.hi; y++)
        for (long long x = xs.lo; x < xs.hi; x++) {
          int n = b->count[(y - b->y.lo) * b->w + (x - b->x.lo)];
          iters += n;
          inside += n == im->max_iters;
        }
      double pixels = (double)(xs.hi - xs.lo) * (double)(ys.hi - ys.lo);
      double pe[4] = {iters * iter.lo + pixels * pixel.lo, iters * iter.hi + pixels * pixel.hi, iters,
                      pixels};
      for (int k = 0; k < 4; k++)
        if (pe[k] > work->max[k]) work->max[k] = pe[k];
      work->sum[0] += iters, work->sum[1] += inside;
    }
}

static uint64_t block_digest(const mb_image *im, const mb_block *b) {
  uint64_t d = 0;
  for (long long y = 0; y < b->h; y++)
    for (long long x = 0; x < b->w; x++)
      d += sdk_digest_term((uint64_t)((b->y.lo + y) * im->width + b->x.lo + x),
                           b->count[y * b->w + x]);
  return d;
}

/* The image on the wafer: the busiest PE's cycles (no traffic: each PE
 * iterates its own pixels). */
static void project(wf_run *run, const mb_work *w) {
  const wf_wafer *wf = run->wafer;
  wf_range cycles = {w->max[0], w->max[1]};
  run->model = (wf_projection){.valid = true,
                               .unit = "image",
                               .seconds = wf_model_seconds(&wf->hw, cycles),
                               .flops = 10.0 * w->sum[0], /* the iteration's arithmetic */
                               .bytes_per_pe = 4.0 * w->max[3], /* fp32 counts */
                               .sram_for_data = wf_model_sram_for_data(&wf->hw),
                               .pes_needed = (double)wf->dc.pe_nx * wf->dc.pe_ny,
                               .pes_offered = (double)wf->hw.pe_nx * wf->hw.pe_ny};
}

static int write_output(const wf_run *run, const mb_block *b, const mb_image *im, const char *path,
                        wf_status *st) {
  size_t n = (size_t)(b->w * b->h);
  int64_t *v = malloc((n ? n : 1) * sizeof *v);
  wf_status_clear(st);
  if (!v) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the image's output");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return free(v), st->code;
  for (size_t k = 0; k < n; k++) v[k] = b->count[k];
  unsigned long long g[2] = {(unsigned long long)im->height, (unsigned long long)im->width};
  unsigned long long off[2] = {(unsigned long long)b->y.lo, (unsigned long long)b->x.lo};
  unsigned long long cnt[2] = {(unsigned long long)b->h, (unsigned long long)b->w};
  wf_h5_block blk = {.ndim = 2, .global = g, .offset = off, .count = cnt};
  wf_h5file f;
  int rc = wf_run_h5_create(run, path, &f, st);
  if (rc == WF_OK) {
    if (wf_h5_write(&f, "iterations", WF_I64, &blk, v, true, st) != WF_OK) rc = st->code;
    rc = wf_h5_finish(&f, rc, st);
  }
  free(v);
  return rc;
}

static int plot(const wf_run *run, const mb_block *b, const mb_image *im, const char *png,
                wf_status *st) {
  sdk_thumb t;
  if (sdk_thumb_create(run, &t, im->width, im->height, 512, st) != WF_OK) return st->code;
  for (long long y = 0; y < b->h; y++)
    for (long long x = 0; x < b->w; x++)
      sdk_thumb_put(&t, b->x.lo + x, b->y.lo + y, b->count[y * b->w + x]);
  sdk_thumb_gather(run, &t);
  char title[160];
  snprintf(title, sizeof title, "Mandelbrot %lld x %lld, at most %d iterations", im->width,
           im->height, im->max_iters);
  int rc = sdk_thumb_plot(run, &t, png, title, "iterations", st);
  sdk_thumb_free(&t);
  return rc;
}

/* The deck's image, refused when the PE grid has more PEs along an axis
 * than the image has pixels (a PE would hold none) or an edge is empty. */
static int read_image(const wf_run *run, mb_image *im, wf_status *st) {
  const wf_deck *d = run->deck;
  *im = (mb_image){.width = wf_deck_int(d, "mandelbrot", "width"),
                   .height = wf_deck_int(d, "mandelbrot", "height"),
                   .max_iters = (int)wf_deck_int(d, "mandelbrot", "max_iters"),
                   .re_min = wf_deck_real(d, "mandelbrot", "re_min"),
                   .re_max = wf_deck_real(d, "mandelbrot", "re_max"),
                   .im_min = wf_deck_real(d, "mandelbrot", "im_min"),
                   .im_max = wf_deck_real(d, "mandelbrot", "im_max")};
  const wf_decomp *dc = &run->wafer->dc;
  if (im->width < dc->pe_nx)
    return wf_deck_fail(d, "mandelbrot", "width", st,
                        "%lld pixels across for %d PE columns: each PE needs a pixel at least "
                        "(a wider image or a smaller [wafer] pe_grid)",
                        im->width, dc->pe_nx);
  if (im->height < dc->pe_ny)
    return wf_deck_fail(d, "mandelbrot", "height", st,
                        "%lld pixels down for %d PE rows: each PE needs a pixel at least "
                        "(a taller image or a smaller [wafer] pe_grid)",
                        im->height, dc->pe_ny);
  if (!(im->re_min < im->re_max))
    return wf_deck_fail(d, "mandelbrot", "re_max", st, "must be above re_min (%g)", im->re_min);
  if (!(im->im_min < im->im_max))
    return wf_deck_fail(d, "mandelbrot", "im_max", st, "must be above im_min (%g)", im->im_min);
  return WF_OK;
}

static void report(wf_run *run, const mb_image *im, const mb_work *w, double seconds,
                   long repeat) {
  const wf_wafer *wf = run->wafer;
  double pixels = (double)im->width * (double)im->height;
  double per = seconds / (double)repeat;
  double npe = (double)wf->dc.pe_nx * wf->dc.pe_ny;
  double imbalance = w->sum[0] > 0 ? w->max[2] / (w->sum[0] / npe) : 1.0;
  wf_report rep;
  wf_report_open(&rep, run, "mandelbrot");
  wf_report_begin(&rep, "mandelbrot");
  wf_report_line(&rep, NULL);
  long long dims[2] = {im->width, im->height};
  wf_report_ints(&rep, "pixels", dims, 2, "%d pixels");
  wf_report_int(&rep, "max_iters", im->max_iters, "at most %d iterations");
  wf_report_num(&rep, "iterations", w->sum[0], "%.4g iterations in all");
  wf_report_num(&rep, "inside", w->sum[1], "%.0f pixels reach the limit");
  wf_report_line(&rep, NULL);
  wf_report_scaled(&rep, "seconds_per_image", per, 1e3, "%.3f ms/image");
  wf_report_scaled(&rep, "pixels_per_second", per > 0 ? pixels / per : 0, 1e-6, "%.1f Mpixel/s");
  wf_report_scaled(&rep, "iterations_per_second", per > 0 ? w->sum[0] / per : 0, 1e-9,
                   "%.3f Giter/s");
  wf_report_num(&rep, "pe_imbalance", imbalance, "busiest PE %.2fx the mean PE's iterations");
  wf_report_end(&rep);
  sdk_report_finish(&rep, run, seconds, (double)repeat);
  snprintf(run->headline, sizeof run->headline, "%.3f ms/image, %.1f Mpixel/s, PE imbalance %.2f",
           per * 1e3, per > 0 ? pixels / per * 1e-6 : 0, imbalance);
}

/* The timed images; stops cleanly at a signal. An image is one long phase
 * with no collective inside: a rank that catches a signal cuts its image
 * short (wf_signal_stop), every rank learns of it at the next image's poll,
 * and one check after the last image catches a signal during it.
 * Collective. */
static int run_images(wf_run *run, const mb_image *im, mb_block *b, mb_work *w, long repeat,
                      double *seconds, wf_status *st) {
  wf_fabric *fab = &run->wafer->fab;
  wf_progress prog;
  wf_progress_start(&prog, "mandelbrot", repeat, run->verbose, stdout);
  wf_signal_poll sig;
  wf_signal_poll_start(&sig, run->comm);
  double t = 0;
  long done = 0;
  int signal = 0;
  wf_fabric_main_begin(fab);
  for (long r = 0; r < repeat; r++) {
    if ((signal = wf_signal_poll_next(&sig)) != 0) break;
    wf_fabric_barrier(fab);
    double t0 = MPI_Wtime();
    compute(run->wafer, im, b, b->cr, w);
    t += MPI_Wtime() - t0;
    done = r + 1;
    wf_progress_tick(&prog, done);
  }
  wf_fabric_main_end(fab, done);
  wf_signal_poll_end(&sig);
  *seconds = wf_fabric_slowest(fab, t);
  char where[96];
  snprintf(where, sizeof where, "in image %ld of %ld (nothing written)", done, repeat);
  if (signal) return wf_signal_fail(st, signal, where);
  return wf_signal_check(run->comm, where, st);
}

static int mandelbrot_run(wf_run *run, wf_status *st) {
  const wf_deck *d = run->deck;
  const wf_decomp *dc = &run->wafer->dc;
  mb_image im;
  if (read_image(run, &im, st) != WF_OK) return st->code;
  mb_block b = {.x = sdk_span_of(im.width, dc->pe_nx, dc->x0, dc->nx),
                .y = sdk_span_of(im.height, dc->pe_ny, dc->y0, dc->ny)};
  b.w = b.x.hi - b.x.lo, b.h = b.y.hi - b.y.lo;
  /* the counts, and the output's copy of them (8 bytes a pixel) */
  double need = (wf_deck_str(d, "output", "file")[0] ? 12.0 : 4.0) * (double)b.w * (double)b.h;
  if (wf_memory_fits(run->comm, need, "the image's iteration counts",
                     "a smaller [mandelbrot] width and height, or more nodes", st) != WF_OK)
    return st->code;
  b.count = malloc((size_t)(b.w * b.h + 1) * sizeof *b.count);
  b.cr = malloc((size_t)(b.w + 1) * sizeof *b.cr);
  wf_status_clear(st);
  if (!b.count || !b.cr) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the image's counts");
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return free(b.count), free(b.cr), st->code;
  long repeat = wf_deck_int(d, "mandelbrot", "repeat");
  if (run->verbose)
    printf("mandelbrot: %lld x %lld pixels, at most %d iterations, on %d x %d PEs\n", im.width,
           im.height, im.max_iters, dc->pe_nx, dc->pe_ny);

  mb_work w;
  double seconds = 0;
  int rc = run_images(run, &im, &b, &w, repeat, &seconds, st);
  if (rc == WF_OK) {
    /* Over all PEs: the busiest PE's figures (its cycles decide the image), the totals. */
    wf_fabric_allreduce(&run->wafer->fab, w.max, 4, WF_MAX);
    wf_fabric_allreduce(&run->wafer->fab, w.sum, 2, WF_SUM);
    project(run, &w);
    if (wf_deck_bool(d, "mandelbrot", "check")) {
      uint64_t want;
      uint64_t got = sdk_digest_sum(run, block_digest(&im, &b));
      rc = sdk_reference_digest(run, mb_reference_digest, &im, "the serial reference image",
                                &want, st);
      if (rc == WF_OK)
        wf_run_check(run, got == want,
                     "every pixel's iteration count equals a serial reference's (digest)");
    } else {
      wf_run_unchecked(run, "iteration counts", "mandelbrot.check = false");
    }
    if (rc == WF_OK) report(run, &im, &w, seconds, repeat);
  }
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &b, &im, out, st);
  const char *png = wf_deck_str(d, "mandelbrot", "plot");
  if (rc == WF_OK && png[0]) rc = plot(run, &b, &im, png, st);
  free(b.count), free(b.cr);
  return rc;
}

const wf_workload wf_mandelbrot_workload = {
    .name = "mandelbrot",
    .help = "the SDK's Mandelbrot example: an image's escape counts over the PEs, checked exactly",
    .sections = mandelbrot_sections,
    .nsections = 1,
    .run = mandelbrot_run,
};
