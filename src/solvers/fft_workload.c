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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ff_model.h"
#include "fft_parts.h"
#include "wf_h5.h"
#include "wf_reference.h"
#include "wf_report.h"
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
     wf_key_hdf5},
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
  double unit_in, norm_in = fft_input_sum_sq(comm, s, p, orig, &unit_in), N = transformed_length(s);
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
    wf_fabric_main_begin(p->fab);
    wf_fabric_barrier(p->fab);
    double t0 = MPI_Wtime();
    rc = ff_execute(p, FFTW_FORWARD, st);
    t[r] = wf_fabric_slowest(p->fab, MPI_Wtime() - t0);
    wf_fabric_main_end(p->fab, 1);
    if (rc != WF_OK) break;
    if (r == 0) {
      memcpy(kept, ff_out(p), out_cells * p->elem);
      /* sum |F|^2 / (N sum |f|^2), each sum of scaled values: scaled back
       * by the scales' ratio (powers of two: exact) */
      double unit_out, norm_out = fft_spectrum_sum_sq(comm, s, ob, kept, &unit_out);
      double ratio = unit_in / unit_out;
      m->parseval = rel_diff(norm_out * ratio * ratio, N * norm_in);
      if (s->waves) {
        fft_fill(s, ob, exact, fft_waves_transform);
        m->analytic = fft_rel(fft_compare(comm, s->prec, kept, exact, out_cells, 1));
      }
    }
    wf_fabric_main_begin(p->fab);
    wf_fabric_barrier(p->fab);
    t0 = MPI_Wtime();
    rc = ff_execute(p, FFTW_BACKWARD, st);
    t[s->repeat + r] = wf_fabric_slowest(p->fab, MPI_Wtime() - t0);
    wf_fabric_main_end(p->fab, 1);
    if (rc == WF_OK && r == 0)
      m->roundtrip = fft_rel(fft_compare_input(comm, s, p, ff_in(p), orig, 1.0 / N));
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
  wf_range f = wf_model_seconds(hw, wf_range_add(wf_range_add(t->fft[0], t->fft[1]), t->fft[2]));
  wf_range tr = wf_model_seconds(hw, wf_range_add(t->transpose[0], t->transpose[1]));
  wf_report rep;
  wf_report_open(&rep, run, "fft");
  wf_report_model(&rep, &run->model);
  wf_report_note(&rep, "%s", s->wafer_prec == WF_FP16 ? "fp16" : "fp32");
  wf_report_range(&rep, "fft_seconds", f.lo, f.hi, 1e6, "local FFTs %.1f us");
  wf_report_range(&rep, "alltoall_seconds", tr.lo, tr.hi, 1e6, "all-to-alls %.1f us");
  wf_report_num(&rep, "row_words", t->row_words, "%.0f words a PE pair in rows");
  wf_report_num(&rep, "col_words", t->col_words, "%.0f in columns");
  wf_report_end(&rep);
  wf_report_close(&rep);
}

/* The reference transform's object and lines (FFTW-MPI's both layouts in 3D). */
static void report_reference(wf_report *rep, const fft_setup *s, const measured *m,
                             const fft_reference *ref) {
  static const char *const key[2][3] = {{"forward_seconds", "ratio", "rel_diff"},
                                        {"transposed_forward_seconds", "transposed_ratio",
                                         "transposed_rel_diff"}};
  wf_report_begin(rep, s->dims == 3 ? "fftw_mpi" : "fftw");
  for (int l = 0; l < ref->layouts; l++) {
    char title[96], ratio[64];
    snprintf(title, sizeof title, "%s%s", ref->name,
             ref->layouts == 2 ? (l ? " transposed output" : " normal output") : "");
    snprintf(ratio, sizeof ratio, "ratio wafer/%s %%.2f", ref->name);
    wf_report_line(rep, title);
    wf_report_scaled(rep, key[l][0], ref->seconds[l], 1e3, "forward %.3f ms");
    wf_report_num(rep, key[l][1], m->forward / ref->seconds[l], ratio);
    wf_report_num(rep, key[l][2], ref->rel[l], "largest difference %.2e of the largest value");
  }
  wf_report_end(rep);
}

static void report(wf_run *run, const fft_setup *s, const measured *m, const fft_reference *ref) {
  /* The usual count: 5 N log2 N for complex data, half that for real. */
  double N = (double)s->n[0] * s->n[1] * s->n[2];
  double gflops = (s->r2c ? 2.5 : 5.0) * N * log2(transformed_length(s)) / m->forward / 1e9;
  wf_report rep;
  wf_report_open(&rep, run, "fft");
  wf_report_begin(&rep, "fft");
  wf_report_line(&rep, NULL);
  long long n[3] = {s->n[0], s->n[1], s->n[2]};
  wf_report_ints(&rep, "size", n, 3, "%d");
  wf_report_int(&rep, "dims", s->dims, "%dD");
  wf_report_str(&rep, "precision", prec_names[s->prec], "%s");
  wf_report_str(&rep, "transform", s->r2c ? "r2c" : "c2c", "%s");
  wf_report_scaled(&rep, "forward_seconds", m->forward, 1e3, "forward %.3f ms");
  wf_report_scaled(&rep, "backward_seconds", m->backward, 1e3, "backward %.3f ms");
  wf_report_note(&rep, "median of %d", s->repeat);
  wf_report_num(&rep, "GFLOPs", gflops, "%.2f GFLOP/s");
  wf_report_line(&rep, "per transform");
  wf_report_scaled(&rep, "fft_seconds", m->fft, 1e3, "local FFTs %.3f ms");
  wf_report_scaled(&rep, "transpose_seconds", m->transpose, 1e3, "transposes %.3f ms");
  bool moved = m->transpose > 0; /* (a 2D transform on one rank's PE rows moves nothing) */
  wf_report_num(&rep, "transpose_GBps", m->transpose_GBps, moved ? "%.1f GB/s" : NULL);
  if (m->triad > 0) {
    wf_report_num(&rep, "stream_triad_GBps", m->triad / 1e9, moved ? "STREAM triad %.1f GB/s" : NULL);
    wf_report_scaled(&rep, "transpose_fraction_of_triad", m->transpose_GBps * 1e9 / m->triad, 100,
                     moved ? "%.0f%% of it" : NULL);
  }
  wf_report_line(&rep, "errors (relative)");
  if (s->waves)
    wf_report_num(&rep, "analytic_rel_error", m->analytic,
                  "plane waves %.2e of the exact transform (2-norm)");
  wf_report_num(&rep, "parseval_rel_error", m->parseval, "Parseval %.2e");
  wf_report_num(&rep, "roundtrip_rel_error", m->roundtrip, "round trip %.2e");
  wf_report_end(&rep);
  if (ref->done) report_reference(&rep, s, m, ref);
  if (!ref->done && !s->crosscheck_unavailable) {
    wf_report_line(&rep, "unchecked");
    wf_report_note(&rep, "no reference transform (fft.crosscheck = none)");
  }
  wf_report_close(&rep);
  snprintf(run->headline, sizeof run->headline, "%dx%dx%d %s, %.2f ms/transform%s", s->n[0],
           s->n[1], s->n[2], prec_names[s->prec], m->forward * 1e3,
           ref->done ? (run->checks_failed ? ", FFTW differs" : ", = FFTW") : "");
}

/* model_only: the projection alone, for sizes far beyond this machine. */
static int project_only(wf_run *run, const fft_setup *s, const ff_model *t) {
  report_model(run, s, t);
  run->wafer_seconds = run->model.seconds;
  snprintf(run->headline, sizeof run->headline, "model only: %.1f-%.1f us/transform on %s",
           run->model.seconds.lo * 1e6, run->model.seconds.hi * 1e6, run->wafer->hw.name);
  return WF_OK;
}

/* The input file checked, FFTW's wisdom read, the plan made (FFTW's
 * planning polls no signal: one that came meanwhile stops the run here). */
static int prepare(wf_run *run, const fft_setup *s, wf_h5_input *in, ff_plan *p, wf_status *st) {
  if (s->crosscheck_unavailable)
    wf_run_unavailable(run, "FFTW-MPI reference", wf_ref_fftw_mpi_absent());
  if (s->input[0] && fft_check_input(run, s, in, st) != WF_OK) return st->code;
  if (fft_wisdom_load(run->comm, run->deck, s, st) != WF_OK) return st->code;
  ff_opts o = {s->prec, s->dims, s->flags, s->r2c, s->wafer_prec};
  if (ff_plan_create(p, &run->wafer->fab, s->n, &o, st) != WF_OK) return st->code;
  if (wf_signal_check(run->comm, "after planning (nothing written)", st) != WF_OK) {
    ff_plan_free(p);
    return st->code;
  }
  return WF_OK;
}

/* One line about the transform and where it runs. */
static void describe(const wf_run *run, const fft_setup *s, const wf_h5_input *in) {
  const wf_decomp *dc = &run->wafer->dc;
  if (!run->verbose) return;
  printf("fft: %dx%dx%d complex %s, %dD (%s), %s%s, on %dx%d PEs, %dx%d ranks\n", s->n[0],
         s->n[1], s->n[2], prec_names[s->prec], s->dims,
         s->dims == 3   ? "z, x, y"
         : s->dims == 2 ? "z, x"
                        : "z",
         s->input[0] ? s->input
         : s->waves  ? "plane-wave field"
                     : "random field",
         s->input[0] ? (in->complex_values ? " (complex)" : " (real)") : "", dc->pe_nx,
         dc->pe_ny, dc->px, dc->py);
}

/* The input (kept for the round trip and the reference), the transforms,
 * the reference, FFTW's wisdom saved, STREAM triad. Collective. */
static int measure(wf_run *run, const fft_setup *s, const wf_h5_input *in, ff_plan *p,
                   measured *m, fft_reference *ref, wf_status *st) {
  void *input = malloc(ff_box_cells(ff_in_box(p)) * p->elem + 1);
  int failed = !input, rc;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed)
    rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory for the FFT's input");
  else
    rc = fft_load_input(run, s, in, p, input, st);
  if (rc == WF_OK) rc = transform(run, s, p, input, m, st);
  if (rc == WF_OK && s->crosscheck) rc = fft_reference_check(run->comm, s, p, input, ref, st);
  if (rc == WF_OK) rc = wf_signal_check(run->comm, "before the output (nothing written)", st);
  if (rc == WF_OK) fft_wisdom_save(run->comm, s);
  if (rc == WF_OK && wf_deck_bool(run->deck, "fft", "stream")) {
    /* Arrays of at least 32 MB, so that the triad runs from memory, not cache. */
    size_t doubles = ff_box_cells(ff_in_box(p)) * p->elem / sizeof(double), least = 4 << 20;
    m->triad = wf_stream_triad(run->comm, doubles > least ? doubles : least, st);
    rc = st->code;
  }
  free(input);
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
  if (wf_deck_bool(d, "fft", "model_only")) return project_only(run, &s, &t);
  wf_h5_input in = {0};
  ff_plan p;
  if (prepare(run, &s, &in, &p, st) != WF_OK) return st->code;
  describe(run, &s, &in);
  measured m = {0};
  fft_reference ref = {0};
  int rc = measure(run, &s, &in, &p, &m, &ref, st);
  if (rc == WF_OK) {
    check(run, &s, &m, &ref, &t);
    report(run, &s, &m, &ref);
    report_model(run, &s, &t);
    run->seconds = m.forward * s.repeat;
    run->wafer_seconds = wf_range_scale(run->model.seconds, s.repeat);
  }
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = fft_write_output(run, &s, &p, out, st);
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
